//! TCP header (RFC 9293): the fields a director reads and rewrites.

use super::l4::{self, L4Checksum};
use super::{check_stated_len, get, set, WireError};
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

    // SEG with its checksum for 10.0.0.2 -> 10.0.0.1, then after NAT of
    // each side (checksums recomputed in full by an independent script).
    const VALID: [u8; 22] = [
        0x9c, 0x40, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0x54, 0x91, 0, 0,
        0xaa, 0xbb,
    ];
    // destination 10.0.0.1:80 -> 172.16.0.5:8080
    const DNAT: [u8; 22] = [
        0x9c, 0x40, 0x1f, 0x90, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0x93, 0x3c, 0, 0,
        0xaa, 0xbb,
    ];
    // source 10.0.0.2:40000 -> 192.0.2.10:443
    const SNAT: [u8; 22] = [
        0x01, 0xbb, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0x37, 0x0e, 0, 0,
        0xaa, 0xbb,
    ];

    #[test]
    fn word_setters_keep_the_checksum_at_any_alignment() {
        let (s, d) = (0x0a00_0002, 0x0a00_0001);
        // 32-byte header (12 option bytes) + 3 data bytes
        let mut b = [0u8; 35];
        b[..20].copy_from_slice(&VALID[..20]);
        b[12] = 0x80;
        b[20..32].copy_from_slice(&[1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8]);
        b[32..].copy_from_slice(&[9, 8, 7]);
        Packet::new_unchecked(&mut b[..]).fill_checksum(s, d);
        for (at, v) in [
            (4, 0xdead_beef),
            (8, 7),
            (24, 0xffff_ffff),
            (21, 0x1234_5678),
            (31, 1),
        ] {
            let mut p = Packet::new_unchecked(&mut b[..]);
            p.set_u32_update_checksum(at, v);
            assert!(p.verify_checksum(s, d), "at {at}");
            assert_eq!(u32::from_be_bytes(b[at..at + 4].try_into().unwrap()), v);
        }
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_window_update_checksum(1234);
        p.set_seq_number_update_checksum(99);
        p.set_ack_number_update_checksum(100);
        assert!(p.verify_checksum(s, d));
        assert_eq!(
            (p.window(), p.seq_number(), p.ack_number()),
            (1234, 99, 100)
        );
        assert_eq!(p.options().len(), 12);
        // past the end: nothing written
        let before = b;
        Packet::new_unchecked(&mut b[..]).set_u32_update_checksum(33, 5);
        assert_eq!(b, before);
    }

    const SRC6: u128 = 0x2001_0db8_00c0_0000_0000_0000_0000_0007;
    const VIP6: u128 = 0x2001_0db8_00f0_0000_0000_0000_0000_0010;
    const RIP6: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0021;

    /// etherparse's checksum of segment `b` under the IPv6 pseudo header.
    fn etherparse_v6(b: &[u8], src: u128, dst: u128) -> u16 {
        let (h, rest) = etherparse::TcpHeader::from_slice(b).unwrap();
        h.calc_checksum_ipv6_raw(src.to_be_bytes(), dst.to_be_bytes(), rest)
            .unwrap()
    }

    #[test]
    fn ipv6_checksum_matches_etherparse() {
        let mut b = SEG;
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.fill_checksum_v6(SRC6, VIP6);
        assert!(p.verify_checksum_v6(SRC6, VIP6));
        assert!(!p.verify_checksum_v6(SRC6, RIP6));
        assert_eq!(p.checksum(), etherparse_v6(&b, SRC6, VIP6));
        b[21] ^= 1;
        assert!(!Packet::new_checked(&b[..])
            .unwrap()
            .verify_checksum_v6(SRC6, VIP6));
    }

    #[test]
    fn ipv6_port_setters_update_checksum() {
        let mut b = SEG;
        Packet::new_unchecked(&mut b[..]).fill_checksum_v6(SRC6, VIP6);
        let valid = b;
        // destination VIP6:80 -> RIP6:8080, checked against a full sum
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_dst_port_update_checksum_v6(8080, VIP6, RIP6);
        assert_eq!(p.dst_port(), 8080);
        assert!(p.verify_checksum_v6(SRC6, RIP6));
        assert_eq!(p.checksum(), etherparse_v6(&b, SRC6, RIP6));
        // source (the reply) RIP6:8080 -> VIP6:80
        let mut r = valid;
        Packet::new_unchecked(&mut r[..]).fill_checksum_v6(RIP6, SRC6);
        let mut p = Packet::new_unchecked(&mut r[..]);
        p.set_src_port_update_checksum_v6(443, RIP6, VIP6);
        assert_eq!(p.src_port(), 443);
        assert_eq!(p.checksum(), etherparse_v6(&r, VIP6, SRC6));
        // a short buffer: the port is written, the checksum is not there
        let mut s = [0u8; 17];
        Packet::new_unchecked(&mut s[..]).set_dst_port_update_checksum_v6(8080, VIP6, RIP6);
        assert_eq!(&s[..4], &[0, 0, 0x1f, 0x90]);
        assert_eq!(&s[4..], &[0; 13]);
    }

    #[test]
    fn port_setters_update_checksum() {
        let (s, d) = (0x0a00_0002, 0x0a00_0001);
        assert!(Packet::new_checked(&VALID[..])
            .unwrap()
            .verify_checksum(s, d));
        let mut b = VALID;
        Packet::new_unchecked(&mut b[..]).set_dst_port_update_checksum(8080, d, 0xac10_0005);
        assert_eq!(b, DNAT);
        assert!(Packet::new_unchecked(&b[..]).verify_checksum(s, 0xac10_0005));
        let mut b = VALID;
        Packet::new_unchecked(&mut b[..]).set_src_port_update_checksum(443, s, 0xc000_020a);
        assert_eq!(b, SNAT);
        // a short buffer: the port is written, the checksum is not there
        let mut b = [0u8; 4];
        Packet::new_unchecked(&mut b[..]).set_dst_port_update_checksum(8080, d, 1);
        assert_eq!(b, [0, 0, 0x1f, 0x90]);
    }
}
