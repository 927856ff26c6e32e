//! The client's RST when its pending connection is gone: built from
//! the record and the proxy's state, queued by the sweep (which has no
//! balancer at hand). Either family's: the record is read as [`Parts`].

use super::lane::Parts;
use crate::lb::stats::{bump, WorkerStats};
use crate::lb::synproxy::{Aux, LaneOf, Reset, SynProxy, SynproxyCount};

/// The sweep removed pending connection `c` of family `F` (record
/// `idx`): queue the client's RST.
pub(in crate::lb::balancer) fn swept<F: LaneOf>(
    sp: Option<&mut SynProxy>,
    stats: &WorkerStats,
    idx: u32,
    c: &Parts<F::Addr>,
) {
    let Some(sp) = sp else {
        return;
    };
    let lane = sp.lane_mut::<F>();
    let Some(a) = lane.aux(idx).copied() else {
        return;
    };
    bump(&stats.synproxy[SynproxyCount::ServerTimeout.index()], 1);
    if !lane.queue_reset(reset_for(c, &a)) {
        bump(&stats.synproxy[SynproxyCount::ResetsLost.index()], 1);
    }
}

/// The RST that tells `c`'s client its connection is gone.
pub(super) fn reset_for<A: Copy>(c: &Parts<A>, a: &Aux) -> Reset<A> {
    Reset {
        client: c.caddr,
        cport: c.cport,
        vip: c.vaddr,
        vport: c.vport,
        seq: a.seq.wrapping_add(1),
    }
}
