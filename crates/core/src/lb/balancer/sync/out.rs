//! A worker's sync sender: its queue and policy, and whether a
//! forwarded packet's connection is to be sent, as what.

use crate::lb::conn::{ConnOf, F_NOOUTPUT};
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
#[inline(always)]
pub(in crate::lb::balancer) fn due<A, X>(
    p: &SyncPolicy,
    c: &ConnOf<A, X>,
    state: u8,
    expires: u32,
) -> bool {
    due_of(p, c.proto, c.state, c.expires, state, expires)
}

/// [`due`] on the record's fields: protocol, state and expiry before the
/// packet, then after it.
#[inline(always)]
fn due_of(p: &SyncPolicy, proto: u8, was: u8, was_expires: u32, state: u8, expires: u32) -> bool {
    if proto == PROTO_TCP {
        if !synced_state(state) {
            return false;
        }
        if state != was {
            return true;
        }
    } else if state < p.udp_threshold {
        return false;
    } else if was < p.udp_threshold {
        return true; // this packet reached the threshold
    }
    p.refresh_shift != 0 && (was_expires ^ expires) >> p.refresh_shift != 0
}

/// What the sync protocol says about `c` in state `state` with
/// `timeout_ms` left, in an IPv6 entry when `v6` (the caller keeps NAT64
/// connections out: their real server is IPv4 and the entry would say
/// nothing of the pool address and port).
pub(in crate::lb::balancer) fn to_sync<A: Copy + Into<u128>, X>(
    c: &ConnOf<A, X>,
    v6: bool,
    state: u8,
    timeout_ms: u32,
) -> SyncConn {
    SyncConn {
        v6,
        proto: c.proto,
        state: if c.proto == PROTO_TCP { state } else { 0 },
        no_output: c.flags & F_NOOUTPUT != 0,
        method: Some(c.method),
        template: false,
        caddr: c.caddr.into(),
        vaddr: c.vaddr.into(),
        daddr: c.daddr.into(),
        cport: c.cport,
        vport: c.vport,
        dport: c.dport,
        timeout_s: timeout_ms.div_ceil(1000),
    }
}
