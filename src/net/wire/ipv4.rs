//! IPv4 header (RFC 791), options allowed.

use super::{be16, be32, put16, put32, WireError};
use crate::net::checksum;

/// Byte ranges of the IPv4 header.
pub mod field {
    use core::ops::Range;
    /// Version (high nibble) and IHL (low nibble).
    pub const VER_IHL: usize = 0;
    /// DSCP and ECN.
    pub const DSCP_ECN: usize = 1;
    /// Total length.
    pub const LENGTH: Range<usize> = 2..4;
    /// Identification.
    pub const IDENT: Range<usize> = 4..6;
    /// Flags (3 bits) and fragment offset (13 bits, 8-byte units).
    pub const FLG_OFF: Range<usize> = 6..8;
    /// Time to live.
    pub const TTL: usize = 8;
    /// Protocol.
    pub const PROTOCOL: usize = 9;
    /// Header checksum.
    pub const CHECKSUM: Range<usize> = 10..12;
    /// Source address.
    pub const SRC: Range<usize> = 12..16;
    /// Destination address.
    pub const DST: Range<usize> = 16..20;
}

/// Length of a header without options.
pub const MIN_HEADER_LEN: usize = 20;
/// Don't-fragment flag in the flags/offset word.
pub const FLAG_DF: u16 = 0x4000;
/// More-fragments flag in the flags/offset word.
pub const FLAG_MF: u16 = 0x2000;

/// A view of an IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap without checks (accessors return zeros on a short buffer).
    pub fn new_unchecked(buffer: T) -> Self {
        Packet { buffer }
    }

    /// Wrap after checking: at least 20 bytes, version 4, IHL >= 5, the whole
    /// header present, header length <= total length <= buffer length.
    /// The buffer may be longer than the total length (Ethernet padding).
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Packet { buffer };
        p.check()?;
        Ok(p)
    }

    /// The checks `new_checked` makes.
    pub fn check(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < MIN_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.version() != 4 {
            return Err(WireError::BadVersion);
        }
        let hl = self.header_len();
        if hl < MIN_HEADER_LEN {
            return Err(WireError::BadHeaderLen);
        }
        if len < hl {
            return Err(WireError::Truncated);
        }
        let tl = self.total_len() as usize;
        if tl < hl || tl > len {
            return Err(WireError::BadTotalLen);
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn byte(&self, at: usize) -> u8 {
        self.buffer.as_ref().get(at).copied().unwrap_or(0)
    }

    /// Version (4).
    pub fn version(&self) -> u8 {
        self.byte(field::VER_IHL) >> 4
    }
    /// Header length in bytes (IHL * 4).
    pub fn header_len(&self) -> usize {
        ((self.byte(field::VER_IHL) & 0x0f) as usize) * 4
    }
    /// DSCP/ECN byte.
    pub fn dscp_ecn(&self) -> u8 {
        self.byte(field::DSCP_ECN)
    }
    /// Total length.
    pub fn total_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH.start)
    }
    /// Identification.
    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::IDENT.start)
    }
    /// The raw flags/fragment-offset word.
    pub fn flags_frag(&self) -> u16 {
        be16(self.buffer.as_ref(), field::FLG_OFF.start)
    }
    /// Don't-fragment flag.
    pub fn dont_frag(&self) -> bool {
        self.flags_frag() & FLAG_DF != 0
    }
    /// More-fragments flag.
    pub fn more_frags(&self) -> bool {
        self.flags_frag() & FLAG_MF != 0
    }
    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> u16 {
        (self.flags_frag() & 0x1fff) << 3
    }
    /// True when this is a fragment (MF set or offset non-zero).
    pub fn is_fragment(&self) -> bool {
        self.flags_frag() & (FLAG_MF | 0x1fff) != 0
    }
    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.byte(field::TTL)
    }
    /// Protocol.
    pub fn protocol(&self) -> u8 {
        self.byte(field::PROTOCOL)
    }
    /// Header checksum as stored.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }
    /// Source address (host order).
    pub fn src(&self) -> u32 {
        be32(self.buffer.as_ref(), field::SRC.start)
    }
    /// Destination address (host order).
    pub fn dst(&self) -> u32 {
        be32(self.buffer.as_ref(), field::DST.start)
    }
    /// The header bytes (20..=60), clamped to the buffer.
    pub fn header(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        b.get(..self.header_len()).unwrap_or(b)
    }
    /// Options bytes (empty without options).
    pub fn options(&self) -> &[u8] {
        self.header().get(MIN_HEADER_LEN..).unwrap_or(&[])
    }
    /// True when the header checksum is correct.
    pub fn verify_checksum(&self) -> bool {
        checksum::checksum(self.header()) == 0
    }
    /// The payload: header end to total length (empty when inconsistent).
    pub fn payload(&self) -> &[u8] {
        self.buffer
            .as_ref()
            .get(self.header_len()..self.total_len() as usize)
            .unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_byte(&mut self, at: usize, v: u8) {
        if let Some(x) = self.buffer.as_mut().get_mut(at) {
            *x = v;
        }
    }
    /// Set version 4 and the header length in bytes (multiple of 4, 20..=60).
    pub fn set_version_and_header_len(&mut self, header_len: usize) {
        self.set_byte(field::VER_IHL, 0x40 | ((header_len / 4) as u8 & 0x0f));
    }
    /// Set DSCP/ECN.
    pub fn set_dscp_ecn(&mut self, v: u8) {
        self.set_byte(field::DSCP_ECN, v)
    }
    /// Set total length.
    pub fn set_total_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::LENGTH.start, v)
    }
    /// Set identification.
    pub fn set_ident(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::IDENT.start, v)
    }
    /// Set the raw flags/fragment-offset word.
    pub fn set_flags_frag(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::FLG_OFF.start, v)
    }
    /// Set TTL.
    pub fn set_ttl(&mut self, v: u8) {
        self.set_byte(field::TTL, v)
    }
    /// Set protocol.
    pub fn set_protocol(&mut self, v: u8) {
        self.set_byte(field::PROTOCOL, v)
    }
    /// Store a checksum value.
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM.start, v)
    }
    /// Set source address (host order).
    pub fn set_src(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::SRC.start, v)
    }
    /// Set destination address (host order).
    pub fn set_dst(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::DST.start, v)
    }
    /// Compute and store the header checksum.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::checksum(self.header());
        self.set_checksum(c);
    }
    /// The payload, mutable (empty when inconsistent).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (h, t) = (self.header_len(), self.total_len() as usize);
        self.buffer.as_mut().get_mut(h..t).unwrap_or(&mut [])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 10.0.0.2 -> 10.0.0.1, UDP, total 28, DF, ttl 64, 8 payload bytes
    const PKT: [u8; 30] = [
        0x45, 0x00, 0x00, 0x1c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x14, 0x9b, 10, 0, 0, 2, 10, 0,
        0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0xee, 0xee,
    ];

    #[test]
    fn parse() {
        let p = Packet::new_checked(&PKT[..]).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.total_len(), 28);
        assert_eq!(p.ident(), 0x1234);
        assert!(p.dont_frag());
        assert!(!p.more_frags());
        assert!(!p.is_fragment());
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), 17);
        assert_eq!(p.src(), 0x0a00_0002);
        assert_eq!(p.dst(), 0x0a00_0001);
        assert!(p.verify_checksum(), "checksum {:04x}", p.checksum());
        assert_eq!(p.payload(), &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(p.options().is_empty());
    }

    #[test]
    fn rejects() {
        assert_eq!(
            Packet::new_checked(&PKT[..19]).unwrap_err(),
            WireError::Truncated
        );
        let mut b = PKT;
        b[0] = 0x65;
        assert_eq!(
            Packet::new_checked(&b[..]).unwrap_err(),
            WireError::BadVersion
        );
        b[0] = 0x44;
        assert_eq!(
            Packet::new_checked(&b[..]).unwrap_err(),
            WireError::BadHeaderLen
        );
        b[0] = 0x48; // 32-byte header, 30-byte buffer
        assert_eq!(
            Packet::new_checked(&b[..]).unwrap_err(),
            WireError::Truncated
        );
        let mut b = PKT;
        b[3] = 19;
        assert_eq!(
            Packet::new_checked(&b[..]).unwrap_err(),
            WireError::BadTotalLen
        );
        b[3] = 31;
        assert_eq!(
            Packet::new_checked(&b[..]).unwrap_err(),
            WireError::BadTotalLen
        );
    }

    #[test]
    fn fragments_and_checksum() {
        let mut b = PKT;
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.set_flags_frag(0x0003);
        assert!(p.is_fragment());
        assert_eq!(p.frag_offset(), 24);
        p.set_flags_frag(FLAG_MF);
        assert!(p.is_fragment());
        assert!(!p.verify_checksum());
        p.fill_checksum();
        assert!(p.verify_checksum());
    }

    #[test]
    fn etherparse_agrees() {
        use etherparse::Ipv4HeaderSlice;
        let mut b = [0u8; 32];
        let hdr = etherparse::Ipv4Header {
            total_len: 32,
            identification: 7,
            dont_fragment: true,
            time_to_live: 9,
            protocol: etherparse::IpNumber::TCP,
            source: [192, 168, 1, 1],
            destination: [192, 168, 1, 2],
            options: [1u8, 1, 1, 0][..].try_into().unwrap(),
            ..Default::default()
        };
        let mut hdr = hdr;
        hdr.header_checksum = hdr.calc_header_checksum();
        hdr.write(&mut &mut b[..]).unwrap();
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.header_len(), 24);
        assert_eq!(p.options(), &[1, 1, 1, 0]);
        assert!(p.verify_checksum());
        assert_eq!(p.checksum(), hdr.header_checksum);
        assert_eq!(p.src(), 0xc0a8_0101);
        assert_eq!(p.ttl(), 9);
        assert_eq!(p.payload().len(), 8);
        // our emit + fill_checksum parsed by etherparse
        let mut c = b;
        let mut q = Packet::new_checked(&mut c[..]).unwrap();
        q.set_ttl(3);
        q.set_dst(0x0a01_0203);
        q.fill_checksum();
        let e = Ipv4HeaderSlice::from_slice(&c).unwrap().to_header();
        assert_eq!(e.time_to_live, 3);
        assert_eq!(e.destination, [10, 1, 2, 3]);
        assert_eq!(e.header_checksum, e.calc_header_checksum());
    }
}
