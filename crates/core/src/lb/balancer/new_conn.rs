//! A new connection: schedule (pinned client, persistence template, or
//! the service's scheduler over the live loads), insert into the table
//! with the lookup's probe, count it.

use super::burst::BurstCtx;
use super::load::{dest_load, LiveLoads};
use super::machine::Balancer;
use super::trees;
use crate::lb::conn::lines::LineProbe;
use crate::lb::conn::{ConnOf, F_NOOUTPUT};
use crate::lb::sched::{self, DestLoad};
use crate::lb::snapshot::{Dest, Service, Snapshot};
use crate::lb::spec::Method;
use crate::lb::state::TcpState;
use crate::lb::stats::bump;
use crate::lb::verdict::LbDrop;
use crate::net::meta::{Flow, FlowKey, PROTO_TCP};

impl Balancer {
    /// Schedule and insert a new connection for `key`, whose lookup in
    /// the table gave `probe` (see
    /// [`crate::lb::conn::lines::LineTable::insert_probed`]).
    pub(super) fn new_conn<E>(
        &mut self,
        at: &BurstCtx<E>,
        svc: &Service,
        key: &FlowKey,
        probe: LineProbe,
        start: TcpState,
    ) -> Result<u32, LbDrop> {
        let (snap, now, now_ns) = (at.snap, at.now, at.now_ns);
        let pinned = svc.pinned(key.src, key.sport);
        let was_pinned = pinned.is_some();
        let d = match pinned.or_else(|| self.persist_pick(snap, svc, key.src, now_ns)) {
            Some(d) => Some(d),
            None => self.sched_pick(snap, svc, key),
        };
        let d = d.ok_or(LbDrop::NoDest)?;
        let conn = record(at, svc, d, key, d.addr, (), start);
        if self.ftp.is_some() {
            self.ftp_claim(svc, key, d, start);
        }
        let ins = self.table.insert_probed(conn, probe, now);
        self.follow_moves(&ins);
        if let Some(ev) = ins.evicted {
            self.release(&ev, now_ns);
            bump(&self.stats.evicted, 1);
        }
        let idx = ins.result.map_err(|_| LbDrop::TableFull)?;
        if !was_pinned {
            self.persist_attach(svc, key.src, d, idx, now_ns);
        }
        self.count_new(svc, d);
        Ok(idx)
    }

    /// Count a new connection of service `svc` to real server `d`
    /// (either family).
    pub(super) fn count_new(&mut self, svc: &Service, d: &Dest) {
        if let Some(t) = self.stats.dests.get(d.id.slot as usize) {
            t.adopt(d.id.gen);
            bump(&t.conns, 1);
            t.adjust(0, 1, 1);
        }
        self.trees.changed(d.id.slot);
        if let Some(t) = self.stats.services.get(svc.id.slot as usize) {
            t.adopt(svc.id.gen);
            bump(&t.conns, 1);
            t.adjust(0, 0, 1);
        }
        self.store_conns();
    }

    /// The service's scheduler's pick for `key` over this worker's live
    /// loads (weight 0 and overloaded servers are never picked).
    #[inline(always)]
    pub(super) fn sched_pick<'s>(
        &mut self,
        snap: &Snapshot,
        svc: &'s Service,
        key: &FlowKey,
    ) -> Option<&'s Dest> {
        let slot = svc.id.slot as usize;
        let live = self
            .no_marks
            .get(slot)
            .is_some_and(|e| *e == Some(snap.epoch));
        let i = if live {
            // lc, wlc, sed, nq, fo over many servers: the service's
            // winner tree, not a walk
            let tree = if svc.dests.len() >= trees::TREE_MIN {
                self.tree_pick(snap, svc, key)
            } else {
                None
            };
            let cur = self.cursors.get_mut(slot)?;
            match tree {
                Some(p) => p,
                None => {
                    // no thresholds, marks cleared: each load when asked
                    let loads = LiveLoads {
                        dests: &svc.dests,
                        stats: &self.stats.dests,
                        cap: self.loads.capacity(),
                    };
                    sched::pick_with(&svc.prepared, cur, &loads, key)
                }
            }
        } else {
            let cur = self.cursors.get_mut(slot)?;
            self.loads.clear();
            let mut thresholds = false;
            for d in &svc.dests {
                thresholds |= d.upper != 0 || d.lower != 0;
                let load = match self.stats.dests.get(d.id.slot as usize) {
                    Some(t) => dest_load(t, d.weight, d.upper, d.lower),
                    None => DestLoad::default(),
                };
                if self.loads.len() == self.loads.capacity() {
                    break; // never reallocate on the fast path
                }
                self.loads.push(load);
            }
            if !thresholds && self.loads.len() == svc.dests.len() {
                // every mark of the service is clear now, and
                // without thresholds none is set again in this
                // snapshot: later picks need no pass of their own
                if let Some(e) = self.no_marks.get_mut(slot) {
                    *e = Some(snap.epoch);
                }
            }
            sched::pick(&svc.prepared, cur, &self.loads, key)
        };
        i.and_then(|i| svc.dests.get(i))
    }

    /// [`Self::sched_pick`] from the service's winner tree
    /// ([`trees::LoadTrees::pick`]; `None`: walk instead). Debug builds
    /// check it against the walk.
    #[inline(never)]
    fn tree_pick(
        &mut self,
        snap: &Snapshot,
        svc: &Service,
        key: &FlowKey,
    ) -> Option<Option<usize>> {
        let p = self.trees.pick(snap.epoch, svc, &self.stats.dests)?;
        if cfg!(debug_assertions) {
            let loads = LiveLoads {
                dests: &svc.dests,
                stats: &self.stats.dests,
                cap: self.loads.capacity(),
            };
            let mut cur = self
                .cursors
                .get(svc.id.slot as usize)
                .copied()
                .unwrap_or_default();
            let walk = sched::pick_with(&svc.prepared, &mut cur, &loads, key);
            debug_assert_eq!(p, walk, "the tree and the walk disagree");
        }
        Some(p)
    }
}

/// The record of a new connection of service `svc` for the tuple `key`,
/// to real server `d` at `daddr` (either family; `ext` is what only the
/// family keeps), in TCP state `start`.
#[inline(always)]
pub(super) fn record<A: Copy, X, E>(
    at: &BurstCtx<E>,
    svc: &Service,
    d: &Dest,
    key: &Flow<A>,
    daddr: A,
    ext: X,
    start: TcpState,
) -> ConnOf<A, X> {
    let init = if key.proto == PROTO_TCP {
        at.snap.timeouts.tcp(start)
    } else {
        at.snap.timeouts.udp_ms
    };
    ConnOf {
        caddr: key.src,
        vaddr: key.dst,
        daddr,
        dest: d.id.slot,
        expires: at.now.wrapping_add(init),
        cport: key.sport,
        vport: key.dport,
        dport: if d.port == 0 { key.dport } else { d.port },
        svc: svc.id.slot as u16,
        proto: key.proto,
        state: start as u8,
        flags: if matches!(d.method, Method::Nat | Method::FullNat) {
            0
        } else {
            F_NOOUTPUT
        },
        method: d.method,
        ext,
    }
}
