//! TOA, the TCP option that carries the client's address to a FullNAT
//! real server, in DPVS's format (`struct tcpopt_ip4_addr` and
//! `tcpopt_ip6_addr` of DPVS's `include/ipvs/proto_tcp.h`, read by its
//! `toa` kernel module on the server), and the MSS clamp a header
//! inserted on the way needs.
//!
//! ```text
//!  IPv4, 8 bytes:   kind 254 | length 8  | client port (2) | client address (4)
//!  IPv6, 20 bytes:  kind 254 | length 20 | client port (2) | client address (16)
//! ```
//!
//! The family is the client's (an IPv6 client reaching an IPv4 server
//! through NAT64 gets the 20-byte option). DPVS puts the option first in
//! the options area, right after the 20-byte header, on the client's
//! segments after the handshake (the ACK that completes it first: the
//! module reads the option from the segment that creates the server's
//! socket).
//!
//! Growing the header: both lengths are multiples of 4, so the data
//! offset grows by 2 or 5 words and the other options keep their
//! alignment. The options area holds at most 40 bytes; when the option
//! does not fit, [`options_with`] makes room as DPVS's
//! `tcp_in_prune_options` does, in this order: a TOA option already
//! there (a client's forgery) is removed; the padding (NOP, and what
//! follows an end-of-list) is squeezed out; SACK blocks are dropped (the
//! sender learns the same from later segments). If it still does not
//! fit, the segment goes without the option ([`ToaError::NoRoom`], a
//! counted event; the segments after the handshake's ACK are only a
//! second chance).

use super::field_access::{get, set};
use super::tcp;
use super::tcpopt::{kind as opt, AREA_MAX, AREA_START};

/// The option kind (not assigned by IANA: DPVS's).
pub const KIND: u8 = 254;
/// The option's length for an IPv4 client.
pub const LEN_V4: usize = 8;
/// The option's length for an IPv6 client.
pub const LEN_V6: usize = 20;
/// Linux's smallest MSS (`TCP_MIN_MSS`): a clamp never goes below it.
pub const MIN_MSS: u16 = 88;

/// The option's fields, from its first byte.
pub mod field {
    use core::ops::Range;
    /// Kind.
    pub const KIND: usize = 0;
    /// Length.
    pub const LEN: usize = 1;
    /// Client port.
    pub const PORT: Range<usize> = 2..4;
    /// IPv4 client address.
    pub const ADDR4: Range<usize> = 4..8;
    /// IPv6 client address.
    pub const ADDR6: Range<usize> = 4..20;
    /// The MSS option's value, from the option's first byte.
    pub const MSS_VALUE: Range<usize> = 2..4;
}

const _: () = assert!(field::ADDR4.end == LEN_V4 && field::ADDR6.end == LEN_V6);

/// The client a TOA option names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Toa {
    /// An IPv4 client (host-order address).
    V4 {
        /// Client port.
        port: u16,
        /// Client address.
        addr: u32,
    },
    /// An IPv6 client.
    V6 {
        /// Client port.
        port: u16,
        /// Client address.
        addr: u128,
    },
}

/// Why the option could not be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToaError {
    /// The options area cannot hold it, even pruned.
    NoRoom,
    /// The options area is malformed (a length below 2 or past the
    /// area): left alone.
    Malformed,
}

impl ToaError {
    /// The counter-style name.
    pub fn name(self) -> &'static str {
        match self {
            ToaError::NoRoom => "toa_no_room",
            ToaError::Malformed => "toa_bad_options",
        }
    }
}

impl Toa {
    /// The option's length.
    pub fn len(&self) -> usize {
        match self {
            Toa::V4 { .. } => LEN_V4,
            Toa::V6 { .. } => LEN_V6,
        }
    }

    /// Never empty (an option is at least 8 bytes).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Write the option at the start of `out`: its length, or None
    /// (nothing written) when `out` is shorter.
    pub fn emit(&self, out: &mut [u8]) -> Option<usize> {
        let len = self.len();
        let o = out.get_mut(..len)?;
        set::<u8>(o, field::KIND, KIND);
        set::<u8>(o, field::LEN, len as u8);
        match *self {
            Toa::V4 { port, addr } => {
                set::<u16>(o, field::PORT, port);
                set::<u32>(o, field::ADDR4, addr);
            }
            Toa::V6 { port, addr } => {
                set::<u16>(o, field::PORT, port);
                set::<u128>(o, field::ADDR6, addr);
            }
        }
        Some(len)
    }

    /// The first TOA option of an options area (what the server's module
    /// reads), if any and well formed.
    pub fn find(opts: &[u8]) -> Option<Toa> {
        let mut found = None;
        walk(opts, |k, _, o| {
            if k == KIND && found.is_none() {
                found = match o.len() {
                    LEN_V4 => Some(Toa::V4 {
                        port: get(o, field::PORT),
                        addr: get(o, field::ADDR4),
                    }),
                    LEN_V6 => Some(Toa::V6 {
                        port: get(o, field::PORT),
                        addr: get(o, field::ADDR6),
                    }),
                    _ => None,
                };
            }
        })
        .ok()?;
        found
    }
}

/// Call `f(kind, offset in opts, option bytes)` for each option of `opts` but NOP, up to
/// the end-of-list; the offset where the walk ended. `Malformed` for a
/// length below 2 or past the area (options of more than 40 bytes are
/// not looked at).
fn walk(opts: &[u8], mut f: impl FnMut(u8, usize, &[u8])) -> Result<usize, ToaError> {
    let opts = opts.get(..opts.len().min(AREA_MAX)).unwrap_or(&[]);
    let mut i = 0;
    while let Some(&k) = opts.get(i) {
        match k {
            opt::END => return Ok(i),
            opt::NOP => i += 1,
            _ => {
                let len = *opts.get(i + 1).ok_or(ToaError::Malformed)? as usize;
                let o = opts.get(i..i + len).filter(|_| len >= 2);
                f(k, i, o.ok_or(ToaError::Malformed)?);
                i += len;
            }
        }
    }
    Ok(i)
}

/// The options area `old` of a segment with `toa` put first, into `out`:
/// the new area's length (a multiple of 4, at most 40), pruned as the
/// module's documentation says when it does not fit otherwise. The
/// caller grows the header by the difference (data offset, IP length,
/// checksum).
pub fn options_with(old: &[u8], toa: &Toa, out: &mut [u8; AREA_MAX]) -> Result<usize, ToaError> {
    let t = toa.len();
    let mut has_toa = false;
    walk(old, |k, _, _| has_toa |= k == KIND)?;
    if old.len() % 4 != 0 || old.len() > AREA_MAX {
        return Err(ToaError::Malformed);
    }
    // as it is: the option, then the area unchanged (alignment kept)
    if !has_toa && t + old.len() <= AREA_MAX {
        toa.emit(out);
        out[t..t + old.len()].copy_from_slice(old);
        return Ok(t + old.len());
    }
    // squeezed: the option, then every other option but NOP (and SACK
    // blocks when that is not enough), end-of-list padding
    for keep_sack in [true, false] {
        let mut n = t;
        let mut fits = true;
        walk(old, |k, _, o| {
            if k == KIND || (k == opt::SACK && !keep_sack) {
                return;
            }
            match out.get_mut(n..n + o.len()) {
                Some(d) => d.copy_from_slice(o),
                None => fits = false,
            }
            n += o.len();
        })?;
        let padded = n.div_ceil(4) * 4;
        if fits && padded <= AREA_MAX {
            toa.emit(out);
            out[n..padded].fill(opt::END);
            return Ok(padded);
        }
    }
    Err(ToaError::NoRoom)
}

/// An MSS lowered by `grow` bytes that a header inserted on the way adds
/// to a segment, never below [`MIN_MSS`] (nor raised).
pub fn clamp_mss(mss: u16, grow: u16) -> u16 {
    mss.saturating_sub(grow).max(MIN_MSS.min(mss))
}

/// Where the MSS option of a segment's options area starts, from the
/// start of the TCP header.
pub fn mss_at(opts: &[u8]) -> Option<usize> {
    let mut at = None;
    walk(opts, |k, i, o| {
        if k == opt::MSS && o.len() == 4 && at.is_none() {
            at = Some(AREA_START + i);
        }
    })
    .ok()?;
    at
}

/// Clamp the MSS option of a SYN or SYN/ACK in place by `grow` bytes
/// ([`clamp_mss`]), updating the checksum: the old and new MSS, or None
/// when the segment has no MSS option (its peer then assumes 536 for
/// IPv4, 1220 for IPv6: the caller may add one).
pub fn clamp_mss_in<T: AsRef<[u8]> + AsMut<[u8]>>(
    t: &mut tcp::Packet<T>,
    grow: u16,
) -> Option<(u16, u16)> {
    let at = mss_at(t.options())?;
    let word = t.u32_at(at);
    let old = word as u16;
    let new = clamp_mss(old, grow);
    if new != old {
        t.set_u32_update_checksum(at, (word & 0xffff_0000) | new as u32);
    }
    Some((old, new))
}
