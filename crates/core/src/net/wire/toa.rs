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
    /// The segment is not a whole TCP header, or the buffer has no room
    /// for the bytes the option adds.
    Short,
}

impl ToaError {
    /// The counter-style name.
    pub fn name(self) -> &'static str {
        match self {
            ToaError::NoRoom => "toa_no_room",
            ToaError::Malformed => "toa_bad_options",
            ToaError::Short => "toa_short",
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

/// Put `toa` into the TCP segment `seg[..len]` (header, options,
/// payload) in place, as [`options_with`] lays the options out: the
/// payload moves by what the header grows (`seg` must have that room past
/// `len`), the data offset is set. Returns the segment's new length. The
/// checksum is the caller's to recompute: the pseudo header's length
/// changes with the segment's (and the IP header's length field).
pub fn insert(seg: &mut [u8], len: usize, toa: &Toa) -> Result<usize, ToaError> {
    let old_h = {
        let t = tcp::Packet::new_checked(seg.get(..len).ok_or(ToaError::Short)?)
            .map_err(|_| ToaError::Short)?;
        t.header_len()
    };
    let mut area = [0u8; AREA_MAX];
    let n = options_with(&seg[AREA_START..old_h], toa, &mut area)?;
    let new_h = AREA_START + n;
    let new_len = len - old_h + new_h;
    if seg.len() < new_len {
        return Err(ToaError::Short);
    }
    seg.copy_within(old_h..len, new_h);
    seg[AREA_START..new_h].copy_from_slice(&area[..n]);
    tcp::Packet::new_unchecked(&mut seg[..new_len]).set_header_len(new_h);
    Ok(new_len)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::wire::tcpopt;
    use proptest::prelude::*;

    #[test]
    fn the_options_byte_for_byte() {
        // DPVS's struct tcpopt_ip4_addr: opcode, opsize, port, address
        let t = Toa::V4 {
            port: 0x1f90,
            addr: 0xc0a8_0a02,
        };
        let mut b = [0u8; 20];
        assert_eq!(t.emit(&mut b), Some(8));
        assert_eq!(b[..8], [254, 8, 0x1f, 0x90, 192, 168, 10, 2]);
        // struct tcpopt_ip6_addr: the same with a 16-byte address
        let t6 = Toa::V6 {
            port: 443,
            addr: 0x2001_0db8_0000_0000_0000_0000_0000_0042,
        };
        assert_eq!(t6.emit(&mut b), Some(20));
        assert_eq!(
            b,
            [254, 20, 0x01, 0xbb, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42]
        );
        assert_eq!(t6.emit(&mut b[..19]), None);
        assert_eq!(Toa::find(&b), Some(t6));
    }

    #[test]
    fn put_first_with_alignment_kept() {
        // NOP NOP TS: 12 bytes, + 8 = 20
        let old = [1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 9];
        let t = Toa::V4 { port: 80, addr: 1 };
        let mut out = [0u8; 40];
        let n = options_with(&old, &t, &mut out).unwrap();
        assert_eq!(n, 20);
        assert_eq!(out[..8], [254, 8, 0, 80, 0, 0, 0, 1]);
        assert_eq!(out[8..20], old);
        let p = tcpopt::parse(&out[..n]);
        assert_eq!(p.ts.map(|t| (t.val, t.ecr, t.at)), Some((5, 9, 32)));
        assert_eq!(Toa::find(&out[..n]), Some(t));
    }

    #[test]
    fn room_is_made_as_dpvs_does() {
        let t6 = Toa::V6 { port: 1, addr: 2 };
        let mut out = [0u8; 40];
        // NOP NOP TS + NOP NOP SACK(1 block): 24 bytes; 24 + 20 > 40:
        // the NOPs go (10 + 10 = 20 bytes, padded to 20): fits
        let mut old = vec![1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 9, 1, 1, 5, 10];
        old.extend_from_slice(&[0, 0, 0, 7, 0, 0, 0, 8]);
        let n = options_with(&old, &t6, &mut out).unwrap();
        assert_eq!(n, 40);
        let p = tcpopt::parse(&out[..n]);
        assert_eq!(p.ts.map(|t| (t.val, t.ecr)), Some((5, 9)));
        assert_eq!(p.sack.map(|s| s.1), Some(1));
        assert_eq!(Toa::find(&out[..n]), Some(t6));
        // NOP NOP TS + NOP NOP SACK(2 blocks): 32 bytes; squeezed 10 + 18
        // + 20 = 48 still too long: the SACK blocks go
        let mut old = vec![1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 9, 1, 1, 5, 18];
        old.extend_from_slice(&[0; 16]);
        let n = options_with(&old, &t6, &mut out).unwrap();
        assert_eq!(n, 32);
        let p = tcpopt::parse(&out[..n]);
        assert_eq!(p.ts.map(|t| (t.val, t.ecr)), Some((5, 9)));
        assert_eq!(p.sack, None);
        assert_eq!(out[30..32], [0, 0]);
        // a client's own TOA option is replaced, not kept beside ours
        let forged = [254, 8, 0, 1, 10, 0, 0, 1];
        let t = Toa::V4 { port: 2, addr: 3 };
        let n = options_with(&forged, &t, &mut out).unwrap();
        assert_eq!(n, 8);
        assert_eq!(Toa::find(&out[..n]), Some(t));
        // 40 bytes of options that cannot be pruned: no room
        let mut full = Vec::new();
        for _ in 0..4 {
            full.extend_from_slice(&[8, 10, 0, 0, 0, 0, 0, 0, 0, 0]);
        }
        assert_eq!(options_with(&full, &t, &mut out), Err(ToaError::NoRoom));
        // malformed: left alone
        assert_eq!(
            options_with(&[2, 0, 0, 0], &t, &mut out),
            Err(ToaError::Malformed)
        );
        assert_eq!(
            options_with(&[2, 9, 0, 0], &t, &mut out),
            Err(ToaError::Malformed)
        );
        assert_eq!(
            options_with(&[1, 1, 1], &t, &mut out),
            Err(ToaError::Malformed)
        );
    }

    #[test]
    fn mss_clamp() {
        assert_eq!(clamp_mss(1460, 8), 1452);
        assert_eq!(clamp_mss(1460, 107), 1353);
        assert_eq!(clamp_mss(100, 50), MIN_MSS);
        assert_eq!(clamp_mss(60, 8), 60); // never raised
                                          // a SYN/ACK's MSS option, in place, checksum kept right
        let mut h = etherparse::TcpHeader::new(80, 5000, 7, 1000);
        h.syn = true;
        h.ack = true;
        h.set_options(&[
            etherparse::TcpOptionElement::Noop,
            etherparse::TcpOptionElement::Noop,
            etherparse::TcpOptionElement::Timestamp(1, 2),
            etherparse::TcpOptionElement::MaximumSegmentSize(1460),
        ])
        .unwrap();
        let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        h.checksum = h.calc_checksum_ipv4_raw(src, dst, &[]).unwrap();
        let mut seg = h.to_bytes();
        let mut t = tcp::Packet::new_checked(&mut seg[..]).unwrap();
        assert_eq!(clamp_mss_in(&mut t, 52), Some((1460, 1408)));
        assert!(t.verify_checksum(u32::from_be_bytes(src), u32::from_be_bytes(dst)));
        assert_eq!(tcpopt::parse(t.options()).mss, Some(1408));
        // no MSS option: nothing
        let mut plain = etherparse::TcpHeader::new(80, 5000, 7, 1000).to_bytes();
        let mut t = tcp::Packet::new_checked(&mut plain[..]).unwrap();
        assert_eq!(clamp_mss_in(&mut t, 52), None);
    }

    #[test]
    fn into_a_segment_in_place() {
        let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        let mut h = etherparse::TcpHeader::new(5000, 80, 1001, 65535);
        h.ack = true;
        h.acknowledgment_number = 77;
        h.set_options(&[
            etherparse::TcpOptionElement::Noop,
            etherparse::TcpOptionElement::Noop,
            etherparse::TcpOptionElement::Timestamp(5, 9),
        ])
        .unwrap();
        let payload = b"GET / HTTP/1.1\r\n";
        let mut seg = h.to_bytes().to_vec();
        seg.extend_from_slice(payload);
        let len = seg.len();
        seg.resize(len + LEN_V6, 0xee);
        let t6 = Toa::V6 {
            port: 5000,
            addr: 0x2001_0db8_0000_0000_0000_0000_0000_0001,
        };
        // no room: refused, nothing moved
        assert_eq!(insert(&mut seg[..len + 19], len, &t6), Err(ToaError::Short));
        let n = insert(&mut seg, len, &t6).unwrap();
        assert_eq!(n, len + LEN_V6);
        {
            let mut t = tcp::Packet::new_checked(&mut seg[..n]).unwrap();
            t.fill_checksum(u32::from_be_bytes(src), u32::from_be_bytes(dst));
        }
        // what another parser reads: the same header, TOA first, then the
        // timestamps, the payload unchanged
        let (p, rest) = etherparse::TcpHeader::from_slice(&seg[..n]).unwrap();
        assert_eq!(rest, payload);
        assert_eq!((p.sequence_number, p.acknowledgment_number), (1001, 77));
        assert_eq!(p.header_len(), 20 + 20 + 12);
        assert_eq!(&p.options.as_slice()[..4], &[254, 20, 0x13, 0x88]);
        assert_eq!(
            p.calc_checksum_ipv4_raw(src, dst, rest).unwrap(),
            p.checksum
        );
        assert_eq!(Toa::find(p.options.as_slice()), Some(t6));
        // a segment cut short
        assert_eq!(insert(&mut seg[..10], 10, &t6), Err(ToaError::Short));
    }

    proptest! {
        #[test]
        fn whatever_the_options(old in proptest::collection::vec(any::<u8>(), 0..11), v6: bool) {
            // an area of whole words, as a header has
            let mut old = old;
            old.truncate(old.len() / 4 * 4);
            let mut area = old.clone();
            while area.len() % 4 != 0 { area.push(0); }
            let t = if v6 { Toa::V6 { port: 9, addr: 7 } } else { Toa::V4 { port: 9, addr: 7 } };
            let mut out = [0u8; 40];
            if let Ok(n) = options_with(&area, &t, &mut out) {
                prop_assert!(n % 4 == 0 && n <= 40);
                prop_assert_eq!(Toa::find(&out[..n]), Some(t));
                // what tcpopt reads of the rest is what it read before,
                // SACK blocks aside
                let (a, b) = (tcpopt::parse(&area), tcpopt::parse(&out[..n]));
                prop_assert_eq!(tcpopt::Options::from(a), tcpopt::Options::from(b));
            }
        }
    }
}
