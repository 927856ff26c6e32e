//! How the core asks "where does a packet to this address leave, and with
//! which MACs?" — answered by the route table and neighbor snapshot in the
//! data path, by a fake in tests.

/// Everything needed to put a frame on the wire towards a next hop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextHop {
    /// Egress port index.
    pub port: u16,
    /// The egress port's MAC (Ethernet source).
    pub src_mac: [u8; 6],
    /// The next hop's MAC (Ethernet destination).
    pub dst_mac: [u8; 6],
    /// The egress port's primary IPv4 address (host order), used as the
    /// default tunnel source and for ICMP errors.
    pub src_ip: u32,
    /// The egress port's MTU (IP bytes).
    pub mtu: u16,
}

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
    pub fn of(h: &NextHop) -> EthHop {
        use crate::net::wire::ethernet::field::{DST, SRC};
        let mut macs = [0u8; 12];
        macs[DST].copy_from_slice(&h.dst_mac);
        macs[SRC].copy_from_slice(&h.src_mac);
        EthHop { macs, port: h.port }
    }
}

/// Outcome of a next-hop lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolve {
    /// Ready to transmit.
    Ready(NextHop),
    /// No route to the destination.
    NoRoute,
    /// Route known, neighbor MAC not yet resolved: what to resolve. The
    /// query only reports it; whoever acts on the answer asks the control
    /// thread (the pipeline does, from the core's verdict).
    Unresolved {
        /// The next hop to resolve: the gateway, or the destination itself
        /// when it is on-link (host order).
        ip: u32,
        /// The egress port it is to be resolved on.
        port: u16,
    },
}

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

/// Everything needed to put an IPv6 frame on the wire towards a next hop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextHop6 {
    /// Egress port index.
    pub port: u16,
    /// The egress port's MAC (Ethernet source).
    pub src_mac: [u8; 6],
    /// The next hop's MAC (Ethernet destination).
    pub dst_mac: [u8; 6],
    /// The egress port's source address toward the destination (its
    /// global IPv6 address whose prefix holds it, else its first global
    /// one; 0 when the port has none): the default tunnel source and the
    /// source of ICMPv6 errors.
    pub src_ip: u128,
    /// The egress port's MTU (IP bytes).
    pub mtu: u16,
}

/// Outcome of an IPv6 next-hop lookup (as [`Resolve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolve6 {
    /// Ready to transmit.
    Ready(NextHop6),
    /// No route to the destination.
    NoRoute,
    /// Route known, the next hop's MAC not yet resolved (a Neighbour
    /// Solicitation is needed).
    Unresolved {
        /// The gateway, or the destination itself when on-link.
        ip: u128,
        /// The egress port.
        port: u16,
    },
}

/// [`Egress`] for IPv6 destinations: a pure query, no side effect.
pub trait Egress6 {
    /// Route `dst` and resolve the next hop's MAC.
    fn next_hop6(&self, dst: u128) -> Resolve6;
    /// The port whose connected IPv6 prefix contains `addr`, if any (DR
    /// needs the real server on-link).
    fn on_link6(&self, addr: u128) -> Option<u16>;
}
