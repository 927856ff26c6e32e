//! The per-worker next-hop cache and the [`Egress`] the balancing core
//! sees through it: a real server's route and neighbor are resolved once
//! per view, not per packet.

use crate::net::egress::{Egress, Egress6, EthHop, NextHop, NextHop6, Resolve, Resolve6};
use crate::net::view::NetView;

/// Slots of the per-worker next-hop cache (a power of two).
const NH_SLOTS: usize = 64;

#[derive(Clone, Copy, Default)]
struct NhEntry {
    dst: u32,
    hop: Option<NextHop>,
}

/// A ready next hop's Ethernet addresses, beside its [`NhEntry`] (filled
/// and cleared with it), so that DR's hit copies 20 bytes, not the entry.
/// `key` is the destination with [`READY`] set when filled, so a hit is
/// one compare (a cleared entry's key, 0, matches no destination).
#[derive(Clone, Copy, Default)]
struct EthEntry {
    key: u64,
    eth: EthHop,
}

/// The bit above an IPv4 address in an [`EthEntry`]'s key: filled.
const READY: u64 = 1 << 32;

/// [`EthEntry`] for IPv6 destinations, beside its [`NhEntry6`].
#[derive(Clone, Copy, Default)]
struct EthEntry6 {
    dst: u128,
    ready: bool,
    eth: EthHop,
}

/// Slots of the IPv6 part of the cache (a power of two).
const NH6_SLOTS: usize = 64;

/// A ready IPv6 next hop by destination ([`NhCache`]'s IPv6 part): the
/// route lookup, the neighbour lookup and the source address selection
/// once per view, not per packet.
#[derive(Clone, Copy, Default)]
struct NhEntry6 {
    dst: u128,
    hop: Option<NextHop6>,
}

/// Resolved next hops by destination address, for one [`NetView`]: a
/// real server's route and neighbor are looked up once, not per packet.
/// Direct-mapped, so a miss (e.g. NAT replies to many clients) costs one
/// overwrite; cleared whenever the worker picks up a new view, so an entry
/// never outlives the routes and neighbors it was computed from.
pub(super) struct NhCache {
    slots: [std::cell::Cell<NhEntry>; NH_SLOTS],
    eth: [std::cell::Cell<EthEntry>; NH_SLOTS],
    slots6: [std::cell::Cell<NhEntry6>; NH6_SLOTS],
    eth6: [std::cell::Cell<EthEntry6>; NH6_SLOTS],
}

impl NhCache {
    pub(super) fn new() -> Self {
        NhCache {
            slots: std::array::from_fn(|_| std::cell::Cell::new(NhEntry::default())),
            eth: std::array::from_fn(|_| std::cell::Cell::new(EthEntry::default())),
            slots6: std::array::from_fn(|_| std::cell::Cell::new(NhEntry6::default())),
            eth6: std::array::from_fn(|_| std::cell::Cell::new(EthEntry6::default())),
        }
    }

    pub(super) fn clear(&self) {
        for s in &self.slots {
            s.set(NhEntry::default());
        }
        for s in &self.eth {
            s.set(EthEntry::default());
        }
        for s in &self.slots6 {
            s.set(NhEntry6::default());
        }
        for s in &self.eth6 {
            s.set(EthEntry6::default());
        }
    }

    /// The IPv6 slot index of `dst` (its interface identifier and prefix folded).
    #[inline(always)]
    fn index6(dst: u128) -> usize {
        let x = (dst as u64) ^ ((dst >> 64) as u64);
        (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize & (NH6_SLOTS - 1)
    }

    /// Fill `dst`'s IPv6 slot with a ready next hop.
    #[inline]
    fn fill6(&self, dst: u128, hop: NextHop6) {
        let i = Self::index6(dst);
        self.slots6[i].set(NhEntry6 {
            dst,
            hop: Some(hop),
        });
        self.eth6[i].set(EthEntry6 {
            dst,
            ready: true,
            eth: EthHop::of(&hop),
        });
    }

    #[inline(always)]
    fn index(dst: u32) -> usize {
        (dst.wrapping_mul(0x9e37_79b1) >> 26) as usize & (NH_SLOTS - 1)
    }

    #[inline]
    fn slot(&self, dst: u32) -> &std::cell::Cell<NhEntry> {
        &self.slots[Self::index(dst)]
    }

    /// Fill `dst`'s slot with a ready next hop.
    #[inline]
    fn fill(&self, dst: u32, hop: NextHop) {
        let i = Self::index(dst);
        self.slots[i].set(NhEntry {
            dst,
            hop: Some(hop),
        });
        self.eth[i].set(EthEntry {
            key: dst as u64 | READY,
            eth: EthHop::of(&hop),
        });
    }
}

/// The [`Egress`] the core sees: the net view through the next-hop cache.
/// A query has no side effect beyond filling the cache; an unresolved next
/// hop comes back in the core's verdict and the pipeline requests it.
pub(super) struct CachedEgress<'a> {
    pub(super) view: &'a NetView,
    pub(super) cache: &'a NhCache,
}

impl Egress for CachedEgress<'_> {
    #[inline(always)]
    fn next_hop(&self, dst: u32) -> Resolve {
        let slot = self.cache.slot(dst);
        let e = slot.get();
        if let (true, Some(hop)) = (e.dst == dst, e.hop) {
            return Resolve::Ready(hop);
        }
        let r = self.view.next_hop(dst);
        if let Resolve::Ready(hop) = r {
            self.cache.fill(dst, hop);
        }
        r
    }
    #[inline(always)]
    fn ready_eth(&self, dst: u32) -> Option<EthHop> {
        let e = self.cache.eth[NhCache::index(dst)].get();
        if e.key == dst as u64 | READY {
            return Some(e.eth);
        }
        match self.next_hop(dst) {
            Resolve::Ready(h) => Some(EthHop::of(&h)),
            _ => None,
        }
    }
    #[inline]
    fn on_link(&self, addr: u32) -> Option<u16> {
        self.view.on_link(addr)
    }
}

impl Egress6 for CachedEgress<'_> {
    /// The cached ready next hop of `dst`, else the view's answer (cached
    /// when ready; an unresolved one is asked again next time, so the
    /// pipeline can hold the packet and request it).
    #[inline]
    fn next_hop6(&self, dst: u128) -> Resolve6 {
        let e = self.cache.slots6[NhCache::index6(dst)].get();
        if let (true, Some(hop)) = (e.dst == dst, e.hop) {
            return Resolve6::Ready(hop);
        }
        let r = self.view.next_hop6(dst);
        if let Resolve6::Ready(hop) = r {
            self.cache.fill6(dst, hop);
        }
        r
    }
    /// A hit copies the Ethernet addresses, not the whole [`NextHop6`].
    #[inline(always)]
    fn ready_eth6(&self, dst: u128) -> Option<EthHop> {
        let e = self.cache.eth6[NhCache::index6(dst)].get();
        if e.ready && e.dst == dst {
            return Some(e.eth);
        }
        match self.next_hop6(dst) {
            Resolve6::Ready(h) => Some(EthHop::of(&h)),
            _ => None,
        }
    }
    #[inline]
    fn on_link6(&self, addr: u128) -> Option<u16> {
        self.view.on_link6(addr)
    }
}
