//! The control side of health checks: each checked server's state (the
//! rise/fall tracker fed by the engine's reports), maintenance switches,
//! quorum, and the effective service table the workers' snapshot is built
//! from. Health is an input to the snapshot like an operator's command:
//! the configured table (`ControlState::services`) never changes here, the
//! effective one is derived from it.

use crate::health::engine::{Job, JobKey, Report};
use crate::health::spec::{CheckSpec, OnFailure};
use crate::health::state::Tracker;
use crate::lb::spec::{DestKey, DestSpec, Method, ServiceKey, ServiceSpec};
use dirigo_config::ServiceHealth;
use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;

/// Transitions kept for `dirigoctl health`.
const LOG_LEN: usize = 256;

/// One checked real server.
#[derive(Debug, Clone)]
pub struct ServerHealth {
    /// Its check.
    pub spec: CheckSpec,
    /// Its state.
    pub tracker: Tracker,
    /// Taken out by `dirigoctl health disable` (maintenance): down
    /// whatever the checks say.
    pub disabled: bool,
    /// A via-VIP probe's client socket (pinned to this server).
    pub bind: Option<SocketAddr>,
    /// What its last passed check added to its configured weight (a file
    /// check's value times its factor; 0 for the others).
    pub weight_change: i64,
}

impl ServerHealth {
    /// Whether it takes new connections.
    pub fn live(&self) -> bool {
        self.tracker.up() && !self.disabled
    }

    /// Its weight while live: the configured one plus the change, within
    /// 0..=65535.
    pub fn weight(&self, configured: u32) -> u32 {
        (i64::from(configured) + self.weight_change).clamp(0, MAX_WEIGHT) as u32
    }
}

/// The largest weight (as the configuration's).
const MAX_WEIGHT: i64 = 65535;

/// A state change, as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// When (daemon clock, ns).
    pub at_ns: u64,
    /// What changed ("TCP 10.0.0.1:80 rs 172.16.0.11:80 down").
    pub what: String,
    /// Why.
    pub why: String,
}

/// What the control loop must do after health changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// The effective table changed: rebuild and publish the snapshot.
    pub table: bool,
    /// Commands to run (notify_up/notify_down), with their arguments.
    pub notify: Vec<Vec<String>>,
}

/// Every service's health settings and every checked server's state.
#[derive(Debug, Default)]
pub struct HealthState {
    /// Per service (services without settings are never checked).
    pub services: HashMap<ServiceKey, ServiceHealth>,
    /// Per checked server.
    pub servers: HashMap<JobKey, ServerHealth>,
    /// Servers disabled for maintenance (kept across a server's re-add).
    pub disabled: HashSet<JobKey>,
    /// VIPs withdrawn (every service on them lost its quorum), of both
    /// families.
    pub withdrawn: HashSet<std::net::IpAddr>,
    /// Services whose quorum is lost.
    pub quorum_lost: HashSet<ServiceKey>,
    /// The last transitions.
    pub log: VecDeque<Transition>,
    /// Counters: servers down, up, quorum lost, restored.
    pub counts: HealthCounts,
    /// Client ports of via-VIP probes, by job (stable while the job is).
    pub via_ports: HashMap<JobKey, u16>,
}

/// Client ports of via-VIP probes: above Linux's ephemeral range
/// (32768-60999), so no other socket of the namespace takes them.
pub const VIA_VIP_PORTS: std::ops::Range<u16> = 61000..65000;

/// What health counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HealthCounts {
    /// Servers that went down.
    pub down: u64,
    /// Servers that came up.
    pub up: u64,
    /// Services that lost their quorum.
    pub quorum_lost: u64,
    /// Services whose quorum came back.
    pub quorum_restored: u64,
}

/// `TCP 10.0.0.1:80`
pub fn service_name(k: &ServiceKey) -> String {
    format!(
        "{} {}",
        k.proto.upper(),
        std::net::SocketAddr::new(k.vip, k.port)
    )
}

impl HealthState {
    /// The check of real server `rs` of service `svc`: its own, else the
    /// service's (a server added at run time gets the service's).
    pub fn check_of(&self, svc: &ServiceKey, rs: &DestKey) -> Option<&CheckSpec> {
        let h = self.services.get(svc)?;
        h.checks
            .iter()
            .find(|(k, _)| k == rs)
            .map(|(_, c)| c)
            .or(h.check.as_ref())
    }

    /// Bring the checked servers in line with `table` (new servers start
    /// up with a fresh tracker; a changed check starts afresh; removed
    /// servers are forgotten) and return the engine's jobs.
    /// A via-VIP probe leaves from `bind(check, service, server)` (the
    /// address of the port on the server's network) and a client port of
    /// its own, which the snapshot pins to the server.
    pub fn sync(
        &mut self,
        table: &[(ServiceSpec, Vec<DestSpec>)],
        bind: impl Fn(&CheckSpec, &ServiceSpec, &DestSpec) -> Option<SocketAddr>,
        now_ns: u64,
    ) -> Vec<Job> {
        let mut jobs = Vec::new();
        let mut keep = HashSet::new();
        for (s, dests) in table {
            for d in dests {
                let Some(spec) = self.check_of(&s.key, &d.key).cloned() else {
                    continue;
                };
                let key = JobKey {
                    service: s.key,
                    rs: d.key,
                };
                let mut local = bind(&spec, s, d);
                if let (true, Some(l)) = (spec.via_vip, local.as_mut()) {
                    l.set_port(self.via_port(&key));
                }
                let fresh = self
                    .servers
                    .get(&key)
                    .is_none_or(|h| h.spec != spec || h.bind != local);
                if fresh {
                    self.servers.insert(
                        key.clone(),
                        ServerHealth {
                            spec: spec.clone(),
                            tracker: Tracker::new(now_ns),
                            disabled: self.disabled.contains(&key),
                            bind: local,
                            weight_change: 0,
                        },
                    );
                }
                let rs = SocketAddr::new(d.key.addr, d.key.port);
                let vip = SocketAddr::new(s.key.vip, s.key.port);
                let target = if spec.via_vip {
                    SocketAddr::new(s.key.vip, spec.port.unwrap_or(s.key.port))
                } else {
                    spec.target(rs)
                };
                jobs.push(Job {
                    key: key.clone(),
                    target,
                    bind: local,
                    rs,
                    vip,
                    spec,
                });
                keep.insert(key);
            }
        }
        self.servers.retain(|k, _| keep.contains(k));
        self.via_ports.retain(|k, _| keep.contains(k));
        jobs
    }

    /// The via-VIP client port of `key`: its own while the job lives.
    fn via_port(&mut self, key: &JobKey) -> u16 {
        if let Some(&p) = self.via_ports.get(key) {
            return p;
        }
        let used: HashSet<u16> = self.via_ports.values().copied().collect();
        let p = VIA_VIP_PORTS
            .clone()
            .find(|p| !used.contains(p))
            .unwrap_or(VIA_VIP_PORTS.start);
        self.via_ports.insert(key.clone(), p);
        p
    }

    /// The pins the snapshot needs: each via-VIP probe's client socket to
    /// its server.
    pub fn pins(&self) -> impl Iterator<Item = (ServiceKey, SocketAddr, DestKey)> + '_ {
        self.servers
            .iter()
            .filter(|(_, h)| h.spec.via_vip)
            .filter_map(|(k, h)| Some((k.service, h.bind?, k.rs)))
    }

    /// Apply a check's report. Returns what changed.
    pub fn report(
        &mut self,
        r: Report,
        table: &[(ServiceSpec, Vec<DestSpec>)],
        now_ns: u64,
    ) -> Changed {
        let Some(h) = self.servers.get_mut(&r.key) else {
            return Changed::default(); // a report of a job just removed
        };
        let detail = r.outcome.detail.clone();
        let (rise, fall) = (h.spec.rise, h.spec.fall);
        // a passed check that asks for a weight change makes it at once
        let reweigh = match r.outcome.weight {
            Some(w) if r.outcome.ok && w != h.weight_change => {
                let old = std::mem::replace(&mut h.weight_change, w);
                Some((old, w, h.live()))
            }
            _ => None,
        };
        let state = h.tracker.record(r.outcome, now_ns, rise, fall);
        let spec = h.spec.clone();
        let disabled = h.disabled;
        let mut changed = Changed::default();
        if let Some((old, new, live)) = reweigh {
            changed.table |= live;
            self.log_transition(
                now_ns,
                format!(
                    "{} real server {} weight change {old:+} -> {new:+}",
                    service_name(&r.key.service),
                    SocketAddr::new(r.key.rs.addr, r.key.rs.port),
                ),
                format!("{} check ({detail})", spec.probe.name()),
            );
            self.update_quorum(table, now_ns);
        }
        let Some(up) = state else {
            return changed;
        };
        if !disabled {
            changed.table = true;
        }
        let what = format!(
            "{} real server {} {}",
            service_name(&r.key.service),
            SocketAddr::new(r.key.rs.addr, r.key.rs.port),
            if up { "up" } else { "down" }
        );
        let why = if up {
            format!("{} successes in a row ({detail})", spec.rise)
        } else {
            format!(
                "{} failures in a row ({detail}); {}",
                spec.fall,
                match spec.on_failure {
                    OnFailure::Inhibit => "weight 0 (inhibit)",
                    OnFailure::Remove => "removed",
                }
            )
        };
        if up {
            self.counts.up += 1;
        } else {
            self.counts.down += 1;
        }
        self.log_transition(now_ns, what, why);
        let cmd = if up {
            &spec.notify_up
        } else {
            &spec.notify_down
        };
        if !cmd.is_empty() {
            let vip = SocketAddr::new(r.key.service.vip, r.key.service.port);
            changed.notify.push(substitute(cmd, r.key.rs, vip));
        }
        self.update_quorum(table, now_ns);
        changed
    }

    /// Maintenance: take a checked server out (`enable = false`) or give
    /// it back to its checks. Returns whether anything changed; an error
    /// when the server is not checked.
    pub fn set_enabled(
        &mut self,
        key: &JobKey,
        enable: bool,
        table: &[(ServiceSpec, Vec<DestSpec>)],
        now_ns: u64,
    ) -> Result<bool, String> {
        let Some(h) = self.servers.get_mut(key) else {
            return Err(format!(
                "{} real server {} has no health check",
                service_name(&key.service),
                SocketAddr::new(key.rs.addr, key.rs.port)
            ));
        };
        if h.disabled != enable {
            return Ok(false);
        }
        h.disabled = !enable;
        if enable {
            self.disabled.remove(key);
        } else {
            self.disabled.insert(key.clone());
        }
        self.log_transition(
            now_ns,
            format!(
                "{} real server {} {}",
                service_name(&key.service),
                SocketAddr::new(key.rs.addr, key.rs.port),
                if enable { "enabled" } else { "disabled" }
            ),
            "operator (dirigoctl health)".into(),
        );
        self.update_quorum(table, now_ns);
        Ok(true)
    }

    fn log_transition(&mut self, at_ns: u64, what: String, why: String) {
        eprintln!("dirigo: health: {what}: {why}");
        if self.log.len() == LOG_LEN {
            self.log.pop_front();
        }
        self.log.push_back(Transition { at_ns, what, why });
    }

    /// Whether real server `d` of service `s` takes new connections
    /// (unchecked servers always do).
    fn live(&self, s: &ServiceKey, d: &DestKey) -> bool {
        self.servers
            .get(&JobKey {
                service: *s,
                rs: *d,
            })
            .is_none_or(|h| h.live())
    }

    /// The live weight of a service: its live servers' weights (with
    /// their checks' changes).
    fn live_weight(&self, s: &ServiceSpec, dests: &[DestSpec]) -> u64 {
        dests
            .iter()
            .filter(|d| self.live(&s.key, &d.key))
            .map(|d| {
                let key = JobKey {
                    service: s.key,
                    rs: d.key,
                };
                self.servers
                    .get(&key)
                    .map_or(d.weight, |h| h.weight(d.weight)) as u64
            })
            .sum()
    }

    /// Recompute which services lost their quorum and which VIPs are
    /// withdrawn; log and count the changes.
    pub fn update_quorum(&mut self, table: &[(ServiceSpec, Vec<DestSpec>)], now_ns: u64) {
        let mut lost = HashSet::new();
        for (s, dests) in table {
            let Some(h) = self.services.get(&s.key).filter(|h| h.active()) else {
                continue;
            };
            if self.live_weight(s, dests) < h.quorum.unwrap_or(1) as u64 {
                lost.insert(s.key);
            }
        }
        for k in lost
            .difference(&self.quorum_lost)
            .copied()
            .collect::<Vec<_>>()
        {
            self.counts.quorum_lost += 1;
            let sorry = self.services.get(&k).and_then(|h| h.sorry);
            self.log_transition(
                now_ns,
                format!("{} quorum lost", service_name(&k)),
                match sorry {
                    Some(a) => format!(
                        "live weight below the quorum; sorry server {a} takes new connections"
                    ),
                    None => "live weight below the quorum".into(),
                },
            );
        }
        for k in self
            .quorum_lost
            .difference(&lost)
            .copied()
            .collect::<Vec<_>>()
        {
            self.counts.quorum_restored += 1;
            self.log_transition(
                now_ns,
                format!("{} quorum restored", service_name(&k)),
                "live weight at the quorum again".into(),
            );
        }
        self.quorum_lost = lost;
        // a VIP is withdrawn when every service on it lost its quorum
        let mut by_vip: HashMap<std::net::IpAddr, bool> = HashMap::new();
        for (s, _) in table {
            let all_lost = by_vip.entry(s.key.vip).or_insert(true);
            *all_lost &= self.quorum_lost.contains(&s.key);
        }
        self.withdrawn = by_vip
            .into_iter()
            .filter(|&(_, lost)| lost)
            .map(|(v, _)| v)
            .collect();
    }

    /// The table the workers forward with: a down server (or one disabled)
    /// has weight 0 (inhibit) or is left out (remove), a live one its
    /// weight with its check's change (file checks); a service that lost
    /// its quorum sends new connections to its sorry server, if it has one.
    pub fn effective(
        &self,
        table: &[(ServiceSpec, Vec<DestSpec>)],
    ) -> Vec<(ServiceSpec, Vec<DestSpec>)> {
        table
            .iter()
            .map(|(s, dests)| {
                if let (true, Some(sorry)) = (
                    self.quorum_lost.contains(&s.key),
                    self.services.get(&s.key).and_then(|h| h.sorry),
                ) {
                    return (s.clone(), vec![sorry_dest(s, dests, sorry)]);
                }
                let eff = dests
                    .iter()
                    .filter_map(|d| {
                        let key = JobKey {
                            service: s.key,
                            rs: d.key,
                        };
                        match self.servers.get(&key) {
                            Some(h) if !h.live() => match h.spec.on_failure {
                                // a via-VIP probe needs its server in the
                                // table: removed means weight 0 for it
                                OnFailure::Inhibit => Some(DestSpec {
                                    weight: 0,
                                    ..d.clone()
                                }),
                                OnFailure::Remove if h.spec.via_vip => Some(DestSpec {
                                    weight: 0,
                                    ..d.clone()
                                }),
                                OnFailure::Remove => None,
                            },
                            Some(h) => Some(DestSpec {
                                weight: h.weight(d.weight),
                                ..d.clone()
                            }),
                            None => Some(d.clone()),
                        }
                    })
                    .collect();
                (s.clone(), eff)
            })
            .collect()
    }
}

/// The sorry server as a real server of `s`: forwarded like the service's
/// first real server (NAT when its port differs from the service's, or the
/// service has none; FullNAT in a FullNAT service, whose servers are all
/// FullNAT).
fn sorry_dest(s: &ServiceSpec, dests: &[DestSpec], a: SocketAddr) -> DestSpec {
    let method = match dests.first() {
        Some(d) if a.port() == s.key.port || matches!(d.method, Method::Nat | Method::FullNat) => {
            d.method
        }
        _ => Method::Nat,
    };
    DestSpec {
        key: DestKey {
            addr: a.ip(),
            port: a.port(),
        },
        method,
        weight: 1,
        upper: 0,
        lower: 0,
        tun: Default::default(),
    }
}

/// `cmd` with `{rip}`, `{rport}`, `{vip}`, `{vport}` replaced.
pub fn substitute(cmd: &[String], rs: DestKey, vip: SocketAddr) -> Vec<String> {
    cmd.iter()
        .map(|a| {
            a.replace("{rip}", &rs.addr.to_string())
                .replace("{rport}", &rs.port.to_string())
                .replace("{vip}", &vip.ip().to_string())
                .replace("{vport}", &vip.port().to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests;
