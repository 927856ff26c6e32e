//! The snapshot itself ([`Snapshot`]) and its fast-path lookups, which
//! never allocate: services in a small open-addressing table, VIPs in a
//! sorted array, real servers in a slot-indexed array.

use super::addr::fold6;
use super::group::Member;
use super::index::svc_hash;
use super::service::{Dest, Service};
use crate::lb::mark::Compiled;
use crate::lb::snat::Snat4;
use crate::lb::spec::Timeouts;
use crate::lb::state::TimeoutTable;
use crate::lb::tunnel::Tunnel;

/// Immutable forwarding configuration (see the module docs).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Monotonic version given by the control thread.
    pub epoch: u64,
    pub(super) services: Vec<Service>,
    /// The address member keys of service groups, each with its
    /// service's index (the index's entries past the services).
    pub(super) members: Vec<Member>,
    pub(super) svc_index: Vec<u32>,
    pub(super) svc_index6: Vec<u32>,
    pub(super) vips: Vec<u32>,
    pub(super) vips6: Vec<u128>,
    pub(super) dest_by_slot: Vec<(u32, u32)>,
    /// Each real-server slot's tunnel (IPIP for a free slot or a non-TUN
    /// server).
    pub(super) tun_by_slot: Vec<Tunnel>,
    /// Whether any real server tunnels with GUE or GRE: when not, TUN
    /// reads no per-server tunnel (IPIP's path stays as it was).
    pub(super) tun_encap: bool,
    pub(super) svc_slots: u32,
    pub(super) any_port_zero: bool,
    /// Connection timeouts.
    pub timeouts: TimeoutTable,
    /// The configured timeouts as given (`ipvsadm -L --timeout`).
    pub raw_timeouts: Timeouts,
    /// TUN outer source (host order); None = the egress port's address.
    pub tunnel_src: Option<u32>,
    /// NAT64 pool addresses (host order, sorted).
    pub nat64_pool: Vec<u32>,
    /// The IPv4 addresses replies come back to from a port dirigo chose,
    /// each worker's ports its own: the NAT64 pool, every service's
    /// FullNAT local addresses and the SNAT pools (host order, sorted, no
    /// duplicates).
    pub pool4: Vec<u32>,
    /// Every IPv6 service's FullNAT local addresses (sorted, no
    /// duplicates): their replies' owner is the worker of their port.
    pub pool6: Vec<u128>,
    /// Whether a service forwards IPv4 by FullNAT.
    pub fullnat4: bool,
    /// Whether a service carries the client's address to its real
    /// servers (`client_address`): the workers then keep the per-record
    /// state it needs (`lb::balancer::client_addr`).
    pub client_address: bool,
    /// IPVS `expire_nodest_conn`.
    pub expire_nodest_conn: bool,
    /// IPVS `sloppy_tcp`.
    pub sloppy_tcp: bool,
    /// The IPv4 mark rules, each with its fwmark service (read only
    /// where the service lookup misses).
    pub(super) marks4: Vec<Compiled<u32>>,
    /// The IPv6 mark rules.
    pub(super) marks6: Vec<Compiled<u128>>,
    /// The IPv4 SNAT rules, in order (read only where the IPv4 path
    /// misses: no connection, no service, no VIP).
    pub(super) snat4: Vec<Snat4>,
}

/// What the mark rules say of a packet no ordinary service takes.
#[derive(Clone, Copy, Debug)]
pub enum MarkHit<'a> {
    /// A rule gave it a mark whose fwmark service is this one (its index).
    Service(usize, &'a Service),
    /// A rule gave it this mark, which no fwmark service of the family has.
    NoService(u32),
}

impl Snapshot {
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
            let i = *self.svc_index.get(h & mask)? as usize;
            match self.services.get(i) {
                Some(s) => {
                    let k = &s.spec.key;
                    if k.proto.number() == proto && s.vip4 == vip && k.port == port {
                        return Some((i, s));
                    }
                }
                // a group's member key, or the empty slot that ends the
                // probe (no member there)
                None => {
                    let m = self.members.get(i - self.services.len())?;
                    if m.proto == proto && !m.v6 && m.vip4 == vip && m.port == port {
                        return self.member_service(m);
                    }
                }
            }
            h = h.wrapping_add(1);
        }
        None
    }

    /// The service a group's member key `m` reaches.
    #[inline(never)]
    fn member_service(&self, m: &Member) -> Option<(usize, &Service)> {
        let s = self.services.get(m.svc as usize)?;
        Some((m.svc as usize, s))
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
            let i = *self.svc_index6.get(h & mask)? as usize;
            match self.services.get(i) {
                Some(s) => {
                    let k = &s.spec.key;
                    if k.proto.number() == proto
                        && k.vip.is_ipv6()
                        && s.vip6 == vip
                        && k.port == port
                    {
                        return Some((i, s));
                    }
                }
                None => {
                    let m = self.members.get(i - self.services.len())?;
                    if m.proto == proto && m.v6 && m.vip6 == vip && m.port == port {
                        return self.member_service(m);
                    }
                }
            }
            h = h.wrapping_add(1);
        }
        None
    }

    /// The fwmark service of an IPv4 packet the service lookup missed:
    /// None when no mark rule matches it. Out of line: only a miss
    /// reaches it, and the hot path keeps its size.
    #[inline(never)]
    pub fn mark_service(&self, proto: u8, src: u32, dst: u32, dport: u16) -> Option<MarkHit<'_>> {
        let r = self
            .marks4
            .iter()
            .find(|r| r.matches(proto, src, dst, dport))?;
        Some(self.mark_hit(r.svc, r.mark))
    }

    /// [`Self::mark_service`] for IPv6.
    #[inline(never)]
    pub fn mark_service6(
        &self,
        proto: u8,
        src: u128,
        dst: u128,
        dport: u16,
    ) -> Option<MarkHit<'_>> {
        let r = self
            .marks6
            .iter()
            .find(|r| r.matches(proto, src, dst, dport))?;
        Some(self.mark_hit(r.svc, r.mark))
    }

    fn mark_hit(&self, svc: u32, mark: u32) -> MarkHit<'_> {
        match self.services.get(svc as usize) {
            Some(s) => MarkHit::Service(svc as usize, s),
            None => MarkHit::NoService(mark),
        }
    }

    /// Whether any IPv4 mark rule exists (the steering asks before it
    /// matches a packet that is not to a VIP).
    #[inline(always)]
    pub fn has_marks4(&self) -> bool {
        !self.marks4.is_empty()
    }

    /// Whether any IPv4 SNAT rule exists (asked before the rules are
    /// matched, only where the IPv4 path missed).
    #[inline(always)]
    pub fn has_snat4(&self) -> bool {
        !self.snat4.is_empty()
    }

    /// The SNAT rule (its index, the rule) whose source prefix holds
    /// `src`. Out of line: only a miss reaches it.
    #[inline(never)]
    pub fn snat_rule4(&self, src: u32) -> Option<(usize, &Snat4)> {
        self.snat4.iter().enumerate().find(|(_, r)| r.matches(src))
    }

    /// The IPv4 SNAT rules, in order.
    pub fn snat4(&self) -> &[Snat4] {
        &self.snat4
    }

    /// Whether any IPv6 mark rule exists.
    #[inline(always)]
    pub fn has_marks6(&self) -> bool {
        !self.marks6.is_empty()
    }

    /// Whether `addr` is a NAT64 pool address, a FullNAT local address or
    /// an SNAT pool address (the replies of NAT64, IPv4 FullNAT and SNAT
    /// connections come back to it, to the worker owning their
    /// destination port).
    #[inline]
    pub fn is_pool4(&self, addr: u32) -> bool {
        !self.pool4.is_empty() && self.pool4.binary_search(&addr).is_ok()
    }

    /// Whether `addr` is an IPv6 FullNAT local address.
    #[inline]
    pub fn is_pool6(&self, addr: u128) -> bool {
        !self.pool6.is_empty() && self.pool6.binary_search(&addr).is_ok()
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

    /// The tunnel of real-server slot `slot`: IPIP unless a real server
    /// there tunnels with GUE or GRE.
    #[inline(always)]
    pub fn tunnel(&self, slot: u32) -> Tunnel {
        if !self.tun_encap {
            return Tunnel::IPIP;
        }
        self.tun_by_slot
            .get(slot as usize)
            .copied()
            .unwrap_or(Tunnel::IPIP)
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
