//! IPv6 fixed header (RFC 8200 §3), 40 bytes; the extension headers after
//! it are walked by [`super::ipv6ext`].
//!
//! Addresses are host-order `u128` (see the module docs of [`super`]).
//! Jumbograms (RFC 2675: payload length 0 with a Jumbo Payload option) do
//! not fit an Ethernet frame and are not supported: a payload length of 0
//! is an empty payload.

use super::error::WireError;
use super::field_access::get;
use super::ipv6ext::{self, ExtError, UpperLayer};
use crate::net::checksum;

/// Byte ranges of the IPv6 header.
pub mod field {
    use core::ops::Range;
    /// Version (4 bits), traffic class (8 bits), flow label (20 bits).
    pub const VER_TC_FLOW: Range<usize> = 0..4;
    /// Payload length (bytes after the fixed header, extension headers
    /// included).
    pub const LENGTH: Range<usize> = 4..6;
    /// Next header: the first extension header or the upper-layer protocol.
    pub const NXT_HDR: usize = 6;
    /// Hop limit.
    pub const HOP_LIMIT: usize = 7;
    /// Source address.
    pub const SRC: Range<usize> = 8..24;
    /// Destination address.
    pub const DST: Range<usize> = 24..40;
}

/// Length of the fixed header.
pub const HEADER_LEN: usize = 40;

/// Next-header numbers of the IPv6 world (defined beside the extension
/// walk, which needs them and must not import this module).
pub use super::ipv6ext::next_header;

/// Next header of an IPv6 packet carried in IPv6 (RFC 2473): the outer
/// header of a TUN real server's tunnel, as Linux IPVS sends it.
pub const NEXT_HEADER_IPV6: u8 = 41;

/// The unspecified address `::`.
pub const UNSPECIFIED: u128 = 0;

/// True for a multicast address (ff00::/8).
#[inline]
pub fn is_multicast(a: u128) -> bool {
    a >> 120 == 0xff
}

/// True for a link-local unicast address (fe80::/10).
#[inline]
pub fn is_link_local(a: u128) -> bool {
    a >> 118 == 0xfe80 >> 6
}

view!(
    /// A view of an IPv6 packet.
    Packet,
    check
);

impl<T: AsRef<[u8]>> Packet<T> {
    /// The checks `new_checked` makes: the 40-byte header is present,
    /// version 6, and 40 + payload length <= buffer length. The buffer may
    /// be longer (Ethernet padding).
    pub fn check(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.version() != 6 {
            return Err(WireError::BadVersion);
        }
        if HEADER_LEN + self.payload_len() as usize > len {
            return Err(WireError::BadTotalLen);
        }
        Ok(())
    }

    /// Version (6).
    pub fn version(&self) -> u8 {
        get::<u8>(self.buffer.as_ref(), 0) >> 4
    }
    /// Traffic class (DSCP and ECN).
    pub fn traffic_class(&self) -> u8 {
        (self.ver_tc_flow() >> 20) as u8
    }
    /// Flow label (20 bits).
    pub fn flow_label(&self) -> u32 {
        self.ver_tc_flow() & 0x000f_ffff
    }
    /// Header and payload: 40 + payload length (at most the buffer's
    /// length in a checked view).
    pub fn total_len(&self) -> usize {
        HEADER_LEN + self.payload_len() as usize
    }
    /// The payload: extension headers and upper layer, up to the payload
    /// length (empty when inconsistent).
    pub fn payload(&self) -> &[u8] {
        self.buffer
            .as_ref()
            .get(HEADER_LEN..self.total_len())
            .unwrap_or(&[])
    }
    /// Walk the extension headers of the payload (bounded, see
    /// [`ipv6ext::walk`]): the upper-layer protocol and its offset in
    /// [`Self::payload`].
    #[inline]
    pub fn upper_layer(&self) -> Result<UpperLayer, ExtError> {
        ipv6ext::walk(self.next_header(), self.payload())
    }
    /// The pseudo-header sum (RFC 8200 §8.1) of an upper-layer message of
    /// `upper_len` bytes and protocol `proto`, with this packet's addresses
    /// (the caller substitutes the final destination when a Routing header
    /// is present).
    #[inline]
    pub fn pseudo_header_sum(&self, proto: u8, upper_len: u32) -> u32 {
        checksum::pseudo_header_sum_v6(self.src(), self.dst(), proto, upper_len)
    }
}

accessors! {
    Packet;
    /// The first 32 bits: version, traffic class and flow label.
    ver_tc_flow, set_ver_tc_flow: u32 = field::VER_TC_FLOW;
    /// Payload length.
    payload_len, set_payload_len: u16 = field::LENGTH;
    /// Next header (the first extension header or the upper layer).
    next_header, set_next_header: u8 = field::NXT_HDR;
    /// Hop limit.
    hop_limit, set_hop_limit: u8 = field::HOP_LIMIT;
    /// Source address (host order).
    src, set_src: u128 = field::SRC;
    /// Destination address (host order).
    dst, set_dst: u128 = field::DST;
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set version 6, the traffic class and the flow label (its low 20
    /// bits).
    pub fn set_version_tc_flow(&mut self, traffic_class: u8, flow_label: u32) {
        self.set_ver_tc_flow(6 << 28 | (traffic_class as u32) << 20 | flow_label & 0x000f_ffff)
    }
    /// Set the traffic class, keeping version and flow label.
    pub fn set_traffic_class(&mut self, tc: u8) {
        let w = self.ver_tc_flow();
        self.set_ver_tc_flow(w & 0xf00f_ffff | (tc as u32) << 20)
    }
    /// Set the flow label (its low 20 bits), keeping version and traffic
    /// class.
    pub fn set_flow_label(&mut self, label: u32) {
        let w = self.ver_tc_flow();
        self.set_ver_tc_flow(w & 0xfff0_0000 | label & 0x000f_ffff)
    }
    /// The payload, mutable (empty when inconsistent).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let t = self.total_len();
        self.buffer
            .as_mut()
            .get_mut(HEADER_LEN..t)
            .unwrap_or(&mut [])
    }
}

/// An IPv6 fixed header, to parse and emit (no extension headers: the
/// payload starts with `next_header`'s protocol).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    /// Source address (host order).
    pub src: u128,
    /// Destination address (host order).
    pub dst: u128,
    /// Next header.
    pub next_header: u8,
    /// Bytes after the fixed header.
    pub payload_len: u16,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
}

impl Repr {
    /// Bytes [`Repr::emit`] writes.
    pub const HEADER_LEN: usize = HEADER_LEN;

    /// The fixed header of a checked packet.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Repr {
        Repr {
            src: p.src(),
            dst: p.dst(),
            next_header: p.next_header(),
            payload_len: p.payload_len(),
            hop_limit: p.hop_limit(),
            traffic_class: p.traffic_class(),
            flow_label: p.flow_label(),
        }
    }

    /// Write the 40-byte header at the front of `packet` (the payload is
    /// left alone; nothing is written to a buffer shorter than the header).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        if packet.buffer.as_ref().len() < HEADER_LEN {
            return;
        }
        packet.set_version_tc_flow(self.traffic_class, self.flow_label);
        packet.set_payload_len(self.payload_len);
        packet.set_next_header(self.next_header);
        packet.set_hop_limit(self.hop_limit);
        packet.set_src(self.src);
        packet.set_dst(self.dst);
    }

    /// The pseudo-header sum of this header's upper layer (RFC 8200 §8.1),
    /// taken to be the whole payload.
    #[inline]
    pub fn pseudo_header_sum(&self) -> u32 {
        checksum::pseudo_header_sum_v6(
            self.src,
            self.dst,
            self.next_header,
            self.payload_len as u32,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::meta::PROTO_UDP;

    const SRC: u128 = 0x2001_0db8_0000_0000_0000_0000_0000_0001;
    const DST: u128 = 0x2001_0db8_0000_0000_0000_0000_0000_0002;

    // 2001:db8::1 -> 2001:db8::2, traffic class 0xb8, flow 0x12345, UDP
    // 1234 -> 53 with no data, hop limit 64, 2 bytes of Ethernet padding
    const PKT: [u8; 50] = [
        0x6b, 0x81, 0x23, 0x45, 0x00, 0x08, 17, 64, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, //
        0x04, 0xd2, 0x00, 0x35, 0x00, 0x08, 0x9f, 0x62, 0xee, 0xee,
    ];

    #[test]
    fn parse() {
        let p = Packet::new_checked(&PKT[..]).unwrap();
        assert_eq!(p.version(), 6);
        assert_eq!(p.traffic_class(), 0xb8);
        assert_eq!(p.flow_label(), 0x12345);
        assert_eq!(p.payload_len(), 8);
        assert_eq!(p.total_len(), 48);
        assert_eq!(p.next_header(), PROTO_UDP);
        assert_eq!(p.hop_limit(), 64);
        assert_eq!(p.src(), SRC);
        assert_eq!(p.dst(), DST);
        assert_eq!(
            std::net::Ipv6Addr::from(p.src()),
            "2001:db8::1".parse::<std::net::Ipv6Addr>().unwrap()
        );
        assert_eq!(p.payload(), &PKT[40..48]);
        let ul = p.upper_layer().unwrap();
        assert_eq!((ul.protocol, ul.offset, ul.routing), (PROTO_UDP, 0, false));
        // the UDP checksum (0x9f62) is right under the pseudo header
        let s = p.pseudo_header_sum(PROTO_UDP, 8);
        assert_eq!(checksum::fold(checksum::sum(p.payload(), s)), 0xffff);
        assert!(!is_multicast(p.src()) && !is_link_local(p.src()));
        assert!(is_multicast(0xff02 << 112) && is_link_local(0xfe80 << 112));
        assert!(is_link_local(0xfebf << 112) && !is_link_local(0xfec0 << 112));
    }

    #[test]
    fn rejects() {
        assert_eq!(
            Packet::new_checked(&PKT[..39]).unwrap_err(),
            WireError::Truncated
        );
        let mut b = PKT;
        b[0] = 0x4b;
        assert_eq!(
            Packet::new_checked(&b[..]).unwrap_err(),
            WireError::BadVersion
        );
        // payload length past the buffer
        assert_eq!(
            Packet::new_checked(&PKT[..47]).unwrap_err(),
            WireError::BadTotalLen
        );
        let mut b = PKT;
        b[5] = 11;
        assert_eq!(
            Packet::new_checked(&b[..]).unwrap_err(),
            WireError::BadTotalLen
        );
        b[5] = 10; // exactly the buffer
        assert!(Packet::new_checked(&b[..]).is_ok());
        // an unchecked view of a short buffer reads zeros, writes nothing
        let mut s = [0xffu8; 7];
        let mut p = Packet::new_unchecked(&mut s[..]);
        assert_eq!(p.src(), 0);
        assert!(p.payload().is_empty());
        p.set_dst(1);
        Repr::parse(&p).emit(&mut p);
        assert_eq!(s, [0xff; 7]);
    }

    #[test]
    fn setters() {
        let mut b = PKT;
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.set_hop_limit(1);
        p.set_src(DST);
        p.set_dst(SRC);
        p.set_traffic_class(0x04);
        assert_eq!((p.version(), p.flow_label()), (6, 0x12345));
        p.set_flow_label(0xfff_ffff);
        assert_eq!((p.traffic_class(), p.flow_label()), (0x04, 0xf_ffff));
        p.payload_mut()[0] = 0xaa;
        assert_eq!(p.hop_limit(), 1);
        assert_eq!(&b[8..24], &DST.to_be_bytes());
        assert_eq!(&b[24..40], &SRC.to_be_bytes());
        assert_eq!(&b[..4], &[0x60, 0x4f, 0xff, 0xff]);
        assert_eq!((b[7], b[40], b[48]), (1, 0xaa, 0xee));
    }

    #[test]
    fn repr_round_trip() {
        let p = Packet::new_checked(&PKT[..]).unwrap();
        let r = Repr::parse(&p);
        assert_eq!(
            r,
            Repr {
                src: SRC,
                dst: DST,
                next_header: PROTO_UDP,
                payload_len: 8,
                hop_limit: 64,
                traffic_class: 0xb8,
                flow_label: 0x12345,
            }
        );
        // over garbage, leaving the payload alone
        let mut b = [0xa5u8; 50];
        r.emit(&mut Packet::new_unchecked(&mut b[..]));
        assert_eq!(&b[..40], &PKT[..40]);
        assert_eq!(&b[40..], &[0xa5; 10]);
        assert_eq!(r.pseudo_header_sum(), p.pseudo_header_sum(PROTO_UDP, 8));
        assert_eq!(Repr::HEADER_LEN, 40);
    }

    #[test]
    fn etherparse_agrees() {
        let b =
            etherparse::PacketBuilder::ipv6(SRC.to_be_bytes(), DST.to_be_bytes(), 64).udp(1234, 53);
        let mut e = Vec::new();
        b.write(&mut e, &[]).unwrap();
        // etherparse writes traffic class and flow label 0
        let mut want = PKT;
        want[..4].copy_from_slice(&[0x60, 0, 0, 0]);
        assert_eq!(e, &want[..48]);
        let p = Packet::new_checked(&e[..]).unwrap();
        assert_eq!((p.src(), p.dst(), p.hop_limit()), (SRC, DST, 64));

        // our emit read back by etherparse
        let mut o = [0u8; 48];
        Repr::parse(&Packet::new_checked(&PKT[..]).unwrap())
            .emit(&mut Packet::new_unchecked(&mut o[..]));
        let h = etherparse::Ipv6HeaderSlice::from_slice(&o)
            .unwrap()
            .to_header();
        assert_eq!(h.traffic_class, 0xb8);
        assert_eq!(h.flow_label.value(), 0x12345);
        assert_eq!(h.payload_length, 8);
        assert_eq!(h.next_header, etherparse::IpNumber::UDP);
        assert_eq!(h.hop_limit, 64);
        assert_eq!(h.source, SRC.to_be_bytes());
        assert_eq!(h.destination, DST.to_be_bytes());
        assert_eq!(NEXT_HEADER_IPV6, etherparse::IpNumber::IPV6.0);
    }
}
