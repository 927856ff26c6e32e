//! The pipeline's IPv6 balancing: classify's [`PacketMeta6`] goes to its
//! owning worker (software steering on the client address, masked by the
//! widest persistence prefix of the IPv6 services and folded to 32 bits),
//! then to the balancer's IPv6 path ([`Balancer::process6`]).
//! What the balancer does not take goes to the port's kernel interface
//! when it is for one of the port's own IPv6 addresses, else it is counted
//! and dropped.
//!
//! IPv6 packets have a burst lane of their own beside IPv4's staged burst
//! loop: when the previous burst had IPv6 for the balancer, the burst's
//! IPv6 TCP/UDP frames that classify's IPv6 fast path answers are
//! classified into the scratch, hashed and their buckets prefetched first,
//! then their records ([`WorkerPipeline::prepare6`]); the classify loop
//! skips them, and they go to the balancer as one burst
//! ([`WorkerPipeline::burst6`]). The rest of IPv6 (ICMPv6 errors,
//! extension headers, the first burst of IPv6) takes the packet path
//! ([`WorkerPipeline::ipv6`]). IPv4-only traffic pays one flag test per
//! burst.
//!
//! [`Balancer::process6`]: crate::lb::balancer::Balancer::process6

use super::mac::{for_mac, MacWord};
use super::nh_cache::CachedEgress;
use super::state::{Scratch, WorkerPipeline};
use super::steer::owner_of;
use crate::dataplane::arrival::Arrival;
use crate::dataplane::stats::Count;
use crate::dataplane::verdict::Verdict;
use crate::lb::balancer::{lookup_key6, BurstCtx, LbVerdict};
use crate::lb::persist::mask6;
use crate::lb::snapshot::{fold6, Snapshot};
use crate::net::buf::PacketBuf;
use crate::net::classify::classify_fast6_into;
use crate::net::meta::{PacketMeta, PacketMeta6, PROTO_ICMPV6};

/// The worker that owns an IPv6 packet: by its client address (masked by
/// `mask`: the source when it goes to a VIP, else the destination, a NAT
/// reply's), or for one to an IPv6 FullNAT local address by its port
/// (each worker takes the local ports `p` with `p % workers` its index).
#[inline]
pub fn owner_meta6(snap: &Snapshot, meta: &PacketMeta6, mask: u128, workers: u32) -> u32 {
    let k = lookup_key6(meta);
    if snap.is_vip6(k.dst) {
        owner6(k.src & mask, workers)
    } else if snap.is_pool6(k.dst) {
        k.dport as u32 % workers
    } else if snap.has_marks6() && snap.mark_service6(k.proto, k.src, k.dst, k.dport).is_some() {
        // a request to an fwmark service (its destination is no VIP)
        owner6(k.src & mask, workers)
    } else {
        owner6(k.dst & mask, workers)
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
    /// The early IPv6 stages of a burst: each IPv6 TCP/UDP frame for this
    /// port that classify's IPv6 fast path answers is classified into the
    /// scratch (`metas6`), its lookup hash kept (`hash6`) with its bucket
    /// prefetched, then, once the buckets had the rest of the burst to
    /// arrive, its record. Returns the positions classified (bit `i` for
    /// `bufs[i]`, so at most 32: a burst is [`BURST`](crate::net::buf::BURST)): the classify loop
    /// skips them and [`Self::burst6`] processes them. Cold and out of
    /// line so that IPv4's burst loop keeps its layout; it runs only for
    /// traffic with IPv6.
    #[cold]
    #[inline(never)]
    pub(super) fn prepare6<B: PacketBuf>(&mut self, bufs: &[B], port: u16, mac: MacWord) -> u32 {
        let mut hashed = 0u32;
        let Scratch { metas6, hash6, .. } = &mut *self.scratch;
        for (i, (b, (m, h))) in bufs
            .iter()
            .zip(metas6.iter_mut().zip(hash6.iter_mut()))
            .enumerate()
        {
            let d = b.data();
            if for_mac(d, mac) && classify_fast6_into(d, port, m) {
                *h = self.lb.prepare6(&m.key);
                hashed |= 1 << i;
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

    /// The IPv6 packets of a burst the early stage classified (`sel`, from
    /// [`Self::prepare6`]): steered to their owner, or balanced as one
    /// staged burst ([`Balancer::process6_selected_with`]), a `Tx` turned
    /// into the worker's verdict on the spot, the rest as the packet path
    /// turns them ([`Self::after6`]). Returns `Some(port)` when every
    /// packet of `sel` was sent out of `port` (what
    /// [`crate::dataplane::verdict::all_tx`] would say of them).
    #[inline(never)]
    pub(super) fn burst6<B: PacketBuf>(
        &mut self,
        bufs: &mut [B],
        at: Arrival,
        out: &mut [Verdict],
        mut sel: u32,
    ) -> Option<u16> {
        let all = sel;
        let Arrival { port, now_ns, .. } = at;
        self.v6_seen = true;
        if self.workers > 1 && !at.owned() {
            let mut rest = sel;
            while rest != 0 {
                let i = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let Some(m) = self.scratch.metas6.get(i) else {
                    continue;
                };
                let owner = owner_meta6(&self.snap, m, self.steer_mask6, self.workers);
                if owner as usize != self.index {
                    self.counters.own[Count::SteeredOut] += 1;
                    if let Some(o) = out.get_mut(i) {
                        *o = Verdict::Steer(owner as u16);
                    }
                    sel &= !(1 << i);
                }
            }
        }
        let eg = CachedEgress {
            view: &self.net,
            cache: &self.nh,
        };
        let Scratch {
            metas6, hash6, lbv, ..
        } = &mut *self.scratch;
        let mut rest = 0u32;
        let mut forwarded = 0u64;
        // every Tx port OR-ed and AND-ed: equal exactly when all are one
        let (mut ports_or, mut ports_and) = (0u16, u16::MAX);
        let ctx = BurstCtx::new(&self.snap, &eg, now_ns);
        self.lb
            .process6_selected_with(&ctx, bufs, metas6, hash6, sel, |j, v| match v {
                LbVerdict::Tx { port } => {
                    if let Some(o) = out.get_mut(j) {
                        *o = Verdict::Tx(port);
                    }
                    forwarded += 1;
                    ports_or |= port;
                    ports_and &= port;
                }
                v => {
                    if let Some(l) = lbv.get_mut(j) {
                        *l = v;
                        rest |= 1 << j;
                    }
                }
            });
        self.counters.own[Count::Forwarded] += forwarded;
        if rest == 0 {
            return (sel == all && sel != 0 && ports_or == ports_and).then_some(ports_or);
        }
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if let (Some(b), Some(&m), Some(&v)) = (
                bufs.get_mut(i),
                self.scratch.metas6.get(i),
                self.scratch.lbv.get(i),
            ) {
                let o = self.after6(v, b, &m, port, now_ns);
                if let Some(o2) = out.get_mut(i) {
                    *o2 = o;
                }
            }
        }
        None
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
            let owner = owner_meta6(&self.snap, meta, self.steer_mask6, self.workers);
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
        self.after6(v, buf, meta, port, now_ns)
    }

    /// What the balancer's verdict `v` on an IPv6 packet becomes: its
    /// own (`Tx`, a hold, a drop), or, when not the balancer's, the
    /// kernel's, the IPv6 responder's, or a counted drop.
    #[inline]
    fn after6<B: PacketBuf>(
        &mut self,
        v: LbVerdict,
        buf: &mut B,
        meta: &PacketMeta6,
        port: u16,
        now_ns: u64,
    ) -> Verdict {
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
