//! Per-real-server load accounting of the worker: what a removed
//! connection gives back, and the scheduler's view of a server with the
//! IPVS threshold (overload) mark (see the `worker` module docs).

use crate::lb::conn::{Conn, F_ACTIVE};
use crate::lb::sched::DestLoad;
use crate::lb::stats::{Traffic, WorkerStats};
use std::sync::atomic::Ordering::Relaxed;

/// Give back a removed connection's active/inactive/live counts.
#[inline]
pub(super) fn release_counters(stats: &WorkerStats, c: &Conn) {
    if let Some(t) = stats.dests.get(c.dest as usize) {
        if c.flags & F_ACTIVE != 0 {
            t.adjust(-1, 0, -1);
        } else {
            t.adjust(0, -1, -1);
        }
    }
    if let Some(t) = stats.services.get(c.svc as usize) {
        t.adjust(0, 0, -1);
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
