//! Health requests: `dirigoctl health` and maintenance (enable/disable),
//! and the control loop's side: feeding the checker its jobs and applying
//! its reports.

use super::ctl::{lock, Ctl};
use crate::clock::now_ns;
use crate::daemon::health::{service_name, Changed};
use crate::health::engine::{Engine, JobKey};
use crate::health::spec::CheckSpec;
use crate::lb::spec::{DestKey, DestSpec, ServiceKey, ServiceSpec};
use dirigo_proto::proto::{CtlError, ErrCode, Response};
use dirigo_proto::view::{HealthEvent, HealthInfo, HealthReport};
use std::net::{Ipv4Addr, SocketAddr};

impl Ctl {
    pub(super) fn health(&self) -> Response {
        let st = lock(&self.state);
        let now = now_ns();
        let effective = st.health.effective(&st.services);
        let mut servers: Vec<HealthInfo> = Vec::new();
        for (s, dests) in &st.services {
            for d in dests {
                let key = JobKey {
                    service: s.key,
                    rs: d.key,
                };
                let Some(h) = st.health.servers.get(&key) else {
                    continue;
                };
                let last = h.tracker.last();
                let (checks, failures) = h.tracker.checks();
                servers.push(HealthInfo {
                    service: s.key,
                    dest: d.key,
                    check: format!(
                        "{}{}",
                        h.spec.probe.name(),
                        if h.spec.via_vip { " via VIP" } else { "" }
                    ),
                    state: if h.disabled {
                        "disabled"
                    } else if h.tracker.up() {
                        "up"
                    } else {
                        "down"
                    }
                    .into(),
                    since_secs: now.saturating_sub(h.tracker.since_ns()) / 1_000_000_000,
                    last: last.map(|l| l.1.detail.clone()),
                    last_ok: last.map(|l| l.1.ok),
                    latency_us: last.map(|l| l.1.latency_us),
                    checks,
                    failures,
                    transitions: h.tracker.transitions(),
                    weight: d.weight,
                    effective_weight: effective
                        .iter()
                        .find(|(e, _)| e.key == s.key)
                        .and_then(|(_, ds)| ds.iter().find(|x| x.key == d.key))
                        .map(|x| x.weight),
                });
            }
        }
        let c = st.health.counts;
        let mut withdrawn: Vec<std::net::IpAddr> = st.health.withdrawn.iter().copied().collect();
        withdrawn.sort();
        let mut quorum_lost: Vec<String> = st.health.quorum_lost.iter().map(service_name).collect();
        quorum_lost.sort();
        Response::Health(HealthReport {
            servers,
            quorum_lost,
            withdrawn,
            counts: [c.down, c.up, c.quorum_lost, c.quorum_restored],
            events: st
                .health
                .log
                .iter()
                .map(|t| HealthEvent {
                    secs_ago: now.saturating_sub(t.at_ns) / 1_000_000_000,
                    what: t.what.clone(),
                    why: t.why.clone(),
                })
                .collect(),
        })
    }

    pub(super) fn health_set(
        &self,
        service: ServiceKey,
        dest: DestKey,
        enable: bool,
    ) -> Result<Response, CtlError> {
        let mut st = lock(&self.state);
        let mut dest = dest;
        if dest.port == 0 {
            dest.port = service.port;
        }
        let key = JobKey { service, rs: dest };
        let table = st.services.clone();
        let changed = st
            .health
            .set_enabled(&key, enable, &table, now_ns())
            .map_err(|e| CtlError::new(ErrCode::NotFound, e))?;
        if changed {
            st.refresh(&self.shared)?;
        }
        Ok(Response::Done)
    }

    /// At start: when a server is checked, start the checker now, so a
    /// namespace that cannot be entered is a start-up error.
    pub fn health_start(&self) -> Result<(), String> {
        let mut st = lock(&self.state);
        let table = st.services.clone();
        let port_addrs = PortAddrs {
            v4: st.port_addrs.clone(),
            v6: st.port_addrs6.clone(),
        };
        let jobs = st
            .health
            .sync(&table, |c, s, d| bind(c, s, d, &port_addrs), now_ns());
        if jobs.is_empty() {
            return Ok(());
        }
        let mut eng = lock(&self.health);
        let netns = eng.netns.clone();
        let e = start_engine(netns.as_deref())
            .map_err(|e| format!("health checks: cannot start the checker: {e}"))?;
        eprintln!(
            "dirigo: health: checking {} real server(s) in {}",
            jobs.len(),
            netns.map_or("dirigo's own namespace".to_string(), |n| format!(
                "namespace {n}"
            ))
        );
        e.set_jobs(jobs);
        eng.engine = Some(e);
        Ok(())
    }

    /// The control loop's health step: give the checker the jobs of the
    /// current table when it changed (`epoch`), apply its reports, publish
    /// what they changed and run the notify commands. Returns the epoch
    /// the jobs are for.
    pub fn health_tick(&self, synced_epoch: u64) -> u64 {
        let mut st = lock(&self.state);
        let now = now_ns();
        let mut eng = lock(&self.health);
        let mut epoch = synced_epoch;
        if st.epoch != synced_epoch {
            let table = st.services.clone();
            let port_addrs = PortAddrs {
                v4: st.port_addrs.clone(),
                v6: st.port_addrs6.clone(),
            };
            let jobs = st
                .health
                .sync(&table, |c, s, d| bind(c, s, d, &port_addrs), now);
            if !jobs.is_empty() && eng.engine.is_none() {
                let netns = eng.netns.clone();
                match start_engine(netns.as_deref()) {
                    Ok(e) => eng.engine = Some(e),
                    Err(e) => eprintln!("dirigo: health: cannot start the checker: {e}"),
                }
            }
            if let Some(e) = &eng.engine {
                e.set_jobs(jobs);
            }
            epoch = st.epoch;
        }
        let Some(e) = &eng.engine else {
            return epoch;
        };
        let table = st.services.clone();
        let mut changed = Changed::default();
        for r in e.drain() {
            let c = st.health.report(r, &table, now);
            changed.table |= c.table;
            changed.notify.extend(c.notify);
        }
        drop(eng);
        if changed.table {
            if let Err(e) = st.refresh(&self.shared) {
                eprintln!("dirigo: health: cannot publish the new weights: {}", e.msg);
            }
        }
        drop(st);
        for cmd in changed.notify {
            notify(&cmd);
        }
        epoch
    }
}

/// Start the checker in `netns` (or dirigo's own namespace).
fn start_engine(netns: Option<&str>) -> Result<Engine, String> {
    let ns = match netns {
        Some(n) => Some(crate::kernel::netns::Netns::ensure(n).map_err(|e| e.to_string())?),
        None => None,
    };
    Engine::start(ns.as_ref())
}

/// The local address a check binds to: its `source` if it has one; a
/// via-VIP probe leaves from the
/// address of the port on the real server's network (of the real
/// server's family), so the real server's answer (sent straight to the
/// source, DR/TUN) comes back to dirigo.
fn bind(c: &CheckSpec, _s: &ServiceSpec, d: &DestSpec, addrs: &PortAddrs) -> Option<SocketAddr> {
    if !c.via_vip {
        // the check's `source` (keepalived `bindto`), else the kernel's
        return c.source.map(|ip| SocketAddr::new(ip, 0));
    }
    match d.key.addr {
        std::net::IpAddr::V4(rip) => {
            let rip = u32::from(rip);
            addrs
                .v4
                .iter()
                .find(|(_, a)| a.contains(rip))
                .or(addrs.v4.first())
                .map(|(_, a)| SocketAddr::new(Ipv4Addr::from(a.addr).into(), 0))
        }
        std::net::IpAddr::V6(rip) => {
            let rip = u128::from(rip);
            // a global address of the port on the server's network, else
            // the first global one
            let global = || {
                addrs
                    .v6
                    .iter()
                    .filter(|(_, a)| !crate::net::wire::ipv6::is_link_local(a.addr))
            };
            global()
                .find(|(_, a)| a.contains(rip))
                .or(global().next())
                .map(|(_, a)| SocketAddr::new(std::net::Ipv6Addr::from(a.addr).into(), 0))
        }
    }
}

/// The ports' addresses a via-VIP probe may leave from.
struct PortAddrs {
    v4: Vec<(u16, crate::net::addr::Ipv4Cidr)>,
    v6: Vec<(u16, crate::net::addr::Ipv6Cidr)>,
}

/// Run a notify command, not waiting for it (a reaper thread collects it).
fn notify(cmd: &[String]) {
    let Some((prog, args)) = cmd.split_first() else {
        return;
    };
    match std::process::Command::new(prog).args(args).spawn() {
        Ok(mut child) => {
            let _ = std::thread::Builder::new()
                .name("dirigo-notify".into())
                .spawn(move || {
                    let _ = child.wait();
                });
        }
        Err(e) => eprintln!("dirigo: health: notify command {prog}: {e}"),
    }
}
