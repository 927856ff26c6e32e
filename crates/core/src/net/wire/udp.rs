//! UDP header (RFC 768).

use super::check::check_stated_len;
use super::error::WireError;
use super::field_access::{get, set};
use super::l4::{self, L4Checksum};
use crate::net::checksum;
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
    /// True when the checksum is correct under the IPv6 pseudo header of
    /// `src` and `dst`. A zero checksum is not: IPv6 makes the UDP checksum
    /// mandatory (RFC 8200 §8.1).
    pub fn verify_checksum_v6(&self, src: u128, dst: u128) -> bool {
        self.checksum() != 0
            && checksum::upper_layer_sum_v6(self.datagram(), src, dst, PROTO_UDP) == 0xffff
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
    /// Compute and store the checksum over `len()` bytes under the IPv6
    /// pseudo header of `src` and `dst` (0 is sent as 0xffff).
    pub fn fill_checksum_v6(&mut self, src: u128, dst: u128) {
        self.set_checksum(0);
        let c = match !checksum::upper_layer_sum_v6(self.datagram(), src, dst, PROTO_UDP) {
            0 => 0xffff,
            c => c,
        };
        self.set_checksum(c);
    }
    /// Set the source port and update the checksum incrementally
    /// (RFC 1624) for it and for the IPv6 source address, which changed in
    /// the pseudo header from `old_addr` to `new_addr` (NAT). A result of
    /// 0 is stored as 0xffff; a stored 0 (invalid in IPv6, which the caller
    /// is to refuse first) is left as it is, like the IPv4 setter leaves it.
    #[inline]
    pub fn set_src_port_update_checksum_v6(&mut self, port: u16, old_addr: u128, new_addr: u128) {
        let b = self.buffer.as_mut();
        set_port_update_checksum_v6(b, field::SRC_PORT, port, old_addr, new_addr)
    }
    /// Set the destination port and update the checksum incrementally
    /// (RFC 1624) for it and for the IPv6 destination address, which
    /// changed in the pseudo header from `old_addr` to `new_addr` (NAT).
    /// Zero is handled as by [`Self::set_src_port_update_checksum_v6`].
    #[inline]
    pub fn set_dst_port_update_checksum_v6(&mut self, port: u16, old_addr: u128, new_addr: u128) {
        let b = self.buffer.as_mut();
        set_port_update_checksum_v6(b, field::DST_PORT, port, old_addr, new_addr)
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

/// The port at `port_at` set and a non-zero checksum updated for it and
/// for a 128-bit pseudo-header address change (0 stays 0, a result of 0 is
/// stored as 0xffff).
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
    let c = get::<u16>(b, CHECKSUM.at.clone());
    if c == 0 {
        return;
    }
    let n = match checksum::update16(checksum::update128(c, old_addr, new_addr), old_port, port) {
        0 => 0xffff,
        n => n,
    };
    set::<u16>(b, CHECKSUM.at, n);
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

    const SRC6: u128 = 0x2001_0db8_00c0_0000_0000_0000_0000_0007;
    const VIP6: u128 = 0x2001_0db8_00f0_0000_0000_0000_0000_0010;
    const RIP6: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0021;

    /// etherparse's checksum of datagram `b` under the IPv6 pseudo header.
    fn etherparse_v6(b: &[u8], src: u128, dst: u128) -> u16 {
        let (h, rest) = etherparse::UdpHeader::from_slice(b).unwrap();
        let data = &rest[..h.length as usize - HEADER_LEN];
        h.calc_checksum_ipv6_raw(src.to_be_bytes(), dst.to_be_bytes(), data)
            .unwrap()
    }

    #[test]
    fn ipv6_checksum_matches_etherparse() {
        let mut b = DGRAM;
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        assert!(
            !p.verify_checksum_v6(SRC6, VIP6),
            "0 is no checksum in IPv6"
        );
        p.fill_checksum_v6(SRC6, VIP6);
        assert!(p.verify_checksum_v6(SRC6, VIP6));
        assert!(!p.verify_checksum_v6(RIP6, VIP6));
        assert_eq!(p.checksum(), etherparse_v6(&b, SRC6, VIP6));
        // the trailing byte beyond the length field is not summed
        b[10] ^= 0xff;
        assert!(Packet::new_checked(&b[..])
            .unwrap()
            .verify_checksum_v6(SRC6, VIP6));
    }

    #[test]
    fn ipv6_port_setters_update_checksum() {
        let mut b = DGRAM;
        Packet::new_unchecked(&mut b[..]).fill_checksum_v6(SRC6, VIP6);
        let valid = b;
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_dst_port_update_checksum_v6(5300, VIP6, RIP6);
        assert_eq!(p.dst_port(), 5300);
        assert!(p.verify_checksum_v6(SRC6, RIP6));
        assert_eq!(p.checksum(), etherparse_v6(&b, SRC6, RIP6));
        let mut r = valid;
        Packet::new_unchecked(&mut r[..]).fill_checksum_v6(RIP6, SRC6);
        let mut p = Packet::new_unchecked(&mut r[..]);
        p.set_src_port_update_checksum_v6(53, RIP6, VIP6);
        assert!(p.verify_checksum_v6(VIP6, SRC6));
        assert_eq!(p.checksum(), etherparse_v6(&r, VIP6, SRC6));
        // a stored 0 is left alone
        let mut z = DGRAM;
        Packet::new_unchecked(&mut z[..]).set_dst_port_update_checksum_v6(5300, VIP6, RIP6);
        assert_eq!(&z[..8], &[0x14, 0xe9, 0x14, 0xb4, 0x00, 0x0a, 0, 0]);
    }

    #[test]
    fn ipv6_port_setter_never_stores_zero() {
        // find a destination port where the updated checksum comes out 0
        // (0xffff after complement) and check 0xffff is stored instead
        let mut b = DGRAM;
        Packet::new_unchecked(&mut b[..]).fill_checksum_v6(SRC6, VIP6);
        let hit = (0..=u16::MAX).find_map(|port| {
            let mut t = b;
            let mut p = Packet::new_unchecked(&mut t[..]);
            p.set_dst_port_update_checksum_v6(port, VIP6, RIP6);
            (p.checksum() == 0xffff).then_some(t)
        });
        let t = hit.expect("some port gives a zero sum");
        let p = Packet::new_unchecked(&t[..]);
        assert!(p.verify_checksum_v6(SRC6, RIP6));
    }

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
