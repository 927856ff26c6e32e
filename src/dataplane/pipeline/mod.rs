//! The per-packet pipeline (sans-IO): classify -> ARP / balancing core /
//! ICMP echo / IPv6 responder (NDP, ping6) -> a verdict. Generic over [`PacketBuf`], so the same code runs
//! on DPDK mbufs in the workers and on `VecBuf`s in tests and benchmarks.
//!
//! Order for an IPv4 packet: the balancing core first (it owns VIP traffic,
//! NAT replies and ICMP errors about its connections); what it returns as
//! not-for-us is answered by the stack when it is an echo request to one of
//! our addresses or VIPs, and counted and dropped otherwise.

use crate::dataplane::arrival::{Arrival, Source};
use crate::dataplane::contract::Pipeline;
use crate::dataplane::exception::KernelCopies;
use crate::dataplane::shared::{Event, Shared};
use crate::dataplane::stats::{Count, Counters};
use crate::dataplane::verdict::{all_tx, Hop, Verdict};
use crate::dataplane::worker::MAX_PORTS;
use crate::lb::balancer::{Balancer, BurstCtx, LbVerdict, Prepared, Selected, TOUCH_LAG};
use crate::net::buf::{PacketBuf, BURST};
use crate::net::classify::{
    classify, classify_into_fast, ipv4_dst, ipv6_dst, is_link_local_multicast,
    is_link_local_multicast6, Classified, NetDrop, Placed,
};
use crate::net::icmp::{echo_input, IcmpAction};
use crate::net::meta::{PacketMeta, PacketMeta6, PROTO_ICMP};
use arc_swap::cache::Cache;
use mac::{for_mac, MacWord};
use nh_cache::{CachedEgress, NhCache};
use state::Scratch;
pub use state::WorkerPipeline;
use std::sync::Arc;
pub use steer::{owner_of, owner_with, steer_mask};
use tickets6::Tickets6;
pub use v6::{owner6, steer_mask6};

impl WorkerPipeline {
    /// The pipeline of worker `index`, owning `lb`.
    pub fn new(shared: &Arc<Shared>, index: usize, lb: Balancer) -> WorkerPipeline {
        let mut net_cache = Cache::new(Arc::clone(&shared.net));
        let mut lb_cache = Cache::new(Arc::clone(&shared.lb));
        let net = Arc::clone(net_cache.load());
        let snap = Arc::clone(lb_cache.load());
        let steer_mask = steer_mask(&snap);
        let steer_mask6 = v6::steer_mask6(&snap);
        // Sweep about a thousandth of the table per housekeeping tick (1 ms
        // in the daemon): the whole table about once a second. Lookups
        // expire what they find expired, so the sweep only reclaims idle
        // entries; sweeping faster only evicts the hot lines from cache.
        let expire_budget = (lb.table().capacity() / 1000).clamp(256, 4096);
        WorkerPipeline {
            scratch: Box::new(Scratch {
                metas: [PacketMeta::default(); BURST],
                prep: [Prepared::default(); BURST],
                lbv: [LbVerdict::NotForUs; BURST],
                hash6: [0; BURST],
                metas6: [PacketMeta6::default(); BURST],
                tickets6: Tickets6::new(),
            }),
            shared: Arc::clone(shared),
            index,
            lb,
            net_cache,
            lb_cache,
            net,
            nh: NhCache::new(),
            snap,
            counters: Counters::default(),
            expire_budget,
            workers: shared.workers.len().max(1) as u32,
            steer_mask,
            steer_mask6,
            client_owner: None,
            kernel_copies: KernelCopies::default(),
            looped_at: [0; MAX_PORTS],
            v6_seen: false,
            sweep: Default::default(),
        }
    }

    /// An IPv4 packet to a NAT64 pool address: a NAT64 connection's reply,
    /// translated to IPv6 by the core, or a counted drop. A reply too big
    /// for the client's link turns into fragmentation needed for the real
    /// server, whose IPv4 next hop may need resolving: held then, as the
    /// IPv4 path holds.
    #[cold]
    fn nat64_in<B: PacketBuf>(&mut self, buf: &mut B, meta: &PacketMeta, now: u64) -> Verdict {
        let v = self.lb.nat64_reply(
            &BurstCtx::new(&self.snap, self.net.as_ref(), now),
            buf,
            meta,
        );
        match v {
            LbVerdict::Tx { port } => {
                self.counters.own[Count::Forwarded] += 1;
                Verdict::Tx(port)
            }
            LbVerdict::Unresolved6 { ip, port } => {
                let ip = u128::from(ip);
                self.event(Event::Resolve6 { ip, port });
                Verdict::Hold6(self.scratch.tickets6.issue(ip))
            }
            LbVerdict::Unresolved { ip, port } => {
                self.event(Event::Resolve { ip, port });
                Verdict::Hold(ip)
            }
            _ => {
                // the core counted the reason
                self.counters.own[Count::LbDropped] += 1;
                Verdict::Drop
            }
        }
    }

    #[inline]
    fn ipv4<B: PacketBuf>(
        &mut self,
        buf: &mut B,
        meta: &PacketMeta,
        port: u16,
        now: u64,
    ) -> Verdict {
        let eg = CachedEgress {
            view: &self.net,
            cache: &self.nh,
        };
        let v = self
            .lb
            .process(&BurstCtx::new(&self.snap, &eg, now), buf, meta);
        self.map_lb(v, buf, meta, port, now)
    }

    /// Turn the core's verdict into the worker's (stack fallback for what
    /// is not the core's).
    #[inline(always)]
    fn map_lb<B: PacketBuf>(
        &mut self,
        v: LbVerdict,
        buf: &mut B,
        meta: &PacketMeta,
        port: u16,
        now: u64,
    ) -> Verdict {
        match v {
            LbVerdict::Tx { port } => {
                self.counters.own[Count::Forwarded] += 1;
                Verdict::Tx(port)
            }
            LbVerdict::Unresolved { ip, port } => {
                // not a drop: ask the control thread to resolve the next
                // hop and let the worker hold the packet meanwhile
                self.event(Event::Resolve { ip, port });
                Verdict::Hold(ip)
            }
            LbVerdict::Unresolved6 { ip, port } => {
                // not a drop either: the control thread solicits the next
                // hop, and the worker holds the packet meanwhile, the
                // address by ticket (a verdict has no room for it)
                let ip = u128::from(ip);
                self.event(Event::Resolve6 { ip, port });
                Verdict::Hold6(self.scratch.tickets6.issue(ip))
            }
            LbVerdict::Wait { conn } => Verdict::Wait(conn),
            LbVerdict::Drop(_) => {
                // the core counted the reason
                self.counters.own[Count::LbDropped] += 1;
                Verdict::Drop
            }
            LbVerdict::NotForUs => {
                if self.snap.is_pool4(meta.key.dst) {
                    return self.nat64_in(buf, meta, now);
                }
                let addrs = self.net.addrs();
                if !addrs.is_local(meta.key.dst) {
                    // a real server's own connection out (`[[snat]]`)
                    if self.snap.has_snat4() {
                        return self.snat_out(buf, meta, now);
                    }
                    self.counters.own[Count::NotForUs] += 1;
                    return Verdict::Drop;
                }
                if meta.key.proto == PROTO_ICMP && meta.icmp.is_none() {
                    match echo_input(buf.data_mut(), meta, addrs) {
                        IcmpAction::Reply => {
                            self.counters.own[Count::EchoReplied] += 1;
                            return Verdict::Tx(port);
                        }
                        IcmpAction::Ignore(r) => {
                            if self.kernel_wants(port, meta.key.dst) {
                                return Verdict::Kernel(port);
                            }
                            self.counters.icmp[r] += 1;
                            return Verdict::Drop;
                        }
                    }
                }
                if self.kernel_wants(port, meta.key.dst) {
                    // TCP/UDP that is not a service, an ICMP error about
                    // no connection of ours: the kernel's (ssh, BGP, the
                    // answers to health checks)
                    return Verdict::Kernel(port);
                }
                self.counters.own[Count::LocalOther] += 1;
                Verdict::Drop
            }
        }
    }

    /// Whether what arrived on `port` for `dst` goes to the port's kernel
    /// interface: the port has one and `dst` is one of its own addresses.
    #[inline]
    fn kernel_wants(&self, port: u16, dst: u32) -> bool {
        self.net.port(port).is_some_and(|p| p.kernel) && self.net.addrs().port_of(dst) == Some(port)
    }

    /// A frame classify dropped that the port's kernel interface still
    /// wants: IPv4 and IPv6 link-local multicast (routing protocols:
    /// 224.0.0.0/24, ff02::/16) and protocols dirigo does not speak to one
    /// of the port's addresses (OSPF, VRRP, GRE, ...).
    #[cold]
    fn kernel_wants_dropped(&self, frame: &[u8], port: u16, why: NetDrop) -> bool {
        if !matches!(
            why,
            NetDrop::NotUnicastDst | NetDrop::UnsupportedProto | NetDrop::Ipv6
        ) || !self.net.port(port).is_some_and(|p| p.kernel)
        {
            return false;
        }
        if let Some(dst) = ipv4_dst(frame) {
            return is_link_local_multicast(dst)
                || (why == NetDrop::UnsupportedProto
                    && self.net.addrs().port_of(dst) == Some(port));
        }
        match ipv6_dst(frame) {
            Some(dst) if is_link_local_multicast6(dst) => true,
            Some(dst) => why == NetDrop::Ipv6 && self.net.addrs().is_port_addr6(port, dst),
            None => false,
        }
    }

    /// Whether a frame is addressed to this port: its MAC, or a group
    /// (broadcast/multicast) address. Frames for other hosts (a promiscuous
    /// port, a flooding switch, our own DR output looping back) are not
    /// ours to forward or answer, as in Linux ("other host").
    #[inline]
    fn for_us(&self, frame: &[u8], port: u16) -> bool {
        for_mac(frame, MacWord::of(self.net.port(port).map(|p| p.mac)))
    }

    /// Count `n` packets handed over by another worker or by the kernel
    /// (what arrived from the wire is counted by the port).
    #[inline]
    fn count_arrivals(&mut self, source: Source, n: u64) {
        match source {
            Source::Wire => {}
            Source::Worker => self.counters.own[Count::SteeredIn] += n,
            Source::Kernel => self.counters.own[Count::FromKernel] += n,
        }
    }

    /// The packet path: a frame for this port is classified and handled.
    #[inline]
    fn process_inner<B: PacketBuf>(&mut self, buf: &mut B, at: Arrival) -> Verdict {
        if !self.for_us(buf.data(), at.port) {
            self.counters.own[Count::OtherHost] += 1;
            return Verdict::Drop;
        }
        let c = classify(buf.data(), at.port);
        self.process_classified(buf, &c, at, None)
    }

    /// The packet path after classify: what [`Self::process_inner`] does
    /// with a frame for this port that classify answered `c` for (the
    /// burst path hands over what it classified, so that an IPv6 or ARP
    /// frame is not classified twice, and an IPv6 packet's lookup hash,
    /// `hash6`, when its early stage computed it).
    #[inline]
    fn process_classified<B: PacketBuf>(
        &mut self,
        buf: &mut B,
        c: &Classified,
        at: Arrival,
        hash6: Option<u32>,
    ) -> Verdict {
        let Arrival { port, now_ns, .. } = at;
        match c {
            Classified::Ipv4(meta) => {
                if self.workers > 1 && !at.owned() {
                    let owner = self.owner_meta(meta);
                    if owner as usize != self.index {
                        self.counters.own[Count::SteeredOut] += 1;
                        return Verdict::Steer(owner as u16);
                    }
                }
                self.ipv4(buf, meta, port, now_ns)
            }
            &Classified::Drop(d) => {
                if self.kernel_wants_dropped(buf.data(), port, d) {
                    return Verdict::Kernel(port);
                }
                self.counters.net[d] += 1;
                Verdict::Drop
            }
            Classified::Arp { .. } => self.arp(buf, port, now_ns),
            Classified::Ipv6(meta) => self.ipv6(buf, meta, at, hash6),
            &Classified::Icmpv6 {
                l3_off,
                l4_off,
                len,
                ..
            } => self.icmpv6(buf, port, l3_off, l4_off, len),
        }
    }

    /// [`Self::process_classified`] for a packet of the burst that is not
    /// plain IPv4, with its IPv6 lookup hash when the early IPv6 stage
    /// computed it. Out of line: the IPv4 burst loop stays as it was.
    #[inline(never)]
    fn process_aside<B: PacketBuf>(
        &mut self,
        buf: &mut B,
        c: &Classified,
        at: Arrival,
        hash6: Option<u32>,
    ) -> Verdict {
        self.process_classified(buf, c, at, hash6)
    }

    /// The burst path: classify every packet (preparing each lookup: hash
    /// and bucket prefetch), answer on the spot the few that are not plain
    /// IPv4 for this port (ARP, drops, other host: the packet path) and
    /// those another worker owns (`Steer`), then hand the rest to the core
    /// as one staged burst. Packets owned elsewhere never push the others
    /// off the burst path.
    fn burst<B: PacketBuf>(
        &mut self,
        bufs: &mut [B],
        at: Arrival,
        out: &mut [Verdict],
    ) -> Option<u16> {
        let n = bufs.len().min(out.len());
        if n > BURST {
            let mut all = None;
            for (x, (b, o)) in bufs[..n]
                .chunks_mut(BURST)
                .zip(out[..n].chunks_mut(BURST))
                .enumerate()
            {
                let a = self.burst(b, at, o);
                all = if x == 0 || a == all { a } else { None };
            }
            return all.filter(|_| n > 0);
        }
        if self.v6_seen {
            return self.burst_early6(&mut bufs[..n], at, &mut out[..n]);
        }
        self.burst_body::<false, B>(&mut bufs[..n], at, &mut out[..n], 0)
    }

    /// [`Self::burst`] when the traffic has IPv6 (the previous burst had
    /// some for the balancer): the early IPv6 stage first
    /// ([`Self::prepare6`]), whose frames the classify loop skips and
    /// [`Self::burst6`] processes. Out of line, so that IPv4's burst path
    /// keeps its layout.
    #[inline(never)]
    fn burst_early6<B: PacketBuf>(
        &mut self,
        bufs: &mut [B],
        at: Arrival,
        out: &mut [Verdict],
    ) -> Option<u16> {
        self.v6_seen = false;
        let n = bufs.len().min(out.len());
        let mac = MacWord::of(self.net.port(at.port).map(|p| p.mac));
        let early6 = self.prepare6(&bufs[..n], at.port, mac);
        self.burst_body::<true, B>(bufs, at, out, early6)
    }

    /// The burst path past its preliminaries (at most [`BURST`] packets):
    /// with `EARLY6`, the frames of `early6` are the early IPv6 stage's
    /// (IPv4's instance compiles without a trace of them).
    #[inline(always)]
    fn burst_body<const EARLY6: bool, B: PacketBuf>(
        &mut self,
        bufs: &mut [B],
        at: Arrival,
        out: &mut [Verdict],
        early6: u32,
    ) -> Option<u16> {
        let Arrival { port, now_ns, .. } = at;
        let n = bufs.len().min(out.len());
        let mac = MacWord::of(self.net.port(port).map(|p| p.mac));
        let mut sel = [0u8; BURST];
        let mut k = 0;
        // the core's second prefetch stage (NAT replies only)
        let stage = self.lb.second_stage();
        // packets answered here rather than by the core (their verdicts
        // are not known to be Tx)
        let mut aside = 0usize;
        // whether packets may belong to another worker (loop-invariant)
        let steer = self.workers > 1 && !at.owned();
        for i in 0..n {
            if EARLY6 && early6 & (1 << i) != 0 {
                // the early IPv6 stage classified it: processed below
                aside += 1;
                continue;
            }
            // Some(true): classify's fast path answered (a plain TCP/UDP
            // packet, no ICMP error); Some(false): its slow path did
            let placed = {
                let d = bufs[i].data();
                match for_mac(d, mac) {
                    true => Some(classify_into_fast(d, port, &mut self.scratch.metas[i])),
                    false => None,
                }
            };
            let fast = match placed {
                Some(Placed::Fast) => true,
                Some(Placed::Slow) => false,
                Some(Placed::Other(c)) => {
                    // IPv6 the early stage did not take, ARP, a drop: the
                    // packet path, with what classify said
                    out[i] = self.process_aside(&mut bufs[i], &c, at, None);
                    aside += 1;
                    continue;
                }
                None => {
                    // another host's frame: the packet path counts it
                    out[i] = self.process_inner(&mut bufs[i], at);
                    aside += 1;
                    continue;
                }
            };
            let m = &self.scratch.metas[i];
            if steer {
                let owner = self.owner_meta(m);
                if owner as usize != self.index {
                    self.counters.own[Count::SteeredOut] += 1;
                    out[i] = Verdict::Steer(owner as u16);
                    aside += 1;
                    continue;
                }
            }
            // hash + prefetch now: the bucket arrives while the rest of the
            // burst is classified
            // the fast path's key is its lookup key (no ICMP quote), and
            // hashing it right after classify stored it reads it back from
            // where it was just written
            self.scratch.prep[i] = if fast {
                self.lb.prepare_key(&self.snap, &m.key)
            } else {
                self.lb.prepare(&self.snap, m)
            };
            sel[k] = i as u8;
            k += 1;
            // the record of the packet TOUCH_LAG places back: its bucket
            // has had the classification of those packets to arrive, and
            // its record now has the rest of the burst to
            if stage {
                if let Some(p) = k
                    .checked_sub(TOUCH_LAG + 1)
                    .and_then(|j| sel.get(j))
                    .and_then(|&j| self.scratch.prep.get(j as usize))
                {
                    self.lb.touch_prepared(p);
                }
            }
        }
        if EARLY6 && early6 != 0 {
            let one = self.burst6(&mut bufs[..n], at, &mut out[..n], early6);
            // only IPv6 the early stage took, all sent out of one port
            if k == 0 && aside == early6.count_ones() as usize && one.is_some() {
                return one;
            }
        }
        if k == 0 {
            return all_tx(&out[..n]);
        }
        let eg = CachedEgress {
            view: &self.net,
            cache: &self.nh,
        };
        // a Tx becomes the worker's verdict as the core returns it; the
        // rest (holds, drops, what is not the core's) are mapped after
        let Scratch {
            metas, prep, lbv, ..
        } = &mut *self.scratch;
        let mut rest = 0u32;
        let mut forwarded = 0u64;
        // every Tx port OR-ed and AND-ed: equal exactly when all are one
        let (mut ports_or, mut ports_and) = (0u16, u16::MAX);
        let at = BurstCtx::new(&self.snap, &eg, now_ns);
        let s = Selected {
            prepared: &prep[..n],
            sel: &sel[..k],
            touched: k.saturating_sub(TOUCH_LAG),
        };
        self.lb
            .process_prepared_with(&at, &mut bufs[..n], &metas[..n], s, |j, v| match v {
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
            // the core forwarded all it was given: the burst is one Tx
            // port when nothing was answered aside and every port agreed
            if aside == 0 && ports_or == ports_and {
                return Some(ports_or);
            }
            return all_tx(&out[..n]);
        }
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let (v, m) = (self.scratch.lbv[i], self.scratch.metas[i]);
            out[i] = self.map_lb(v, &mut bufs[i], &m, port, now_ns);
        }
        all_tx(&out[..n])
    }
}

impl Pipeline for WorkerPipeline {
    #[inline]
    fn begin_burst(&mut self, _now_ns: u64) {
        // Cache::load is a generation check; the Arc clone happens only when
        // the control thread published something new.
        let n = self.net_cache.load();
        if !Arc::ptr_eq(n, &self.net) {
            self.net = Arc::clone(n);
            self.nh.clear();
        }
        let s = self.lb_cache.load();
        if !Arc::ptr_eq(s, &self.snap) {
            self.snap = Arc::clone(s);
            self.steer_mask = steer_mask(&self.snap);
            self.steer_mask6 = v6::steer_mask6(&self.snap);
        }
    }

    /// One packet: counted by where it came from, then the packet path.
    #[inline]
    fn process<B: PacketBuf>(&mut self, buf: &mut B, at: Arrival) -> Verdict {
        self.count_arrivals(at.source, 1);
        self.process_inner(buf, at)
    }

    /// The burst path (see [`WorkerPipeline::burst`]).
    fn process_burst<B: PacketBuf>(
        &mut self,
        bufs: &mut [B],
        at: Arrival,
        out: &mut [Verdict],
    ) -> Option<u16> {
        self.count_arrivals(at.source, bufs.len().min(out.len()) as u64);
        self.burst(bufs, at, out)
    }

    /// From the neighbor snapshots of the view loaded at the last
    /// [`Pipeline::begin_burst`] (the one a released packet is forwarded with).
    fn resolved(&self, hop: Hop) -> bool {
        match hop {
            Hop::V4(ip) => self.net.neigh().lookup(ip).is_some(),
            Hop::V6(ip) => self.net.neigh6().lookup(ip).is_some(),
        }
    }

    /// From the ring of tickets (`tickets6`); a ticket too old is a
    /// packet dropped, counted as `unresolved6`.
    fn hop6(&mut self, ticket: u32) -> Option<u128> {
        let hop = self.scratch.tickets6.redeem(ticket);
        if hop.is_none() {
            self.counters.own[Count::Unresolved6] += 1;
        }
        hop
    }

    fn drain_kernel_copies(&mut self, f: &mut dyn FnMut(u16, &[u8])) {
        if !self.kernel_copies.is_empty() {
            self.kernel_copies.drain(f);
        }
    }

    fn drain_generated(&mut self, f: &mut dyn FnMut(u16, &[u8])) {
        let eg = CachedEgress {
            view: &self.net,
            cache: &self.nh,
        };
        self.lb.drain_resets(&eg, f);
    }

    fn housekeeping(&mut self, now_ns: u64) {
        // the snapshot loaded at the last begin_burst: an idle worker
        // reports it too, or retired slots would never be reclaimed
        self.lb.see_snapshot(&self.snap);
        self.lb.expire(now_ns, self.expire_budget);
        self.lb.expire6(now_ns, self.expire_budget);
        let w = &self.shared.workers[self.index];
        if let Some(sync) = &w.sync {
            // other directors' connections, a bounded number per tick
            for _ in 0..crate::lb::sync::INSTALL_PER_TICK {
                let Some(c) = sync.inbound.pop() else { break };
                self.lb.install_synced(&self.snap, &c, now_ns);
            }
            if sync
                .resend
                .swap(false, std::sync::atomic::Ordering::Relaxed)
            {
                self.lb.resend_all();
            }
            if self.lb.resending() {
                self.lb
                    .resend_step(now_ns, crate::lb::sync::RESEND_PER_TICK);
            }
        }
        if let Some(lane) = &w.checkpoint {
            self.sweep.step(lane, &self.lb, &self.snap, now_ns);
        }
        w.counters.publish(&self.counters);
        while let Some(req) = w.conn_requests.pop() {
            let list: Vec<_> = self.lb.conns(now_ns).take(req.limit).collect();
            let census = self.lb.census();
            let _ = req
                .reply
                .try_send(crate::dataplane::shared::ConnWalk { list, census });
        }
    }
}

mod arp;
mod mac;
mod nd;
mod nh_cache;
mod snat;
mod state;
mod steer;
#[cfg(test)]
mod tests;
mod tickets6;
mod v6;
