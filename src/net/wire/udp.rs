//! UDP header (RFC 768).

use super::{be16, put16, WireError};
use crate::net::checksum;

/// Byte ranges of the UDP header.
pub mod field {
    use core::ops::Range;
    /// Source port.
    pub const SRC_PORT: Range<usize> = 0..2;
    /// Destination port.
    pub const DST_PORT: Range<usize> = 2..4;
    /// Length of header + data.
    pub const LENGTH: Range<usize> = 4..6;
    /// Checksum (0 = none).
    pub const CHECKSUM: Range<usize> = 6..8;
}

/// Length of the UDP header.
pub const HEADER_LEN: usize = 8;

/// A view of a UDP datagram (the buffer is the IP payload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap without checks.
    pub fn new_unchecked(buffer: T) -> Self {
        Packet { buffer }
    }

    /// Wrap after checking: 8 bytes present, 8 <= length field <= buffer.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Packet { buffer };
        let len = p.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let l = p.len() as usize;
        if l < HEADER_LEN {
            return Err(WireError::BadHeaderLen);
        }
        if l > len {
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
    /// Length field (header + data).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH.start)
    }
    /// Checksum as stored.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }
    /// Data after the header, up to the length field.
    pub fn payload(&self) -> &[u8] {
        self.buffer
            .as_ref()
            .get(HEADER_LEN..self.len() as usize)
            .unwrap_or(&[])
    }
    /// True when the checksum is absent (0) or correct.
    pub fn verify_checksum(&self, src: u32, dst: u32) -> bool {
        if self.checksum() == 0 {
            return true;
        }
        let b = self.buffer.as_ref();
        let b = b.get(..self.len() as usize).unwrap_or(b);
        let ph = checksum::pseudo_header_sum(src, dst, crate::net::meta::PROTO_UDP, b.len() as u16);
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
    /// Set the length field.
    pub fn set_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::LENGTH.start, v)
    }
    /// Store a checksum value.
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM.start, v)
    }
    /// Compute and store the checksum over `len()` bytes (0 is sent as 0xffff).
    pub fn fill_checksum(&mut self, src: u32, dst: u32) {
        self.set_checksum(0);
        let l = self.len();
        let b = self.buffer.as_ref();
        let b = b.get(..l as usize).unwrap_or(b);
        let ph = checksum::pseudo_header_sum(src, dst, crate::net::meta::PROTO_UDP, b.len() as u16);
        let c = match !checksum::fold(checksum::sum(b, ph)) {
            0 => 0xffff,
            c => c,
        };
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 5353 -> 53, length 10, no checksum, 2 data bytes, 1 byte trailing
    const DGRAM: [u8; 11] = [0x14, 0xe9, 0x00, 0x35, 0x00, 0x0a, 0, 0, 1, 2, 0xee];

    #[test]
    fn parse() {
        let p = Packet::new_checked(&DGRAM[..]).unwrap();
        assert_eq!(p.src_port(), 5353);
        assert_eq!(p.dst_port(), 53);
        assert_eq!(p.len(), 10);
        assert_eq!(p.payload(), &[1, 2]);
        assert!(p.verify_checksum(1, 2));
    }

    #[test]
    fn rejects() {
        assert_eq!(
            Packet::new_checked(&DGRAM[..7]).unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            Packet::new_checked(&DGRAM[..9]).unwrap_err(),
            WireError::Truncated
        );
        let mut b = DGRAM;
        b[5] = 7;
        assert_eq!(
            Packet::new_checked(&b[..]).unwrap_err(),
            WireError::BadHeaderLen
        );
    }

    #[test]
    fn checksum_matches_etherparse() {
        let mut b = DGRAM;
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.fill_checksum(0xc0a8_0001, 0xc0a8_0002);
        assert!(p.verify_checksum(0xc0a8_0001, 0xc0a8_0002));
        let h = etherparse::UdpHeader::from_slice(&b).unwrap().0;
        let want = h
            .calc_checksum_ipv4_raw([192, 168, 0, 1], [192, 168, 0, 2], &[1, 2])
            .unwrap();
        assert_eq!(h.checksum, want);
        assert_eq!(h.length, 10);
    }
}
