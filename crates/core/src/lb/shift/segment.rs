//! A shift applied to a TCP segment in place: the sequence number, the
//! acknowledgment number (when ACK is set) and the SACK blocks, each
//! with an incremental checksum update. What is written is the header;
//! the payload (a header to prepend, an FTP line rewritten) is the
//! caller's, before this.

use super::adjust::{Dir, Shift};
use super::once::{ClientSeg, HeaderInsert, Out};
use crate::net::meta::tcp_flags;
use crate::net::wire::{tcp, tcpopt, WireError};

/// The SACK blocks' edges of `t`'s options (offsets from the header's
/// start), at most 4 blocks.
fn sack_edges<T: AsRef<[u8]>>(t: &tcp::Packet<T>) -> impl Iterator<Item = usize> {
    let opts = if t.header_len() > tcp::MIN_HEADER_LEN {
        tcpopt::parse(t.options())
    } else {
        tcpopt::TcpOptions::default()
    };
    opts.sack_edges()
}

/// Move the numbers of a segment sent in direction `d` by `shift`: its
/// sequence number by `d`'s changes, its acknowledgment number and SACK
/// edges back by the other direction's.
pub fn apply<T: AsRef<[u8]> + AsMut<[u8]>, const K: usize>(
    t: &mut tcp::Packet<T>,
    shift: &Shift<K>,
    d: Dir,
) {
    if !shift.dir(d).is_identity() {
        let s = shift.seq(d, t.seq_number());
        t.set_seq_number_update_checksum(s);
    }
    if !shift.dir(d.other()).is_identity() {
        acks(t, |a| shift.ack(d, a));
    }
}

/// The acknowledgment number (with ACK set) and the SACK edges of `t`
/// through `f`.
fn acks<T: AsRef<[u8]> + AsMut<[u8]>>(t: &mut tcp::Packet<T>, mut f: impl FnMut(u32) -> u32) {
    if t.flags() & tcp_flags::ACK != 0 {
        let a = f(t.ack_number());
        t.set_ack_number_update_checksum(a);
    }
    for at in sack_edges(t) {
        let e = f(t.u32_at(at));
        t.set_u32_update_checksum(at, e);
    }
}

/// A client segment of a connection with a header to insert: decides
/// (see [`HeaderInsert::client`]) and writes the sequence number. When
/// the answer says `prepend`, the caller puts the header's bytes before
/// the payload (and fixes the lengths and checksums that covers).
pub fn client_segment<T: AsRef<[u8]> + AsMut<[u8]>>(
    t: &mut tcp::Packet<T>,
    h: &mut HeaderInsert,
) -> Out {
    let out = h.client(ClientSeg {
        seq: t.seq_number(),
        flags: t.flags(),
    });
    if out.seq != t.seq_number() {
        t.set_seq_number_update_checksum(out.seq);
    }
    out
}

/// A server segment of a connection with a header inserted: notes the
/// header acknowledged, and moves the acknowledgment number and SACK
/// edges back.
pub fn server_segment<T: AsRef<[u8]> + AsMut<[u8]>>(t: &mut tcp::Packet<T>, h: &mut HeaderInsert) {
    if t.flags() & tcp_flags::ACK != 0 {
        let a = h.server_ack(t.ack_number());
        t.set_ack_number_update_checksum(a);
    }
    for at in sack_edges(t) {
        let e = h.server_sack_edge(t.u32_at(at));
        t.set_u32_update_checksum(at, e);
    }
}

/// Put `bytes` (a header) before the payload of the TCP segment
/// `seg[..len]` in place: the payload moves by their length (`seg` must
/// have that room past `len`). Returns the segment's new length. The
/// checksum is the caller's to recompute (or update), with the IP
/// header's length.
pub fn prepend(seg: &mut [u8], len: usize, bytes: &[u8]) -> Result<usize, WireError> {
    let h = tcp::Packet::new_checked(seg.get(..len).ok_or(WireError::Truncated)?)?.header_len();
    let new_len = len + bytes.len();
    if seg.len() < new_len {
        return Err(WireError::Truncated);
    }
    seg.copy_within(h..len, h + bytes.len());
    seg[h..h + bytes.len()].copy_from_slice(bytes);
    Ok(new_len)
}
