//! The pipeline's IPv6 balancing: classify's [`PacketMeta6`] goes to its
//! owning worker (software steering on the client address, masked by the
//! widest persistence prefix of the IPv6 services and folded to 32 bits),
//! then to the balancer's IPv6 path ([`Balancer::process6`]).
//! What the balancer does not take goes to the port's kernel interface
//! when it is for one of the port's own IPv6 addresses, else it is counted
//! and dropped.
//!
//! IPv6 packets take the packet path, not IPv4's staged burst loop, but
//! with stages of their own ahead of it: when the previous burst had IPv6
//! for the balancer, the burst's IPv6 TCP/UDP frames are hashed and their
//! buckets prefetched first, then their records ([`WorkerPipeline::prepare6`]),
//! and each one's hash is handed to the balancer when the classify loop
//! reaches it. IPv4-only traffic pays one flag test per burst.
//!
//! [`Balancer::process6`]: crate::lb::balancer::Balancer::process6

use super::nh_cache::CachedEgress;
use super::state::WorkerPipeline;
use super::steer::owner_of;
use crate::dataplane::arrival::Arrival;
use crate::dataplane::stats::Count;
use crate::dataplane::verdict::Verdict;
use crate::lb::balancer::{lookup_key6, BurstCtx, LbVerdict};
use crate::lb::persist::mask6;
use crate::lb::snapshot::{fold6, Snapshot};
use crate::net::buf::{PacketBuf, BURST};
use crate::net::classify::peek_key6;
use crate::net::meta::{PacketMeta, PacketMeta6, PROTO_ICMPV6};

/// The client side of an IPv6 packet (as `client_of` for IPv4): the source
/// when it goes to a VIP, else the destination (a NAT reply).
#[inline]
pub fn client_of6(snap: &Snapshot, meta: &PacketMeta6) -> u128 {
    let k = lookup_key6(meta);
    if snap.is_vip6(k.dst) {
        k.src
    } else {
        k.dst
    }
}

/// The widest persistence prefix of the snapshot's IPv6 services as a
/// mask: steering by it keeps all of one persistent client network's
/// connections on one worker (as `steer_mask` for IPv4).
pub fn steer_mask6(snap: &Snapshot) -> u128 {
    snap.services()
        .iter()
        .filter(|s| s.spec.persistent.is_some() && s.spec.key.vip.is_ipv6())
        .map(|s| mask6(s.spec.prefix6))
        .fold(u128::MAX, |a, m| a & m)
}

/// The worker that owns IPv6 client `client` among `workers`.
#[inline]
pub fn owner6(client: u128, workers: u32) -> u32 {
    owner_of(fold6(client), u32::MAX, workers)
}

impl WorkerPipeline {
    /// The early IPv6 stages of a burst: each IPv6 TCP/UDP frame's lookup
    /// hash (kept in the scratch) with its bucket prefetched, then, once
    /// the buckets had the rest of the burst to arrive, its record. Returns
    /// the positions hashed (bit `i` for `bufs[i]`, so at most 32: a
    /// burst is [`BURST`]). Cold and out of line so that IPv4's burst loop
    /// keeps its layout; it runs only for traffic with IPv6.
    #[cold]
    #[inline(never)]
    pub(super) fn prepare6<B: PacketBuf>(&mut self, bufs: &[B]) -> u32 {
        let mut hashed = 0u32;
        for (i, b) in bufs.iter().enumerate().take(BURST) {
            if let Some(k) = peek_key6(b.data()) {
                if let Some(h) = self.scratch.hash6.get_mut(i) {
                    *h = self.lb.prepare6(&k);
                    hashed |= 1 << i;
                }
            }
        }
        let mut rest = hashed;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if let Some(&h) = self.scratch.hash6.get(i) {
                self.lb.touch_prepared6(h);
            }
        }
        hashed
    }

    /// An IPv6 TCP/UDP packet or ICMPv6 error (classify's meta), with its
    /// lookup hash when the burst's early IPv6 stage computed it.
    pub(super) fn ipv6<B: PacketBuf>(
        &mut self,
        buf: &mut B,
        meta: &PacketMeta6,
        at: Arrival,
        hashed: Option<u32>,
    ) -> Verdict {
        let Arrival { port, now_ns, .. } = at;
        if self.workers > 1 && !at.owned() {
            let owner = owner6(
                client_of6(&self.snap, meta) & self.steer_mask6,
                self.workers,
            );
            if owner as usize != self.index {
                self.counters.own[Count::SteeredOut] += 1;
                return Verdict::Steer(owner as u16);
            }
        }
        // the net view through the worker's next-hop cache
        let eg = CachedEgress {
            view: &self.net,
            cache: &self.nh,
        };
        self.v6_seen = true;
        let v = self
            .lb
            .process6_hashed(&BurstCtx::new(&self.snap, &eg, now_ns), buf, meta, hashed);
        if v != LbVerdict::NotForUs {
            return self.map_lb(v, buf, &PacketMeta::default(), port, now_ns);
        }
        let kernel = self.net.port(port).is_some_and(|p| p.kernel)
            && self.net.addrs().port_of6(meta.key.dst) == Some(port);
        if kernel {
            // ssh, BGP, health checks' answers over IPv6
            return Verdict::Kernel(port);
        }
        if meta.key.proto == PROTO_ICMPV6 {
            // an ICMPv6 error about no connection of ours: the responder
            // counts it
            let len = meta
                .ip_len
                .saturating_sub(meta.l4_off.saturating_sub(meta.l3_off));
            return self.icmpv6(buf, port, meta.l3_off, meta.l4_off, len);
        }
        if self.net.addrs().is_local6(meta.key.dst) {
            self.counters.own[Count::LocalOther] += 1;
        } else {
            self.counters.own[Count::NotForUs] += 1;
        }
        Verdict::Drop
    }
}
