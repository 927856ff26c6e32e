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
/// The longest version 1 line (HAProxy's bound, both addresses IPv6 at
/// their longest).
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
            Addrs::V4 { src, dst, sport, dport } => {
                set::<u8>(out, field::FAM, FAM_TCP4);
                set::<u32>(out, field::V4_SRC, src);
                set::<u32>(out, field::V4_DST, dst);
                set::<u16>(out, field::V4_SPORT, sport);
                set::<u16>(out, field::V4_DPORT, dport);
            }
            Addrs::V6 { src, dst, sport, dport } => {
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
    let line = std::str::from_utf8(look.get(..end).unwrap_or(&[]))
        .map_err(|_| WireError::Unsupported)?;
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
        if s.is_empty() || (s.len() > 1 && s.starts_with('0')) || !s.bytes().all(|c| c.is_ascii_digit()) {
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
