//! Per-real-server load accounting of the worker: what a removed
//! connection gives back, and the scheduler's view of a server with the
//! IPVS threshold (overload) mark (see the `worker` module docs).

use super::trees::{live_load, LoadTrees};
use crate::lb::conn::{ConnOf, F_ACTIVE};
use crate::lb::sched::{DestLoad, Loads};
use crate::lb::snapshot::Dest;
use crate::lb::stats::{Traffic, WorkerStats};
use std::sync::atomic::Ordering::Relaxed;

/// Give back a removed connection's active/inactive/live counts.
#[inline]
pub(super) fn release_counters<A, X>(stats: &WorkerStats, trees: &mut LoadTrees, c: &ConnOf<A, X>) {
    let (dest, svc, flags) = (c.dest, c.svc, c.flags);
    if let Some(t) = stats.dests.get(dest as usize) {
        if flags & F_ACTIVE != 0 {
            t.adjust(-1, 0, -1);
        } else {
            t.adjust(0, -1, -1);
        }
        trees.changed(dest);
    }
    if let Some(t) = stats.services.get(svc as usize) {
        t.adjust(0, 0, -1);
    } else if let Some(r) = crate::lb::snat::rule_of(svc, dest) {
        stats.snat_release(r);
    }
}

/// The scheduler's view of one real server, updating the overload mark.
#[inline]
pub(super) fn dest_load(t: &Traffic, weight: u32, upper: u32, lower: u32) -> DestLoad {
    let active = t.active.load(Relaxed);
    let inactive = t.inactive.load(Relaxed);
    let total = active as u64 + inactive as u64;
    let mut over = t.overloaded.load(Relaxed) != 0;
    if over {
        let clear = if lower != 0 {
            total < lower as u64
        } else if upper != 0 {
            total * 4 < upper as u64 * 3
        } else {
            true
        };
        if clear {
            over = false;
            t.overloaded.store(0, Relaxed);
        }
    } else if upper != 0 && total >= upper as u64 {
        over = true;
        t.overloaded.store(1, Relaxed);
    }
    DestLoad {
        weight,
        active,
        inactive,
        overloaded: over,
    }
}

/// The scheduler's view of a service's servers computed when a scheduler
/// asks for one ([`crate::lb::sched::pick_with`]), for a service none of
/// whose servers has a threshold: [`dest_load`] of such a server only
/// clears its overload mark, and `Balancer::new_conn` uses this view only
/// once it has done that for every server of the service under the
/// current snapshot (no mark can be set again until a snapshot with
/// thresholds), so the picks are those of a [`dest_load`] of every server.
pub(super) struct LiveLoads<'a> {
    pub dests: &'a [Dest],
    pub stats: &'a [Traffic],
    /// At most this many servers (the worker's eager view stops there).
    pub cap: usize,
}

impl Loads for LiveLoads<'_> {
    #[inline]
    fn count(&self) -> usize {
        self.dests.len().min(self.cap)
    }

    #[inline]
    fn load(&self, i: usize) -> Option<DestLoad> {
        if i >= self.cap {
            return None;
        }
        let d = self.dests.get(i)?;
        Some(live_load(self.stats, d))
    }

    #[inline]
    fn each(&self, mut f: impl FnMut(usize, DestLoad) -> bool) {
        for (i, d) in self.dests.iter().take(self.cap).enumerate() {
            if !f(i, live_load(self.stats, d)) {
                return;
            }
        }
    }
}
