//! TCP header (RFC 9293): the fields a director reads and rewrites, and
//! [`Repr`], the header a SYN proxy parses and emits.

use super::check::check_stated_len;
use super::error::WireError;
use super::field_access::{get, set};
use super::l4::{self, L4Checksum};
use super::tcpopt;
use crate::net::checksum;
use crate::net::meta::PROTO_TCP;

/// Byte ranges of the TCP header.
pub mod field {
    use core::ops::Range;
    /// Source port.
    pub const SRC_PORT: Range<usize> = 0..2;
    /// Destination port.
    pub const DST_PORT: Range<usize> = 2..4;
    /// Sequence number.
    pub const SEQ_NUM: Range<usize> = 4..8;
    /// Acknowledgment number.
    pub const ACK_NUM: Range<usize> = 8..12;
    /// Data offset (high nibble of byte 12).
    pub const DATA_OFF: usize = 12;
    /// Flags byte (CWR ECE URG ACK PSH RST SYN FIN).
    pub const FLAGS: usize = 13;
    /// Window.
    pub const WINDOW: Range<usize> = 14..16;
    /// Checksum.
    pub const CHECKSUM: Range<usize> = 16..18;
    /// Urgent pointer.
    pub const URGENT: Range<usize> = 18..20;
}

/// Length of a header without options.
pub const MIN_HEADER_LEN: usize = 20;
/// Length of the longest header (data offset 15).
pub const MAX_HEADER_LEN: usize = 60;
const _: () = assert!(tcpopt::AREA_START == MIN_HEADER_LEN);
const _: () = assert!(MIN_HEADER_LEN + tcpopt::AREA_MAX == MAX_HEADER_LEN);

/// The TCP checksum, always present.
const CHECKSUM: L4Checksum = L4Checksum {
    at: field::CHECKSUM,
    optional: false,
};

view!(
    /// A view of a TCP segment (the buffer is the IP payload).
    Packet,
    check_len
);

impl<T: AsRef<[u8]>> Packet<T> {
    /// The checks `new_checked` makes: 20 bytes present, data offset >= 5
    /// and the whole header (with options) present.
    pub fn check_len(&self) -> Result<(), WireError> {
        check_stated_len(self.buffer.as_ref().len(), MIN_HEADER_LEN, || {
            self.header_len()
        })
    }

    /// Header length in bytes (data offset * 4).
    pub fn header_len(&self) -> usize {
        ((get::<u8>(self.buffer.as_ref(), field::DATA_OFF) >> 4) as usize) * 4
    }
    /// The options area (between the 20-byte header and the data offset).
    pub fn options(&self) -> &[u8] {
        self.buffer
            .as_ref()
            .get(MIN_HEADER_LEN..self.header_len())
            .unwrap_or(&[])
    }
    /// The big-endian 32-bit word at byte `at` of the segment (an
    /// option's field at any alignment, as [`tcpopt::parse`] locates
    /// them); 0 when it is not all there.
    #[inline]
    pub fn u32_at(&self, at: usize) -> u32 {
        get::<u32>(self.buffer.as_ref(), at)
    }
    /// Segment data after the header.
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(self.header_len()..).unwrap_or(&[])
    }
    /// True when the checksum is correct for the given IPv4 addresses
    /// (the whole buffer is the segment).
    pub fn verify_checksum(&self, src: u32, dst: u32) -> bool {
        l4::checksum_ok(self.buffer.as_ref(), src, dst, PROTO_TCP)
    }
    /// True when the checksum is correct under the IPv6 pseudo header of
    /// `src` and `dst` (the whole buffer is the segment).
    pub fn verify_checksum_v6(&self, src: u128, dst: u128) -> bool {
        checksum::upper_layer_sum_v6(self.buffer.as_ref(), src, dst, PROTO_TCP) == 0xffff
    }
}

accessors! {
    Packet;
    /// Source port.
    src_port, set_src_port: u16 = field::SRC_PORT;
    /// Destination port.
    dst_port, set_dst_port: u16 = field::DST_PORT;
    /// Sequence number.
    seq_number, set_seq_number: u32 = field::SEQ_NUM;
    /// Acknowledgment number.
    ack_number, set_ack_number: u32 = field::ACK_NUM;
    /// Flags byte (see [`crate::net::meta::tcp_flags`]).
    flags, set_flags: u8 = field::FLAGS;
    /// Window.
    window, set_window: u16 = field::WINDOW;
    /// Checksum as stored.
    checksum, set_checksum: u16 = field::CHECKSUM;
    /// Urgent pointer.
    urgent, set_urgent: u16 = field::URGENT;
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the header length in bytes (multiple of 4, 20..=60).
    pub fn set_header_len(&mut self, len: usize) {
        let b = self.buffer.as_mut();
        let v = (((len / 4) as u8) << 4) | (get::<u8>(b, field::DATA_OFF) & 0x0f);
        set::<u8>(b, field::DATA_OFF, v)
    }
    /// Replace the 32-bit word at byte `at` of the segment (a sequence
    /// number, an option's field at any alignment) with `v`, updating the
    /// checksum incrementally (RFC 1624 over the 16-bit words it touches).
    /// Nothing is written when the word or the checksum is not there.
    #[inline]
    pub fn set_u32_update_checksum(&mut self, at: usize, v: u32) {
        let b = self.buffer.as_mut();
        if at + 4 > b.len() || CHECKSUM.at.end > b.len() {
            return;
        }
        if at % 2 == 0 {
            // two whole 16-bit words (the sequence and acknowledgment
            // numbers, SACK edges after the usual NOPs): RFC 1624 at once
            let old = get::<u32>(b, at);
            set::<u32>(b, at, v);
            let c = get::<u16>(b, CHECKSUM.at.clone());
            set::<u16>(b, CHECKSUM.at, checksum::update32(c, old, v));
            return;
        }
        // the 16-bit words it touches (an odd last byte is summed padded,
        // as in the full checksum)
        let (lo, hi) = (at & !1, ((at + 5) & !1).min(b.len()));
        let old = checksum::sum(&b[lo..hi], 0);
        b[at..at + 4].copy_from_slice(&v.to_be_bytes());
        let new = checksum::sum(&b[lo..hi], 0);
        let c = get::<u16>(b, CHECKSUM.at.clone());
        let fold = |x: u32| checksum::fold(x) as u32;
        // HC' = ~(~HC + ~m + m'), with m and m' the words' folded sums
        let n = !checksum::fold((!c as u32) + (!fold(old) & 0xffff) + fold(new));
        set::<u16>(b, CHECKSUM.at, n);
    }
    /// Set the sequence number, updating the checksum.
    #[inline]
    pub fn set_seq_number_update_checksum(&mut self, v: u32) {
        self.set_u32_update_checksum(field::SEQ_NUM.start, v)
    }
    /// Set the acknowledgment number, updating the checksum.
    #[inline]
    pub fn set_ack_number_update_checksum(&mut self, v: u32) {
        self.set_u32_update_checksum(field::ACK_NUM.start, v)
    }
    /// Set the window, updating the checksum.
    #[inline]
    pub fn set_window_update_checksum(&mut self, v: u16) {
        let b = self.buffer.as_mut();
        if b.len() < CHECKSUM.at.end {
            return;
        }
        let old = get::<u16>(b, field::WINDOW);
        set::<u16>(b, field::WINDOW, v);
        let c = get::<u16>(b, CHECKSUM.at.clone());
        set::<u16>(b, CHECKSUM.at, checksum::update16(c, old, v));
    }
    /// Compute and store the checksum (the whole buffer is the segment).
    pub fn fill_checksum(&mut self, src: u32, dst: u32) {
        self.set_checksum(0);
        let c = l4::checksum(self.buffer.as_ref(), src, dst, PROTO_TCP);
        self.set_checksum(c);
    }
    /// Compute and store the checksum under the IPv6 pseudo header of
    /// `src` and `dst` (the whole buffer is the segment).
    pub fn fill_checksum_v6(&mut self, src: u128, dst: u128) {
        self.set_checksum(0);
        let c = !checksum::upper_layer_sum_v6(self.buffer.as_ref(), src, dst, PROTO_TCP);
        self.set_checksum(c);
    }
    /// Set the source port and update the checksum incrementally
    /// (RFC 1624) for it and for the IPv6 source address, which changed
    /// in the pseudo header from `old_addr` to `new_addr` (NAT). The port
    /// alone is written when the buffer ends before the checksum.
    #[inline]
    pub fn set_src_port_update_checksum_v6(&mut self, port: u16, old_addr: u128, new_addr: u128) {
        let b = self.buffer.as_mut();
        set_port_update_checksum_v6(b, field::SRC_PORT, port, old_addr, new_addr)
    }
    /// Set the destination port and update the checksum incrementally
    /// (RFC 1624) for it and for the IPv6 destination address, which
    /// changed in the pseudo header from `old_addr` to `new_addr` (NAT).
    /// The port alone is written when the buffer ends before the checksum.
    #[inline]
    pub fn set_dst_port_update_checksum_v6(&mut self, port: u16, old_addr: u128, new_addr: u128) {
        let b = self.buffer.as_mut();
        set_port_update_checksum_v6(b, field::DST_PORT, port, old_addr, new_addr)
    }
    /// Set the source port and update the checksum incrementally
    /// (RFC 1624) for it and for the IPv4 source address, which changed
    /// in the pseudo header from `old_addr` to `new_addr` (NAT).
    #[inline]
    pub fn set_src_port_update_checksum(&mut self, port: u16, old_addr: u32, new_addr: u32) {
        l4::set_port_update_checksum(
            self.buffer.as_mut(),
            field::SRC_PORT,
            port,
            old_addr,
            new_addr,
            CHECKSUM,
        )
    }
    /// Set the destination port and update the checksum incrementally
    /// (RFC 1624) for it and for the IPv4 destination address, which
    /// changed in the pseudo header from `old_addr` to `new_addr` (NAT).
    #[inline]
    pub fn set_dst_port_update_checksum(&mut self, port: u16, old_addr: u32, new_addr: u32) {
        l4::set_port_update_checksum(
            self.buffer.as_mut(),
            field::DST_PORT,
            port,
            old_addr,
            new_addr,
            CHECKSUM,
        )
    }
}

/// The port at `port_at` set, the checksum updated for it and for a
/// 128-bit pseudo-header address change (a TCP checksum is always there).
#[inline]
fn set_port_update_checksum_v6(
    b: &mut [u8],
    port_at: core::ops::Range<usize>,
    port: u16,
    old_addr: u128,
    new_addr: u128,
) {
    let old_port = get::<u16>(b, port_at.clone());
    set::<u16>(b, port_at, port);
    if b.len() < CHECKSUM.at.end {
        return;
    }
    let c = get::<u16>(b, CHECKSUM.at.clone());
    let n = checksum::update16(checksum::update128(c, old_addr, new_addr), old_port, port);
    set::<u16>(b, CHECKSUM.at, n);
}

/// A TCP header to parse or emit (smoltcp's `TcpRepr`, trimmed to what
/// dirigo's SYN proxy reads and writes): ports, sequence and
/// acknowledgment numbers, flags, window and the options of
/// [`tcpopt::Options`]. The checksum is not part of it (it needs the IP
/// addresses: [`Packet::fill_checksum`] after [`Repr::emit`]), nor is the
/// urgent pointer (emitted 0) or the payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Repr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq_number: u32,
    /// Acknowledgment number.
    pub ack_number: u32,
    /// Flags byte (see [`crate::net::meta::tcp_flags`]).
    pub flags: u8,
    /// Window.
    pub window: u16,
    /// Options (SACK blocks are not carried).
    pub options: tcpopt::Options,
}

impl Repr {
    /// Read the header of `packet`, which must pass [`Packet::check_len`]
    /// (its error otherwise). Options are read as [`tcpopt::parse`] reads
    /// them (a malformed one ends the list); the checksum is not verified.
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Repr, WireError> {
        packet.check_len()?;
        let options = if packet.header_len() > MIN_HEADER_LEN {
            tcpopt::parse(packet.options()).into()
        } else {
            tcpopt::Options::default()
        };
        Ok(Repr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            seq_number: packet.seq_number(),
            ack_number: packet.ack_number(),
            flags: packet.flags(),
            window: packet.window(),
            options,
        })
    }

    /// Bytes of the header [`Repr::emit`] writes, options included (a
    /// multiple of 4, at most 40).
    #[inline]
    pub fn header_len(&self) -> usize {
        MIN_HEADER_LEN + self.options.emit_len()
    }

    /// Bytes of a segment carrying this header and no payload.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Write the header, options included, at the front of `packet`, with
    /// the checksum and urgent pointer 0 (the payload is left alone; the
    /// reserved bits beside the data offset too, as
    /// [`Packet::set_header_len`] leaves them). Nothing is written to a
    /// buffer shorter than [`Repr::header_len`].
    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        let len = self.header_len();
        let Some(opts) = packet.buffer.as_mut().get_mut(MIN_HEADER_LEN..len) else {
            return;
        };
        if self.options.emit(opts).is_none() {
            return; // not reached: the area is emit_len() bytes
        }
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_seq_number(self.seq_number);
        packet.set_ack_number(self.ack_number);
        packet.set_header_len(len);
        packet.set_flags(self.flags);
        packet.set_window(self.window);
        packet.set_checksum(0);
        packet.set_urgent(0);
    }
}

#[cfg(test)]
mod tests;
