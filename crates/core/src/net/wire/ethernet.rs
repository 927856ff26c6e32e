//! Ethernet II header with at most one 802.1Q tag.

use super::error::WireError;
use super::field_access::{get, set};

/// Byte ranges of the Ethernet header.
pub mod field {
    use core::ops::Range;
    /// Destination MAC.
    pub const DST: Range<usize> = 0..6;
    /// Source MAC.
    pub const SRC: Range<usize> = 6..12;
    /// EtherType (or TPID 0x8100 when tagged).
    pub const ETHERTYPE: Range<usize> = 12..14;
    /// 802.1Q tag control information (PCP, DEI, VID) when tagged.
    pub const VLAN_TCI: Range<usize> = 14..16;
    /// Inner EtherType when tagged.
    pub const VLAN_ETHERTYPE: Range<usize> = 16..18;
}

/// Length of an untagged header.
pub const HEADER_LEN: usize = 14;
/// Length of a header with one 802.1Q tag.
pub const VLAN_HEADER_LEN: usize = 18;

/// EtherType values dirigo knows.
pub mod ethertype {
    /// IPv4.
    pub const IPV4: u16 = 0x0800;
    /// ARP.
    pub const ARP: u16 = 0x0806;
    /// 802.1Q VLAN tag.
    pub const VLAN: u16 = 0x8100;
    /// 802.1ad service tag (QinQ).
    pub const QINQ: u16 = 0x88a8;
    /// IPv6.
    pub const IPV6: u16 = 0x86dd;
}

view!(
    /// A view of an Ethernet frame.
    Frame,
    check_len
);

impl<T: AsRef<[u8]>> Frame<T> {
    /// The check `new_checked` makes: the buffer holds the whole header
    /// (including the 802.1Q tag when the TPID says there is one).
    pub fn check_len(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN || len < self.header_len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// True when the frame carries one 802.1Q tag.
    pub fn is_tagged(&self) -> bool {
        self.outer_ethertype() == ethertype::VLAN
    }

    /// The VLAN id (12 bits) of the tag, if tagged.
    pub fn vlan(&self) -> Option<u16> {
        if self.is_tagged() {
            Some(get::<u16>(self.buffer.as_ref(), field::VLAN_TCI) & 0x0fff)
        } else {
            None
        }
    }

    /// The EtherType of the payload (behind the tag if tagged).
    pub fn ethertype(&self) -> u16 {
        if self.is_tagged() {
            get::<u16>(self.buffer.as_ref(), field::VLAN_ETHERTYPE)
        } else {
            self.outer_ethertype()
        }
    }

    /// 14, or 18 when tagged.
    pub fn header_len(&self) -> usize {
        if self.is_tagged() {
            VLAN_HEADER_LEN
        } else {
            HEADER_LEN
        }
    }

    /// Bytes after the header (empty when the buffer is short).
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(self.header_len()..).unwrap_or(&[])
    }
}

accessors! {
    Frame;
    /// Destination MAC.
    dst, set_dst: [u8; 6] = field::DST;
    /// Source MAC.
    src, set_src: [u8; 6] = field::SRC;
    /// The EtherType at offset 12 (0x8100 for a tagged frame; the TPID
    /// when tagging).
    outer_ethertype, set_outer_ethertype: u16 = field::ETHERTYPE;
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// Set the payload EtherType (the inner one when tagged).
    pub fn set_ethertype(&mut self, t: u16) {
        if self.is_tagged() {
            set::<u16>(self.buffer.as_mut(), field::VLAN_ETHERTYPE, t)
        } else {
            self.set_outer_ethertype(t)
        }
    }

    /// Set both MAC addresses at once (a forwarded frame's next hop);
    /// [`WireError::Truncated`], writing nothing, when the buffer is
    /// shorter than the two addresses.
    #[inline]
    pub fn set_addrs(&mut self, dst: &[u8; 6], src: &[u8; 6]) -> Result<(), WireError> {
        let b = self.buffer.as_mut();
        let h = b.get_mut(..field::SRC.end).ok_or(WireError::Truncated)?;
        // copied from the caller's memory, not passed as 48-bit values
        let (d, s) = h.split_at_mut(field::SRC.start);
        d.copy_from_slice(dst);
        s.copy_from_slice(src);
        Ok(())
    }

    /// Swap source and destination MACs.
    pub fn swap_macs(&mut self) {
        let (d, s) = (self.dst(), self.src());
        self.set_dst(s);
        self.set_src(d);
    }

    /// Bytes after the header, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let h = self.header_len();
        self.buffer.as_mut().get_mut(h..).unwrap_or(&mut [])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNTAGGED: [u8; 16] = [
        0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, 0xaa, 0xbb,
    ];
    const TAGGED: [u8; 20] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 2, 0x81, 0x00, 0x20, 0x64, 0x08,
        0x06, 0xaa, 0xbb,
    ];

    #[test]
    fn parse_untagged() {
        let f = Frame::new_checked(&UNTAGGED[..]).unwrap();
        assert_eq!(f.dst(), [2, 0, 0, 0, 0, 1]);
        assert_eq!(f.src(), [2, 0, 0, 0, 0, 2]);
        assert_eq!(f.ethertype(), ethertype::IPV4);
        assert_eq!(f.vlan(), None);
        assert_eq!(f.header_len(), 14);
        assert_eq!(f.payload(), &[0xaa, 0xbb]);
    }

    #[test]
    fn parse_tagged() {
        let f = Frame::new_checked(&TAGGED[..]).unwrap();
        assert_eq!(f.vlan(), Some(100));
        assert_eq!(f.ethertype(), ethertype::ARP);
        assert_eq!(f.header_len(), 18);
        assert_eq!(f.payload(), &[0xaa, 0xbb]);
        // tag present but cut short
        assert_eq!(
            Frame::new_checked(&TAGGED[..17]).unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            Frame::new_checked(&UNTAGGED[..13]).unwrap_err(),
            WireError::Truncated
        );
    }

    #[test]
    fn setters() {
        let mut b = TAGGED;
        let mut f = Frame::new_checked(&mut b[..]).unwrap();
        f.swap_macs();
        f.set_ethertype(ethertype::IPV4);
        assert_eq!(f.src(), [0xff; 6]);
        assert_eq!(f.dst(), [2, 0, 0, 0, 0, 2]);
        assert_eq!(&b[12..18], &[0x81, 0x00, 0x20, 0x64, 0x08, 0x00]);
    }

    #[test]
    fn unchecked_never_panics() {
        let f = Frame::new_unchecked(&[1u8, 2, 3][..]);
        assert_eq!(f.dst(), [0; 6]);
        assert_eq!(f.ethertype(), 0);
        assert!(f.payload().is_empty());
        let mut b = [0u8; 3];
        let mut f = Frame::new_unchecked(&mut b[..]);
        f.set_dst([1; 6]);
        f.swap_macs();
        assert!(f.payload_mut().is_empty());
    }

    #[test]
    fn etherparse_agrees() {
        use etherparse::{Ethernet2Header, SingleVlanHeader, VlanId};
        let f = Frame::new_checked(&TAGGED[..]).unwrap();
        let (e, rest) = Ethernet2Header::from_slice(&TAGGED).unwrap();
        assert_eq!(e.source, f.src());
        assert_eq!(e.destination, f.dst());
        assert_eq!(e.ether_type.0, f.outer_ethertype());
        let (v, _) = SingleVlanHeader::from_slice(rest).unwrap();
        assert_eq!(v.vlan_id, VlanId::try_new(f.vlan().unwrap()).unwrap());
        assert_eq!(v.ether_type.0, f.ethertype());
    }

    #[test]
    fn set_addrs() {
        let mut b = UNTAGGED;
        let mut f = Frame::new_unchecked(&mut b[..]);
        assert_eq!(f.set_addrs(&[0x0a; 6], &[0x0b; 6]), Ok(()));
        assert_eq!(
            b,
            [10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 0x08, 0x00, 0xaa, 0xbb]
        );
        let mut s = [0u8; 11];
        let mut f = Frame::new_unchecked(&mut s[..]);
        assert_eq!(f.set_addrs(&[1; 6], &[2; 6]), Err(WireError::Truncated));
        assert_eq!(s, [0; 11], "nothing written");
    }
}
