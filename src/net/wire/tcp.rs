//! TCP header (RFC 9293): the fields a director reads and rewrites.

use super::{be16, be32, put16, put32, WireError};
use crate::net::checksum;

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

/// A view of a TCP segment (the buffer is the IP payload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap without checks.
    pub fn new_unchecked(buffer: T) -> Self {
        Packet { buffer }
    }

    /// Wrap after checking: 20 bytes present, data offset >= 5 and the
    /// whole header (with options) present.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Packet { buffer };
        let len = p.buffer.as_ref().len();
        if len < MIN_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if p.header_len() < MIN_HEADER_LEN {
            return Err(WireError::BadHeaderLen);
        }
        if p.header_len() > len {
            return Err(WireError::Truncated);
        }
        Ok(p)
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT.start)
    }
    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT.start)
    }
    /// Sequence number.
    pub fn seq_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::SEQ_NUM.start)
    }
    /// Acknowledgment number.
    pub fn ack_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ACK_NUM.start)
    }
    /// Header length in bytes (data offset * 4).
    pub fn header_len(&self) -> usize {
        let b = self
            .buffer
            .as_ref()
            .get(field::DATA_OFF)
            .copied()
            .unwrap_or(0);
        ((b >> 4) as usize) * 4
    }
    /// Flags byte (see [`crate::net::meta::tcp_flags`]).
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref().get(field::FLAGS).copied().unwrap_or(0)
    }
    /// Window.
    pub fn window(&self) -> u16 {
        be16(self.buffer.as_ref(), field::WINDOW.start)
    }
    /// Checksum as stored.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }
    /// Urgent pointer.
    pub fn urgent(&self) -> u16 {
        be16(self.buffer.as_ref(), field::URGENT.start)
    }
    /// Segment data after the header.
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(self.header_len()..).unwrap_or(&[])
    }
    /// True when the checksum is correct for the given IPv4 addresses
    /// (the whole buffer is the segment).
    pub fn verify_checksum(&self, src: u32, dst: u32) -> bool {
        let b = self.buffer.as_ref();
        let ph = checksum::pseudo_header_sum(src, dst, crate::net::meta::PROTO_TCP, b.len() as u16);
        checksum::fold(checksum::sum(b, ph)) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set source port.
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::SRC_PORT.start, v)
    }
    /// Set destination port.
    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::DST_PORT.start, v)
    }
    /// Set sequence number.
    pub fn set_seq_number(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::SEQ_NUM.start, v)
    }
    /// Set acknowledgment number.
    pub fn set_ack_number(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::ACK_NUM.start, v)
    }
    /// Set the header length in bytes (multiple of 4, 20..=60).
    pub fn set_header_len(&mut self, len: usize) {
        if let Some(x) = self.buffer.as_mut().get_mut(field::DATA_OFF) {
            *x = (((len / 4) as u8) << 4) | (*x & 0x0f);
        }
    }
    /// Set the flags byte.
    pub fn set_flags(&mut self, v: u8) {
        if let Some(x) = self.buffer.as_mut().get_mut(field::FLAGS) {
            *x = v;
        }
    }
    /// Set window.
    pub fn set_window(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::WINDOW.start, v)
    }
    /// Store a checksum value.
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM.start, v)
    }
    /// Compute and store the checksum (the whole buffer is the segment).
    pub fn fill_checksum(&mut self, src: u32, dst: u32) {
        self.set_checksum(0);
        let b = self.buffer.as_ref();
        let ph = checksum::pseudo_header_sum(src, dst, crate::net::meta::PROTO_TCP, b.len() as u16);
        let c = !checksum::fold(checksum::sum(b, ph));
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 40000 -> 80, seq 1, ack 0, doff 5, SYN, win 0xffff, 2 data bytes
    const SEG: [u8; 22] = [
        0x9c, 0x40, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0, 0xaa,
        0xbb,
    ];

    #[test]
    fn parse() {
        let p = Packet::new_checked(&SEG[..]).unwrap();
        assert_eq!(p.src_port(), 40000);
        assert_eq!(p.dst_port(), 80);
        assert_eq!(p.seq_number(), 1);
        assert_eq!(p.ack_number(), 0);
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.flags(), crate::net::meta::tcp_flags::SYN);
        assert_eq!(p.window(), 0xffff);
        assert_eq!(p.payload(), &[0xaa, 0xbb]);
    }

    #[test]
    fn rejects() {
        assert_eq!(
            Packet::new_checked(&SEG[..19]).unwrap_err(),
            WireError::Truncated
        );
        let mut b = SEG;
        b[12] = 0x40;
        assert_eq!(
            Packet::new_checked(&b[..]).unwrap_err(),
            WireError::BadHeaderLen
        );
        b[12] = 0x60; // 24-byte header in 22 bytes
        assert_eq!(
            Packet::new_checked(&b[..]).unwrap_err(),
            WireError::Truncated
        );
    }

    #[test]
    fn checksum_matches_etherparse() {
        let mut b = SEG;
        let (s, d) = (0x0a00_0002, 0x0a00_0001);
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.fill_checksum(s, d);
        assert!(p.verify_checksum(s, d));
        let h = etherparse::TcpHeader::from_slice(&b).unwrap().0;
        let want = h
            .calc_checksum_ipv4_raw([10, 0, 0, 2], [10, 0, 0, 1], &[0xaa, 0xbb])
            .unwrap();
        assert_eq!(h.checksum, want);
        assert!(h.syn && !h.ack);
        assert_eq!((h.source_port, h.destination_port), (40000, 80));
        b[21] ^= 1;
        assert!(!Packet::new_checked(&b[..]).unwrap().verify_checksum(s, d));
    }
}
