//! The [`Balancer`] itself: what one worker owns (its connection tables,
//! scheduler cursors and load trees, counters, persistence templates,
//! ICMP rate limiter, and the sub-machines it drives: the SYN proxy's
//! reserved state, the sync queue, the NAT64 source ports), its
//! construction, and the upkeep every path shares: counting a drop,
//! releasing what a removed connection held, the amortized expiry.

use super::load::release_counters;
use super::nat64::ports::Nat64Ports;
use super::persist::keys::{detach_conn, PersistCfg};
use super::sync::out::SyncOut;
use super::synproxy::{lane::HasParts, resets};
use super::trees::LoadTrees;
use crate::lb::conn::lines::{slots_for as table_slots, LineInserted, LineTable};
use crate::lb::conn::{tick_of, Conn6, ConnTable, F_SP_PENDING};
use crate::lb::persist::{PersistStats, PersistTable};
use crate::lb::sched::{Cursor, DestLoad};
use crate::lb::shift::ftp_state::FtpState;
use crate::lb::shift::table::Inserts;
use crate::lb::snapshot::Snapshot;
use crate::lb::stats::{bump, Traffic, WorkerStats};
use crate::lb::synproxy::SynProxy;
use crate::lb::verdict::{BalancerConfig, LbDrop, LbVerdict};
use crate::lb::xmit::TokenBucket;
use crate::net::family::V4;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// The per-lcore load-balancing state machine (see the module docs).
pub struct Balancer {
    pub(super) table: LineTable,
    pub(super) table6: ConnTable<Conn6>,
    pub(super) stats: Arc<WorkerStats>,
    pub(super) cursors: Vec<Cursor>,
    pub(super) loads: Vec<DestLoad>,
    /// Per service slot: the snapshot epoch under which a pick found none
    /// of its servers with a threshold and so cleared all their overload
    /// marks; in that snapshot its picks read each load when asked
    /// ([`super::load::LiveLoads`]) instead of computing all of them first.
    pub(super) no_marks: Vec<Option<u64>>,
    /// Winner trees of the load schedulers (lc, wlc, sed, nq, fo).
    pub(super) trees: LoadTrees,
    pub(super) ip_id: u16,
    pub(super) icmp_limit: TokenBucket,
    pub(super) persist: PersistTable,
    pub(super) pcfg: Vec<PersistCfg>,
    pub(super) persist_epoch: Option<u64>,
    /// The SYN proxy's sub-machine (`synproxy.rs`; None without
    /// `synproxy` in the configuration).
    pub(super) sp: Option<SynProxy>,
    /// Connection sync's sub-machine (`sync.rs`; None when not syncing).
    pub(super) sync: Option<SyncOut>,
    /// NAT64's sub-machine: the source ports this worker owns (`nat64.rs`).
    pub(super) nat64: Nat64Ports,
    /// FullNAT `client_address`'s per-record state (`client_addr.rs`;
    /// None until a snapshot has such a service).
    pub(super) cip: Option<Inserts>,
    /// The FTP helper's state (`ftp.rs`; None until a snapshot has a
    /// service it is on).
    pub(super) ftp: Option<Box<FtpState>>,
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
        let mut b = Balancer {
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
            trees: LoadTrees::new(dest_slots, svc_slots),
            ip_id: (cfg.seed >> 16) as u16,
            icmp_limit: TokenBucket::new(cfg.icmp_rate, cfg.icmp_burst),
            persist: PersistTable::with_capacity_seed(
                persist_cap as usize,
                (cfg.seed as u64) << 32 | 0x7065_7273,
            ),
            pcfg: vec![PersistCfg::default(); svc_slots as usize],
            persist_epoch: None,
            sp: cfg.synproxy.then(|| {
                SynProxy::new(
                    table_slots(cfg.conn_capacity),
                    cfg.conn6_capacity(),
                    cfg.synproxy_secret,
                )
            }),
            sync: None,
            nat64: Nat64Ports::new(cfg.seed, cfg.worker, cfg.workers),
            cip: None,
            ftp: None,
        };
        if cfg.client_address {
            b.client_addrs_alloc();
        }
        let bound = b.snat_bound();
        b.stats.snat_bound.store(bound, Relaxed);
        b
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
    pub(super) fn follow_moves(&mut self, ins: &LineInserted) {
        if let Some(sp) = self.sp.as_mut() {
            for &(from, to) in ins.moves.iter().take(ins.n) {
                sp.moved(from, to);
            }
        }
    }

    /// The persistence templates (read-only; for listings). Keys and
    /// values are encoded by [`super::template_svc`] and
    /// [`super::template_dest`].
    pub fn persist(&self) -> &PersistTable {
        &self.persist
    }

    /// The persistence counters (`full`: connections scheduled without
    /// persistence because the template table was full).
    pub fn persist_stats(&self) -> PersistStats {
        self.persist.stats()
    }

    /// Count a drop for `why` and say so.
    #[inline]
    pub(super) fn drop(&self, why: LbDrop) -> LbVerdict {
        bump(&self.stats.drops[why.index()], 1);
        LbVerdict::Drop(why)
    }

    pub(super) fn dest_rec(&self, slot: u32) -> Option<&Traffic> {
        self.stats.dests.get(slot as usize)
    }

    /// Publish the number of connections (both tables).
    #[inline]
    pub(super) fn store_conns(&self) {
        self.stats
            .conns
            .store((self.table.len() + self.table6.len()) as u64, Relaxed);
    }

    /// A connection left the table: release its counters and detach it
    /// from its persistence template.
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
                resets::swept::<V4>(sp.as_mut(), stats, idx, &c.parts());
            }
        });
        persist.expire(now_ns, budget as usize);
        bump(&self.stats.expired, n as u64);
        self.store_conns();
        n
    }

    /// Record that this worker now works with `snap` (its housekeeping
    /// calls it, so a worker without traffic does not hold back the reuse
    /// of removed services' and real servers' slots, which waits until
    /// every worker has seen the snapshot that removed them).
    pub fn see_snapshot(&mut self, snap: &Snapshot) {
        self.see_epoch(snap);
    }

    #[inline]
    pub(super) fn see_epoch(&mut self, snap: &Snapshot) {
        self.persist_sync_all(snap);
        if self.stats.epoch_seen.load(Relaxed) != snap.epoch {
            // a new snapshot: what it may need kept beside the tables
            self.client_addrs_for(snap);
            self.ftp_for(snap);
            self.stats.epoch_seen.store(snap.epoch, Relaxed);
        }
    }

    /// Whether nothing (`expire_nodest_conn`, sync) wants every packet on
    /// the general path: the established shortcuts' condition that does
    /// not depend on the packet, taken once per burst.
    #[inline(always)]
    pub(super) fn plain(&self, snap: &Snapshot) -> bool {
        !snap.expire_nodest_conn && self.sync.is_none()
    }
}
