//! The control thread's state: the configured services, addresses, routes
//! and neighbors, and how a change becomes a new snapshot for the workers.
//!
//! Every change is applied to a copy, validated by building the new
//! snapshot, and only then committed and published (arc-swap store): an
//! invalid request changes nothing, and a valid one never pauses a worker.
//! A committed change to the table or the timeouts is saved to the state
//! file, when one is configured, before the request is answered.

pub mod state_file;

use crate::dataplane::shared::Shared;
use crate::lb::mark::MarkRule;
use crate::lb::snapshot::{BuildError, LbIds, Snapshot, SnapshotBuilder};
use crate::lb::spec::Timeouts;
use crate::net::addr::{Ipv4Cidr, Ipv6Cidr, OwnAddrs};
use crate::net::neigh::NeighTable;
use crate::net::route::{RouteTable, StaticRoute};
use crate::net::route6::{RouteTable6, StaticRoute6};
use crate::net::view::NetView;
use dirigo_proto::proto::{CtlError, ErrCode};
use std::collections::HashSet;
use std::sync::Arc;

pub use apply::{apply, ServiceTable};

pub mod apply;

/// Data-plane settings the snapshot builder needs.
#[derive(Debug, Clone)]
pub struct LbSettings {
    /// Outer source for IPIP.
    pub tunnel_source: Option<std::net::Ipv4Addr>,
    /// IPVS expire_nodest_conn.
    pub expire_nodest_conn: bool,
    /// IPVS sloppy_tcp.
    pub sloppy_tcp: bool,
    /// Number of workers (thresholds are split between them).
    pub workers: u32,
    /// Maglev table size.
    pub mh_table_size: u32,
    /// The workers keep SYN proxy state (`[dataplane] synproxy`).
    pub synproxy: bool,
    /// NAT64 pool addresses (`[dataplane] nat64_pool`).
    pub nat64_pool: Vec<std::net::Ipv4Addr>,
    /// SNAT rules (`[[snat]]`): the real servers' own connections
    /// masqueraded through a pool address.
    pub snat: Vec<crate::lb::snat::SnatRule>,
}

/// The control thread's IPv6 routes and neighbours.
#[derive(Debug, Default)]
pub struct Net6State {
    /// Static IPv6 routes.
    pub static_routes: Vec<StaticRoute6>,
    /// The IPv6 neighbour table (resolved with Neighbour Discovery).
    pub neigh: NeighTable<u128>,
}

/// Everything the control thread owns (behind one mutex; never touched by
/// a worker).
pub struct ControlState {
    /// Services and their real servers.
    pub services: ServiceTable,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// Stable slots.
    pub ids: LbIds,
    /// Epoch of the published snapshot.
    pub epoch: u64,
    /// Port addresses (VIPs are derived from services).
    pub port_addrs: Vec<(u16, Ipv4Cidr)>,
    /// The ports' IPv6 addresses: each port's link-local address (from
    /// its MAC) and the configured ones.
    pub port_addrs6: Vec<(u16, Ipv6Cidr)>,
    /// Static routes.
    pub static_routes: Vec<StaticRoute>,
    /// Neighbor table.
    pub neigh: NeighTable,
    /// IPv6 routes and neighbours.
    pub net6: Net6State,
    /// Settings.
    pub settings: LbSettings,
    /// Addresses that want a gratuitous ARP (new VIPs, new addresses).
    pub pending_garp: Vec<u32>,
    /// IPv6 VIPs to announce with an unsolicited Neighbour Advertisement
    /// (newly added ones), sent by the control loop on every port.
    pub pending_na6: Vec<u128>,
    /// Health checks: the checked servers' state, quorum, withdrawn VIPs
    /// (an input to the snapshot: see [`ControlState::build`]).
    pub health: crate::daemon::health::HealthState,
    /// Where the table is saved after every change (`[control]
    /// state_file`), when configured.
    pub state_file: Option<state_file::StateFile>,
    /// The mark rules (`[[mark]]`, `dirigoctl mark`): what gives packets
    /// to fwmark services.
    pub marks: Vec<MarkRule>,
    /// Whether the state file keeps the mark rules (a section, even an
    /// empty one): once the config has some or they changed at runtime,
    /// so that a restart brings back what was last set.
    pub marks_saved: bool,
}

/// Map a snapshot build error to the protocol's error.
pub fn build_error(e: BuildError) -> CtlError {
    match e {
        BuildError::DuplicateService(_) => CtlError::service_exists(),
        BuildError::DuplicateDest(..) => CtlError::dest_exists(),
        BuildError::TooManyServices(_) | BuildError::TooManyDests(_) => {
            CtlError::new(ErrCode::NoMemory, e.to_string())
        }
        other => CtlError::invalid(other.to_string()),
    }
}

impl ControlState {
    /// Own addresses for `services` (port addresses + their VIPs, but for
    /// the VIPs withdrawn because their services lost the quorum).
    pub fn own_addrs(&self, services: &ServiceTable) -> OwnAddrs {
        let mut a = OwnAddrs::new();
        for (p, c) in &self.port_addrs {
            let _ = a.add_port_addr(*p, *c);
        }
        for (p, c) in &self.port_addrs6 {
            let _ = a.add_port_addr6(*p, *c);
        }
        let (v4, v6) = self.answered(services);
        a.set_vips(v4);
        a.set_vips6(v6);
        a
    }

    /// The addresses the workers answer ARP (ND) and ping for besides the
    /// ports' own: the announced VIPs, the NAT64 pool, every FullNAT
    /// local address and every SNAT pool address (the replies of the
    /// connections they carry come back to them).
    pub fn answered(&self, services: &ServiceTable) -> (HashSet<u32>, HashSet<u128>) {
        let laddrs = || services.iter().flat_map(|(s, _)| s.local_addresses.iter());
        let v4 = self
            .announced(services)
            .into_iter()
            .chain(self.settings.nat64_pool.iter().map(|&p| u32::from(p)))
            .chain(
                laddrs()
                    .chain(self.settings.snat.iter().flat_map(|r| r.pool.iter()))
                    .filter_map(|a| match a {
                        std::net::IpAddr::V4(v) => Some(u32::from(*v)),
                        _ => None,
                    }),
            )
            .collect();
        let v6 = self
            .announced6(services)
            .into_iter()
            .chain(laddrs().filter_map(|a| match a {
                std::net::IpAddr::V6(v) => Some(u128::from(*v)),
                _ => None,
            }))
            .collect();
        (v4, v6)
    }

    /// The VIPs of `services` dirigo answers ARP and ping for.
    pub fn announced(&self, services: &ServiceTable) -> HashSet<u32> {
        services
            .iter()
            // a service group's member VIPs too, withdrawn with its service
            .filter(|(s, _)| !self.health.withdrawn.contains(&s.key.vip))
            .flat_map(|(s, _)| std::iter::once(&s.key).chain(&s.members))
            .filter(|k| !k.is_fwmark())
            .filter_map(|k| match k.vip {
                std::net::IpAddr::V4(v) => Some(u32::from(v)),
                _ => None,
            })
            .chain(self.mark_hosts().filter_map(|a| match a {
                std::net::IpAddr::V4(v) => Some(u32::from(v)),
                _ => None,
            }))
            .collect()
    }

    /// The destinations of host mark rules (/32, /128): dirigo answers
    /// ARP (ND) and ping for them as for VIPs. A wider prefix is routed
    /// to dirigo by the router.
    fn mark_hosts(&self) -> impl Iterator<Item = std::net::IpAddr> + '_ {
        self.marks
            .iter()
            .filter(|r| r.dst.len == if r.is_ipv6() { 128 } else { 32 })
            .map(|r| r.dst.addr)
    }

    /// The IPv6 VIPs of `services` dirigo answers neighbour solicitations
    /// and echo requests for.
    pub fn announced6(&self, services: &ServiceTable) -> HashSet<u128> {
        services
            .iter()
            // a service group's member VIPs too, withdrawn with its service
            .filter(|(s, _)| !self.health.withdrawn.contains(&s.key.vip))
            .flat_map(|(s, _)| std::iter::once(&s.key).chain(&s.members))
            .filter(|k| !k.is_fwmark())
            .filter_map(|k| match k.vip {
                std::net::IpAddr::V6(v) => Some(u128::from(v)),
                _ => None,
            })
            .chain(self.mark_hosts().filter_map(|a| match a {
                std::net::IpAddr::V6(v) => Some(u128::from(v)),
                _ => None,
            }))
            .collect()
    }

    /// Build (and so validate) a snapshot for `services` and `timeouts`
    /// without committing anything.
    fn build(
        &mut self,
        services: &ServiceTable,
        timeouts: Timeouts,
        epoch: u64,
    ) -> Result<Snapshot, CtlError> {
        let addrs = self.own_addrs(services);
        let on_link = |a: std::net::IpAddr| match a {
            std::net::IpAddr::V4(v) => addrs.on_link(u32::from(v)).is_some(),
            std::net::IpAddr::V6(v) => addrs.on_link6(u128::from(v)).is_some(),
        };
        let mut b = SnapshotBuilder::new();
        b.timeouts(timeouts)
            .tunnel_src(self.settings.tunnel_source)
            .nat64_pool(&self.settings.nat64_pool)
            .expire_nodest_conn(self.settings.expire_nodest_conn)
            .sloppy_tcp(self.settings.sloppy_tcp)
            .threshold_divisor(self.settings.workers.max(1))
            .mh_table_size(self.settings.mh_table_size as usize)
            .synproxy(self.settings.synproxy)
            .marks(&self.marks)
            .snat(&self.settings.snat)
            .on_link(&on_link);
        // the workers forward with the effective table: health checks'
        // verdicts (inhibit, remove, sorry server) over the configured one
        for (s, d) in self.health.effective(services) {
            b.service(s, d);
        }
        for (s, client, d) in self.health.pins() {
            b.pin(s, client, d);
        }
        // Build on a copy of the ids so a failure leaves them untouched.
        let mut ids = self.ids.clone();
        let snap = b.build(&mut ids, epoch).map_err(build_error)?;
        self.ids = ids;
        Ok(snap)
    }

    /// Validate and commit a new service table / timeouts, publishing the
    /// snapshot (and new addresses when the VIP set changed).
    pub fn commit(
        &mut self,
        shared: &Shared,
        services: ServiceTable,
        timeouts: Timeouts,
    ) -> Result<(), CtlError> {
        let epoch = self.epoch + 1;
        // what the workers answer ARP and ping for now
        let old_vips: HashSet<u32> = shared.net.load().addrs().vips().iter().copied().collect();
        let old_vips6: HashSet<u128> = shared.net.load().addrs().vips6().iter().copied().collect();
        let now = crate::clock::now_ns();
        self.health.update_quorum(&services, now);
        let snap = match self.build(&services, timeouts, epoch) {
            Ok(s) => s,
            Err(e) => {
                self.health.update_quorum(&self.services, now);
                return Err(e);
            }
        };
        // (a local address added to a service changes them as a VIP does)
        let (new_vips, new_vips6) = self.answered(&services);
        self.services = services;
        self.timeouts = timeouts;
        self.epoch = epoch;
        if old_vips != new_vips || old_vips6 != new_vips6 {
            // Addresses first: a worker that sees the new service also
            // answers ARP (NS) and ping for its VIP.
            self.publish_net(shared)?;
            for v in new_vips.difference(&old_vips) {
                self.pending_garp.push(*v);
            }
            for v in new_vips6.difference(&old_vips6) {
                self.pending_na6.push(*v);
            }
        }
        shared.lb.store(Arc::new(snap));
        // saved before the change is acknowledged (the caller answers
        // after this); a failed write is logged and counted, never fatal
        if let Some(f) = &mut self.state_file {
            let marks = self.marks_saved.then_some(self.marks.as_slice());
            let _ = f.save(&self.services, &self.timeouts, marks);
        }
        Ok(())
    }

    /// Validate and commit new mark rules (with the current table),
    /// publishing the snapshot; on a refusal the rules stay as they were.
    pub fn commit_marks(&mut self, shared: &Shared, marks: Vec<MarkRule>) -> Result<(), CtlError> {
        let old = std::mem::replace(&mut self.marks, marks);
        let was_saved = std::mem::replace(&mut self.marks_saved, true);
        let (t, timeouts) = (self.services.clone(), self.timeouts);
        let r = self.commit(shared, t, timeouts);
        if r.is_err() {
            self.marks = old;
            self.marks_saved = was_saved;
        }
        r
    }

    /// Publish the current table again after health changed it (effective
    /// weights, quorum, withdrawn VIPs).
    pub fn refresh(&mut self, shared: &Shared) -> Result<(), CtlError> {
        let (t, timeouts) = (self.services.clone(), self.timeouts);
        self.commit(shared, t, timeouts)
    }

    /// Rebuild and publish addresses and routes (neighbors kept).
    pub fn publish_net(&mut self, shared: &Shared) -> Result<(), CtlError> {
        let addrs = self.own_addrs(&self.services);
        let routes = RouteTable::new(&addrs, &self.static_routes)
            .map_err(|e| CtlError::invalid(e.to_string()))?;
        let routes6 = RouteTable6::new(&addrs, &self.net6.static_routes)
            .map_err(|e| CtlError::invalid(e.to_string()))?;
        let cur = shared.net.load();
        shared.net.store(Arc::new(
            cur.with_addrs_routes(Arc::new(addrs), Arc::new(routes))
                .with_routes6(Arc::new(routes6)),
        ));
        Ok(())
    }

    /// Publish the neighbor tables (IPv4, IPv6) that changed.
    pub fn publish_neigh(&mut self, shared: &Shared) {
        let (v4, v6) = (self.neigh.take_changed(), self.net6.neigh.take_changed());
        if !(v4 || v6) {
            return;
        }
        let cur = shared.net.load();
        let mut v: NetView = (**cur).clone();
        if v4 {
            v = v.with_neigh(Arc::new(self.neigh.snapshot()));
        }
        if v6 {
            v = v.with_neigh6(Arc::new(self.net6.neigh.snapshot()));
        }
        shared.net.store(Arc::new(v));
    }
}
