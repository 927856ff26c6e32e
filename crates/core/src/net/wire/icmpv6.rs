//! ICMPv6 (RFC 4443): echo, the error messages quoting a packet, and the
//! common header of Neighbour Discovery ([`super::ndp`]).
//!
//! The checksum covers the IPv6 pseudo header (RFC 4443 §2.3, RFC 8200
//! §8.1) with next header 58 and the message's length: the view's buffer is
//! the whole ICMPv6 message, so the helpers take the two addresses.

use super::error::WireError;
use super::field_access::{get, set};
use crate::net::checksum;

/// Byte ranges of the ICMPv6 header.
pub mod field {
    use core::ops::{Range, RangeFrom};
    /// Message type.
    pub const TYPE: usize = 0;
    /// Code.
    pub const CODE: usize = 1;
    /// Checksum over the pseudo header and the whole message.
    pub const CHECKSUM: Range<usize> = 2..4;
    /// Echo identifier.
    pub const ECHO_IDENT: Range<usize> = 4..6;
    /// Echo sequence number.
    pub const ECHO_SEQNO: Range<usize> = 6..8;
    /// The 4 type-specific bytes (unused / MTU / pointer / NDP flags).
    pub const REST: Range<usize> = 4..8;
    /// MTU of Packet Too Big.
    pub const MTU: Range<usize> = 4..8;
    /// Pointer of Parameter Problem.
    pub const POINTER: Range<usize> = 4..8;
    /// Message data: the echo data, or the quoted packet of an error.
    pub const DATA: RangeFrom<usize> = 8..;
}

/// Length of the ICMPv6 header.
pub const HEADER_LEN: usize = 8;
/// Where an error message's quoted packet (the invoking IPv6 packet, as
/// much of it as fits the minimum MTU) starts.
pub const QUOTE_OFFSET: usize = 8;
/// Bytes of the quoted packet's upper-layer header dirigo needs to match
/// an error to a connection (as an ICMPv4 error quotes at the least: TCP's
/// and UDP's ports among them).
pub const QUOTED_PAYLOAD_MIN: usize = 8;
/// The IPv6 minimum MTU, which bounds a generated error (RFC 4443 §2.4 (c)).
pub const MIN_MTU: usize = 1280;

/// ICMPv6 message types dirigo knows.
pub mod msg_type {
    /// Destination unreachable.
    pub const DEST_UNREACHABLE: u8 = 1;
    /// Packet too big.
    pub const PACKET_TOO_BIG: u8 = 2;
    /// Time exceeded.
    pub const TIME_EXCEEDED: u8 = 3;
    /// Parameter problem.
    pub const PARAMETER_PROBLEM: u8 = 4;
    /// Echo request.
    pub const ECHO_REQUEST: u8 = 128;
    /// Echo reply.
    pub const ECHO_REPLY: u8 = 129;
    /// Router solicitation.
    pub const ROUTER_SOLICIT: u8 = 133;
    /// Router advertisement.
    pub const ROUTER_ADVERT: u8 = 134;
    /// Neighbour solicitation.
    pub const NEIGHBOR_SOLICIT: u8 = 135;
    /// Neighbour advertisement.
    pub const NEIGHBOR_ADVERT: u8 = 136;
    /// Redirect.
    pub const REDIRECT: u8 = 137;

    /// True for an error message: the high bit of the type is clear
    /// (RFC 4443 §2.1).
    pub fn is_error(t: u8) -> bool {
        t & 0x80 == 0
    }

    /// True for the error messages that quote the invoking packet at
    /// [`super::QUOTE_OFFSET`] (1 to 4).
    pub fn quotes_packet(t: u8) -> bool {
        matches!(t, 1..=4)
    }
}

view!(
    /// A view of an ICMPv6 message (the buffer is the whole message).
    Packet,
    check_len
);

impl<T: AsRef<[u8]>> Packet<T> {
    /// The check `new_checked` makes: the 8-byte header is present.
    pub fn check_len(&self) -> Result<(), WireError> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// The data after the header.
    pub fn data(&self) -> &[u8] {
        self.buffer.as_ref().get(field::DATA).unwrap_or(&[])
    }
    /// The quoted packet of an error message that carries one (types 1 to
    /// 4): the invoking packet from its IPv6 header on, possibly cut short.
    pub fn quoted(&self) -> Option<&[u8]> {
        if msg_type::quotes_packet(self.msg_type()) {
            Some(self.data())
        } else {
            None
        }
    }
    /// The pseudo header and message sum, folded: 0xffff when the checksum
    /// is right.
    #[inline]
    fn folded_sum(&self, src: u128, dst: u128) -> u16 {
        let b = self.buffer.as_ref();
        let ph = checksum::pseudo_header_sum_v6(src, dst, PROTO, b.len() as u32);
        checksum::fold(checksum::sum(b, ph))
    }
    /// True when the checksum over the pseudo header (`src`, `dst`) and the
    /// whole message is correct.
    pub fn verify_checksum(&self, src: u128, dst: u128) -> bool {
        self.folded_sum(src, dst) == 0xffff
    }
}

/// ICMPv6's next-header number.
const PROTO: u8 = super::ipv6::next_header::ICMPV6;

accessors! {
    Packet;
    /// Message type.
    msg_type, set_msg_type: u8 = field::TYPE;
    /// Code.
    code, set_code: u8 = field::CODE;
    /// Checksum as stored.
    checksum, set_checksum: u16 = field::CHECKSUM;
    /// Echo identifier.
    echo_ident, set_echo_ident: u16 = field::ECHO_IDENT;
    /// Echo sequence number.
    echo_seq_no, set_echo_seq_no: u16 = field::ECHO_SEQNO;
    /// MTU of a Packet Too Big message.
    mtu, set_mtu: u32 = field::MTU;
    /// Pointer of a Parameter Problem message.
    pointer, set_pointer: u32 = field::POINTER;
    /// The 4 type-specific bytes as a u32.
    rest, set_rest: u32 = field::REST;
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the type and code and update the checksum incrementally
    /// (RFC 1624): they form one 16-bit word of it, and the pseudo header
    /// does not change.
    pub fn set_type_code_update_checksum(&mut self, msg_type: u8, code: u8) {
        let b = self.buffer.as_mut();
        let old = get::<u16>(b, field::TYPE);
        let new = u16::from_be_bytes([msg_type, code]);
        set::<u16>(b, field::TYPE, new);
        let c = get::<u16>(b, field::CHECKSUM);
        set::<u16>(b, field::CHECKSUM, checksum::update16(c, old, new));
    }
    /// Compute and store the checksum over the pseudo header (`src`, `dst`)
    /// and the whole message.
    pub fn fill_checksum(&mut self, src: u128, dst: u128) {
        self.set_checksum(0);
        let c = !self.folded_sum(src, dst);
        self.set_checksum(c);
    }
    /// The data after the header, mutable.
    pub fn data_mut(&mut self) -> &mut [u8] {
        self.buffer.as_mut().get_mut(field::DATA).unwrap_or(&mut [])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{Icmpv6Type, PacketBuilder};

    const SRC: u128 = 0xfe80_0000_0000_0000_0000_0000_0000_0001;
    const DST: u128 = 0xfe80_0000_0000_0000_0000_0000_0000_0002;
    const SMAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const DMAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

    // echo request fe80::1 -> fe80::2, id 0x1234 seq 1, data "abcd"
    const ECHO: [u8; 12] = [128, 0, 0xab, 0xb8, 0x12, 0x34, 0, 1, b'a', b'b', b'c', b'd'];

    /// An Ethernet/IPv6 frame from etherparse and its ICMPv6 message.
    fn frame(b: etherparse::PacketBuilderStep<etherparse::Icmpv6Header>, data: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        b.write(&mut e, data).unwrap();
        e
    }
    fn builder() -> etherparse::PacketBuilderStep<etherparse::IpHeaders> {
        PacketBuilder::ethernet2(SMAC, DMAC).ipv6(SRC.to_be_bytes(), DST.to_be_bytes(), 64)
    }

    #[test]
    fn parse_echo() {
        let p = Packet::new_checked(&ECHO[..]).unwrap();
        assert_eq!(p.msg_type(), msg_type::ECHO_REQUEST);
        assert_eq!(p.code(), 0);
        assert_eq!(p.checksum(), 0xabb8);
        assert_eq!(p.echo_ident(), 0x1234);
        assert_eq!(p.echo_seq_no(), 1);
        assert_eq!(p.data(), b"abcd");
        assert_eq!(p.quoted(), None);
        assert!(p.verify_checksum(SRC, DST));
        // the pseudo header counts: other addresses, other sum
        assert!(!p.verify_checksum(DST, DST));
        assert!(!msg_type::is_error(p.msg_type()));
        assert_eq!(
            Packet::new_checked(&ECHO[..7]).unwrap_err(),
            WireError::Truncated
        );
    }

    #[test]
    fn echo_matches_etherparse() {
        let e = frame(builder().icmpv6_echo_request(0x1234, 1), b"abcd");
        assert_eq!(&e[54..], &ECHO);
        // ours, over garbage
        let mut b = [0x5au8; 12];
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_msg_type(msg_type::ECHO_REQUEST);
        p.set_code(0);
        p.set_echo_ident(0x1234);
        p.set_echo_seq_no(1);
        p.data_mut().copy_from_slice(b"abcd");
        p.fill_checksum(SRC, DST);
        assert_eq!(b, ECHO);
        // the reply, by the incremental type change
        Packet::new_unchecked(&mut b[..]).set_type_code_update_checksum(msg_type::ECHO_REPLY, 0);
        let r = frame(builder().icmpv6_echo_reply(0x1234, 1), b"abcd");
        assert_eq!(&r[54..], &b);
        assert!(Packet::new_checked(&b[..])
            .unwrap()
            .verify_checksum(SRC, DST));
    }

    #[test]
    fn packet_too_big() {
        // the quoted packet: an IPv6/UDP header of 48 bytes
        let mut q = Vec::new();
        PacketBuilder::ipv6(DST.to_be_bytes(), 0x2001_0db8u128.to_be_bytes(), 63)
            .udp(5000, 53)
            .write(&mut q, &[])
            .unwrap();
        let e = frame(builder().icmpv6(Icmpv6Type::PacketTooBig { mtu: 1400 }), &q);
        let m = &e[54..];
        let p = Packet::new_checked(m).unwrap();
        assert_eq!(p.msg_type(), msg_type::PACKET_TOO_BIG);
        assert!(msg_type::is_error(p.msg_type()));
        assert_eq!(p.mtu(), 1400);
        assert_eq!(p.quoted(), Some(&q[..]));
        assert_eq!(&m[QUOTE_OFFSET..], &q[..]);
        assert!(p.verify_checksum(SRC, DST));
        // ours, byte for byte
        let mut b = vec![0u8; m.len()];
        let mut o = Packet::new_unchecked(&mut b[..]);
        o.set_msg_type(msg_type::PACKET_TOO_BIG);
        o.set_mtu(1400);
        o.data_mut().copy_from_slice(&q);
        o.fill_checksum(SRC, DST);
        assert_eq!(&b[..], m);
    }

    #[test]
    fn errors_quote() {
        for (t, quotes) in [(1, true), (3, true), (4, true), (127, false), (128, false)] {
            let b = [t, 0, 0, 0, 0, 0, 0, 5, 0x60];
            let p = Packet::new_checked(&b[..]).unwrap();
            assert_eq!(p.quoted().is_some(), quotes, "type {t}");
            assert_eq!(msg_type::is_error(t), t < 128);
        }
        let b = [4u8, 1, 0, 0, 0, 0, 0, 40];
        assert_eq!(Packet::new_checked(&b[..]).unwrap().pointer(), 40);
        assert_eq!(Packet::new_checked(&b[..]).unwrap().quoted(), Some(&[][..]));
    }
}
