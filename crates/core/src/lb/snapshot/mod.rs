//! The immutable configuration a worker forwards with.
//!
//! The control thread builds a [`Snapshot`] from [`ServiceSpec`]s and
//! [`DestSpec`](crate::lb::spec::DestSpec)s with a [`SnapshotBuilder`]
//! (validating everything), and the integrator publishes it through
//! `arc-swap`; workers load it once per burst. Services and real servers
//! carry stable [`SlotId`]s assigned by the long-lived [`LbIds`] (see
//! [`crate::lb::ids`] for the reuse rule), so connections and counters
//! survive edits.
//!
//! Lookups on the fast path ([`Snapshot::service`], [`Snapshot::is_vip`],
//! [`Snapshot::dest_by_slot`]) never allocate: services sit in a small
//! open-addressing table, VIPs in a sorted array, real servers in a
//! slot-indexed array.

mod build;
mod fingerprint;

pub use build::{BuildError, SnapshotBuilder};
pub use fingerprint::Fingerprint;

use crate::lb::ids::{SlotAllocator, SlotId};
use crate::lb::sched::Prepared;
use crate::lb::spec::{DestKey, Method, ServiceKey, ServiceSpec, Timeouts};
use crate::lb::state::TimeoutTable;
use std::net::IpAddr;

/// A real server as a worker sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dest {
    /// Stable identity (index into per-lcore counters).
    pub id: SlotId,
    /// As configured.
    pub key: DestKey,
    /// IPv4 real server address, host order (0 for an IPv6 one).
    pub addr: u32,
    /// IPv6 real server address, host order (0 for an IPv4 one).
    pub addr6: u128,
    /// Effective port: the configured one for NAT (0 = the service's);
    /// always the service port for DR and TUN (IPVS ignores it there).
    /// 0 only for a port-0 service: the connection then keeps the client's
    /// destination port.
    pub port: u16,
    /// Forwarding method.
    pub method: Method,
    /// Weight (0 = quiesced).
    pub weight: u32,
    /// Upper threshold as applied by one worker (0 = none).
    pub upper: u32,
    /// Lower threshold as applied by one worker (0 = none).
    pub lower: u32,
}

/// A virtual service and its real servers.
#[derive(Clone, Debug)]
pub struct Service {
    /// Stable identity (index into per-lcore counters).
    pub id: SlotId,
    /// As configured.
    pub spec: ServiceSpec,
    /// The IPv4 VIP, host order (0 for an IPv6 service).
    pub vip4: u32,
    /// The IPv6 VIP, host order (0 for an IPv4 service).
    pub vip6: u128,
    /// Real servers, in the order given to [`Prepared::build_ids`].
    pub dests: Vec<Dest>,
    /// Scheduler data for these servers.
    pub prepared: Prepared,
    /// New connections from these client sockets go to one real server,
    /// whatever the scheduler and the weights say (health checks probing
    /// a server through the VIP). Usually empty.
    pub pins: Vec<Pin>,
}

/// A client socket pinned to a real server of a service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pin {
    /// Client address, host order.
    pub src: u32,
    /// Client port.
    pub sport: u16,
    /// Index into the service's `dests`.
    pub dest: u16,
}

impl Service {
    /// The real server a new connection from `src:sport` is pinned to.
    #[inline]
    pub fn pinned(&self, src: u32, sport: u16) -> Option<&Dest> {
        if self.pins.is_empty() {
            return None;
        }
        let p = self
            .pins
            .iter()
            .find(|p| p.src == src && p.sport == sport)?;
        self.dests.get(p.dest as usize)
    }
}

/// The two slot allocators the control thread keeps for the daemon's life.
#[derive(Clone, Debug)]
pub struct LbIds {
    /// Service slots (size of per-lcore service counter arrays).
    pub services: SlotAllocator<ServiceKey>,
    /// Real server slots (size of per-lcore real-server counter arrays).
    pub dests: SlotAllocator<(ServiceKey, DestKey)>,
}

impl LbIds {
    /// Allocators for at most `max_services` services (<= 65536) and
    /// `max_dests` real servers in total.
    pub fn new(max_services: u32, max_dests: u32) -> LbIds {
        LbIds {
            services: SlotAllocator::new(max_services.min(1 << 16)),
            dests: SlotAllocator::new(max_dests),
        }
    }
}

/// An IPv4 address's host-order bits; 0 for IPv6.
#[inline]
pub fn v4_bits(a: IpAddr) -> u32 {
    match a {
        IpAddr::V4(v) => u32::from(v),
        IpAddr::V6(_) => 0,
    }
}

/// An IPv6 address's host-order bits; 0 for IPv4.
#[inline]
pub fn v6_bits(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(_) => 0,
        IpAddr::V6(v) => u128::from(v),
    }
}

/// An IPv6 address folded to 32 bits (scheduler hashes, stable identities).
#[inline]
pub fn fold6(a: u128) -> u32 {
    (a as u32) ^ ((a >> 32) as u32) ^ ((a >> 64) as u32) ^ ((a >> 96) as u32)
}

/// The open-addressing index of the services of one family.
fn index(services: &[Service], v4: bool) -> Vec<u32> {
    let n = services
        .iter()
        .filter(|s| s.spec.key.vip.is_ipv4() == v4)
        .count();
    let tsize = (n * 2).next_power_of_two().max(8);
    let mut idx = vec![u32::MAX; tsize];
    for (i, s) in services.iter().enumerate() {
        if s.spec.key.vip.is_ipv4() != v4 {
            continue;
        }
        let k = &s.spec.key;
        let mut h = svc_hash(k.proto.number(), s.vip4 ^ fold6(s.vip6), k.port) as usize;
        loop {
            let slot = &mut idx[h & (tsize - 1)];
            if *slot == u32::MAX {
                *slot = i as u32;
                break;
            }
            h = h.wrapping_add(1);
        }
    }
    idx
}

#[inline]
fn svc_hash(proto: u8, vip: u32, port: u16) -> u32 {
    let x = ((vip as u64) << 24) ^ ((port as u64) << 8) ^ proto as u64;
    let h = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 32) as u32
}

/// Immutable forwarding configuration (see the module docs).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Monotonic version given by the control thread.
    pub epoch: u64,
    services: Vec<Service>,
    svc_index: Vec<u32>,
    svc_index6: Vec<u32>,
    vips: Vec<u32>,
    vips6: Vec<u128>,
    dest_by_slot: Vec<(u32, u32)>,
    svc_slots: u32,
    any_port_zero: bool,
    /// Connection timeouts.
    pub timeouts: TimeoutTable,
    /// The configured timeouts as given (`ipvsadm -L --timeout`).
    pub raw_timeouts: Timeouts,
    /// TUN outer source (host order); None = the egress port's address.
    pub tunnel_src: Option<u32>,
    /// NAT64 pool addresses (host order, sorted).
    pub nat64_pool: Vec<u32>,
    /// IPVS `expire_nodest_conn`.
    pub expire_nodest_conn: bool,
    /// IPVS `sloppy_tcp`.
    pub sloppy_tcp: bool,
}

impl Snapshot {
    /// An empty snapshot (no services) for `ids`' capacities.
    pub fn empty(ids: &LbIds) -> Snapshot {
        SnapshotBuilder::new()
            .build(&mut ids.clone(), 0)
            .unwrap_or_else(|_| unreachable!("an empty configuration always builds"))
    }

    /// All services, in configuration order.
    pub fn services(&self) -> &[Service] {
        &self.services
    }

    /// The service for (IP protocol number, VIP, port), with its index;
    /// falls back to the VIP's port-0 ("all ports", persistent) service as
    /// IPVS does.
    #[inline]
    pub fn service(&self, proto: u8, vip: u32, port: u16) -> Option<(usize, &Service)> {
        match self.service_exact(proto, vip, port) {
            Some(s) => Some(s),
            None if self.any_port_zero && port != 0 => self.service_exact(proto, vip, 0),
            None => None,
        }
    }

    #[inline]
    fn service_exact(&self, proto: u8, vip: u32, port: u16) -> Option<(usize, &Service)> {
        let mask = self.svc_index.len() - 1;
        let mut h = svc_hash(proto, vip, port) as usize;
        for _ in 0..self.svc_index.len() {
            let i = *self.svc_index.get(h & mask)?;
            let s = self.services.get(i as usize)?;
            let k = &s.spec.key;
            if k.proto.number() == proto && s.vip4 == vip && k.port == port {
                return Some((i as usize, s));
            }
            h = h.wrapping_add(1);
        }
        None
    }

    /// [`Self::service`] for an IPv6 VIP.
    #[inline]
    pub fn service6(&self, proto: u8, vip: u128, port: u16) -> Option<(usize, &Service)> {
        match self.service_exact6(proto, vip, port) {
            Some(s) => Some(s),
            None if self.any_port_zero && port != 0 => self.service_exact6(proto, vip, 0),
            None => None,
        }
    }

    fn service_exact6(&self, proto: u8, vip: u128, port: u16) -> Option<(usize, &Service)> {
        let mask = self.svc_index6.len() - 1;
        let mut h = svc_hash(proto, fold6(vip), port) as usize;
        for _ in 0..self.svc_index6.len() {
            let i = *self.svc_index6.get(h & mask)?;
            let s = self.services.get(i as usize)?;
            let k = &s.spec.key;
            if k.proto.number() == proto && k.vip.is_ipv6() && s.vip6 == vip && k.port == port {
                return Some((i as usize, s));
            }
            h = h.wrapping_add(1);
        }
        None
    }

    /// Whether `addr` is a NAT64 pool address (the replies of NAT64
    /// connections come back to it).
    #[inline]
    pub fn is_nat64_pool(&self, addr: u32) -> bool {
        !self.nat64_pool.is_empty() && self.nat64_pool.binary_search(&addr).is_ok()
    }

    /// Whether `addr` is the VIP of any IPv6 service.
    #[inline]
    pub fn is_vip6(&self, addr: u128) -> bool {
        self.vips6.binary_search(&addr).is_ok()
    }

    /// Every IPv6 VIP, sorted.
    pub fn vips6(&self) -> &[u128] {
        &self.vips6
    }

    /// Whether `addr` is the VIP of any service.
    #[inline]
    pub fn is_vip(&self, addr: u32) -> bool {
        self.vips.binary_search(&addr).is_ok()
    }

    /// The current service and real server holding real-server slot `slot`
    /// (None when that real server has been removed).
    #[inline]
    pub fn dest_by_slot(&self, slot: u32) -> Option<(&Service, &Dest)> {
        let (si, di) = *self.dest_by_slot.get(slot as usize)?;
        let s = self.services.get(si as usize)?;
        Some((s, s.dests.get(di as usize)?))
    }

    /// Size of the real-server counter arrays.
    pub fn dest_slots(&self) -> u32 {
        self.dest_by_slot.len() as u32
    }

    /// Size of the service counter arrays.
    pub fn service_slots(&self) -> u32 {
        self.svc_slots
    }
}

#[cfg(test)]
mod tests;
