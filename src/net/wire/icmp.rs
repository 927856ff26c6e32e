//! ICMPv4 (RFC 792): echo and error messages quoting a packet.

use super::{be16, be32, put16, WireError};
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
    /// Message data (echo payload or the quoted packet).
    pub const DATA: core::ops::RangeFrom<usize> = 8..;
}

/// Length of the ICMP header.
pub const HEADER_LEN: usize = 8;

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

/// A view of an ICMP message (the buffer is the whole message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap without checks.
    pub fn new_unchecked(buffer: T) -> Self {
        Packet { buffer }
    }

    /// Wrap after checking the 8-byte header is present.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        if buffer.as_ref().len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        Ok(Packet { buffer })
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Message type.
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref().get(field::TYPE).copied().unwrap_or(0)
    }
    /// Code.
    pub fn code(&self) -> u8 {
        self.buffer.as_ref().get(field::CODE).copied().unwrap_or(0)
    }
    /// Checksum as stored.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }
    /// Echo identifier.
    pub fn echo_ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ECHO_IDENT.start)
    }
    /// Echo sequence number.
    pub fn echo_seq_no(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ECHO_SEQNO.start)
    }
    /// The 4 type-specific bytes as a u32.
    pub fn rest(&self) -> u32 {
        be32(self.buffer.as_ref(), field::REST.start)
    }
    /// Next-hop MTU of a "fragmentation needed" message.
    pub fn next_hop_mtu(&self) -> u16 {
        be16(self.buffer.as_ref(), 6)
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

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the message type.
    pub fn set_msg_type(&mut self, v: u8) {
        if let Some(x) = self.buffer.as_mut().get_mut(field::TYPE) {
            *x = v;
        }
    }
    /// Set the code.
    pub fn set_code(&mut self, v: u8) {
        if let Some(x) = self.buffer.as_mut().get_mut(field::CODE) {
            *x = v;
        }
    }
    /// Store a checksum value.
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM.start, v)
    }
    /// Set the echo identifier.
    pub fn set_echo_ident(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::ECHO_IDENT.start, v)
    }
    /// Set the echo sequence number.
    pub fn set_echo_seq_no(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::ECHO_SEQNO.start, v)
    }
    /// Set the 4 type-specific bytes.
    pub fn set_rest(&mut self, v: u32) {
        super::put32(self.buffer.as_mut(), field::REST.start, v)
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
}
