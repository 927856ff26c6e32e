//! ICMPv4 (RFC 792): echo and error messages quoting a packet.

use super::error::WireError;
use super::field_access::{get, set};
use crate::net::checksum;

/// Byte ranges of the ICMP header.
pub mod field {
    use core::ops::Range;
    /// Message type.
    pub const TYPE: usize = 0;
    /// Code.
    pub const CODE: usize = 1;
    /// Checksum over the whole ICMP message.
    pub const CHECKSUM: Range<usize> = 2..4;
    /// Echo identifier.
    pub const ECHO_IDENT: Range<usize> = 4..6;
    /// Echo sequence number.
    pub const ECHO_SEQNO: Range<usize> = 6..8;
    /// The 4 type-specific bytes (unused / next-hop MTU / pointer / gateway).
    pub const REST: Range<usize> = 4..8;
    /// Next-hop MTU of "fragmentation needed" (RFC 1191), after 2 unused bytes.
    pub const NEXT_HOP_MTU: Range<usize> = 6..8;
    /// Message data (echo payload or the quoted packet).
    pub const DATA: core::ops::RangeFrom<usize> = 8..;
}

/// Length of the ICMP header.
pub const HEADER_LEN: usize = 8;
/// Bytes of the original datagram's payload an error quotes after its IP
/// header, at the least (RFC 792: 64 bits; TCP's and UDP's ports among
/// them).
pub const QUOTED_PAYLOAD_LEN: usize = 8;

/// ICMP message types dirigo handles.
pub mod msg_type {
    /// Echo reply.
    pub const ECHO_REPLY: u8 = 0;
    /// Destination unreachable.
    pub const DEST_UNREACHABLE: u8 = 3;
    /// Source quench (deprecated, still an error message).
    pub const SOURCE_QUENCH: u8 = 4;
    /// Redirect.
    pub const REDIRECT: u8 = 5;
    /// Echo request.
    pub const ECHO_REQUEST: u8 = 8;
    /// Time exceeded.
    pub const TIME_EXCEEDED: u8 = 11;
    /// Parameter problem.
    pub const PARAMETER_PROBLEM: u8 = 12;

    /// True for the error messages that quote a packet (3, 4, 5, 11, 12).
    pub fn is_error(t: u8) -> bool {
        matches!(t, 3 | 4 | 5 | 11 | 12)
    }
}

/// Destination-unreachable code "fragmentation needed and DF set".
pub const CODE_FRAG_NEEDED: u8 = 4;

view!(
    /// A view of an ICMP message (the buffer is the whole message).
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

    /// Next-hop MTU of a "fragmentation needed" message.
    pub fn next_hop_mtu(&self) -> u16 {
        get::<u16>(self.buffer.as_ref(), field::NEXT_HOP_MTU)
    }
    /// The data after the header.
    pub fn data(&self) -> &[u8] {
        self.buffer.as_ref().get(field::DATA).unwrap_or(&[])
    }
    /// True when the checksum over the whole message is correct.
    pub fn verify_checksum(&self) -> bool {
        checksum::checksum(self.buffer.as_ref()) == 0
    }
}

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
    /// The 4 type-specific bytes as a u32.
    rest, set_rest: u32 = field::REST;
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the next-hop MTU of a "fragmentation needed" message, and the
    /// unused 16 bits before it to 0 (RFC 1191).
    pub fn set_next_hop_mtu(&mut self, mtu: u16) {
        self.set_rest(mtu as u32)
    }
    /// Set the type and code and update the checksum incrementally
    /// (RFC 1624): they form one 16-bit word of it.
    pub fn set_type_code_update_checksum(&mut self, msg_type: u8, code: u8) {
        let b = self.buffer.as_mut();
        let old = get::<u16>(b, field::TYPE);
        let new = u16::from_be_bytes([msg_type, code]);
        set::<u16>(b, field::TYPE, new);
        let c = get::<u16>(b, field::CHECKSUM);
        set::<u16>(b, field::CHECKSUM, checksum::update16(c, old, new));
    }
    /// Compute and store the checksum over the whole message.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::checksum(self.buffer.as_ref());
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

    // echo request id 0x1234 seq 1, payload "abcd"
    const ECHO: [u8; 12] = [8, 0, 0x21, 0x04, 0x12, 0x34, 0, 1, b'a', b'b', b'c', b'd'];

    #[test]
    fn parse_echo() {
        let p = Packet::new_checked(&ECHO[..]).unwrap();
        assert_eq!(p.msg_type(), msg_type::ECHO_REQUEST);
        assert_eq!(p.code(), 0);
        assert_eq!(p.echo_ident(), 0x1234);
        assert_eq!(p.echo_seq_no(), 1);
        assert_eq!(p.data(), b"abcd");
        assert!(p.verify_checksum(), "{:04x}", p.checksum());
        assert_eq!(
            Packet::new_checked(&ECHO[..7]).unwrap_err(),
            WireError::Truncated
        );
    }

    #[test]
    fn emit_matches_etherparse() {
        let mut b = [0u8; 12];
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_msg_type(msg_type::ECHO_REQUEST);
        p.set_echo_ident(0x1234);
        p.set_echo_seq_no(1);
        p.data_mut().copy_from_slice(b"abcd");
        p.fill_checksum();
        assert_eq!(b, ECHO);
        let h = etherparse::Icmpv4Header::with_checksum(
            etherparse::Icmpv4Type::EchoRequest(etherparse::IcmpEchoHeader { id: 0x1234, seq: 1 }),
            b"abcd",
        );
        assert_eq!(h.to_bytes().as_slice(), &ECHO[..8]);
    }

    #[test]
    fn frag_needed() {
        let b = [3u8, 4, 0, 0, 0, 0, 0x05, 0xdc];
        let p = Packet::new_checked(&b[..]).unwrap();
        assert!(msg_type::is_error(p.msg_type()));
        assert_eq!(p.code(), CODE_FRAG_NEEDED);
        assert_eq!(p.next_hop_mtu(), 1500);
        assert_eq!(p.rest(), 1500);
        assert!(!msg_type::is_error(0) && !msg_type::is_error(8));
    }

    // ECHO turned into a reply: type 0, checksum 0x2904
    const REPLY: [u8; 12] = [0, 0, 0x29, 0x04, 0x12, 0x34, 0, 1, b'a', b'b', b'c', b'd'];

    #[test]
    fn type_code_setter_updates_checksum() {
        let mut b = ECHO;
        Packet::new_unchecked(&mut b[..]).set_type_code_update_checksum(msg_type::ECHO_REPLY, 0);
        assert_eq!(b, REPLY);
        assert!(Packet::new_checked(&b[..]).unwrap().verify_checksum());
    }

    #[test]
    fn emit_frag_needed() {
        // type 3 code 4, next-hop MTU 1480, quoting 4 bytes
        let want = [3u8, 4, 0xb2, 0x17, 0, 0, 0x05, 0xc8, 0x45, 0, 0, 0x1c];
        let mut b = [0xffu8; 12];
        b[8..].copy_from_slice(&[0x45, 0, 0, 0x1c]);
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_msg_type(msg_type::DEST_UNREACHABLE);
        p.set_code(CODE_FRAG_NEEDED);
        p.set_next_hop_mtu(1480);
        p.fill_checksum();
        assert_eq!(b, want);
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.next_hop_mtu(), 1480);
        assert!(p.verify_checksum());
    }
}
