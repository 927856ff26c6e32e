//! The client's RST when its pending connection is gone: built from
//! the record and the proxy's state, queued by the sweep (which has no
//! balancer at hand).

use crate::lb::conn::Conn;
use crate::lb::stats::{bump, WorkerStats};
use crate::lb::synproxy::{Aux, Reset, SynProxy, SynproxyCount};
/// The sweep removed pending connection `c` (record `idx`): queue the
/// client's RST.
pub(in crate::lb::balancer) fn swept(
    sp: Option<&mut SynProxy>,
    stats: &WorkerStats,
    idx: u32,
    c: &Conn,
) {
    let Some(sp) = sp else {
        return;
    };
    let Some(a) = sp.aux(idx).copied() else {
        return;
    };
    bump(&stats.synproxy[SynproxyCount::ServerTimeout.index()], 1);
    if !sp.queue_reset(reset_for(c, &a)) {
        bump(&stats.synproxy[SynproxyCount::ResetsLost.index()], 1);
    }
}

/// The RST that tells `c`'s client its connection is gone.
pub(super) fn reset_for(c: &Conn, a: &Aux) -> Reset {
    Reset {
        client: c.caddr,
        cport: c.cport,
        vip: c.vaddr,
        vport: c.vport,
        seq: a.seq.wrapping_add(1),
    }
}
