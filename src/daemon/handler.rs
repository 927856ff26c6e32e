//! The control socket's request handler: ipvsadm's operations on the
//! control state, listings from the workers' published counters.

use super::control::{apply, ControlState, ServiceTable};
use super::RunningPort;
use crate::ctl::proto::{BatchCmd, CtlError, ErrCode, ListOpts, Request, Response};
use crate::ctl::server::Handler;
use crate::ctl::view::{
    AddrInfo, ConnInfo, DestInfo, DropCount, LcoreInfo, MacAddr, NamedCounter, NeighInfo,
    PortCounters, PortInfo, Rate, RouteInfo, ServiceInfo, ServiceList, Stats, VersionInfo,
};
use crate::dataplane::shared::{ConnRequest, Shared};
use crate::lb::ids::SlotId;
use crate::lb::snapshot::Snapshot;
use crate::lb::spec::{ServiceKey, Timeouts};
use crate::lb::stats::{sum_dest, sum_service, TrafficSnapshot, WorkerStats};
use crate::net::addr::Ipv4Cidr;
use crate::net::neigh::NeighState;
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Key of a counter set: (is real server, slot id).
pub type StatKey = (bool, SlotId);

/// Rate estimator state (IPVS-style: a 2 s sample smoothed with weight 1/4).
#[derive(Debug, Default, Clone, Copy)]
pub struct RateEst {
    last: TrafficSnapshot,
    /// Smoothed rates.
    pub rate: Rate,
}

/// The daemon's control handle, shared by the socket server's threads and
/// the control loop.
pub struct Ctl {
    /// Configured state.
    pub state: Mutex<ControlState>,
    /// What the workers read.
    pub shared: Arc<Shared>,
    /// Running ports.
    pub ports: Vec<RunningPort>,
    /// The config file (for reload).
    pub config_path: String,
    /// Connection table capacity per worker (ipvsadm's size=).
    pub conn_tab_size: u32,
    /// Baselines for `-Z`.
    pub zero: Mutex<HashMap<StatKey, TrafficSnapshot>>,
    /// Rates.
    pub rates: Mutex<HashMap<StatKey, RateEst>>,
}

fn minus(a: TrafficSnapshot, b: &TrafficSnapshot) -> Stats {
    Stats {
        conns: a.conns.saturating_sub(b.conns),
        inpkts: a.pkts_in.saturating_sub(b.pkts_in),
        outpkts: a.pkts_out.saturating_sub(b.pkts_out),
        inbytes: a.bytes_in.saturating_sub(b.bytes_in),
        outbytes: a.bytes_out.saturating_sub(b.bytes_out),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panicking handler thread must not take the control plane down.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Ctl {
    fn worker_stats(&self) -> Vec<&WorkerStats> {
        self.shared.workers.iter().map(|w| &*w.lb).collect()
    }

    /// Update rate estimators (call every 2 s from the control loop).
    pub fn estimate(&self, secs: f64) {
        let snap = self.shared.lb.load_full();
        let ws = self.worker_stats();
        let mut rates = lock(&self.rates);
        let mut seen = Vec::new();
        for s in snap.services() {
            let mut keys = vec![((false, s.id), sum_service(&ws, s.id))];
            for d in &s.dests {
                keys.push(((true, d.id), sum_dest(&ws, d.id)));
            }
            for (k, cur) in keys {
                seen.push(k);
                let e = rates.entry(k).or_insert(RateEst {
                    last: cur,
                    rate: Rate::default(),
                });
                let per = |a: u64, b: u64| ((a.saturating_sub(b)) as f64 / secs) as i64;
                let smooth =
                    |old: u64, new: i64| (old as i64 + (new - old as i64) / 4).max(0) as u64;
                e.rate.cps = smooth(e.rate.cps, per(cur.conns, e.last.conns));
                e.rate.inpps = smooth(e.rate.inpps, per(cur.pkts_in, e.last.pkts_in));
                e.rate.outpps = smooth(e.rate.outpps, per(cur.pkts_out, e.last.pkts_out));
                e.rate.inbps = smooth(e.rate.inbps, per(cur.bytes_in, e.last.bytes_in));
                e.rate.outbps = smooth(e.rate.outbps, per(cur.bytes_out, e.last.bytes_out));
                e.last = cur;
            }
        }
        rates.retain(|k, _| seen.contains(k));
    }

    fn list(&self, opts: &ListOpts) -> Result<Response, CtlError> {
        let st = lock(&self.state);
        let snap = self.shared.lb.load_full();
        let ws = self.worker_stats();
        let zero = lock(&self.zero);
        let rates = lock(&self.rates);
        let mut out = Vec::new();
        for (spec, dests) in st.services.iter() {
            if let Some(k) = &opts.service {
                if *k != spec.key {
                    continue;
                }
            }
            let live = find_live(&snap, &spec.key);
            let (stats, rate) = match live {
                Some(s) => {
                    let k = (false, s.id);
                    (
                        minus(
                            sum_service(&ws, s.id),
                            zero.get(&k).unwrap_or(&Default::default()),
                        ),
                        rates.get(&k).map(|r| r.rate).unwrap_or_default(),
                    )
                }
                None => Default::default(),
            };
            let mut dinfo = Vec::new();
            for d in dests {
                let ld = live.and_then(|s| s.dests.iter().find(|x| x.key == d.key));
                let (active, inactive, stats, rate) = match ld {
                    Some(x) => {
                        let t = sum_dest(&ws, x.id);
                        let k = (true, x.id);
                        (
                            t.active as u32,
                            t.inactive as u32,
                            minus(t, zero.get(&k).unwrap_or(&Default::default())),
                            rates.get(&k).map(|r| r.rate).unwrap_or_default(),
                        )
                    }
                    None => (0, 0, Stats::default(), Rate::default()),
                };
                dinfo.push(DestInfo {
                    spec: d.clone(),
                    active,
                    inactive,
                    persist: 0,
                    stats,
                    rate,
                });
            }
            out.push(ServiceInfo {
                spec: spec.clone(),
                stats,
                rate,
                dests: dinfo,
            });
        }
        if let Some(k) = &opts.service {
            if out.is_empty() {
                let _ = k;
                return Err(CtlError::no_service());
            }
        }
        Ok(Response::Services(ServiceList {
            conn_tab_size: self.conn_tab_size,
            services: out,
        }))
    }

    fn zero(&self, service: Option<ServiceKey>) -> Result<(), CtlError> {
        let snap = self.shared.lb.load_full();
        let ws = self.worker_stats();
        let mut zero = lock(&self.zero);
        let mut found = false;
        for s in snap.services() {
            if service.is_some_and(|k| k != s.spec.key) {
                continue;
            }
            found = true;
            zero.insert((false, s.id), sum_service(&ws, s.id));
            for d in &s.dests {
                zero.insert((true, d.id), sum_dest(&ws, d.id));
            }
        }
        if service.is_some() && !found {
            return Err(CtlError::no_service());
        }
        Ok(())
    }

    fn conns(&self, service: Option<ServiceKey>, limit: Option<u32>) -> Result<Response, CtlError> {
        let limit = limit.unwrap_or(1_000_000) as usize;
        let mut rxs = Vec::new();
        for w in &self.shared.workers {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            if w.conn_requests
                .push(ConnRequest { limit, reply: tx })
                .is_ok()
            {
                rxs.push(rx);
            }
        }
        let mut out = Vec::new();
        for rx in rxs {
            let Ok(list) = rx.recv_timeout(Duration::from_secs(2)) else {
                return Err(CtlError::new(
                    ErrCode::Busy,
                    "a worker did not answer in time",
                ));
            };
            for c in list {
                if let Some(k) = &service {
                    if k.vip != *c.vip.ip() || k.port != c.vip.port() || k.proto != c.proto {
                        continue;
                    }
                }
                out.push(ConnInfo {
                    proto: c.proto,
                    client: c.client,
                    vaddr: c.vip,
                    dest: c.rs,
                    state: c.state.to_string(),
                    expire_secs: c.expires_s,
                });
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(Response::Conns(out))
    }

    fn mutate(&self, cmds: &[BatchCmd]) -> Result<(), CtlError> {
        let mut st = lock(&self.state);
        let mut t: ServiceTable = st.services.clone();
        let mut timeouts: Timeouts = st.timeouts;
        let mut zero_keys = Vec::new();
        for (i, c) in cmds.iter().enumerate() {
            let r = apply(&mut t, &mut timeouts, c);
            if let Err(e) = r {
                return Err(if cmds.len() > 1 { e.at(i) } else { e });
            }
            if let BatchCmd::Zero { service } = c {
                zero_keys.push(*service);
            }
        }
        st.commit(&self.shared, t, timeouts)?;
        drop(st);
        for z in zero_keys {
            self.zero(z)?;
        }
        Ok(())
    }

    fn ports(&self, xstats: bool) -> Response {
        Response::Ports(
            self.ports
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let s = p.port.stats();
                    let l = p.port.link();
                    PortInfo {
                        id: i as u16,
                        name: p.name.clone(),
                        mac: MacAddr(p.mac),
                        link_up: l.up,
                        speed_mbps: l.speed_mbps,
                        full_duplex: l.full_duplex,
                        mtu: p.mtu,
                        counters: PortCounters {
                            ipackets: s.ipackets,
                            opackets: s.opackets,
                            ibytes: s.ibytes,
                            obytes: s.obytes,
                            imissed: s.imissed,
                            ierrors: s.ierrors,
                            oerrors: s.oerrors,
                            rx_nombuf: s.rx_nombuf,
                        },
                        xstats: if xstats {
                            p.port
                                .xstats()
                                .into_iter()
                                .map(|(name, value)| NamedCounter { name, value })
                                .collect()
                        } else {
                            Vec::new()
                        },
                    }
                })
                .collect(),
        )
    }

    fn drops(&self) -> Response {
        let ports: Vec<&str> = self.ports.iter().map(|p| p.name.as_str()).collect();
        Response::Drops(
            self.shared
                .drops(&ports)
                .into_iter()
                .map(|(reason, count)| DropCount { reason, count })
                .collect(),
        )
    }

    fn lcores(&self) -> Response {
        Response::Lcores(
            self.shared
                .workers
                .iter()
                .enumerate()
                .map(|(wi, w)| {
                    let io = w.io.total();
                    let conns = w.lb.conns.load(std::sync::atomic::Ordering::Relaxed);
                    let created: u64 =
                        w.lb.services
                            .iter()
                            .map(|s| s.conns.load(std::sync::atomic::Ordering::Relaxed))
                            .sum();
                    LcoreInfo {
                        lcore: w.lcore,
                        role: "worker".into(),
                        queues: self
                            .ports
                            .iter()
                            .map(|p| format!("{}:rx{wi}/tx{wi}", p.name))
                            .collect(),
                        rx_packets: io.rx,
                        tx_packets: io.tx,
                        dropped: w.dropped(),
                        conns,
                        conns_created: created,
                        extra: w
                            .counters()
                            .filter(|n| n.value > 0)
                            .map(|n| NamedCounter {
                                name: n.name.into(),
                                value: n.value,
                            })
                            .chain(
                                [
                                    ("conns_evicted", &w.lb.evicted),
                                    ("conns_expired", &w.lb.expired),
                                    ("icmp_frag_needed_sent", &w.lb.icmp_frag_sent),
                                ]
                                .into_iter()
                                .map(|(n, a)| NamedCounter {
                                    name: n.into(),
                                    value: a.load(std::sync::atomic::Ordering::Relaxed),
                                }),
                            )
                            .collect(),
                    }
                })
                .collect(),
        )
    }

    fn neighbors(&self) -> Response {
        let st = lock(&self.state);
        let now = super::now_ns();
        let mut v: Vec<NeighInfo> = st
            .neigh
            .iter()
            .map(|(ip, n)| NeighInfo {
                port: n.port,
                addr: Ipv4Addr::from(ip),
                mac: (n.state != NeighState::Incomplete).then_some(MacAddr(n.mac)),
                state: format!("{:?}", n.state).to_lowercase(),
                age_secs: Some((now.saturating_sub(n.since_ns) / 1_000_000_000) as u32),
            })
            .collect();
        v.sort_by_key(|n| (n.port, n.addr));
        Response::Neighbors(v)
    }

    fn reload(&self) -> Result<Response, CtlError> {
        let cfg = crate::ctl::config::Config::load(&self.config_path)
            .map_err(|e| CtlError::invalid(e.to_string()))?;
        let t: ServiceTable = cfg
            .services
            .iter()
            .map(|s| (s.spec.clone(), s.dests.clone()))
            .collect();
        let mut st = lock(&self.state);
        // Unchanged services keep their slots (keyed by service and real
        // server), so their connections and counters carry on untouched.
        st.commit(&self.shared, t, cfg.timeouts)?;
        for n in &cfg.neighbors {
            let _ = st.neigh.add_static(u32::from(n.ip), n.mac, n.port as u16);
        }
        st.publish_neigh(&self.shared);
        Ok(Response::Done)
    }
}

fn find_live<'a>(snap: &'a Snapshot, k: &ServiceKey) -> Option<&'a crate::lb::snapshot::Service> {
    snap.services().iter().find(|s| s.spec.key == *k)
}

impl Handler for Ctl {
    fn handle(&self, req: Request) -> Result<Response, CtlError> {
        let one = |c: BatchCmd| self.mutate(&[c]).map(|_| Response::Done);
        match req {
            Request::AddService { service } => one(BatchCmd::AddService { service }),
            Request::EditService { service } => one(BatchCmd::EditService { service }),
            Request::DelService { key } => one(BatchCmd::DelService { key }),
            Request::Clear => one(BatchCmd::Clear),
            Request::AddDest { service, dest } => one(BatchCmd::AddDest { service, dest }),
            Request::EditDest { service, dest } => one(BatchCmd::EditDest { service, dest }),
            Request::DelDest { service, dest } => one(BatchCmd::DelDest { service, dest }),
            Request::SetTimeouts { timeouts } => one(BatchCmd::SetTimeouts { timeouts }),
            Request::RestoreBatch { cmds } => self.mutate(&cmds).map(|_| Response::Done),
            Request::List(opts) => self.list(&opts),
            Request::ListConns { service, limit } => self.conns(service, limit),
            Request::Zero { service } => self.zero(service).map(|_| Response::Done),
            Request::GetTimeouts => Ok(Response::Timeouts(lock(&self.state).timeouts)),
            Request::Ports { xstats } => Ok(self.ports(xstats)),
            Request::Addresses => {
                let st = lock(&self.state);
                Ok(Response::Addresses(
                    st.port_addrs
                        .iter()
                        .map(|(p, c)| AddrInfo {
                            port: *p,
                            addr: Ipv4Addr::from(c.addr),
                            prefix_len: c.len,
                        })
                        .collect(),
                ))
            }
            Request::AddrAdd {
                port,
                addr,
                prefix_len,
            } => {
                if port as usize >= self.ports.len() {
                    return Err(CtlError::new(ErrCode::NotFound, format!("no port {port}")));
                }
                let c = Ipv4Cidr::new(u32::from(addr), prefix_len)
                    .ok_or_else(|| CtlError::invalid(format!("bad prefix length {prefix_len}")))?;
                let mut st = lock(&self.state);
                if st.port_addrs.iter().any(|(_, x)| x.addr == c.addr) {
                    return Err(CtlError::new(
                        ErrCode::Exists,
                        format!("{addr} already configured"),
                    ));
                }
                st.port_addrs.push((port, c));
                if let Err(e) = st.publish_net(&self.shared) {
                    st.port_addrs.pop();
                    return Err(e);
                }
                st.pending_garp.push(c.addr);
                Ok(Response::Done)
            }
            Request::AddrDel { port, addr } => {
                let mut st = lock(&self.state);
                let a = u32::from(addr);
                let Some(i) = st
                    .port_addrs
                    .iter()
                    .position(|(p, c)| *p == port && c.addr == a)
                else {
                    return Err(CtlError::new(
                        ErrCode::NotFound,
                        format!("{addr} not on port {port}"),
                    ));
                };
                let removed = st.port_addrs.remove(i);
                if let Err(e) = st.publish_net(&self.shared) {
                    st.port_addrs.insert(i, removed);
                    return Err(e);
                }
                Ok(Response::Done)
            }
            Request::Routes => {
                let net = self.shared.net.load();
                let st = lock(&self.state);
                let _ = &st;
                Ok(Response::Routes(
                    net.routes()
                        .iter()
                        .map(|r| RouteInfo {
                            dst: Ipv4Addr::from(r.prefix.addr),
                            prefix_len: r.prefix.len,
                            gateway: r.gateway.map(Ipv4Addr::from),
                            port: r.port,
                            src: net.addrs().primary(r.port).map(Ipv4Addr::from),
                        })
                        .collect(),
                ))
            }
            Request::Neighbors => Ok(self.neighbors()),
            Request::NeighAdd { port, addr, mac } => {
                if port as usize >= self.ports.len() {
                    return Err(CtlError::new(ErrCode::NotFound, format!("no port {port}")));
                }
                let mut st = lock(&self.state);
                st.neigh
                    .add_static(u32::from(addr), mac.0, port)
                    .map_err(|e| CtlError::invalid(e.to_string()))?;
                st.publish_neigh(&self.shared);
                Ok(Response::Done)
            }
            Request::NeighFlush { port } => {
                let mut st = lock(&self.state);
                let victims: Vec<u32> = st
                    .neigh
                    .iter()
                    .filter(|(_, n)| {
                        port.is_none_or(|p| p == n.port) && n.state != NeighState::Static
                    })
                    .map(|(ip, _)| ip)
                    .collect();
                for ip in victims {
                    st.neigh.remove(ip);
                }
                st.publish_neigh(&self.shared);
                Ok(Response::Done)
            }
            Request::Lcores => Ok(self.lcores()),
            Request::Drops => Ok(self.drops()),
            Request::Reload => self.reload(),
            Request::Version => Ok(Response::Version(VersionInfo {
                version: env!("CARGO_PKG_VERSION").into(),
                proto: crate::ctl::proto::PROTO_VERSION,
                dpdk: Some("22.11".into()),
            })),
        }
    }
}

/// SocketAddr helper for tests.
pub fn sa(ip: Ipv4Addr, port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(ip, port)
}
