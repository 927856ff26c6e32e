//! Which segments keep a connection ESTABLISHED as it is, and the
//! established shortcut built on that: a packet of an ESTABLISHED, active
//! connection whose segment changes nothing but the timer is decided on the
//! record in the table (`keeps_direct`) and only restarts the
//! timer (`Balancer::restart_established`) before it is rewritten.

use super::machine::Balancer;
use crate::lb::conn::{
    tick_reached, Conn, F_ACTIVE, F_NOOUTPUT, F_SP_PENDING, F_SYNCED, F_SYNPROXY,
};
use crate::lb::snapshot::Snapshot;
use crate::lb::spec::Method;
use crate::lb::state::TcpState;
use crate::net::meta::{tcp_flags, PacketMeta, PROTO_TCP};

/// Whether a packet of connection `c` (a NAT reply when `reply`) of
/// forwarding method `method` found by the lookup takes the established
/// shortcut: not an ICMP error, a segment that keeps the connection
/// ESTABLISHED ([`established_keeps`]), no SYN proxy translation, not
/// expired, and nothing (expire_nodest_conn, sync) that wants the
/// general path (`plain`: [`Balancer::plain`]).
#[inline(always)]
pub(super) fn keeps_direct(
    plain: bool,
    reply: bool,
    c: &Conn,
    method: Method,
    meta: &PacketMeta,
    now: u32,
) -> bool {
    direct_word(c) & direct_mask(reply) == direct_established(method)
        && meta.icmp.is_none()
        && segment_keeps(meta.tcp_flags)
        && !tick_reached(now, c.expires)
        && plain
}

impl Balancer {
    /// The shortcut's timer: the connection at `idx` ESTABLISHED again
    /// for its whole timeout from `now`.
    #[inline(always)]
    pub(super) fn restart_established(&mut self, snap: &Snapshot, idx: u32, now: u32) {
        let expires = now.wrapping_add(snap.timeouts.tcp(TcpState::Established));
        self.table.set_expires(idx, expires);
    }
}

/// A TCP SYN that starts a new connection (SYN without ACK, FIN, RST).
#[inline]
pub(super) fn is_new_syn(meta: &PacketMeta) -> bool {
    meta.key.proto == PROTO_TCP
        && meta.tcp_flags & (tcp_flags::SYN | tcp_flags::ACK | tcp_flags::FIN | tcp_flags::RST)
            == tcp_flags::SYN
}

/// A segment that leaves an ESTABLISHED TCP connection as it is: SYN
/// and/or ACK without FIN or RST (every state table keeps ESTABLISHED on
/// those, in every direction: a SYN's row and an ACK's row both map
/// ESTABLISHED to itself), on a connection that is counted active, neither
/// synced nor waiting for the SYN proxy, and, for a reply, has seen one
/// before. State and flags stay as they are, so only the timer moves. A
/// repeated SYN of an established connection is common (a client's
/// retransmission, or a replay of a connection's packets) and is not a new
/// connection (only TIME_WAIT and CLOSE are reused, [`reusable`]).
#[inline(always)]
pub(super) fn established_keeps(c: &Conn, meta: &PacketMeta, reply: bool) -> bool {
    keeps_established(c.proto, c.state, c.flags, meta.tcp_flags, reply)
}

/// [`established_keeps`] from a record's protocol, state and flags and the
/// segment's TCP flags (IPv4 and IPv6 records alike).
#[inline(always)]
pub(super) fn keeps_established(proto: u8, state: u8, flags: u8, tcp: u8, reply: bool) -> bool {
    let watch = F_SYNCED | F_SP_PENDING | F_ACTIVE | if reply { F_NOOUTPUT } else { 0 };
    proto == PROTO_TCP
        && state == TcpState::Established as u8
        && flags & watch == F_ACTIVE
        && segment_keeps(tcp)
}

/// A segment with these TCP flags keeps an ESTABLISHED connection so:
/// SYN and/or ACK, neither FIN nor RST.
#[inline(always)]
pub(super) fn segment_keeps(tcp: u8) -> bool {
    tcp & (tcp_flags::FIN | tcp_flags::RST) == 0 && tcp & (tcp_flags::SYN | tcp_flags::ACK) != 0
}

/// A record's protocol, state, flags and method as one word (adjacent
/// bytes of [`Conn`]), for the shortcut's test.
#[inline(always)]
pub(super) fn direct_word(c: &Conn) -> u32 {
    u32::from_le_bytes([c.proto, c.state, c.flags, c.method as u8])
}

/// What of [`direct_word`] the shortcut looks at: the protocol, the state,
/// the flags [`keeps_established`] watches (for a reply when `reply`) and
/// [`F_SYNPROXY`], the method.
#[inline(always)]
pub(super) fn direct_mask(reply: bool) -> u32 {
    const BASE: u32 = u32::from_le_bytes([
        0xff,
        0xff,
        F_SYNCED | F_SP_PENDING | F_ACTIVE | F_SYNPROXY,
        0xff,
    ]);
    BASE | (reply as u32) << (16 + F_NOOUTPUT.trailing_zeros())
}

/// [`direct_word`] (masked) of an ESTABLISHED TCP request record of
/// `method` that [`keeps_established`] keeps: counted active, neither synced
/// nor waiting for the SYN proxy.
#[inline(always)]
pub(super) const fn direct_established(method: Method) -> u32 {
    u32::from_le_bytes([
        PROTO_TCP,
        TcpState::Established as u8,
        F_ACTIVE,
        method as u8,
    ])
}

/// IPVS `is_new_conn_expected` (conn_reuse_mode 1): TIME_WAIT or CLOSE.
#[inline]
pub(super) fn reusable(c: &Conn) -> bool {
    c.proto == PROTO_TCP
        && matches!(
            TcpState::from_u8(c.state),
            TcpState::TimeWait | TcpState::Close
        )
}
