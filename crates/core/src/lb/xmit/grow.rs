//! Growing the TCP segment of a packet already rewritten for its way out
//! (FullNAT's `client_address`): a PROXY header put before the payload,
//! a TOA option into the header. The packet grows at its tail (the mbuf's
//! tailroom, [`PacketBuf::append`]); the Ethernet padding of a short frame
//! is cut first; the IP length is set again and the TCP checksum computed
//! again over the new segment. Only the few segments that carry the
//! insertion come here (the handshake's last ACK, the first data segment
//! and its retransmissions); every other segment is shifted in place.

use crate::net::buf::PacketBuf;
use crate::net::wire::{get, ipv4, ipv6, set, tcp};

/// Where a packet's TCP segment lies in its frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegAt {
    /// The IP header's offset.
    pub l3: usize,
    /// The TCP header's offset.
    pub l4: usize,
    /// The end of the IP packet (the frame may be longer: padding).
    pub end: usize,
    /// IPv6 (else IPv4).
    pub v6: bool,
}

impl SegAt {
    /// The segment's place, checked against the frame: None when the
    /// offsets are not those of a whole TCP header inside the packet.
    pub fn checked(l3: usize, l4: usize, end: usize, v6: bool, frame: usize) -> Option<SegAt> {
        let ip_min = if v6 {
            ipv6::HEADER_LEN
        } else {
            ipv4::MIN_HEADER_LEN
        };
        (l4 >= l3 + ip_min && l4 + tcp::MIN_HEADER_LEN <= end && end <= frame).then_some(SegAt {
            l3,
            l4,
            end,
            v6,
        })
    }
}

/// Why a segment could not grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrowError {
    /// The buffer has no tailroom for the bytes added (or the packet would
    /// pass the IP length's 16 bits).
    NoRoom,
    /// The edit refused the segment (its options, its length).
    Refused,
}

/// Grow the TCP segment at `at` by at most `extra` bytes: `edit` gets the
/// segment's bytes with `extra` bytes of room after them and the
/// segment's length, and returns its new length (at most the old plus
/// `extra`; shorter than the old one when the edit shortened it). Then the packet is cut to the new length, the IP length set
/// (IPv4: its header checksum computed again) and the TCP checksum
/// computed over the new segment and the packet's addresses. Returns the
/// new segment length. On an error the frame may have lost its Ethernet
/// padding and nothing else.
pub fn grow_segment<B: PacketBuf>(
    buf: &mut B,
    at: SegAt,
    extra: usize,
    edit: impl FnOnce(&mut [u8], usize) -> Option<usize>,
) -> Result<usize, GrowError> {
    let seg_len = at.end - at.l4;
    let ip_len = at.end - at.l3;
    if ip_len + extra > u16::MAX as usize {
        return Err(GrowError::NoRoom);
    }
    if buf.len() > at.end && !buf.trim_to(at.end) {
        return Err(GrowError::NoRoom);
    }
    if !buf.append(extra) {
        return Err(GrowError::NoRoom);
    }
    let d = buf.data_mut();
    let new_len = match d.get_mut(at.l4..at.end + extra) {
        // (an FTP line rewritten may also be shorter than it was)
        Some(seg) => edit(seg, seg_len).filter(|&n| n <= seg_len + extra),
        None => None,
    };
    let Some(new_len) = new_len else {
        buf.trim_to(at.end);
        return Err(GrowError::Refused);
    };
    let new_end = at.l4 + new_len;
    buf.trim_to(new_end);
    let d = buf.data_mut();
    let grown = (new_end - at.l3) as u16;
    let (head, seg) = d.split_at_mut(at.l4);
    let ip = &mut head[at.l3..];
    let mut t = tcp::Packet::new_unchecked(seg);
    if at.v6 {
        let payload = grown - ipv6::HEADER_LEN as u16;
        set::<u16>(ip, ipv6::field::LENGTH.start, payload);
        let src = get::<u128>(ip, ipv6::field::SRC.start);
        let dst = get::<u128>(ip, ipv6::field::DST.start);
        t.fill_checksum_v6(src, dst);
    } else {
        let mut p = ipv4::Packet::new_unchecked(ip);
        p.set_total_len(grown);
        p.fill_checksum();
        let (src, dst) = (p.src(), p.dst());
        t.fill_checksum(src, dst);
    }
    Ok(new_len)
}
