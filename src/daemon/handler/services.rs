//! Service requests: ipvsadm's mutations (validated on a copy, then
//! committed), `-L` listings with their counters, `-Z`, `-L -c` and reload.

use super::ctl::{lock, Ctl};
use crate::daemon::control::apply::{apply, ServiceTable};
use crate::dataplane::shared::{ConnRequest, ConnWalk};
use crate::lb::snapshot::Snapshot;
use crate::lb::spec::{ServiceKey, Timeouts};
use crate::lb::stats::{sum_dest, sum_service, TrafficSnapshot};
use dirigo_proto::proto::{BatchCmd, CtlError, ErrCode, ListOpts, Response};
use dirigo_proto::view::{
    CensusInfo, ConnInfo, DestInfo, FingerprintInfo, Rate, ServiceInfo, ServiceList, Stats,
};
use std::time::Duration;

fn minus(a: TrafficSnapshot, b: &TrafficSnapshot) -> Stats {
    Stats {
        conns: a.conns.saturating_sub(b.conns),
        inpkts: a.pkts_in.saturating_sub(b.pkts_in),
        outpkts: a.pkts_out.saturating_sub(b.pkts_out),
        inbytes: a.bytes_in.saturating_sub(b.bytes_in),
        outbytes: a.bytes_out.saturating_sub(b.bytes_out),
    }
}

impl Ctl {
    pub(super) fn list(&self, opts: &ListOpts) -> Result<Response, CtlError> {
        let st = lock(&self.state);
        let snap = self.shared.lb.load_full();
        let ws = self.worker_stats();
        let zero = lock(&self.zero);
        let rates = lock(&self.rates);
        let mut out = Vec::new();
        // what the workers forward with: a checked server that is down
        // shows weight 0 (inhibit) or is absent (remove), as ipvsadm shows
        // keepalived's changes
        let effective = st.health.effective(&st.services);
        for (spec, dests) in effective.iter() {
            if let Some(k) = &opts.service {
                // a group's member lists as the group's service
                if *k != spec.key && !spec.members.contains(k) {
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

    pub(super) fn zero(&self, service: Option<ServiceKey>) -> Result<(), CtlError> {
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

    pub(super) fn conns(
        &self,
        service: Option<ServiceKey>,
        limit: Option<u32>,
    ) -> Result<Response, CtlError> {
        let limit = limit.unwrap_or(1_000_000) as usize;
        let mut out = Vec::new();
        for (_, walk) in self.walk_workers(limit)? {
            for c in walk.list {
                if let Some(k) = &service {
                    if k.vip != c.vip.ip() || k.port != c.vip.port() || k.proto != c.proto {
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

    /// Each worker's [`ConnWalk`]: its connections (at most `limit`) and
    /// its census, which it takes between two bursts. Every worker is asked
    /// before any answer is awaited.
    fn walk_workers(&self, limit: usize) -> Result<Vec<(u32, ConnWalk)>, CtlError> {
        let mut rxs = Vec::new();
        for w in &self.shared.workers {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            if w.conn_requests
                .push(ConnRequest { limit, reply: tx })
                .is_err()
            {
                return Err(CtlError::new(
                    ErrCode::Busy,
                    "a worker has too many connection requests waiting",
                ));
            }
            rxs.push((w.lcore, rx));
        }
        rxs.into_iter()
            .map(|(lcore, rx)| {
                rx.recv_timeout(Duration::from_secs(2))
                    .map(|walk| (lcore, walk))
                    .map_err(|_| CtlError::new(ErrCode::Busy, "a worker did not answer in time"))
            })
            .collect()
    }

    /// `census`: each worker's connections counted every way at one moment.
    pub(super) fn census(&self) -> Result<Response, CtlError> {
        Ok(Response::Census(
            self.walk_workers(0)?
                .into_iter()
                .map(|(lcore, ConnWalk { census: c, .. })| CensusInfo {
                    lcore,
                    entries: c.entries,
                    walked: c.walked,
                    walked_active: c.walked_active,
                    gauge: c.gauge,
                    active: c.active,
                    inactive: c.inactive,
                    consistent: c.consistent(),
                })
                .collect(),
        ))
    }

    pub(super) fn mutate(&self, cmds: &[BatchCmd]) -> Result<(), CtlError> {
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

    pub(super) fn reload(&self) -> Result<Response, CtlError> {
        let cfg = dirigo_config::Config::load(&self.config_path)
            .map_err(|e| CtlError::invalid(e.to_string()))?;
        let t: ServiceTable = cfg
            .services
            .iter()
            .map(|s| (s.spec.clone(), s.dests.clone()))
            .collect();
        let mut st = lock(&self.state);
        // Unchanged services keep their slots (keyed by service and real
        // server), so their connections and counters carry on untouched;
        // unchanged checks keep their state (the control loop re-syncs the
        // checker with the new table).
        let old = std::mem::take(&mut st.health.services);
        st.health.services = cfg
            .services
            .iter()
            .filter(|s| s.health.active())
            .map(|s| (s.spec.key, s.health.clone()))
            .collect();
        // the config's mark rules, as its services
        let old_marks = std::mem::replace(&mut st.marks, cfg.marks.clone());
        let old_saved = st.marks_saved;
        st.marks_saved |= !st.marks.is_empty();
        if let Err(e) = st.commit(&self.shared, t, cfg.timeouts) {
            st.health.services = old;
            st.marks = old_marks;
            st.marks_saved = old_saved;
            return Err(e);
        }
        for n in &cfg.neighbors {
            let _ = match n.ip {
                std::net::IpAddr::V4(a) => st.neigh.add_static(u32::from(a), n.mac, n.port as u16),
                std::net::IpAddr::V6(a) => {
                    st.net6
                        .neigh
                        .add_static(u128::from(a), n.mac, n.port as u16)
                }
            };
        }
        st.publish_neigh(&self.shared);
        Ok(Response::Done)
    }
}

impl Ctl {
    /// `dirigoctl fingerprint`: each service's table as the workers
    /// schedule with it (the published snapshot), in key order so that two
    /// directors' answers compare line by line.
    pub(super) fn fingerprints(&self, only: Option<ServiceKey>) -> Result<Response, CtlError> {
        let snap = self.shared.lb.load_full();
        let mut out: Vec<FingerprintInfo> = snap
            .services()
            .iter()
            .filter(|s| only.is_none_or(|k| k == s.spec.key))
            .map(|s| {
                let f = s.fingerprint();
                FingerprintInfo {
                    service: s.spec.key,
                    sched: s.spec.sched.name().into(),
                    entries: f.map(|f| f.entries),
                    servers: f.map(|f| f.servers),
                    fingerprint: f.map(|f| format!("{:#018x}", f.hash)),
                }
            })
            .collect();
        if only.is_some() && out.is_empty() {
            return Err(CtlError::no_service());
        }
        out.sort_by_key(|f| f.service);
        Ok(Response::Fingerprints(out))
    }
}

fn find_live<'a>(snap: &'a Snapshot, k: &ServiceKey) -> Option<&'a crate::lb::snapshot::Service> {
    snap.services().iter().find(|s| s.spec.key == *k)
}
