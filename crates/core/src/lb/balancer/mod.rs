//! The per-lcore driver: one [`Balancer`] per worker lcore owns a
//! connection table, scheduler cursors, counters and an ICMP rate limiter;
//! nothing in it is shared-writable.
//!
//! Per packet ([`Balancer::process`]):
//! 1. ICMP errors quoting a tracked connection are forwarded (DR/TUN: to
//!    its RS) or translated (NAT, both directions); untracked ones and every
//!    other ICMP are [`LbVerdict::NotForUs`] (the stack answers echo).
//! 2. A TCP/UDP packet matching a connection (client→VIP tuple, or for NAT
//!    the RS→client tuple) updates its state and timer and is forwarded.
//!    A connection found expired is expired on the spot (and the packet
//!    treated as new). A SYN hitting a TIME_WAIT/CLOSE connection expires
//!    it and schedules anew (IPVS `conn_reuse_mode` 1).
//! 3. Otherwise, for a service: TCP needs a SYN without RST (IPVS without
//!    sloppy_tcp) else [`LbDrop::NotTracked`]. A persistent service (`-p`)
//!    first asks its template for the client (see below); otherwise
//!    [`crate::lb::sched::pick`] chooses with the live per-RS loads of this
//!    lcore (weight 0 and overloaded servers are never picked; existing
//!    connections to them continue). The connection is inserted and the
//!    packet forwarded.
//! 4. TCP/UDP to a VIP on another port: [`LbDrop::NotAService`]; anything
//!    else: [`LbVerdict::NotForUs`].
//!
//! A packet to forward whose next hop's MAC is not known yet is returned
//! unchanged as [`LbVerdict::Unresolved`] with that next hop: not a drop,
//! the caller requests resolution, holds the packet and processes it again.
//!
//! Removed real servers: connections keep their RIP/port/method, so they
//! continue to be forwarded unless the snapshot's `expire_nodest_conn` is
//! set, in which case the next packet of such a connection is dropped
//! ([`LbDrop::DestRemoved`]) and the connection expired (IPVS semantics).
//!
//! Thresholds (IPVS): a server is marked overloaded when its
//! active+inactive count reaches `upper`; the mark is cleared when the count
//! drops below `lower` (or below 3/4 of `upper` when `lower` is 0). Counts
//! and thresholds are this lcore's (see `SnapshotBuilder::threshold_divisor`);
//! the mark is re-evaluated when the server is considered for a new
//! connection rather than at each connection's end.
//!
//! Persistence (`-p TIMEOUT [-M NETMASK]`, IPVS templates): each worker
//! owns a [`PersistTable`] keyed by (service, client address & netmask).
//! A template sends a new connection of its client to the same real server
//! as long as that server is still in the service and not overloaded — a
//! quiesced (weight 0) server keeps its persistent clients; a removed one
//! loses them. Every connection created on a persistent service attaches
//! to the template, which never expires while connections are attached and
//! outlives the last one by the persistence timeout. A full template table
//! schedules without persistence ([`crate::lb::persist::PersistStats::full`]).
//! Templates are per worker: the integrator must steer all packets of one
//! client address (for `-M`, of one masked network) to the same worker.
//! Details in `persist.rs`.
//!
//! Time: `now` is nanoseconds from any monotonic origin (injected, so tests
//! control it); the table keeps millisecond ticks.

use crate::lb::conn::lines::{
    slots_for as table_slots, LineInserted, LineProbe as Probe, LineTable,
};
use crate::lb::conn::{
    tick_of, tick_reached, Conn, Conn6, ConnTable, F_ACTIVE, F_NOOUTPUT, F_SP_PENDING, F_SYNCED,
};
use crate::lb::persist::{PersistStats, PersistTable};
use crate::lb::sched::{self, Cursor, DestLoad};
use crate::lb::snapshot::{Service, Snapshot};
use crate::lb::spec::Method;
use crate::lb::state::{tcp_next, Dir, TcpState};
use crate::lb::stats::{bump, Traffic, WorkerStats};
use crate::lb::synproxy::SynProxy;
use crate::lb::xmit::{self, nat::Side, TokenBucket, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::egress::Egress;
use crate::net::meta::{tcp_flags, FlowKey, PacketMeta, PROTO_TCP, PROTO_UDP};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

pub use crate::lb::verdict::{BalancerConfig, ConnEntry, LbDrop, LbVerdict};
use forward::Counted;
pub use persist::{template_dest, template_dest_id, template_svc, F_PERSIST};

mod persist;
use persist::{detach_conn, PersistCfg};
mod load;
use load::{dest_load, release_counters, LiveLoads};
mod forward;
mod icmp;
mod listing;
pub use listing::Census;
mod new_conn;
mod sync;
mod synproxy;
mod trees;
mod v6;
pub use v6::lookup_key6;

use crate::net::buf::BURST;

/// A packet's lookup hash in this worker's table (from
/// [`Balancer::prepare`]). The key itself is read again from the packet's
/// meta ([`lookup_key`]) when the packet is processed: storing a copy here
/// cost more stores and loads than recomputing it (callgrind).
#[derive(Clone, Copy, Debug, Default)]
pub struct Prepared {
    hash: u32,
    /// Expected to be a NAT reply: the table reads its reply index first.
    reply: bool,
}

/// How many packets behind the bucket prefetch ([`Balancer::prepare`])
/// the record prefetch ([`Balancer::touch_prepared`]) follows, and the
/// record prefetch the processing: enough for a DRAM miss to arrive.
/// 16 rather than 8: at 1M flows the record prefetch of 8 packets back
/// read buckets that had not all arrived (DR 1M +4% with 16, same run
/// beside testpmd, four alternating pairs; 24 measured like 16; see
/// BENCHMARKS.md, twelfth session).
pub const TOUCH_LAG: usize = 16;

/// The per-lcore load-balancing state machine (see the module docs).
pub struct Balancer {
    table: LineTable,
    table6: ConnTable<Conn6>,
    stats: Arc<WorkerStats>,
    cursors: Vec<Cursor>,
    loads: Vec<DestLoad>,
    /// Per service slot: the snapshot epoch under which a pick found none
    /// of its servers with a threshold and so cleared all their overload
    /// marks; in that snapshot its picks read each load when asked
    /// ([`load::LiveLoads`]) instead of computing all of them first.
    no_marks: Vec<Option<u64>>,
    /// Winner trees of the load schedulers (lc, wlc, sed, nq, fo).
    trees: trees::LoadTrees,
    ip_id: u16,
    icmp_limit: TokenBucket,
    persist: PersistTable,
    pcfg: Vec<PersistCfg>,
    persist_epoch: Option<u64>,
    sp: Option<SynProxy>,
    sync: Option<sync::SyncOut>,
    worker: u32,
    workers: u32,
    nat64_cursor: u32,
}

/// The key a packet is looked up by (ICMP errors: the quoted tuple reversed).
#[inline]
pub fn lookup_key(meta: &PacketMeta) -> FlowKey {
    match meta.icmp {
        Some(q) => q.inner_key.reversed(),
        None => meta.key,
    }
}

impl Balancer {
    /// A worker whose counters cover `dest_slots` real-server and
    /// `svc_slots` service slots (the [`crate::lb::snapshot::LbIds`]
    /// capacities). All memory is allocated here.
    pub fn new(cfg: &BalancerConfig, dest_slots: u32, svc_slots: u32) -> Balancer {
        let persist_cap = match cfg.persist_capacity {
            0 => (cfg.conn_capacity / 4).max(1024),
            n => n,
        };
        Balancer {
            table: {
                let mut t = LineTable::new(cfg.conn_capacity, cfg.seed);
                t.set_embryonic_grace(cfg.embryonic_grace_ms);
                t
            },
            table6: {
                let mut t = ConnTable::new(cfg.conn6_capacity(), cfg.seed ^ 0x6666_6666);
                t.set_embryonic_grace(cfg.embryonic_grace_ms);
                t
            },
            stats: Arc::new(WorkerStats::new(dest_slots, svc_slots)),
            cursors: vec![Cursor::default(); svc_slots as usize],
            loads: Vec::with_capacity(dest_slots as usize),
            no_marks: vec![None; svc_slots as usize],
            trees: trees::LoadTrees::new(dest_slots, svc_slots),
            ip_id: (cfg.seed >> 16) as u16,
            icmp_limit: TokenBucket::new(cfg.icmp_rate, cfg.icmp_burst),
            persist: PersistTable::with_capacity_seed(
                persist_cap as usize,
                (cfg.seed as u64) << 32 | 0x7065_7273,
            ),
            pcfg: vec![PersistCfg::default(); svc_slots as usize],
            persist_epoch: None,
            sp: cfg
                .synproxy
                .then(|| SynProxy::new(table_slots(cfg.conn_capacity), cfg.synproxy_secret)),
            sync: None,
            worker: cfg.worker,
            workers: cfg.workers.max(1),
            nat64_cursor: cfg.seed,
        }
    }

    /// The counters, to hand to the control thread.
    pub fn stats(&self) -> Arc<WorkerStats> {
        self.stats.clone()
    }

    /// The connection table (read-only).
    pub fn table(&self) -> &LineTable {
        &self.table
    }

    /// What an insert into the IPv4 table moved follows the records: the
    /// SYN proxy's per-record state (the table repointed NAT stubs itself).
    #[inline]
    fn follow_moves(&mut self, ins: &LineInserted) {
        if let Some(sp) = self.sp.as_mut() {
            for &(from, to) in ins.moves.iter().take(ins.n) {
                sp.moved(from, to);
            }
        }
    }

    /// The persistence templates (read-only; for listings). Keys and
    /// values are encoded by [`template_svc`] and [`template_dest`].
    pub fn persist(&self) -> &PersistTable {
        &self.persist
    }

    /// The persistence counters (`full`: connections scheduled without
    /// persistence because the template table was full).
    pub fn persist_stats(&self) -> PersistStats {
        self.persist.stats()
    }

    #[inline]
    fn drop(&self, why: LbDrop) -> LbVerdict {
        bump(&self.stats.drops[why.index()], 1);
        LbVerdict::Drop(why)
    }

    fn dest_rec(&self, slot: u32) -> Option<&Traffic> {
        self.stats.dests.get(slot as usize)
    }

    /// Publish the number of connections (both tables).
    #[inline]
    fn store_conns(&self) {
        self.stats
            .conns
            .store((self.table.len() + self.table6.len()) as u64, Relaxed);
    }

    /// A connection left the table: release its counters and detach it
    /// from its persistence template.
    fn release(&mut self, c: &Conn, now_ns: u64) {
        release_counters(&self.stats, &mut self.trees, c);
        detach_conn(&mut self.persist, &self.pcfg, c, now_ns);
        self.store_conns();
    }

    fn expire_idx(&mut self, idx: u32, now_ns: u64) {
        if let Some(c) = self.table.remove(idx) {
            self.release(&c, now_ns);
            bump(&self.stats.expired, 1);
        }
    }

    /// Expire up to `budget` examined entries (amortized sweep) and up to
    /// `budget` persistence template entries; returns how many connections
    /// were removed. Call it regularly from the worker loop.
    pub fn expire(&mut self, now_ns: u64, budget: u32) -> u32 {
        let now = tick_of(now_ns);
        let Balancer {
            table,
            stats,
            persist,
            pcfg,
            sp,
            trees,
            ..
        } = self;
        let n = table.sweep(now, budget, |idx, c| {
            release_counters(stats, trees, c);
            detach_conn(persist, pcfg, c, now_ns);
            if c.flags & F_SP_PENDING != 0 {
                synproxy::swept(sp.as_mut(), stats, idx, c);
            }
        });
        persist.expire(now_ns, budget as usize);
        bump(&self.stats.expired, n as u64);
        self.store_conns();
        n
    }

    /// Process one packet (see the module docs).
    pub fn process<B: PacketBuf>(
        &mut self,
        snap: &Snapshot,
        egress: &impl Egress,
        buf: &mut B,
        meta: &PacketMeta,
        now: u64,
    ) -> LbVerdict {
        self.see_epoch(snap);
        let key = lookup_key(meta);
        let hash = self.table.hash(&key);
        let p = Prepared {
            hash,
            reply: self.expects_reply(snap, &key),
        };
        let plain = self.plain(snap);
        self.process_hashed(snap, egress, buf, meta, now, &key, &p, plain)
    }

    /// Whether nothing (`expire_nodest_conn`, sync) wants every packet on
    /// the general path: the established shortcuts' condition that does
    /// not depend on the packet, taken once per burst.
    #[inline(always)]
    fn plain(&self, snap: &Snapshot) -> bool {
        !snap.expire_nodest_conn && self.sync.is_none()
    }

    /// Whether a packet of lookup key `key` is expected to be a NAT reply:
    /// while the table holds NAT connections, a packet not to a VIP (a
    /// hint only: the lookup reads the other side too before it misses).
    #[inline(always)]
    fn expects_reply(&self, snap: &Snapshot, key: &FlowKey) -> bool {
        self.table.has_replies() && !snap.is_vip(key.dst)
    }

    /// Whether a packet prepared now can be an expected NAT reply, the
    /// only kind with a second prefetch stage ([`Self::touch_prepared`]):
    /// while the table holds no NAT connection, a burst path may skip that
    /// stage. (Only a prefetch: a burst that sees this change midway loses
    /// at most a few prefetches.)
    #[inline(always)]
    pub fn second_stage(&self) -> bool {
        self.table.has_replies()
    }

    /// First stage of the burst path, called for each packet as soon as it
    /// is classified: its lookup key's hash, with what the lookup reads
    /// first prefetched: both lines of a request, the first reply bucket of
    /// an expected NAT reply (see [`crate::lb::conn::lines`]).
    #[inline]
    pub fn prepare(&self, snap: &Snapshot, meta: &PacketMeta) -> Prepared {
        self.prepare_key(snap, &lookup_key(meta))
    }

    /// [`Self::prepare`] for a packet whose lookup key is `key` (the
    /// caller knows it is no ICMP error: [`lookup_key`] is its `meta.key`).
    #[inline(always)]
    pub fn prepare_key(&self, snap: &Snapshot, key: &FlowKey) -> Prepared {
        let hash = self.table.hash(key);
        let reply = self.expects_reply(snap, key);
        if reply {
            self.table.touch_reply(hash);
        } else {
            self.table.touch(hash);
        }
        Prepared { hash, reply }
    }

    /// Second stage of the burst path for a prepared packet: once its
    /// first stage's prefetch has had time to arrive (the caller prepares
    /// [`TOUCH_LAG`] packets ahead of this call), prefetch what that one
    /// says the lookup reads next. Only an expected NAT reply has such a
    /// thing (the forward record its reply entry names, see
    /// [`LineTable::touch_more_reply`]): a request's first stage
    /// prefetched both of its lines.
    #[inline(always)]
    pub fn touch_prepared(&self, p: &Prepared) {
        if p.reply {
            self.table.touch_more_reply(p.hash);
        }
    }

    /// Process the packets at positions `sel` of a burst whose packets
    /// went through [`Self::prepare`] (`prepared[i]` for `metas[i]` and
    /// `bufs[i]`); the others are left alone (the pipeline answered them).
    /// The first `touched` packets of `sel` have had their records
    /// prefetched already ([`Self::touch_prepared`], while the burst was
    /// being prepared); the records of the others are prefetched here,
    /// [`TOUCH_LAG`] packets ahead of the one being handled, so that the
    /// misses overlap. `out[i]` gets the verdict of `bufs[i]`; positions
    /// out of range are skipped.
    #[allow(clippy::too_many_arguments)]
    pub fn process_prepared<B: PacketBuf>(
        &mut self,
        snap: &Snapshot,
        egress: &impl Egress,
        bufs: &mut [B],
        metas: &[PacketMeta],
        prepared: &[Prepared],
        sel: &[u8],
        touched: usize,
        now: u64,
        out: &mut [LbVerdict],
    ) {
        self.process_prepared_with(
            snap,
            egress,
            bufs,
            metas,
            prepared,
            sel,
            touched,
            now,
            |j, v| {
                if let Some(o) = out.get_mut(j) {
                    *o = v;
                }
            },
        );
    }

    /// [`Self::process_prepared`] handing each verdict to `emit` (with the
    /// packet's position) as soon as it is known: inlined into the
    /// caller, so a caller that turns a `Tx` into its own verdict on the
    /// spot never stores the core's verdict at all.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn process_prepared_with<B: PacketBuf>(
        &mut self,
        snap: &Snapshot,
        egress: &impl Egress,
        bufs: &mut [B],
        metas: &[PacketMeta],
        prepared: &[Prepared],
        sel: &[u8],
        touched: usize,
        now: u64,
        mut emit: impl FnMut(usize, LbVerdict),
    ) {
        const LAG: usize = TOUCH_LAG;
        self.see_epoch(snap);
        let n = sel.len();
        let stage = self.second_stage();
        let plain = self.plain(snap);
        // the records not yet prefetched among the first LAG packets, then
        // each one LAG packets ahead of the packet handled
        for k in touched..n.min(LAG) {
            if !stage {
                break;
            }
            if let Some(&i) = sel.get(k) {
                if let Some(p) = prepared.get(i as usize) {
                    self.touch_prepared(p);
                }
            }
        }
        for (x, &j) in sel.iter().enumerate() {
            let k = x + LAG;
            if stage && k >= touched {
                if let Some(&i) = sel.get(k) {
                    if let Some(p) = prepared.get(i as usize) {
                        self.touch_prepared(p);
                    }
                }
            }
            let j = j as usize;
            if let (Some(buf), Some(meta), Some(p)) =
                (bufs.get_mut(j), metas.get(j), prepared.get(j))
            {
                let key = lookup_key(meta);
                emit(
                    j,
                    self.process_hashed(snap, egress, buf, meta, now, &key, p, plain),
                );
            }
        }
    }

    /// Process a burst: [`Self::prepare`] every packet, then
    /// [`Self::process_prepared`]. Verdicts go to `out` (same index); the
    /// shortest of the three slices bounds the work.
    pub fn process_burst<B: PacketBuf>(
        &mut self,
        snap: &Snapshot,
        egress: &impl Egress,
        bufs: &mut [B],
        metas: &[PacketMeta],
        now: u64,
        out: &mut [LbVerdict],
    ) {
        let n = bufs.len().min(metas.len()).min(out.len());
        let mut start = 0;
        while start < n {
            let end = (start + BURST).min(n);
            let mut prep = [Prepared::default(); BURST];
            let mut sel = [0u8; BURST];
            for (k, m) in metas[start..end].iter().enumerate() {
                prep[k] = self.prepare(snap, m);
                sel[k] = k as u8;
                if let Some(j) = k.checked_sub(TOUCH_LAG) {
                    self.touch_prepared(&prep[j]);
                }
            }
            let touched = (end - start).saturating_sub(TOUCH_LAG);
            self.process_prepared(
                snap,
                egress,
                &mut bufs[start..end],
                &metas[start..end],
                &prep[..end - start],
                &sel[..end - start],
                touched,
                now,
                &mut out[start..end],
            );
            start = end;
        }
    }

    /// Record that this worker now works with `snap` (its housekeeping
    /// calls it, so a worker without traffic does not hold back the reuse
    /// of removed services' and real servers' slots, which waits until
    /// every worker has seen the snapshot that removed them).
    pub fn see_snapshot(&mut self, snap: &Snapshot) {
        self.see_epoch(snap);
    }

    #[inline]
    fn see_epoch(&mut self, snap: &Snapshot) {
        self.persist_sync_all(snap);
        if self.stats.epoch_seen.load(Relaxed) != snap.epoch {
            self.stats.epoch_seen.store(snap.epoch, Relaxed);
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn process_hashed<B: PacketBuf>(
        &mut self,
        snap: &Snapshot,
        egress: &impl Egress,
        buf: &mut B,
        meta: &PacketMeta,
        now_ns: u64,
        key: &FlowKey,
        p: &Prepared,
        plain: bool,
    ) -> LbVerdict {
        let (hash, reply) = (p.hash, p.reply);
        let now = tick_of(now_ns);
        // (a key of another protocol misses: every record is TCP or UDP,
        // and the miss path below answers it)
        // a miss keeps what it learned of the key's buckets for the insert
        let (hit, mut probe) = match self.table.lookup_probe_rec(key, hash, reply) {
            // DR's established path, decided on the record in the table:
            // it reads the three fields DR needs, not a copy of the whole
            // record (which the timer store below would otherwise force
            // to be loaded up front, field by field)
            // (a DR or TUN record has no reply tuple: h.reply is false)
            Ok((h, c)) if keeps_direct(plain, false, c, Method::Dr, meta, now) => {
                let to = Counted::of(c);
                self.restart_established(snap, h.idx, now);
                let res = xmit::dr::dr(buf, to.daddr, egress);
                return self.finish_to(res, to, false, meta, buf, egress, now_ns);
            }
            // TUN's, the same in an arm of its own (one arm for both
            // cost DR instructions)
            Ok((h, c)) if keeps_direct(plain, false, c, Method::Tun, meta, now) => {
                let to = Counted::of(c);
                self.restart_established(snap, h.idx, now);
                let (src, id) = (snap.tunnel_src, &mut self.ip_id);
                let res = xmit::tun::tun(buf, meta, to.daddr, src, egress, id);
                return self.finish_to(res, to, false, meta, buf, egress, now_ns);
            }
            // NAT's, either direction (a reply only to a record without
            // F_NOOUTPUT; SYN proxy connections, whose segments are
            // translated, take the general path)
            Ok((h, c)) if keeps_direct(plain, h.reply, c, Method::Nat, meta, now) => {
                let to = Counted::of(c);
                let (side, addr, port, route) = if h.reply {
                    (Side::Src, c.vaddr, c.vport, c.caddr)
                } else {
                    (Side::Dst, c.daddr, c.dport, c.daddr)
                };
                let reply = h.reply;
                self.restart_established(snap, h.idx, now);
                let res = xmit::nat::nat(buf, meta, side, addr, port, route, egress);
                return self.finish_to(res, to, reply, meta, buf, egress, now_ns);
            }
            // the record is read once here (the lookup has compared its
            // key) and handed on
            Ok((h, c)) => (Some((h, *c)), None),
            Err(_) if key.proto != PROTO_TCP && key.proto != PROTO_UDP => {
                return LbVerdict::NotForUs;
            }
            Err(p) => (None, Some(p)),
        };
        if meta.icmp.is_some() {
            return match hit {
                Some((h, c)) if !tick_reached(now, c.expires) => {
                    self.icmp(snap, egress, buf, meta, h.idx, h.reply)
                }
                _ => LbVerdict::NotForUs,
            };
        }
        if let Some((h, c)) = hit {
            let expired = tick_reached(now, c.expires);
            // the common case, a segment of an ESTABLISHED connection
            // that changes nothing but its timer: no state tables, no flag
            // or counter updates
            if established_keeps(&c, meta, h.reply) && !expired && plain {
                let expires = now.wrapping_add(snap.timeouts.tcp(TcpState::Established));
                self.table.set_expires(h.idx, expires);
                return self.transmit(snap, egress, buf, meta, now_ns, h.idx, &c, h.reply);
            }
            let reuse = !h.reply && is_new_syn(meta) && reusable(&c);
            let pending = c.flags & F_SP_PENDING != 0;
            if pending {
                if !expired {
                    return self
                        .synproxy_pending(snap, egress, buf, meta, now, now_ns, h.idx, h.reply);
                }
                // too late, from either side: the segment becomes the
                // client's RST
                return self.synproxy_timed_out(egress, buf, meta, h.idx, now_ns);
            }
            if expired || reuse {
                self.expire_idx(h.idx, now_ns);
                if h.reply {
                    return LbVerdict::NotForUs;
                }
                probe = Some(self.table.unprobed(hash));
            } else {
                return self.forward_conn(snap, egress, buf, meta, now, now_ns, h.idx, c, h.reply);
            }
        }
        let Some((_, svc)) = snap.service(key.proto, key.dst, key.dport) else {
            return if snap.is_vip(key.dst) {
                self.drop(LbDrop::NotAService)
            } else {
                LbVerdict::NotForUs
            };
        };
        if svc.spec.synproxy && key.proto == PROTO_TCP {
            return self.synproxy_new(snap, svc, egress, buf, meta, key, now, now_ns);
        }
        if key.proto == PROTO_TCP
            && (meta.tcp_flags & tcp_flags::RST != 0
                || (meta.tcp_flags & tcp_flags::SYN == 0 && !snap.sloppy_tcp))
        {
            return self.drop(LbDrop::NotTracked);
        }
        // sloppy_tcp: a segment without SYN is a flow taken over
        // mid-stream (another director had it), so it starts ESTABLISHED
        // (IPVS leaves it in NONE, and the ACK moves it to CLOSE)
        let start = if key.proto == PROTO_TCP && meta.tcp_flags & tcp_flags::SYN == 0 {
            TcpState::Established
        } else {
            TcpState::None
        };
        let probe = probe.unwrap_or_else(|| self.table.unprobed(hash));
        match self.new_conn(snap, svc, key, probe, start, now, now_ns) {
            Ok(idx) => self.forward(snap, egress, buf, meta, now, now_ns, idx, false),
            Err(why) => self.drop(why),
        }
    }
}

mod established;
use established::{established_keeps, is_new_syn, keeps_direct, keeps_established, reusable};

#[cfg(test)]
mod tests;
