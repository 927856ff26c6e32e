//! The entries of the data path: what a burst shares ([`BurstCtx`]),
//! the two prefetch stages a packet goes through before it is processed
//! ([`Balancer::prepare`], [`Balancer::touch_prepared`]), and the burst
//! and single-packet entries that end in the per-packet state machine
//! (`packet.rs`).

use super::machine::Balancer;
use crate::lb::conn::tick_of;
use crate::lb::snapshot::Snapshot;
use crate::lb::verdict::LbVerdict;
use crate::net::buf::{PacketBuf, BURST};
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{FlowKey, PacketMeta};

/// What every packet of a burst is processed with, taken once per burst:
/// the configuration it is balanced under, the way out (routes, next
/// hops, ports), and the time.
pub struct BurstCtx<'a, E: ?Sized> {
    /// The configuration (services, real servers, timeouts).
    pub snap: &'a Snapshot,
    /// Where rewritten packets leave: routes, next hops, ports.
    pub egress: &'a E,
    /// Nanoseconds from any monotonic origin (injected, so tests control
    /// it).
    pub now_ns: u64,
    /// `now_ns` in the connection table's millisecond ticks.
    pub now: u32,
}

impl<'a, E: ?Sized> BurstCtx<'a, E> {
    /// The context of a burst processed at `now_ns`.
    #[inline(always)]
    pub fn new(snap: &'a Snapshot, egress: &'a E, now_ns: u64) -> Self {
        BurstCtx {
            snap,
            egress,
            now_ns,
            now: tick_of(now_ns),
        }
    }
}

/// A packet's lookup hash in this worker's table (from
/// [`Balancer::prepare`]). The key itself is read again from the packet's
/// meta ([`lookup_key`]) when the packet is processed: storing a copy here
/// cost more stores and loads than recomputing it (callgrind).
#[derive(Clone, Copy, Debug, Default)]
pub struct Prepared {
    pub(super) hash: u32,
    /// Expected to be a NAT reply: the table reads its reply index first.
    pub(super) reply: bool,
}

/// The packets of a burst the balancer is to process
/// ([`Balancer::process_prepared`]): `sel` lists their positions in the
/// burst, `prepared[i]` is packet `i`'s [`Balancer::prepare`], and the
/// first `touched` packets of `sel` have had their second stage
/// ([`Balancer::touch_prepared`]) already.
#[derive(Clone, Copy)]
pub struct Selected<'a> {
    pub prepared: &'a [Prepared],
    pub sel: &'a [u8],
    pub touched: usize,
}

/// How many packets behind the bucket prefetch ([`Balancer::prepare`])
/// the record prefetch ([`Balancer::touch_prepared`]) follows, and the
/// record prefetch the processing: enough for a DRAM miss to arrive.
/// 16 rather than 8: at 1M flows the record prefetch of 8 packets back
/// read buckets that had not all arrived (DR 1M +4% with 16, same run
/// beside testpmd, four alternating pairs; 24 measured like 16; see
/// BENCHMARKS.md, twelfth session).
pub const TOUCH_LAG: usize = 16;

/// The key a packet is looked up by (ICMP errors: the quoted tuple reversed).
#[inline]
pub fn lookup_key(meta: &PacketMeta) -> FlowKey {
    match meta.icmp {
        Some(q) => q.inner_key.reversed(),
        None => meta.key,
    }
}

impl Balancer {
    /// Process one packet (see the module docs).
    pub fn process<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
    ) -> LbVerdict {
        self.see_epoch(at.snap);
        let key = lookup_key(meta);
        let hash = self.table.hash(&key);
        let p = Prepared {
            hash,
            reply: self.expects_reply(at.snap, &key),
        };
        let plain = self.plain(at.snap);
        self.process_hashed(at, buf, meta, &key, &p, plain)
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
    /// [`crate::lb::conn::lines::LineTable::touch_more_reply`]): a
    /// request's first stage prefetched both of its lines.
    #[inline(always)]
    pub fn touch_prepared(&self, p: &Prepared) {
        if p.reply {
            self.table.touch_more_reply(p.hash);
        }
    }

    /// Process the packets `s` selects of a burst whose packets went
    /// through [`Self::prepare`] (`s.prepared[i]` for `metas[i]` and
    /// `bufs[i]`); the others are left alone (the pipeline answered them).
    /// The first `s.touched` packets of `s.sel` have had their records
    /// prefetched already ([`Self::touch_prepared`], while the burst was
    /// being prepared); the records of the others are prefetched here,
    /// [`TOUCH_LAG`] packets ahead of the one being handled, so that the
    /// misses overlap. `out[i]` gets the verdict of `bufs[i]`; positions
    /// out of range are skipped.
    pub fn process_prepared<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        bufs: &mut [B],
        metas: &[PacketMeta],
        s: Selected,
        out: &mut [LbVerdict],
    ) {
        self.process_prepared_with(at, bufs, metas, s, |j, v| {
            if let Some(o) = out.get_mut(j) {
                *o = v;
            }
        });
    }

    /// [`Self::process_prepared`] handing each verdict to `emit` (with the
    /// packet's position) as soon as it is known: inlined into the
    /// caller, so a caller that turns a `Tx` into its own verdict on the
    /// spot never stores the core's verdict at all.
    #[inline(always)]
    pub fn process_prepared_with<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        bufs: &mut [B],
        metas: &[PacketMeta],
        s: Selected,
        mut emit: impl FnMut(usize, LbVerdict),
    ) {
        const LAG: usize = TOUCH_LAG;
        let Selected {
            prepared,
            sel,
            touched,
        } = s;
        self.see_epoch(at.snap);
        let n = sel.len();
        let stage = self.second_stage();
        let plain = self.plain(at.snap);
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
                emit(j, self.process_hashed(at, buf, meta, &key, p, plain));
            }
        }
    }

    /// Process a burst: [`Self::prepare`] every packet, then
    /// [`Self::process_prepared`]. Verdicts go to `out` (same index); the
    /// shortest of the three slices bounds the work.
    pub fn process_burst<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        bufs: &mut [B],
        metas: &[PacketMeta],
        out: &mut [LbVerdict],
    ) {
        let n = bufs.len().min(metas.len()).min(out.len());
        let mut start = 0;
        while start < n {
            let end = (start + BURST).min(n);
            let mut prep = [Prepared::default(); BURST];
            let mut sel = [0u8; BURST];
            for (k, m) in metas[start..end].iter().enumerate() {
                prep[k] = self.prepare(at.snap, m);
                sel[k] = k as u8;
                if let Some(j) = k.checked_sub(TOUCH_LAG) {
                    self.touch_prepared(&prep[j]);
                }
            }
            let s = Selected {
                prepared: &prep[..end - start],
                sel: &sel[..end - start],
                touched: (end - start).saturating_sub(TOUCH_LAG),
            };
            self.process_prepared(
                at,
                &mut bufs[start..end],
                &metas[start..end],
                s,
                &mut out[start..end],
            );
            start = end;
        }
    }
}
