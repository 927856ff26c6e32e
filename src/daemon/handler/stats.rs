//! Statistics requests: per-worker and drop counters (`lcores`, `drops`)
//! and the rate estimators behind `-L --rate`.

use super::ctl::{lock, Ctl, RateEst};
use dirigo_proto::proto::Response;
use dirigo_proto::view::{
    DropCount, LcoreInfo, NamedCounter, Rate, SnatInfo, SnatReport, SyncInfo,
};

/// How many counters the sync thread lists before the workers' start.
const SYNC_THREAD_COUNTERS: usize =
    crate::daemon::sync::SyncThreadCount::COUNT + crate::net::wire::ipvs_sync::SyncError::ALL.len();
use crate::lb::stats::{sum_dest, sum_service, WorkerStats};

impl Ctl {
    /// `dirigoctl sync`: the settings, the sync thread's counters and the
    /// workers' (summed).
    pub(super) fn sync_info(&self) -> Option<SyncInfo> {
        let (c, stats) = self.sync.as_ref()?;
        let mut counters: Vec<NamedCounter> = stats
            .named()
            .into_iter()
            .map(|(name, value, _)| NamedCounter { name, value })
            .collect();
        for ws in self.worker_stats() {
            for (i, (name, v)) in ws.sync_counts().enumerate() {
                match counters.get_mut(SYNC_THREAD_COUNTERS + i) {
                    Some(n) => n.value += v,
                    None => counters.push(NamedCounter {
                        name: name.into(),
                        value: v,
                    }),
                }
            }
        }
        Some(SyncInfo {
            interface: c.interface.clone(),
            source: c.source,
            group: c.group,
            udp_port: c.udp_port,
            ttl: c.ttl,
            syncid: c.syncid,
            peers: c.peers.clone(),
            send: c.send,
            receive: c.receive,
            max_message: c.max_message as u32,
            threshold: c.policy.udp_threshold as u32,
            refresh_ms: c.policy.refresh_ms(),
            counters,
        })
    }

    pub(super) fn worker_stats(&self) -> Vec<&WorkerStats> {
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

    pub(super) fn drops(&self) -> Response {
        let ports: Vec<&str> = self.ports.iter().map(|p| p.name.as_str()).collect();
        let mut v = self.shared.drops(&ports);
        // the exception thread's losses, per kernel interface
        if let Some(x) = &self.exception {
            for k in &x.ifs {
                let name = ports.get(k.port as usize).copied().unwrap_or("?");
                let c = &k.counters;
                v.push((
                    format!("kernel_write_failed_{name}"),
                    c.write_failed.load(std::sync::atomic::Ordering::Relaxed),
                ));
                v.push((
                    format!("kernel_inject_full_{name}"),
                    c.inject_full.load(std::sync::atomic::Ordering::Relaxed),
                ));
            }
        }
        // the state file's failed writes (changes applied but not saved)
        if let Some(n) = &self.state_file_failed {
            v.push((
                "state_file_write_failed".into(),
                n.load(std::sync::atomic::Ordering::Relaxed),
            ));
        }
        Response::Drops(
            v.into_iter()
                .map(|(reason, count)| DropCount { reason, count })
                .collect(),
        )
    }

    /// The SNAT rules with their connections, summed over the workers.
    pub(super) fn snat(&self) -> Response {
        use std::sync::atomic::Ordering::Relaxed;
        let rules = lock(&self.state).settings.snat.clone();
        let ws = &self.shared.workers;
        let sum = |f: &dyn Fn(&WorkerStats) -> u64| ws.iter().map(|w| f(&w.lb)).sum::<u64>();
        let rules = rules
            .into_iter()
            .enumerate()
            .map(|(i, rule)| SnatInfo {
                rule,
                conns: sum(&|s| s.snat.get(i).map_or(0, |t| t.conns.load(Relaxed))),
                live: sum(&|s| s.snat.get(i).map_or(0, |t| t.live.load(Relaxed) as u64)),
            })
            .collect();
        Response::Snat(SnatReport {
            rules,
            live: sum(&|s| s.snat_live.load(Relaxed) as u64),
            bound: sum(&|s| s.snat_bound.load(Relaxed) as u64),
        })
    }

    pub(super) fn lcores(&self) -> Response {
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
                    // active + inactive over every real-server slot, those
                    // of removed servers too (their connections stay in the
                    // table until they end): equals `conns`
                    let (active, inactive) = dest_totals(&w.lb);
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
                                [("conns_active", active), ("conns_inactive", inactive)]
                                    .into_iter()
                                    .map(|(n, value)| NamedCounter {
                                        name: n.into(),
                                        value,
                                    }),
                            )
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
                            .chain(
                                w.lb.synproxy_counts()
                                    .filter(|(_, v)| *v > 0)
                                    .map(|(n, v)| NamedCounter {
                                        name: n.into(),
                                        value: v,
                                    }),
                            )
                            .chain(w.lb.ftp_counts().filter(|(_, v)| *v > 0).map(|(n, v)| {
                                NamedCounter {
                                    name: n.into(),
                                    value: v,
                                }
                            }))
                            .collect(),
                        // the worker loop's busy time (polls that carried packets)
                        busy_ns: Some(w.loop_stats.read().busy_ns),
                    }
                })
                .collect(),
        )
    }
}

/// Active and inactive connections of one worker, summed over every
/// real-server slot (removed servers' slots included), SNAT's as inactive.
fn dest_totals(w: &WorkerStats) -> (u64, u64) {
    use std::sync::atomic::Ordering::Relaxed;
    let (a, i) = w.dests.iter().fold((0, 0), |(a, i), t| {
        (
            a + u64::from(t.active.load(Relaxed)),
            i + u64::from(t.inactive.load(Relaxed)),
        )
    });
    // SNAT's connections have no real server: counted as inactive here
    (a, i + u64::from(w.snat_live.load(Relaxed)))
}
