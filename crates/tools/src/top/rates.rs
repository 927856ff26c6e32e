//! The rate maths: two [`Sample`]s in, one [`Frame`] out. A rate is the
//! growth of a cumulative counter between two polls divided by the time
//! between them (not the daemon's smoothed `--rate` estimator): what
//! `top` users expect. Nothing here touches a terminal.

use super::sample::Sample;
use dirigo_core::lb::spec::{DestKey, ServiceKey};
use dirigo_proto::view::{DestInfo, LcoreInfo, ServiceInfo, Stats};
use std::collections::HashMap;
use std::net::SocketAddr;

/// How much a cumulative counter grew from `prev` to `cur`. A counter
/// that went down was reset in between (`dirigoadm -Z`, a restarted
/// daemon) and has counted from zero since: its growth is `cur`. Never
/// negative.
pub fn grew(prev: u64, cur: u64) -> u64 {
    if cur >= prev {
        cur - prev
    } else {
        cur
    }
}

/// `grew(prev, cur)` per second over `secs` (`None` without an interval).
pub fn per_sec(prev: u64, cur: u64, secs: Option<f64>) -> Option<f64> {
    secs.map(|s| grew(prev, cur) as f64 / s)
}

/// Per-second rates of a service's or real server's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rates {
    /// New connections per second.
    pub cps: f64,
    /// Packets per second client → server.
    pub inpps: f64,
    /// Packets per second server → client (NAT only).
    pub outpps: f64,
    /// Bytes per second client → server.
    pub inbps: f64,
    /// Bytes per second server → client (NAT only).
    pub outbps: f64,
}

impl Rates {
    /// The rates of counters that went from `prev` to `cur` in `secs`.
    pub fn between(prev: &Stats, cur: &Stats, secs: f64) -> Rates {
        let r = |a: u64, b: u64| grew(a, b) as f64 / secs;
        Rates {
            cps: r(prev.conns, cur.conns),
            inpps: r(prev.inpkts, cur.inpkts),
            outpps: r(prev.outpkts, cur.outpkts),
            inbps: r(prev.inbytes, cur.inbytes),
            outbps: r(prev.outbytes, cur.outbytes),
        }
    }

    fn add(&mut self, o: &Rates) {
        self.cps += o.cps;
        self.inpps += o.inpps;
        self.outpps += o.outpps;
        self.inbps += o.inbps;
        self.outbps += o.outbps;
    }
}

/// A real server's line.
#[derive(Clone, Debug, PartialEq)]
pub struct DestRow {
    /// Address and port (the service's port when configured as 0).
    pub addr: SocketAddr,
    /// `Route`, `Tunnel` or `Masq`.
    pub method: &'static str,
    /// Weight (the effective one: 0 while a health check inhibits it).
    pub weight: u32,
    /// Connections in ESTABLISHED.
    pub active: u64,
    /// Other connections.
    pub inactive: u64,
    /// Rates (`None` on the first sample, or for a new real server).
    pub rate: Option<Rates>,
}

/// A service's line and its real servers'.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceRow {
    /// Protocol, VIP, port.
    pub key: ServiceKey,
    /// Scheduler, with its flags and persistence as ipvsadm shows them
    /// (`rr`, `wlc persistent 300`).
    pub sched: String,
    /// Active connections of its real servers.
    pub active: u64,
    /// Inactive connections of its real servers.
    pub inactive: u64,
    /// Rates (`None` on the first sample, or for a new service).
    pub rate: Option<Rates>,
    /// Real servers, by address.
    pub dests: Vec<DestRow>,
}

/// A worker's line.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerRow {
    /// Lcore id.
    pub lcore: u32,
    /// Connections in its table.
    pub conns: u64,
    /// Its table's capacity (connections per worker).
    pub size: u32,
    /// Packets received per second.
    pub rx_pps: Option<f64>,
    /// Packets transmitted per second.
    pub tx_pps: Option<f64>,
    /// Packets dropped per second.
    pub drop_pps: Option<f64>,
    /// Connections created per second.
    pub cps: Option<f64>,
    /// Share of the interval spent in polls that carried packets, 0..=1
    /// (`None` unless the daemon reports `busy_ns`).
    pub busy: Option<f64>,
}

impl WorkerRow {
    /// Table fill, 0..=1 (0 for a table of size 0).
    pub fn fill(&self) -> f64 {
        if self.size == 0 {
            0.0
        } else {
            self.conns as f64 / f64::from(self.size)
        }
    }
}

/// A drop reason that happened.
#[derive(Clone, Debug, PartialEq)]
pub struct DropRow {
    /// Reason name.
    pub reason: String,
    /// Count since start.
    pub count: u64,
    /// Per second (`None` on the first sample or for a new reason).
    pub rate: Option<f64>,
}

/// Sums over every service.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// Active connections.
    pub active: u64,
    /// Inactive connections.
    pub inactive: u64,
    /// Sum of the services' rates (`None` on the first sample).
    pub rate: Option<Rates>,
    /// Drops per second over every reason (`None` on the first sample).
    pub drop_pps: Option<f64>,
}

/// Everything one screen shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// Seconds between the two samples (`None`: one sample, no rates).
    pub secs: Option<f64>,
    /// Services by key, each with its real servers.
    pub services: Vec<ServiceRow>,
    /// Workers by lcore.
    pub workers: Vec<WorkerRow>,
    /// Non-zero drop reasons, fastest-growing first.
    pub drops: Vec<DropRow>,
    /// Sums.
    pub totals: Totals,
}

fn sched_label(s: &dirigo_proto::view::ServiceInfo) -> String {
    let mut out = s.spec.sched.name().to_string();
    let f = s.spec.flags;
    if f.fallback || f.port {
        let n = s.spec.sched.name();
        let mut v = Vec::new();
        if f.fallback {
            v.push(format!("{n}-fallback"));
        }
        if f.port {
            v.push(format!("{n}-port"));
        }
        out += &format!(" ({})", v.join(","));
    }
    if let Some(t) = s.spec.persistent {
        out += &format!(" persistent {t}");
    }
    out
}

impl Frame {
    /// The frame for `cur`, with rates since `prev` when there is one and
    /// time passed. A service, real server, worker or drop reason absent
    /// from `prev` has no rates yet; one absent from `cur` is not shown.
    pub fn between(prev: Option<&Sample>, cur: &Sample) -> Frame {
        let secs = prev
            .map(|p| cur.at.saturating_duration_since(p.at).as_secs_f64())
            .filter(|s| *s > 0.0);
        let prev = prev.filter(|_| secs.is_some());
        let old = Previous::of(prev);
        let mut totals = Totals {
            rate: secs.map(|_| Rates::default()),
            ..Totals::default()
        };
        let mut services: Vec<ServiceRow> = cur
            .list
            .services
            .iter()
            .map(|s| {
                let row = old.service_row(s, secs);
                totals.active += row.active;
                totals.inactive += row.inactive;
                if let (Some(t), Some(r)) = (totals.rate.as_mut(), row.rate.as_ref()) {
                    t.add(r);
                }
                row
            })
            .collect();
        services.sort_by_key(|s| s.key);
        let workers = workers(prev.map(|p| p.lcores.as_slice()), cur, secs);
        let drops = drops(prev, cur, secs);
        totals.drop_pps = secs.map(|_| drops.iter().filter_map(|d| d.rate).sum());
        Frame {
            secs,
            services,
            workers,
            drops,
            totals,
        }
    }
}

/// The previous sample's counters, by identity.
#[derive(Default)]
struct Previous<'a> {
    /// Services' counters.
    svc: HashMap<ServiceKey, &'a Stats>,
    /// Real servers' counters.
    dest: HashMap<(ServiceKey, DestKey), &'a Stats>,
}

impl<'a> Previous<'a> {
    /// The counters of `prev` (none without one).
    fn of(prev: Option<&'a Sample>) -> Previous<'a> {
        let mut old = Previous::default();
        if let Some(p) = prev {
            for s in &p.list.services {
                old.svc.insert(s.spec.key, &s.stats);
                for d in &s.dests {
                    old.dest.insert((s.spec.key, d.spec.key), &d.stats);
                }
            }
        }
        old
    }

    /// Service `s`'s line, its real servers by address.
    fn service_row(&self, s: &ServiceInfo, secs: Option<f64>) -> ServiceRow {
        let key = s.spec.key;
        let mut dests: Vec<DestRow> = s
            .dests
            .iter()
            .map(|d| self.dest_row(key, d, secs))
            .collect();
        dests.sort_by_key(|d| (d.addr.ip(), d.addr.port()));
        let rate = secs
            .zip(self.svc.get(&key))
            .map(|(t, old)| Rates::between(old, &s.stats, t));
        ServiceRow {
            key,
            sched: sched_label(s),
            active: dests.iter().map(|d| d.active).sum(),
            inactive: dests.iter().map(|d| d.inactive).sum(),
            rate,
            dests,
        }
    }

    /// Real server `d`'s line in the service `key`.
    fn dest_row(&self, key: ServiceKey, d: &DestInfo, secs: Option<f64>) -> DestRow {
        let port = if d.spec.key.port == 0 {
            key.port
        } else {
            d.spec.key.port
        };
        DestRow {
            addr: SocketAddr::new(d.spec.key.addr, port),
            method: d.spec.method.ipvsadm_name(),
            weight: d.spec.weight,
            active: u64::from(d.active),
            inactive: u64::from(d.inactive),
            rate: secs
                .zip(self.dest.get(&(key, d.spec.key)))
                .map(|(t, old)| Rates::between(old, &d.stats, t)),
        }
    }
}

/// The drop reasons that happened, fastest-growing first.
fn drops(prev: Option<&Sample>, cur: &Sample, secs: Option<f64>) -> Vec<DropRow> {
    let old_drops: HashMap<&str, u64> = prev
        .map(|p| {
            p.drops
                .iter()
                .map(|d| (d.reason.as_str(), d.count))
                .collect()
        })
        .unwrap_or_default();
    let mut drops: Vec<DropRow> = cur
        .drops
        .iter()
        .filter(|d| d.count > 0)
        .map(|d| DropRow {
            reason: d.reason.clone(),
            count: d.count,
            rate: secs
                .zip(old_drops.get(d.reason.as_str()))
                .map(|(t, old)| grew(*old, d.count) as f64 / t),
        })
        .collect();
    drops.sort_by(|a, b| {
        b.rate
            .unwrap_or(0.0)
            .total_cmp(&a.rate.unwrap_or(0.0))
            .then(b.count.cmp(&a.count))
            .then(a.reason.cmp(&b.reason))
    });
    drops
}

fn workers(prev: Option<&[LcoreInfo]>, cur: &Sample, secs: Option<f64>) -> Vec<WorkerRow> {
    let size = cur.list.conn_tab_size;
    let mut v: Vec<WorkerRow> = cur
        .lcores
        .iter()
        .filter(|l| l.role == "worker")
        .map(|l| {
            let old = prev.and_then(|p| p.iter().find(|o| o.lcore == l.lcore));
            let rate = |f: fn(&LcoreInfo) -> u64| old.and_then(|o| per_sec(f(o), f(l), secs));
            let busy = match (old.and_then(|o| o.busy_ns), l.busy_ns, secs) {
                (Some(a), Some(b), Some(t)) => {
                    Some((grew(a, b) as f64 / (t * 1e9)).clamp(0.0, 1.0))
                }
                _ => None,
            };
            WorkerRow {
                lcore: l.lcore,
                conns: l.conns,
                size,
                rx_pps: rate(|l| l.rx_packets),
                tx_pps: rate(|l| l.tx_packets),
                drop_pps: rate(|l| l.dropped),
                cps: rate(|l| l.conns_created),
                busy,
            }
        })
        .collect();
    v.sort_by_key(|w| w.lcore);
    v
}

/// A service's name as the frame shows it: `TCP  10.0.0.1:80` (ipvsadm's
/// layout).
pub fn service_name(k: &ServiceKey) -> String {
    format!("{}  {}", k.proto.upper(), SocketAddr::new(k.vip, k.port))
}
