//! A worker's sync sender: its queue and policy, and whether a
//! forwarded packet's connection is to be sent, as what.

use crate::lb::conn::{Conn, F_NOOUTPUT};
use crate::lb::state::TcpState;
use crate::lb::sync::{SyncConn, SyncPolicy, SyncQueue};
use crate::net::meta::PROTO_TCP;
use std::sync::Arc;
/// A worker's sync sender side: the queue and when to use it.
pub(in crate::lb::balancer) struct SyncOut {
    pub(in crate::lb::balancer) queue: Arc<SyncQueue>,
    pub(in crate::lb::balancer) policy: SyncPolicy,
    /// The next record a resend of the whole table looks at (`None`: no
    /// resend in progress).
    pub(in crate::lb::balancer) resend: Option<u32>,
}

/// The TCP states IPVS syncs (`ip_vs_sync_conn_needed`).
#[inline]
pub(super) fn synced_state(s: u8) -> bool {
    const MASK: u32 = 1 << TcpState::Established as u32
        | 1 << TcpState::FinWait as u32
        | 1 << TcpState::CloseWait as u32
        | 1 << TcpState::TimeWait as u32
        | 1 << TcpState::Close as u32;
    s < 32 && MASK & (1 << s) != 0
}

/// Whether connection `c` (as it was before this packet) is to be sent now
/// that its state is `state` and it expires at `expires` (ms tick).
#[inline]
pub(in crate::lb::balancer) fn due(p: &SyncPolicy, c: &Conn, state: u8, expires: u32) -> bool {
    if c.proto == PROTO_TCP {
        if !synced_state(state) {
            return false;
        }
        if state != c.state {
            return true;
        }
    } else if state < p.udp_threshold {
        return false;
    } else if c.state < p.udp_threshold {
        return true; // this packet reached the threshold
    }
    p.refresh_shift != 0 && (c.expires ^ expires) >> p.refresh_shift != 0
}

/// What the sync protocol says about `c` in state `state` with `timeout_ms` left.
pub(in crate::lb::balancer) fn to_sync(c: &Conn, state: u8, timeout_ms: u32) -> SyncConn {
    SyncConn {
        proto: c.proto,
        state: if c.proto == PROTO_TCP { state } else { 0 },
        no_output: c.flags & F_NOOUTPUT != 0,
        method: Some(c.method),
        template: false,
        caddr: c.caddr,
        vaddr: c.vaddr,
        daddr: c.daddr,
        cport: c.cport,
        vport: c.vport,
        dport: c.dport,
        timeout_s: timeout_ms.div_ceil(1000),
    }
}
