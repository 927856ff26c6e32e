//! The IPv6 extension-header chain (RFC 8200 §4): a bounded walk from the
//! fixed header's Next Header to the upper-layer protocol.
//!
//! The walk reads at most [`MAX_EXT_HEADERS`] headers, checks every stated
//! length against the buffer before it moves past it, and never reads out of
//! bounds: its work per packet is bounded by a constant. It walks Hop-by-Hop
//! Options (0, only first, as §4.1 requires), Routing (43), Destination
//! Options (60) and the Authentication Header (51, whose length counts
//! 4-byte units, RFC 4302 §2.2); it stops at a Fragment header (44) and
//! reports it, since the upper layer of a fragment is not all there. Every
//! other number ends the walk as the upper layer (TCP, UDP, ICMPv6, ESP,
//! No Next Header, ...), except the extension headers dirigo does not walk
//! (Mobility 135, HIP 139, Shim6 140, experimental 253 and 254), which are
//! reported as unknown.

use super::error::WireError;
use super::field_access::set;

/// Next-header numbers of the IPv6 world (IANA "Assigned Internet Protocol
/// Numbers"); TCP and UDP are [`crate::net::meta`]'s.
pub mod next_header {
    /// Hop-by-Hop Options.
    pub const HOP_BY_HOP: u8 = 0;
    /// Routing.
    pub const ROUTING: u8 = 43;
    /// Fragment.
    pub const FRAGMENT: u8 = 44;
    /// Encapsulating Security Payload (opaque: the end of the walk).
    pub const ESP: u8 = 50;
    /// Authentication Header.
    pub const AUTH: u8 = 51;
    /// ICMPv6.
    pub const ICMPV6: u8 = 58;
    /// No Next Header.
    pub const NO_NEXT: u8 = 59;
    /// Destination Options.
    pub const DEST_OPTS: u8 = 60;
}

use next_header as nh;

/// The most extension headers the walk reads before it gives up.
pub const MAX_EXT_HEADERS: usize = 8;

/// Length of a Fragment header.
pub const FRAGMENT_HEADER_LEN: usize = 8;

/// Where the walk ended: the upper-layer protocol and where its header
/// starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpperLayer {
    /// The upper-layer protocol number (6, 17, 58, ..., or 59 = none).
    pub protocol: u8,
    /// Offset of the upper-layer header in the walked buffer (the IPv6
    /// payload); at most the buffer's length.
    pub offset: usize,
    /// True when a Routing header was on the way: an upper-layer checksum
    /// then covers the final destination, not the header's (RFC 8200 §8.1).
    pub routing: bool,
}

/// Why the walk did not reach an upper layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtError {
    /// A Fragment header at this offset of the walked buffer (its 8 bytes
    /// are there: view them with [`FragmentHeader`]).
    Fragment {
        /// Offset of the Fragment header.
        at: usize,
    },
    /// An extension header dirigo does not walk (see the module docs).
    Unknown(u8),
    /// More than [`MAX_EXT_HEADERS`] extension headers.
    TooLong,
    /// A header, or the length it states, runs past the buffer.
    Truncated,
    /// A Hop-by-Hop Options header that is not the first one (RFC 8200
    /// §4.1).
    HopByHopNotFirst,
}

/// True for the numbers RFC 8200 §4 and IANA list as extension headers.
#[inline]
pub fn is_extension_header(n: u8) -> bool {
    matches!(n, 0 | 43 | 44 | 51 | 60 | 135 | 139 | 140 | 253 | 254)
}

/// Walk the extension-header chain of `payload` (the bytes after the fixed
/// header), whose first header is `first` (the fixed header's Next Header).
pub fn walk(first: u8, payload: &[u8]) -> Result<UpperLayer, ExtError> {
    let mut next = first;
    let mut at = 0usize;
    let mut routing = false;
    for i in 0..=MAX_EXT_HEADERS {
        match next {
            nh::HOP_BY_HOP | nh::ROUTING | nh::DEST_OPTS | nh::AUTH | nh::FRAGMENT => {}
            n if is_extension_header(n) => return Err(ExtError::Unknown(n)),
            protocol => {
                return Ok(UpperLayer {
                    protocol,
                    offset: at,
                    routing,
                })
            }
        }
        if i == MAX_EXT_HEADERS {
            return Err(ExtError::TooLong);
        }
        if next == nh::HOP_BY_HOP && i != 0 {
            return Err(ExtError::HopByHopNotFirst);
        }
        // every extension header starts with its next header and a length
        let (after, stated) = match payload.get(at..at.saturating_add(2)) {
            Some(&[a, b]) => (a, b as usize),
            _ => return Err(ExtError::Truncated),
        };
        let len = match next {
            nh::FRAGMENT => FRAGMENT_HEADER_LEN,
            nh::AUTH => (stated + 2) * 4,
            _ => (stated + 1) * 8,
        };
        // no overflow: `at` <= payload.len() and `len` <= 2048
        if at + len > payload.len() {
            return Err(ExtError::Truncated);
        }
        if next == nh::FRAGMENT {
            return Err(ExtError::Fragment { at });
        }
        routing |= next == nh::ROUTING;
        next = after;
        at += len;
    }
    // the loop returns at i == MAX_EXT_HEADERS at the latest
    Err(ExtError::TooLong)
}

/// Byte ranges of the Fragment header (RFC 8200 §4.5).
pub mod field {
    use core::ops::Range;
    /// Next header of the fragmentable part.
    pub const NXT_HDR: usize = 0;
    /// Fragment offset (13 bits, 8-byte units), 2 reserved bits, M flag.
    pub const OFF_FLG: Range<usize> = 2..4;
    /// Identification.
    pub const IDENT: Range<usize> = 4..8;
}

view!(
    /// A view of a Fragment header.
    FragmentHeader,
    check_len
);

impl<T: AsRef<[u8]>> FragmentHeader<T> {
    /// The check `new_checked` makes: the 8 bytes are present.
    pub fn check_len(&self) -> Result<(), WireError> {
        if self.buffer.as_ref().len() < FRAGMENT_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        Ok(())
    }
    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> u16 {
        self.off_flg() & 0xfff8
    }
    /// More-fragments flag.
    pub fn more_frags(&self) -> bool {
        self.off_flg() & 1 != 0
    }
    /// True for an atomic fragment (offset 0, M clear: RFC 6946 says to
    /// process it as if it were not fragmented).
    pub fn is_atomic(&self) -> bool {
        self.off_flg() & 0xfff9 == 0
    }
}

accessors! {
    FragmentHeader;
    /// Next header of the fragmentable part.
    next_header, set_next_header: u8 = field::NXT_HDR;
    /// The raw offset/flags word.
    off_flg, set_off_flg: u16 = field::OFF_FLG;
    /// Identification.
    ident, set_ident: u32 = field::IDENT;
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> FragmentHeader<T> {
    /// Set the offset (bytes, a multiple of 8) and the M flag, clearing the
    /// reserved bits and byte.
    pub fn set_frag(&mut self, offset: u16, more: bool) {
        set::<u8>(self.buffer.as_mut(), 1, 0);
        self.set_off_flg(offset & 0xfff8 | more as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::meta::{PROTO_TCP, PROTO_UDP};

    // Hop-by-Hop (8 bytes, PadN) -> Destination Options (16 bytes) ->
    // Routing (8 bytes, type 0, 0 segments left) -> AH (payload len 4: 24
    // bytes) -> TCP at offset 56
    fn chain() -> Vec<u8> {
        let mut b = vec![nh::DEST_OPTS, 0, 1, 4, 0, 0, 0, 0];
        b.extend([nh::ROUTING, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        b.extend([nh::AUTH, 0, 0, 0, 0, 0, 0, 0]);
        b.extend([PROTO_TCP, 4, 0, 0, 0, 0, 0x10, 0x01, 0, 0, 0, 7]);
        b.extend([0xcc; 12]); // ICV
        b.extend([0x04, 0xd2, 0x00, 0x50]); // TCP ports
        b
    }

    #[test]
    fn walks_the_chain() {
        let b = chain();
        let ul = walk(nh::HOP_BY_HOP, &b).unwrap();
        assert_eq!(
            ul,
            UpperLayer {
                protocol: PROTO_TCP,
                offset: 56,
                routing: true
            }
        );
        assert_eq!(&b[ul.offset..], &[0x04, 0xd2, 0x00, 0x50]);
        // no extension headers at all
        let ul = walk(PROTO_UDP, &[]).unwrap();
        assert_eq!((ul.protocol, ul.offset, ul.routing), (PROTO_UDP, 0, false));
        // the chain may end at the buffer's end (an empty upper layer)
        let ul = walk(nh::HOP_BY_HOP, &b[..56]).unwrap();
        assert_eq!(ul.offset, 56);
        // ESP and No Next Header end the walk like any upper layer
        assert_eq!(walk(nh::ESP, &b).unwrap().protocol, nh::ESP);
        let mut c = b.clone();
        c[32] = nh::NO_NEXT;
        assert_eq!(walk(nh::HOP_BY_HOP, &c).unwrap().protocol, nh::NO_NEXT);
    }

    #[test]
    fn typed_reasons() {
        let b = chain();
        // every cut inside the chain is truncated
        for cut in 0..56 {
            assert_eq!(
                walk(nh::HOP_BY_HOP, &b[..cut]),
                Err(ExtError::Truncated),
                "cut at {cut}"
            );
        }
        // unknown extension headers
        for n in [135, 139, 140, 253, 254] {
            let mut c = b.clone();
            c[8] = n; // the Destination Options' next header
            assert_eq!(walk(nh::HOP_BY_HOP, &c), Err(ExtError::Unknown(n)));
        }
        // a Hop-by-Hop after the first header
        let mut c = b.clone();
        c[0] = nh::HOP_BY_HOP;
        assert_eq!(walk(nh::HOP_BY_HOP, &c), Err(ExtError::HopByHopNotFirst));
        // a Fragment header: its offset, its 8 bytes present
        let mut f = vec![nh::FRAGMENT, 0, 1, 4, 0, 0, 0, 0];
        f.extend([PROTO_UDP, 0, 0x05, 0xa9, 0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(walk(nh::DEST_OPTS, &f), Err(ExtError::Fragment { at: 8 }));
        assert_eq!(walk(nh::DEST_OPTS, &f[..15]), Err(ExtError::Truncated));
        let h = FragmentHeader::new_checked(&f[8..]).unwrap();
        assert_eq!(h.next_header(), PROTO_UDP);
        assert_eq!(h.frag_offset(), 0x05a8);
        assert!(h.more_frags() && !h.is_atomic());
        assert_eq!(h.ident(), 0xdead_beef);
        assert_eq!(
            FragmentHeader::new_checked(&f[9..]).unwrap_err(),
            WireError::Truncated
        );
    }

    #[test]
    fn at_most_eight_headers() {
        // n Destination Options headers of 8 bytes, then UDP
        let dests = |n: usize| {
            let mut b = Vec::new();
            for i in 0..n {
                let next = if i + 1 == n { PROTO_UDP } else { nh::DEST_OPTS };
                b.extend([next, 0, 1, 4, 0, 0, 0, 0]);
            }
            b
        };
        let ul = walk(nh::DEST_OPTS, &dests(8)).unwrap();
        assert_eq!((ul.protocol, ul.offset), (PROTO_UDP, 64));
        assert_eq!(walk(nh::DEST_OPTS, &dests(9)), Err(ExtError::TooLong));
        // a chain that loops on itself stops too
        let mut l = dests(9);
        l.extend([0u8; 4000]);
        assert_eq!(walk(nh::DEST_OPTS, &l), Err(ExtError::TooLong));
    }

    #[test]
    fn fragment_setters() {
        let mut b = [0xffu8; 8];
        let mut h = FragmentHeader::new_checked(&mut b[..]).unwrap();
        h.set_next_header(PROTO_TCP);
        h.set_frag(0, false);
        h.set_ident(7);
        assert!(h.is_atomic());
        assert_eq!(b, [PROTO_TCP, 0, 0, 0, 0, 0, 0, 7]);
    }

    #[test]
    fn etherparse_agrees() {
        use etherparse::{
            IpAuthHeader, IpHeaders, IpNumber, Ipv6Extensions, Ipv6Header, Ipv6RawExtHeader,
            Ipv6RoutingExtensions, PacketBuilder,
        };
        let src = 0x2001_0db8_0000_0000_0000_0000_0000_0001u128;
        let dst = 0x2001_0db8_0000_0000_0000_0000_0000_0002u128;
        let raw = |p: &[u8]| Ipv6RawExtHeader::new_raw(IpNumber(0), p).unwrap();
        let exts = Ipv6Extensions {
            hop_by_hop_options: Some(raw(&[1, 4, 0, 0, 0, 0])),
            destination_options: Some(raw(&[1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
            routing: Some(Ipv6RoutingExtensions {
                routing: raw(&[0, 0, 0, 0, 0, 0]),
                final_destination_options: None,
            }),
            fragment: None,
            auth: Some(IpAuthHeader::new(IpNumber(0), 0x1001, 7, &[0xcc; 12]).unwrap()),
        };
        let hdr = Ipv6Header {
            source: src.to_be_bytes(),
            destination: dst.to_be_bytes(),
            hop_limit: 64,
            ..Default::default()
        };
        let b = PacketBuilder::ip(IpHeaders::Ipv6(hdr, exts.clone())).tcp(1234, 80, 1, 1000);
        let mut e = Vec::new();
        b.write(&mut e, b"hi").unwrap();

        // the fixed header by hand (this module does not import `ipv6`,
        // which imports it): next header at 6, addresses at 8 and 24
        assert_eq!(
            (e[0] >> 4, &e[8..24], &e[24..40]),
            (6, &src.to_be_bytes()[..], &dst.to_be_bytes()[..])
        );
        let payload = &e[40..];
        let ul = walk(e[6], payload).unwrap();
        assert_eq!(ul.protocol, PROTO_TCP);
        assert_eq!(ul.offset, exts.header_len());
        assert!(ul.routing);
        // the same chain as ours, byte for byte
        assert_eq!(&payload[..ul.offset], &chain()[..56]);
        let seg = &payload[ul.offset..];
        assert_eq!(&seg[..4], &[0x04, 0xd2, 0x00, 0x50]);
        // etherparse's TCP checksum is right under our pseudo header
        let s = crate::net::checksum::pseudo_header_sum_v6(src, dst, PROTO_TCP, seg.len() as u32);
        assert_eq!(
            crate::net::checksum::fold(crate::net::checksum::sum(seg, s)),
            0xffff
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_stays_in_bounds(
            first in proptest::prop_oneof![
                proptest::prelude::Just(0u8), proptest::prelude::Just(43u8),
                proptest::prelude::Just(44u8), proptest::prelude::Just(51u8),
                proptest::prelude::Just(60u8), proptest::prelude::any::<u8>()
            ],
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::prelude::Just(0u8), proptest::prelude::Just(43u8),
                    proptest::prelude::Just(51u8), proptest::prelude::Just(60u8),
                    proptest::prelude::Just(44u8), 0u8..4, proptest::prelude::any::<u8>()
                ],
                0..600)
        ) {
            match walk(first, &bytes) {
                Ok(ul) => proptest::prop_assert!(ul.offset <= bytes.len()),
                Err(ExtError::Fragment { at }) => {
                    proptest::prop_assert!(at + FRAGMENT_HEADER_LEN <= bytes.len());
                    proptest::prop_assert!(FragmentHeader::new_checked(&bytes[at..]).is_ok());
                }
                Err(_) => {}
            }
        }
    }
}
