//! ARP for Ethernet/IPv4 (RFC 826), 28 bytes.

use super::error::WireError;
use super::field_access::{get, set};

/// Byte ranges of the ARP packet.
pub mod field {
    use core::ops::Range;
    /// Hardware type (1 = Ethernet).
    pub const HTYPE: Range<usize> = 0..2;
    /// Protocol type (0x0800 = IPv4).
    pub const PTYPE: Range<usize> = 2..4;
    /// Hardware address length (6).
    pub const HLEN: usize = 4;
    /// Protocol address length (4).
    pub const PLEN: usize = 5;
    /// Operation (1 request, 2 reply).
    pub const OPER: Range<usize> = 6..8;
    /// Sender hardware address.
    pub const SHA: Range<usize> = 8..14;
    /// Sender protocol address.
    pub const SPA: Range<usize> = 14..18;
    /// Target hardware address.
    pub const THA: Range<usize> = 18..24;
    /// Target protocol address.
    pub const TPA: Range<usize> = 24..28;
}

/// Length of an Ethernet/IPv4 ARP packet.
pub const PACKET_LEN: usize = 28;
/// Operation: request.
pub const OP_REQUEST: u16 = 1;
/// Operation: reply.
pub const OP_REPLY: u16 = 2;

view!(
    /// A view of an ARP packet.
    Packet,
    check
);

impl<T: AsRef<[u8]>> Packet<T> {
    /// The checks `new_checked` makes: length (28 bytes) and that the
    /// packet is Ethernet/IPv4 (htype 1, ptype 0x0800, hlen 6, plen 4).
    pub fn check(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        if b.len() < PACKET_LEN {
            return Err(WireError::Truncated);
        }
        if self.hardware_type() != 1
            || self.protocol_type() != 0x0800
            || get::<u8>(b, field::HLEN) != 6
            || get::<u8>(b, field::PLEN) != 4
        {
            return Err(WireError::Unsupported);
        }
        Ok(())
    }

    /// Hardware type.
    pub fn hardware_type(&self) -> u16 {
        get::<u16>(self.buffer.as_ref(), field::HTYPE)
    }
    /// Protocol type.
    pub fn protocol_type(&self) -> u16 {
        get::<u16>(self.buffer.as_ref(), field::PTYPE)
    }
}

accessors! {
    Packet;
    /// Operation.
    operation, set_operation: u16 = field::OPER;
    /// Sender MAC.
    sender_mac, set_sender_mac: [u8; 6] = field::SHA;
    /// Sender IPv4 (host order).
    sender_ip, set_sender_ip: u32 = field::SPA;
    /// Target MAC.
    target_mac, set_target_mac: [u8; 6] = field::THA;
    /// Target IPv4 (host order).
    target_ip, set_target_ip: u32 = field::TPA;
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Write the fixed Ethernet/IPv4 fields (htype, ptype, hlen, plen).
    pub fn set_ethernet_ipv4(&mut self) {
        let b = self.buffer.as_mut();
        set::<u16>(b, field::HTYPE, 1);
        set::<u16>(b, field::PTYPE, 0x0800);
        set::<u8>(b, field::HLEN, 6);
        set::<u8>(b, field::PLEN, 4);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // who-has 10.0.0.1 tell 10.0.0.2
    const REQ: [u8; 28] = [
        0, 1, 8, 0, 6, 4, 0, 1, 0x02, 0, 0, 0, 0, 2, 10, 0, 0, 2, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1,
    ];

    #[test]
    fn parse() {
        let p = Packet::new_checked(&REQ[..]).unwrap();
        assert_eq!(p.operation(), OP_REQUEST);
        assert_eq!(p.sender_mac(), [2, 0, 0, 0, 0, 2]);
        assert_eq!(p.sender_ip(), 0x0a00_0002);
        assert_eq!(p.target_mac(), [0; 6]);
        assert_eq!(p.target_ip(), 0x0a00_0001);
    }

    #[test]
    fn rejects() {
        assert_eq!(
            Packet::new_checked(&REQ[..27]).unwrap_err(),
            WireError::Truncated
        );
        for i in [1usize, 2, 4, 5] {
            let mut b = REQ;
            b[i] ^= 0x10;
            assert_eq!(
                Packet::new_checked(&b[..]).unwrap_err(),
                WireError::Unsupported
            );
        }
    }

    #[test]
    fn emit_matches_literal() {
        let mut b = [0u8; 28];
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_ethernet_ipv4();
        p.set_operation(OP_REQUEST);
        p.set_sender_mac([2, 0, 0, 0, 0, 2]);
        p.set_sender_ip(0x0a00_0002);
        p.set_target_mac([0; 6]);
        p.set_target_ip(0x0a00_0001);
        assert_eq!(b, REQ);
    }
}
