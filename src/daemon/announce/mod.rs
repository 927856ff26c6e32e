//! Announcing VIPs to a routing daemon (`[announce]`): a route per
//! announced VIP in the exception namespace — `VIP/32 dev IFACE scope link
//! table T proto P` for an IPv4 VIP, `VIP/128` for an IPv6 one (the same
//! code: a VIP is an `IpAddr`, its host prefix its family's width),
//! through the kernel interface of the port towards the routers — which the routing daemon there (BIRD's kernel protocol with
//! `learn`, FRR's `redistribute`) exports over BGP. Removing the route
//! withdraws the VIP. The routes go through a tap dirigo holds open, so
//! they vanish with it when dirigo dies, even by SIGKILL.
//!
//! Which VIPs are announced is the health state's decision, the same one
//! that answers ARP and neighbour solicitations for them
//! ([`ControlState::announced`], [`ControlState::announced6`]: a VIP is
//! withdrawn when every service on it lost its quorum). The control loop
//! reconciles the kernel's routes with it when the snapshot's epoch
//! changes, retries a failure every second and checks the routes every few
//! seconds (a route someone removed comes back); never on a worker. At
//! SIGTERM every route is withdrawn first ([`Announcer::drain`]), the
//! workers keep forwarding for `drain_ms` while the routers move the flows
//! to the other directors, then dirigo stops.
//!
//! With `[sync]` receiving, a director that starts holds its VIPs back
//! ([`SyncHold`]) until the other directors' tables arrived (its hello
//! answered, then quiet) or `[announce] sync_wait_ms` passed: the routers
//! move flows to it only once it knows them.

use crate::daemon::control::ControlState;
use crate::daemon::health::{service_name, HealthState};
use crate::health::engine::JobKey;
use crate::kernel::link::Rtnl;
use crate::kernel::netns::Netns;
use crate::kernel::route::DevRoute;
use crate::lb::spec::{DestSpec, ServiceSpec};
use dirigo_config::Announce;
use dirigo_proto::view::{VipInfo, VipReport};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

/// Seconds between two checks of the kernel's routes when nothing changed.
pub const VERIFY_NS: u64 = 2_000_000_000;
/// Nanoseconds before a failed route change is tried again.
pub const RETRY_NS: u64 = 1_000_000_000;

/// How long received sync connections must stop arriving (and the
/// workers' inbound queues be empty) before the start-up hold ends.
pub const SYNC_QUIET_NS: u64 = 300_000_000;

/// The start-up hold of a director with `[sync]` receiving: its VIPs are
/// not announced until the peers' tables arrived — connections were
/// received and then none for [`SYNC_QUIET_NS`], all installed — or the
/// wait ran out (no peer, or peers with empty tables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncHold {
    /// The wait's end (daemon clock, ns).
    until_ns: u64,
    /// The received-connections count last seen, and when it changed.
    last_count: u64,
    last_change_ns: u64,
    /// Connections arrived since the start.
    seen: bool,
}

impl SyncHold {
    /// A hold from `now_ns` for at most `wait_ns`; `received` is the sync
    /// thread's received-connections count now (what arrives later counts).
    pub fn new(now_ns: u64, wait_ns: u64, received: u64) -> SyncHold {
        SyncHold {
            until_ns: now_ns.saturating_add(wait_ns),
            last_count: received,
            last_change_ns: now_ns,
            seen: false,
        }
    }

    /// Whether the hold goes on, given the received-connections count and
    /// whether every worker installed what it was handed.
    pub fn holding(&mut self, received: u64, installed_all: bool, now_ns: u64) -> bool {
        if received != self.last_count {
            self.last_count = received;
            self.last_change_ns = now_ns;
            self.seen = true;
        }
        let quiet = now_ns.saturating_sub(self.last_change_ns) >= SYNC_QUIET_NS;
        now_ns < self.until_ns && !(self.seen && quiet && installed_all)
    }

    /// Why a VIP is held, for `dirigoctl vips`.
    pub fn why(&self) -> &'static str {
        "holding: waiting for the other directors' connections ([sync])"
    }
}

/// What dirigo wants for one VIP, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Want {
    /// The VIP.
    pub vip: IpAddr,
    /// Announce it (the health state has not withdrawn it).
    pub announce: bool,
    /// Why (`quorum: TCP 10.0.0.100:80 3/3 up`).
    pub why: String,
}

/// A VIP's announce state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Its route is in the kernel.
    Announced,
    /// No route: its services lost their quorum.
    Withdrawn,
    /// No route: dirigo is stopping.
    Draining,
    /// The route could not be added or removed.
    Error,
}

impl State {
    /// Its name in `dirigoctl vips`.
    pub fn name(self) -> &'static str {
        match self {
            State::Announced => "announced",
            State::Withdrawn => "withdrawn",
            State::Draining => "draining",
            State::Error => "error",
        }
    }
}

/// One VIP's state, for `dirigoctl vips` and the metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VipStatus {
    /// The state.
    pub state: State,
    /// Why.
    pub why: String,
    /// Since when (daemon clock, ns).
    pub since_ns: u64,
}

/// What the announcer counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Routes added.
    pub added: u64,
    /// Routes removed.
    pub removed: u64,
    /// Failed attempts (listing, adding or removing).
    pub failures: u64,
}

/// The kernel's side, behind a trait so the logic is tested without one.
pub trait Routes {
    /// The VIPs that have one of our routes (table and protocol ours).
    fn list(&mut self) -> Result<BTreeSet<IpAddr>, String>;
    /// Add (or replace) a VIP's route.
    fn add(&mut self, vip: IpAddr) -> Result<(), String>;
    /// Remove a VIP's route (absent is fine).
    fn del(&mut self, vip: IpAddr) -> Result<(), String>;
}

/// A host route's prefix length: the family's width (32, 128).
pub fn host_prefix(a: IpAddr) -> u8 {
    use crate::net::family::{Family, V4, V6};
    match a {
        IpAddr::V4(_) => V4::BITS,
        IpAddr::V6(_) => V6::BITS,
    }
}

/// The routes of `[announce]` in the exception namespace, over one
/// netlink socket bound there (opened again after a failure).
pub struct KernelRoutes {
    cfg: Announce,
    netns: Option<Netns>,
    nl: Option<Rtnl>,
}

impl KernelRoutes {
    /// The routes of `cfg`, in `netns` (`None`: dirigo's own namespace).
    pub fn new(cfg: Announce, netns: Option<&str>) -> Result<KernelRoutes, String> {
        let netns = match netns {
            Some(n) => Some(Netns::open(n).map_err(|e| e.to_string())?),
            None => None,
        };
        Ok(KernelRoutes {
            cfg,
            netns,
            nl: None,
        })
    }

    fn socket(&mut self) -> Result<&mut Rtnl, String> {
        if self.nl.is_none() {
            let nl = match &self.netns {
                Some(ns) => Rtnl::open_in(ns),
                None => Rtnl::open(),
            };
            self.nl = Some(nl.map_err(|e| e.to_string())?);
        }
        Ok(self.nl.as_mut().expect("just opened"))
    }

    /// Run `f` with the socket; a failure closes it (a fresh one next time).
    fn with<T>(
        &mut self,
        f: impl FnOnce(&mut Rtnl, &Announce) -> Result<T, crate::kernel::KernelError>,
    ) -> Result<T, String> {
        let cfg = self.cfg.clone();
        let r = f(self.socket()?, &cfg).map_err(|e| e.to_string());
        if r.is_err() {
            self.nl = None;
        }
        r
    }

    fn route(&mut self, vip: IpAddr) -> Result<DevRoute, String> {
        let name = self.cfg.interface.clone();
        let oif = self
            .with(|nl, _| nl.index_of(&name))?
            .ok_or_else(|| format!("interface '{name}' not found"))?;
        Ok(DevRoute {
            dst: vip,
            prefix_len: host_prefix(vip),
            oif,
            table: self.cfg.table,
            protocol: self.cfg.protocol,
        })
    }
}

impl Routes for KernelRoutes {
    fn list(&mut self) -> Result<BTreeSet<IpAddr>, String> {
        let name = self.cfg.interface.clone();
        let oif = self.with(|nl, _| nl.index_of(&name))?;
        let routes = self.with(|nl, c| nl.routes(c.table, c.protocol))?;
        // a /32 (/128) through another interface is stale: reported
        // absent, so it is replaced (add) or removed (del by destination)
        Ok(routes
            .into_iter()
            .filter(|r| r.prefix_len == host_prefix(r.dst) && Some(r.oif) == oif)
            .map(|r| r.dst)
            .collect())
    }

    fn add(&mut self, vip: IpAddr) -> Result<(), String> {
        let r = self.route(vip)?;
        self.with(|nl, _| nl.add_route(&r))
    }

    fn del(&mut self, vip: IpAddr) -> Result<(), String> {
        let r = self.route(vip)?;
        self.with(|nl, _| nl.del_route(&r)).map(drop)
    }
}

/// The announce state: what is in the kernel, each VIP's state, counters.
pub struct Announcer<R: Routes> {
    /// The settings.
    pub cfg: Announce,
    routes: R,
    /// Each VIP's state (VIPs no longer configured are forgotten once
    /// their route is gone).
    pub vips: BTreeMap<IpAddr, VipStatus>,
    /// Stopping: every route withdrawn.
    pub draining: bool,
    /// Counters.
    pub counts: Counts,
    /// The snapshot epoch last reconciled.
    epoch: u64,
    /// When the last reconcile ran (daemon clock, ns) and whether it failed.
    last_ns: u64,
    failed: bool,
    /// The start-up hold, while it lasts.
    pub hold: Option<SyncHold>,
}

impl<R: Routes> Announcer<R> {
    /// An announcer that has not looked at the kernel yet.
    pub fn new(cfg: Announce, routes: R) -> Self {
        Announcer {
            cfg,
            routes,
            vips: BTreeMap::new(),
            draining: false,
            counts: Counts::default(),
            epoch: u64::MAX,
            last_ns: 0,
            failed: false,
            hold: None,
        }
    }

    /// Hold the VIPs back at start ([`SyncHold`]).
    pub fn with_hold(mut self, hold: SyncHold) -> Self {
        self.hold = Some(hold);
        self
    }

    /// Feed the start-up hold; when it ends, the next tick reconciles (the
    /// held VIPs are announced).
    pub fn hold_tick(&mut self, received: u64, installed_all: bool, now_ns: u64) {
        if let Some(h) = &mut self.hold {
            if !h.holding(received, installed_all, now_ns) {
                eprintln!(
                    "dirigo: announce: start-up hold over ({})",
                    if h.seen {
                        "the other directors' connections are installed"
                    } else {
                        "sync_wait_ms passed"
                    }
                );
                self.hold = None;
                self.epoch = u64::MAX;
            }
        }
    }

    /// Whether the control loop should reconcile now: the epoch changed,
    /// a failure waits for its retry, or the routes are due a check.
    pub fn due(&self, epoch: u64, now_ns: u64) -> bool {
        let since = now_ns.saturating_sub(self.last_ns);
        epoch != self.epoch
            || (self.failed && since >= RETRY_NS)
            || since >= VERIFY_NS
            || self.last_ns == 0
    }

    /// Stop announcing: withdraw every route now.
    pub fn drain(&mut self, wants: &[Want], now_ns: u64) {
        self.draining = true;
        self.reconcile(wants, self.epoch, now_ns);
    }

    /// Bring the kernel's routes in line with `wants` (none while
    /// draining); routes of VIPs not in `wants` (removed, or left by an
    /// earlier run) are removed. Each failure is counted, logged and
    /// shown as the VIP's state, and tried again after [`RETRY_NS`].
    pub fn reconcile(&mut self, wants: &[Want], epoch: u64, now_ns: u64) {
        self.epoch = epoch;
        self.last_ns = now_ns.max(1);
        self.failed = false;
        let present = match self.routes.list() {
            Ok(p) => p,
            Err(e) => {
                self.counts.failures += 1;
                self.failed = true;
                let why = format!("cannot list the routes: {e}");
                for w in wants {
                    self.set(w.vip, State::Error, &why, now_ns);
                }
                return;
            }
        };
        for w in wants {
            let (target, why) = match (self.draining, w.announce) {
                (true, _) => (State::Draining, "draining (SIGTERM)".to_string()),
                (false, true) if self.hold.is_some() => (
                    State::Withdrawn,
                    self.hold
                        .as_ref()
                        .map(|h| h.why())
                        .unwrap_or_default()
                        .to_string(),
                ),
                (false, true) => (State::Announced, w.why.clone()),
                (false, false) => (State::Withdrawn, w.why.clone()),
            };
            let here = present.contains(&w.vip);
            let r = match (target == State::Announced, here) {
                (true, false) => self.routes.add(w.vip).map(|()| self.counts.added += 1),
                (false, true) => self.routes.del(w.vip).map(|()| self.counts.removed += 1),
                _ => Ok(()),
            };
            match r {
                Ok(()) => self.set(w.vip, target, &why, now_ns),
                Err(e) => {
                    self.counts.failures += 1;
                    self.failed = true;
                    let verb = if target == State::Announced {
                        "add"
                    } else {
                        "remove"
                    };
                    self.set(
                        w.vip,
                        State::Error,
                        &format!("cannot {verb} the route: {e}"),
                        now_ns,
                    );
                }
            }
        }
        let wanted: BTreeSet<IpAddr> = wants.iter().map(|w| w.vip).collect();
        for &vip in present.difference(&wanted) {
            match self.routes.del(vip) {
                Ok(()) => {
                    self.counts.removed += 1;
                    eprintln!("dirigo: announce: VIP {vip} withdrawn (no service on it)");
                }
                Err(e) => {
                    self.counts.failures += 1;
                    self.failed = true;
                    let why = format!("cannot remove the route of a VIP without a service: {e}");
                    self.set(vip, State::Error, &why, now_ns);
                }
            }
        }
        let failed: BTreeSet<IpAddr> = self
            .vips
            .iter()
            .filter(|(_, s)| s.state == State::Error)
            .map(|(v, _)| *v)
            .collect();
        self.vips
            .retain(|v, _| wanted.contains(v) || (failed.contains(v) && present.contains(v)));
    }

    /// Record a VIP's state, logging a change.
    fn set(&mut self, vip: IpAddr, state: State, why: &str, now_ns: u64) {
        let old = self.vips.get(&vip);
        if old.is_none_or(|o| o.state != state || (state == State::Error && o.why != why)) {
            if state == State::Error {
                eprintln!("dirigo: announce: VIP {vip}: {why}");
            } else if old.is_some() || state == State::Announced {
                eprintln!("dirigo: announce: VIP {vip} {} ({why})", state.name());
            }
            self.vips.insert(
                vip,
                VipStatus {
                    state,
                    why: why.to_string(),
                    since_ns: now_ns,
                },
            );
        } else if let Some(s) = self.vips.get_mut(&vip) {
            s.why = why.to_string();
        }
    }

    /// Whether the last reconcile left a failure (a retry is due).
    pub fn failed(&self) -> bool {
        self.failed
    }
}

/// What dirigo wants for every VIP of the table, of both families:
/// announced unless the health state withdrew it
/// ([`ControlState::announced`] and [`ControlState::announced6`], the
/// decision ARP and neighbour discovery answer with), with each service's
/// live servers as the reason.
pub fn wants(st: &ControlState) -> Vec<Want> {
    let announced: std::collections::HashSet<IpAddr> = st
        .announced(&st.services)
        .into_iter()
        .map(|v| std::net::Ipv4Addr::from(v).into())
        .chain(
            st.announced6(&st.services)
                .into_iter()
                .map(|v| std::net::Ipv6Addr::from(v).into()),
        )
        .collect();
    wants_of(&st.services, &st.health, &announced)
}

/// [`wants`] from its parts: the table, its health and the VIPs
/// `ControlState::announced` keeps.
pub fn wants_of(
    services: &[(ServiceSpec, Vec<DestSpec>)],
    health: &HealthState,
    announced: &std::collections::HashSet<IpAddr>,
) -> Vec<Want> {
    let mut by_vip: BTreeMap<IpAddr, Vec<String>> = BTreeMap::new();
    let mut lost_of: BTreeMap<IpAddr, Vec<String>> = BTreeMap::new();
    for (s, dests) in services {
        let text = service_health(health, s, dests);
        // a service group's member VIPs follow its service
        let mut vips = vec![s.key.vip];
        for m in s.members.iter().filter(|m| !m.is_fwmark()) {
            if !vips.contains(&m.vip) {
                vips.push(m.vip);
            }
        }
        for vip in vips {
            if health.quorum_lost.contains(&s.key) {
                lost_of.entry(vip).or_default().push(text.clone());
            }
            by_vip.entry(vip).or_default().push(text.clone());
        }
    }
    by_vip
        .into_iter()
        .map(|(vip, texts)| {
            let announce = announced.contains(&vip);
            let why = if announce {
                format!("quorum: {}", texts.join(", "))
            } else {
                let lost = lost_of.remove(&vip).unwrap_or(texts);
                format!("no quorum: {}", lost.join(", "))
            };
            Want { vip, announce, why }
        })
        .collect()
}

/// `TCP 10.0.0.100:80 2/3 up` (its checked servers that take new
/// connections), or `TCP 10.0.0.100:80 not checked`.
fn service_health(h: &HealthState, s: &ServiceSpec, dests: &[DestSpec]) -> String {
    let checked: Vec<bool> = dests
        .iter()
        .filter_map(|d| {
            h.servers
                .get(&JobKey {
                    service: s.key,
                    rs: d.key,
                })
                .map(|x| x.live())
        })
        .collect();
    let name = service_name(&s.key);
    if checked.is_empty() {
        return format!("{name} not checked");
    }
    let up = checked.iter().filter(|&&l| l).count();
    format!("{name} {up}/{} up", dests.len())
}

/// `dirigoctl vips`: every VIP of the table with its announce state; with
/// no announcer (`[announce]` off) the states are `off` and the reasons
/// the health state's.
pub fn report<R: Routes>(a: Option<&Announcer<R>>, wants: &[Want], now_ns: u64) -> VipReport {
    // a VIP whose route could not be removed after its service went
    let gone = a.into_iter().flat_map(|a| {
        a.vips
            .keys()
            .filter(|v| wants.iter().all(|w| w.vip != **v))
            .map(|&vip| Want {
                vip,
                announce: false,
                why: "no service".into(),
            })
    });
    let all: Vec<Want> = wants.iter().cloned().chain(gone).collect();
    let vips = all
        .iter()
        .map(|w| {
            let s = a.and_then(|a| a.vips.get(&w.vip));
            let (state, why, since) = match (a, s) {
                (None, _) => ("off", w.why.clone(), None),
                (Some(_), None) => ("pending", w.why.clone(), None),
                (Some(_), Some(s)) => (s.state.name(), s.why.clone(), Some(s.since_ns)),
            };
            VipInfo {
                vip: w.vip,
                state: state.into(),
                why,
                since_secs: since.map(|t| now_ns.saturating_sub(t) / 1_000_000_000),
            }
        })
        .collect();
    VipReport {
        enabled: a.is_some(),
        interface: a.map(|a| a.cfg.interface.clone()),
        table: a.map(|a| a.cfg.table),
        protocol: a.map(|a| a.cfg.protocol),
        draining: a.is_some_and(|a| a.draining),
        failures: a.map_or(0, |a| a.counts.failures),
        vips,
    }
}

#[cfg(test)]
mod tests;
