//! UDP header (RFC 768).

use super::l4::{self, L4Checksum};
use super::{check_stated_len, WireError};
use crate::net::meta::PROTO_UDP;

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

/// The UDP checksum, absent when 0.
const CHECKSUM: L4Checksum = L4Checksum {
    at: field::CHECKSUM,
    optional: true,
};

view!(
    /// A view of a UDP datagram (the buffer is the IP payload).
    Packet,
    check_len
);

impl<T: AsRef<[u8]>> Packet<T> {
    /// The checks `new_checked` makes: 8 bytes present, 8 <= length
    /// field <= buffer.
    pub fn check_len(&self) -> Result<(), WireError> {
        check_stated_len(self.buffer.as_ref().len(), HEADER_LEN, || {
            self.len() as usize
        })
    }

    /// The datagram: the buffer up to the length field (clamped).
    fn datagram(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        b.get(..self.len() as usize).unwrap_or(b)
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
        self.checksum() == 0 || l4::checksum_ok(self.datagram(), src, dst, PROTO_UDP)
    }
}

accessors! {
    Packet;
    /// Source port.
    src_port, set_src_port: u16 = field::SRC_PORT;
    /// Destination port.
    dst_port, set_dst_port: u16 = field::DST_PORT;
    /// Length field (header + data).
    #[allow(clippy::len_without_is_empty)]
    len, set_len: u16 = field::LENGTH;
    /// Checksum as stored.
    checksum, set_checksum: u16 = field::CHECKSUM;
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Compute and store the checksum over `len()` bytes (0 is sent as 0xffff).
    pub fn fill_checksum(&mut self, src: u32, dst: u32) {
        self.set_checksum(0);
        let c = match l4::checksum(self.datagram(), src, dst, PROTO_UDP) {
            0 => 0xffff,
            c => c,
        };
        self.set_checksum(c);
    }
    /// Set the source port and, unless the checksum is absent (0), update
    /// it incrementally (RFC 1624) for the port and for the IPv4 source
    /// address, which changed in the pseudo header from `old_addr` to
    /// `new_addr` (NAT). A result of 0 is stored as 0xffff.
    #[inline]
    pub fn set_src_port_update_checksum(&mut self, port: u16, old_addr: u32, new_addr: u32) {
        let b = self.buffer.as_mut();
        l4::set_port_update_checksum(b, field::SRC_PORT, port, old_addr, new_addr, CHECKSUM)
    }
    /// Set the destination port and, unless the checksum is absent (0),
    /// update it incrementally (RFC 1624) for the port and for the IPv4
    /// destination address, which changed in the pseudo header from
    /// `old_addr` to `new_addr` (NAT). A result of 0 is stored as 0xffff.
    #[inline]
    pub fn set_dst_port_update_checksum(&mut self, port: u16, old_addr: u32, new_addr: u32) {
        let b = self.buffer.as_mut();
        l4::set_port_update_checksum(b, field::DST_PORT, port, old_addr, new_addr, CHECKSUM)
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

    // 192.168.0.1:5353 -> 192.168.0.2:53 with its checksum, then after NAT
    // of each side (checksums recomputed in full by an independent script).
    const VALID: [u8; 10] = [0x14, 0xe9, 0x00, 0x35, 0x00, 0x0a, 0x68, 0x66, 1, 2];
    // destination -> 10.0.0.21:5300
    const DNAT: [u8; 10] = [0x14, 0xe9, 0x14, 0xb4, 0x00, 0x0a, 0x0a, 0x7d, 1, 2];
    // source -> 10.9.8.7:1053
    const SNAT: [u8; 10] = [0x04, 0x1d, 0x00, 0x35, 0x00, 0x0a, 0x27, 0xcc, 1, 2];
    // destination -> 10.0.0.21:7985, where the checksum comes out 0: sent as 0xffff
    const DNAT_FFFF: [u8; 10] = [0x14, 0xe9, 0x1f, 0x31, 0x00, 0x0a, 0xff, 0xff, 1, 2];

    #[test]
    fn port_setters_update_checksum() {
        let (s, d) = (0xc0a8_0001, 0xc0a8_0002);
        assert!(Packet::new_checked(&VALID[..])
            .unwrap()
            .verify_checksum(s, d));
        let mut b = VALID;
        Packet::new_unchecked(&mut b[..]).set_dst_port_update_checksum(5300, d, 0x0a00_0015);
        assert_eq!(b, DNAT);
        assert!(Packet::new_unchecked(&b[..]).verify_checksum(s, 0x0a00_0015));
        let mut b = VALID;
        Packet::new_unchecked(&mut b[..]).set_src_port_update_checksum(1053, s, 0x0a09_0807);
        assert_eq!(b, SNAT);
        let mut b = VALID;
        Packet::new_unchecked(&mut b[..]).set_dst_port_update_checksum(7985, d, 0x0a00_0015);
        assert_eq!(b, DNAT_FFFF);
        assert!(Packet::new_unchecked(&b[..]).verify_checksum(s, 0x0a00_0015));
        // no checksum (0) stays none
        let mut b = DGRAM;
        Packet::new_unchecked(&mut b[..]).set_dst_port_update_checksum(5300, d, 0x0a00_0015);
        assert_eq!(&b[..8], &[0x14, 0xe9, 0x14, 0xb4, 0x00, 0x0a, 0, 0]);
    }
}
