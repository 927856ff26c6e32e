//! The worker's winner trees: lc, wlc, sed, nq and fo picks in O(log n)
//! instead of a walk over every server ([`crate::lb::sched::tree`]).
//!
//! One tree per service, built at the service's first pick under a
//! snapshot (O(n), as one walk) and carved out of an arena the worker
//! allocates once ([`LoadTrees::new`]), so no pick allocates. Every change
//! of a server's active or inactive count goes through
//! [`LoadTrees::changed`], which notes the server's position in its
//! service's tree; the next pick replays the noted positions (O(log n)
//! each) and reads the root. More changes between two picks than the
//! service has servers: the pick rebuilds the tree instead (no dearer than
//! the walk it replaces). A new snapshot (epoch) empties the arena: each
//! tree is built again at its first pick.
//!
//! Trees serve the live path only (a service without thresholds, whose
//! overload marks are all clear: see `load::LiveLoads`), where a server's
//! load is its live counters and its weight. Debug builds check every
//! tree pick against the walk.

use crate::lb::sched::tree::{self, by_load, Node};
use crate::lb::sched::DestLoad;
use crate::lb::snapshot::{Dest, Service};
use crate::lb::stats::Traffic;
use std::sync::atomic::Ordering::Relaxed;

/// No service.
const NO_SVC: u32 = u32::MAX;

/// Services with fewer servers walk them: below this a walk costs no more
/// than replaying a tree's two changes per new connection (measured with
/// `dirigo-bench micro --newconn --servers N`, see BENCHMARKS.md: at 16
/// servers the walk was faster, at 32 the tree).
pub(super) const TREE_MIN: usize = 32;

/// Where a service's tree lives in the arenas.
#[derive(Clone, Copy, Debug, Default)]
struct Hdr {
    /// Built under this snapshot epoch (`built`).
    epoch: u64,
    built: bool,
    /// More changes than `n` since the last pick: rebuild.
    stale: bool,
    /// Its first node in `nodes` (`2 * size` of them) and first noted
    /// position in `noted` (`n` of them).
    base: u32,
    /// The tree's size ([`tree::size_for`] of `n`).
    size: u32,
    /// Servers.
    n: u32,
    /// Noted positions.
    noted: u32,
    /// Its first noted position in `noted`.
    nbase: u32,
}

/// A real-server slot's position: its service slot and index there.
#[derive(Clone, Copy, Debug)]
struct Leaf {
    svc: u32,
    pos: u32,
}

/// The trees of one worker (see the module docs).
pub(super) struct LoadTrees {
    nodes: Box<[Node]>,
    noted: Box<[u32]>,
    top: usize,
    ntop: usize,
    hdrs: Box<[Hdr]>,
    of_dest: Box<[Leaf]>,
    epoch: Option<u64>,
    /// A tree has been built (until then, and for workers whose services
    /// all walk, [`Self::changed`] has nothing to note).
    any: bool,
}

impl LoadTrees {
    /// Room for the trees of a snapshot over `dest_slots` real servers in
    /// `svc_slots` services: each tree's servers rounded up to a power of
    /// two, twice (leaves and matches: at most four nodes per server), and
    /// as many noted positions as servers.
    pub(super) fn new(dest_slots: u32, svc_slots: u32) -> LoadTrees {
        LoadTrees {
            nodes: vec![Node::EMPTY; 4 * dest_slots as usize].into_boxed_slice(),
            noted: vec![0; dest_slots as usize].into_boxed_slice(),
            top: 0,
            ntop: 0,
            hdrs: vec![Hdr::default(); svc_slots as usize].into_boxed_slice(),
            of_dest: vec![
                Leaf {
                    svc: NO_SVC,
                    pos: 0
                };
                dest_slots as usize
            ]
            .into_boxed_slice(),
            epoch: None,
            any: false,
        }
    }

    /// Real server `slot`'s active or inactive count changed.
    #[inline]
    pub(super) fn changed(&mut self, slot: u32) {
        if !self.any {
            return;
        }
        let Some(&Leaf { svc, pos }) = self.of_dest.get(slot as usize) else {
            return;
        };
        let Some(h) = self.hdrs.get_mut(svc as usize) else {
            return;
        };
        if !h.built || Some(h.epoch) != self.epoch || h.stale {
            return; // built afresh (or rebuilt) at the next pick anyway
        }
        if h.noted >= h.n {
            h.stale = true;
            return;
        }
        // a position from an older snapshot (the slot has left the
        // service) replays a server that did not change: harmless
        if let Some(e) = self.noted.get_mut(h.nbase as usize + h.noted as usize) {
            *e = pos;
            h.noted += 1;
        }
    }

    /// The pick of `svc`'s scheduler under snapshot `epoch` from its
    /// tree: `None` when a tree does not answer (not a load scheduler,
    /// fewer than [`TREE_MIN`] servers, or the arena is full: the caller
    /// walks), else the pick (`Some(None)`: no server available).
    /// `stats`: the worker's real-server counters.
    pub(super) fn pick(
        &mut self,
        epoch: u64,
        svc: &Service,
        stats: &[Traffic],
    ) -> Option<Option<usize>> {
        let kind = svc.prepared.kind();
        let n = svc.dests.len();
        if n < TREE_MIN || !by_load(kind) {
            return None;
        }
        if self.epoch != Some(epoch) {
            self.epoch = Some(epoch);
            self.top = 0;
            self.ntop = 0;
        }
        let slot = svc.id.slot;
        let dests = &svc.dests[..];
        let load = |i: u32| {
            dests
                .get(i as usize)
                .map_or(DestLoad::default(), |d| live_load(stats, d))
        };
        let h = self.hdrs.get_mut(slot as usize)?;
        if !h.built || h.epoch != epoch {
            let size = tree::size_for(n);
            if self.top + 2 * size > self.nodes.len() || self.ntop + n > self.noted.len() {
                return None;
            }
            *h = Hdr {
                epoch,
                built: true,
                stale: false,
                base: self.top as u32,
                size: size as u32,
                n: n as u32,
                noted: 0,
                nbase: self.ntop as u32,
            };
            self.top += 2 * size;
            self.any = true;
            self.ntop += n;
            for (pos, d) in dests.iter().enumerate() {
                if let Some(l) = self.of_dest.get_mut(d.id.slot as usize) {
                    *l = Leaf {
                        svc: slot,
                        pos: pos as u32,
                    };
                }
            }
            let nodes = self
                .nodes
                .get_mut(h.base as usize..(h.base + 2 * h.size) as usize)?;
            tree::build(nodes, n, kind, load);
        } else {
            let nodes = self
                .nodes
                .get_mut(h.base as usize..(h.base + 2 * h.size) as usize)?;
            if h.stale {
                tree::build(nodes, n, kind, load);
            } else {
                let noted = self
                    .noted
                    .get(h.nbase as usize..(h.nbase + h.noted) as usize)
                    .unwrap_or(&[]);
                for &leaf in noted {
                    tree::update(nodes, n, kind, leaf, load);
                }
            }
            h.stale = false;
            h.noted = 0;
        }
        let nodes = self
            .nodes
            .get(h.base as usize..(h.base + 2 * h.size) as usize)?;
        let r = tree::root(nodes, n);
        Some(r.available().then_some(r.idx() as usize))
    }
}

/// Server `d`'s live load from the worker's counters `stats`: its weight
/// and counts, no overload mark (what `load::LiveLoads` and the trees
/// read on the live path).
#[inline(always)]
pub(super) fn live_load(stats: &[Traffic], d: &Dest) -> DestLoad {
    match stats.get(d.id.slot as usize) {
        Some(t) => DestLoad {
            weight: d.weight,
            active: t.active.load(Relaxed),
            inactive: t.inactive.load(Relaxed),
            overloaded: false,
        },
        None => DestLoad::default(),
    }
}
