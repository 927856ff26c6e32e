//! How the core asks "where does a packet to this address leave, and with
//! which MACs?" — answered by the route table and neighbor snapshot in the
//! data path, by a fake in tests. The answers are written once over the
//! address family ([`NextHopOf`], [`ResolveOf`]); the questions are asked
//! per family ([`Egress`], [`Egress6`]) and, by code written once for
//! both, of an address ([`EgressTo`]).

use crate::net::family::{Addr, Family, V4, V6};

/// Everything needed to put a frame on the wire towards a next hop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextHopOf<F: Family> {
    /// Egress port index.
    pub port: u16,
    /// The egress port's MAC (Ethernet source).
    pub src_mac: [u8; 6],
    /// The next hop's MAC (Ethernet destination).
    pub dst_mac: [u8; 6],
    /// The egress port's source address toward the destination (host
    /// order): IPv4, the port's primary address; IPv6, its global address
    /// whose prefix holds the destination, else its first global one (0
    /// when the port has none). The default tunnel source and the source
    /// of ICMP errors.
    pub src_ip: F::Addr,
    /// The egress port's MTU (IP bytes).
    pub mtu: u16,
}

/// The next hop of an IPv4 destination.
pub type NextHop = NextHopOf<V4>;
/// The next hop of an IPv6 destination.
pub type NextHop6 = NextHopOf<V6>;

/// What a frame that keeps its IP packet as it is (DR) needs of its next
/// hop: the 12 bytes that open its Ethernet header (destination MAC, then
/// source MAC, as on the wire) and the egress port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EthHop {
    /// Destination MAC then source MAC.
    pub macs: [u8; 12],
    /// Egress port index.
    pub port: u16,
}

impl EthHop {
    /// The Ethernet addresses and port of `h`.
    #[inline(always)]
    pub fn of<F: Family>(h: &NextHopOf<F>) -> EthHop {
        use crate::net::wire::ethernet::field::{DST, SRC};
        let mut macs = [0u8; 12];
        macs[DST].copy_from_slice(&h.dst_mac);
        macs[SRC].copy_from_slice(&h.src_mac);
        EthHop { macs, port: h.port }
    }
}

/// Outcome of a next-hop lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolveOf<F: Family> {
    /// Ready to transmit.
    Ready(NextHopOf<F>),
    /// No route to the destination.
    NoRoute,
    /// Route known, neighbor MAC not yet resolved: what to resolve. The
    /// query only reports it; whoever acts on the answer asks the control
    /// thread (the pipeline does, from the core's verdict).
    Unresolved {
        /// The next hop to resolve (by ARP, by a Neighbour Solicitation):
        /// the gateway, or the destination itself when it is on-link (host
        /// order).
        ip: F::Addr,
        /// The egress port it is to be resolved on.
        port: u16,
    },
}

/// Outcome of an IPv4 next-hop lookup.
pub type Resolve = ResolveOf<V4>;
/// Outcome of an IPv6 next-hop lookup.
pub type Resolve6 = ResolveOf<V6>;

/// Next-hop resolution as the forwarding core needs it: a pure query, no
/// side effect.
pub trait Egress {
    /// Route `dst` (host order) and resolve the next hop's MAC.
    fn next_hop(&self, dst: u32) -> Resolve;
    /// The Ethernet addresses and port toward `dst` when its next hop is
    /// ready, as [`Self::next_hop`] would give them ([`EthHop::of`]); `None`
    /// whenever it would not answer `Ready` (the caller then asks
    /// [`Self::next_hop`] for the reason). A cache overrides it to answer
    /// a hit without copying the whole [`NextHop`].
    #[inline(always)]
    fn ready_eth(&self, dst: u32) -> Option<EthHop> {
        match self.next_hop(dst) {
            Resolve::Ready(h) => Some(EthHop::of(&h)),
            _ => None,
        }
    }
    /// The port whose connected network contains `addr`, if any (DR needs
    /// the real server on-link).
    fn on_link(&self, addr: u32) -> Option<u16>;
}

/// [`Egress`] for IPv6 destinations: a pure query, no side effect.
pub trait Egress6 {
    /// Route `dst` and resolve the next hop's MAC.
    fn next_hop6(&self, dst: u128) -> Resolve6;
    /// The Ethernet addresses and port toward `dst` when its next hop is
    /// ready ([`Egress::ready_eth`]'s IPv6 twin, overridden by a cache).
    #[inline(always)]
    fn ready_eth6(&self, dst: u128) -> Option<EthHop> {
        match self.next_hop6(dst) {
            Resolve6::Ready(h) => Some(EthHop::of(&h)),
            _ => None,
        }
    }
    /// The port whose connected IPv6 prefix contains `addr`, if any (DR
    /// needs the real server on-link).
    fn on_link6(&self, addr: u128) -> Option<u16>;
}

/// The egress asked about an address of either family: what code written
/// once over the family (xmit's next hop, DR) calls. Every [`Egress`]
/// answers for `u32`, every [`Egress6`] for `u128`.
pub trait EgressTo<A: Addr> {
    /// Route `dst` and resolve the next hop's MAC.
    fn resolve(&self, dst: A) -> ResolveOf<A::Family>;
    /// The Ethernet addresses and port toward `dst` when its next hop is
    /// ready ([`Egress::ready_eth`]).
    fn ready(&self, dst: A) -> Option<EthHop>;
}

impl<E: Egress + ?Sized> EgressTo<u32> for E {
    #[inline(always)]
    fn resolve(&self, dst: u32) -> Resolve {
        self.next_hop(dst)
    }
    #[inline(always)]
    fn ready(&self, dst: u32) -> Option<EthHop> {
        self.ready_eth(dst)
    }
}

impl<E: Egress6 + ?Sized> EgressTo<u128> for E {
    #[inline(always)]
    fn resolve(&self, dst: u128) -> Resolve6 {
        self.next_hop6(dst)
    }
    #[inline(always)]
    fn ready(&self, dst: u128) -> Option<EthHop> {
        self.ready_eth6(dst)
    }
}
