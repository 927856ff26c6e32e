//! The PROXY protocol's headers (HAProxy's `proxy-protocol.txt`), version
//! 1 (a text line) and version 2 (binary), for TCP over IPv4 and IPv6:
//! what a FullNAT service puts before the client's first byte so that the
//! server knows the client's address. Written into a caller's buffer, no
//! allocation; the parsers are the same formats read back (for tests and
//! checks), every length checked.
//!
//! Version 1: `PROXY TCP4 <src> <dst> <sport> <dport>\r\n` (`TCP6` with
//! IPv6 addresses), at most [`V1_MAX_LEN`] bytes.
//!
//! Version 2 (all numbers big-endian):
//!
//! ```text
//!  0..12  signature  0D 0A 0D 0A 00 0D 0A 51 55 49 54 0A
//!  12     version (high nibble, 2) and command (low nibble: 1 PROXY, 0 LOCAL)
//!  13     family (high nibble: 1 AF_INET, 2 AF_INET6) and protocol (low: 1 STREAM)
//!  14..16 length of what follows: 12 for IPv4, 36 for IPv6 (no TLVs)
//!  16..   source address, destination address, source port, destination port
//! ```
//!
//! The source is the client, the destination the address it connected to
//! (the virtual service).

use super::error::WireError;
use super::field_access::{get, set};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Version 2's signature.
pub const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
/// The longest version 1 line (HAProxy's bound, for `UNKNOWN` with both
/// addresses IPv6 at their longest; a `TCP6` line is at most 104 bytes).
pub const V1_MAX_LEN: usize = 107;
/// Version 2's fixed part, before the addresses.
pub const V2_FIXED_LEN: usize = 16;
/// Version 2 with IPv4 addresses.
pub const V2_LEN_INET: usize = V2_FIXED_LEN + 12;
/// Version 2 with IPv6 addresses.
pub const V2_LEN_INET6: usize = V2_FIXED_LEN + 36;

/// Version 2's fields.
pub mod field {
    use core::ops::Range;
    /// The signature.
    pub const SIGNATURE: Range<usize> = 0..12;
    /// Version and command.
    pub const VER_CMD: usize = 12;
    /// Family and protocol.
    pub const FAM: usize = 13;
    /// Length of the addresses (and TLVs) that follow.
    pub const LEN: Range<usize> = 14..16;
    /// IPv4: the client's address.
    pub const V4_SRC: Range<usize> = 16..20;
    /// IPv4: the service's address.
    pub const V4_DST: Range<usize> = 20..24;
    /// IPv4: the client's port.
    pub const V4_SPORT: Range<usize> = 24..26;
    /// IPv4: the service's port.
    pub const V4_DPORT: Range<usize> = 26..28;
    /// IPv6: the client's address.
    pub const V6_SRC: Range<usize> = 16..32;
    /// IPv6: the service's address.
    pub const V6_DST: Range<usize> = 32..48;
    /// IPv6: the client's port.
    pub const V6_SPORT: Range<usize> = 48..50;
    /// IPv6: the service's port.
    pub const V6_DPORT: Range<usize> = 50..52;
}

const _: () = assert!(field::V4_DPORT.end == V2_LEN_INET && field::V6_DPORT.end == V2_LEN_INET6);

/// Version 2, command PROXY.
pub const VER_CMD_PROXY: u8 = 0x21;
/// Version 2, command LOCAL.
pub const VER_CMD_LOCAL: u8 = 0x20;
/// TCP over IPv4.
pub const FAM_TCP4: u8 = 0x11;
/// TCP over IPv6.
pub const FAM_TCP6: u8 = 0x21;

/// The connection a header describes: the client's address and port
/// (source) and the service's (destination), one family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addrs {
    /// IPv4 (host-order addresses, as the wire views give them).
    V4 {
        /// Client address.
        src: u32,
        /// Service address.
        dst: u32,
        /// Client port.
        sport: u16,
        /// Service port.
        dport: u16,
    },
    /// IPv6.
    V6 {
        /// Client address.
        src: u128,
        /// Service address.
        dst: u128,
        /// Client port.
        sport: u16,
        /// Service port.
        dport: u16,
    },
}

/// A cursor writing into a caller's buffer.
struct Cursor<'a> {
    b: &'a mut [u8],
    n: usize,
}

impl Cursor<'_> {
    fn put(&mut self, s: &[u8]) -> Result<(), WireError> {
        let d = self
            .b
            .get_mut(self.n..self.n + s.len())
            .ok_or(WireError::Truncated)?;
        d.copy_from_slice(s);
        self.n += s.len();
        Ok(())
    }
}

impl std::fmt::Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.put(s.as_bytes()).map_err(|_| std::fmt::Error)
    }
}

impl Addrs {
    /// The ports (client, service).
    pub fn ports(&self) -> (u16, u16) {
        match *self {
            Addrs::V4 { sport, dport, .. } | Addrs::V6 { sport, dport, .. } => (sport, dport),
        }
    }

    /// Write the version 1 line at the start of `out`: its length, or
    /// `Truncated` (with `out` partly written) when `out` is too short
    /// ([`V1_MAX_LEN`] is always enough).
    pub fn emit_v1(&self, out: &mut [u8]) -> Result<usize, WireError> {
        use std::fmt::Write;
        let mut c = Cursor { b: out, n: 0 };
        let (sport, dport) = self.ports();
        let r = match *self {
            Addrs::V4 { src, dst, .. } => write!(
                c,
                "PROXY TCP4 {} {} {sport} {dport}\r\n",
                Ipv4Addr::from(src),
                Ipv4Addr::from(dst)
            ),
            Addrs::V6 { src, dst, .. } => write!(
                c,
                "PROXY TCP6 {} {} {sport} {dport}\r\n",
                Ipv6Addr::from(src),
                Ipv6Addr::from(dst)
            ),
        };
        r.map_err(|_| WireError::Truncated)?;
        Ok(c.n)
    }

    /// The version 1 line's length.
    pub fn v1_len(&self) -> usize {
        let mut b = [0u8; V1_MAX_LEN];
        self.emit_v1(&mut b).unwrap_or(V1_MAX_LEN)
    }

    /// The version 2 header's length ([`V2_LEN_INET`] or [`V2_LEN_INET6`]).
    pub fn v2_len(&self) -> usize {
        match self {
            Addrs::V4 { .. } => V2_LEN_INET,
            Addrs::V6 { .. } => V2_LEN_INET6,
        }
    }

    /// Write the version 2 header (command PROXY, no TLVs) at the start
    /// of `out`: its length, or `Truncated` (nothing written) when `out`
    /// is shorter than [`Addrs::v2_len`].
    pub fn emit_v2(&self, out: &mut [u8]) -> Result<usize, WireError> {
        let len = self.v2_len();
        let out = out.get_mut(..len).ok_or(WireError::Truncated)?;
        out[field::SIGNATURE].copy_from_slice(&V2_SIGNATURE);
        set::<u8>(out, field::VER_CMD, VER_CMD_PROXY);
        set::<u16>(out, field::LEN, (len - V2_FIXED_LEN) as u16);
        match *self {
            Addrs::V4 {
                src,
                dst,
                sport,
                dport,
            } => {
                set::<u8>(out, field::FAM, FAM_TCP4);
                set::<u32>(out, field::V4_SRC, src);
                set::<u32>(out, field::V4_DST, dst);
                set::<u16>(out, field::V4_SPORT, sport);
                set::<u16>(out, field::V4_DPORT, dport);
            }
            Addrs::V6 {
                src,
                dst,
                sport,
                dport,
            } => {
                set::<u8>(out, field::FAM, FAM_TCP6);
                set::<u128>(out, field::V6_SRC, src);
                set::<u128>(out, field::V6_DST, dst);
                set::<u16>(out, field::V6_SPORT, sport);
                set::<u16>(out, field::V6_DPORT, dport);
            }
        }
        Ok(len)
    }
}

/// Read a version 2 header (command PROXY, TCP over IPv4 or IPv6) at the
/// start of `b`: the addresses and the header's whole length (TLVs after
/// the addresses skipped). `Truncated` when `b` ends first,
/// `Unsupported` for anything else.
pub fn parse_v2(b: &[u8]) -> Result<(Addrs, usize), WireError> {
    if b.len() < V2_FIXED_LEN {
        return Err(WireError::Truncated);
    }
    if b.get(field::SIGNATURE) != Some(&V2_SIGNATURE[..]) {
        return Err(WireError::Unsupported);
    }
    let total = V2_FIXED_LEN + get::<u16>(b, field::LEN) as usize;
    let h = b.get(..total).ok_or(WireError::Truncated)?;
    if get::<u8>(h, field::VER_CMD) != VER_CMD_PROXY {
        return Err(WireError::Unsupported);
    }
    let addrs = match get::<u8>(h, field::FAM) {
        FAM_TCP4 if total >= V2_LEN_INET => Addrs::V4 {
            src: get(h, field::V4_SRC),
            dst: get(h, field::V4_DST),
            sport: get(h, field::V4_SPORT),
            dport: get(h, field::V4_DPORT),
        },
        FAM_TCP6 if total >= V2_LEN_INET6 => Addrs::V6 {
            src: get(h, field::V6_SRC),
            dst: get(h, field::V6_DST),
            sport: get(h, field::V6_SPORT),
            dport: get(h, field::V6_DPORT),
        },
        _ => return Err(WireError::Unsupported),
    };
    Ok((addrs, total))
}

/// Read a version 1 line (`TCP4` or `TCP6`) at the start of `b`: the
/// addresses and the line's length with its CRLF. `Truncated` when no
/// CRLF comes within [`V1_MAX_LEN`] bytes, `Unsupported` for anything
/// else.
pub fn parse_v1(b: &[u8]) -> Result<(Addrs, usize), WireError> {
    let look = b.get(..b.len().min(V1_MAX_LEN)).unwrap_or(b);
    let end = look
        .windows(2)
        .position(|w| w == b"\r\n")
        .ok_or(WireError::Truncated)?;
    let line =
        std::str::from_utf8(look.get(..end).unwrap_or(&[])).map_err(|_| WireError::Unsupported)?;
    let mut w = line.split(' ');
    let bad = WireError::Unsupported;
    if w.next() != Some("PROXY") {
        return Err(bad);
    }
    let proto = w.next().ok_or(bad)?;
    let (src, dst) = (w.next().ok_or(bad)?, w.next().ok_or(bad)?);
    let port = |s: Option<&str>| -> Result<u16, WireError> {
        let s = s.ok_or(bad)?;
        // decimal, no sign, no leading zero (HAProxy's rule)
        if s.is_empty()
            || (s.len() > 1 && s.starts_with('0'))
            || !s.bytes().all(|c| c.is_ascii_digit())
        {
            return Err(bad);
        }
        s.parse().map_err(|_| bad)
    };
    let (sport, dport) = (port(w.next())?, port(w.next())?);
    if w.next().is_some() {
        return Err(bad);
    }
    let addrs = match proto {
        "TCP4" => Addrs::V4 {
            src: src.parse::<Ipv4Addr>().map_err(|_| bad)?.into(),
            dst: dst.parse::<Ipv4Addr>().map_err(|_| bad)?.into(),
            sport,
            dport,
        },
        "TCP6" => Addrs::V6 {
            src: src.parse::<Ipv6Addr>().map_err(|_| bad)?.into(),
            dst: dst.parse::<Ipv6Addr>().map_err(|_| bad)?.into(),
            sport,
            dport,
        },
        _ => return Err(bad),
    };
    Ok((addrs, end + 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A version 2 header HAProxy wrote (172.19.0.1:42578 to
    /// 172.19.0.3:80), byte for byte.
    const HAPROXY_V2: [u8; 28] = [
        0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x11, 0x00,
        0x0c, 0xac, 0x13, 0x00, 0x01, 0xac, 0x13, 0x00, 0x03, 0xa6, 0x52, 0x00, 0x50,
    ];

    fn v4(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Addrs {
        Addrs::V4 {
            src: u32::from_be_bytes(src),
            dst: u32::from_be_bytes(dst),
            sport,
            dport,
        }
    }

    #[test]
    fn v2_ipv4_is_what_haproxy_writes() {
        let a = v4([172, 19, 0, 1], [172, 19, 0, 3], 42578, 80);
        let mut b = [0u8; 64];
        assert_eq!(a.emit_v2(&mut b), Ok(28));
        assert_eq!(b[..28], HAPROXY_V2);
        assert_eq!(parse_v2(&HAPROXY_V2), Ok((a, 28)));
        // too short: nothing written
        let mut s = [0xeeu8; 27];
        assert_eq!(a.emit_v2(&mut s), Err(WireError::Truncated));
        assert!(s.iter().all(|&x| x == 0xee));
    }

    #[test]
    fn v2_ipv6_layout() {
        let a = Addrs::V6 {
            src: 0x2001_0db8_0000_0000_0000_0000_0000_0001,
            dst: 0x2001_0db8_0000_0000_0000_0000_0000_00ff,
            sport: 0x1234,
            dport: 443,
        };
        let mut b = [0u8; 52];
        assert_eq!(a.emit_v2(&mut b), Ok(52));
        let mut want = Vec::new();
        want.extend_from_slice(b"\x0d\x0a\x0d\x0a\x00\x0d\x0a\x51\x55\x49\x54\x0a");
        want.extend_from_slice(&[0x21, 0x21, 0x00, 36]);
        want.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        want.extend_from_slice(&[
            0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
        ]);
        want.extend_from_slice(&[0x12, 0x34, 0x01, 0xbb]);
        assert_eq!(&b[..], &want[..]);
        assert_eq!(parse_v2(&b), Ok((a, 52)));
    }

    #[test]
    fn v2_parse_refuses() {
        let mut b = HAPROXY_V2;
        assert_eq!(parse_v2(&b[..27]), Err(WireError::Truncated));
        assert_eq!(parse_v2(&b[..10]), Err(WireError::Truncated));
        b[12] = VER_CMD_LOCAL;
        assert_eq!(parse_v2(&b), Err(WireError::Unsupported));
        b[12] = VER_CMD_PROXY;
        b[13] = 0x12; // UDP
        assert_eq!(parse_v2(&b), Err(WireError::Unsupported));
        b[13] = FAM_TCP4;
        b[15] = 8; // too short for IPv4 addresses
        assert_eq!(parse_v2(&b), Err(WireError::Unsupported));
        b[0] = 0;
        assert_eq!(parse_v2(&b), Err(WireError::Unsupported));
    }

    #[test]
    fn v1_lines() {
        let a = v4([192, 168, 0, 1], [192, 168, 0, 11], 56324, 443);
        let mut b = [0u8; V1_MAX_LEN];
        let n = a.emit_v1(&mut b).unwrap();
        assert_eq!(
            &b[..n],
            b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n"
        );
        assert_eq!(a.v1_len(), n);
        assert_eq!(parse_v1(&b[..n]), Ok((a, n)));
        // the longest TCP6 line: 104 bytes (HAProxy's 107 is UNKNOWN's)
        let long = Addrs::V6 {
            src: u128::MAX,
            dst: u128::MAX,
            sport: 65535,
            dport: 65535,
        };
        let n = long.emit_v1(&mut b).unwrap();
        assert_eq!(n, 104);
        assert!(b.starts_with(b"PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:"));
        assert_eq!(parse_v1(&b), Ok((long, 104)));
        // too short: an error, not a panic
        assert_eq!(long.emit_v1(&mut b[..50]), Err(WireError::Truncated));
        // refusals
        for bad in [
            &b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2"[..],
            b"PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n",
            b"PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n",
            b"PROXY TCP4 1.2.3.4 5.6.7.8 1 65536\r\n",
            b"PROXY TCP4 ::1 5.6.7.8 1 2\r\n",
            b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",
            b"proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n",
        ] {
            assert!(parse_v1(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    fn addrs() -> impl Strategy<Value = Addrs> {
        prop_oneof![
            (any::<u32>(), any::<u32>(), any::<u16>(), any::<u16>()).prop_map(
                |(src, dst, sport, dport)| Addrs::V4 {
                    src,
                    dst,
                    sport,
                    dport
                }
            ),
            (any::<u128>(), any::<u128>(), any::<u16>(), any::<u16>()).prop_map(
                |(src, dst, sport, dport)| Addrs::V6 {
                    src,
                    dst,
                    sport,
                    dport
                }
            ),
        ]
    }

    proptest! {
        #[test]
        fn round_trips(a in addrs(), tail in proptest::collection::vec(any::<u8>(), 0..8)) {
            let mut b = [0u8; 128];
            let n = a.emit_v1(&mut b).unwrap();
            prop_assert!(n <= V1_MAX_LEN);
            prop_assert_eq!(n, a.v1_len());
            prop_assert_eq!(parse_v1(&b[..n]), Ok((a, n)));
            let n = a.emit_v2(&mut b).unwrap();
            prop_assert_eq!(n, a.v2_len());
            let mut with = b[..n].to_vec();
            with.extend_from_slice(&tail);
            prop_assert_eq!(parse_v2(&with), Ok((a, n)));
        }

        #[test]
        fn parsers_never_panic(b in proptest::collection::vec(any::<u8>(), 0..120)) {
            let _ = parse_v1(&b);
            let _ = parse_v2(&b);
            let mut s = V2_SIGNATURE.to_vec();
            s.extend_from_slice(&b);
            let _ = parse_v2(&s);
        }
    }
}
