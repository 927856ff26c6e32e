//! The fast path of [`super::classify`]: a valid, untagged, option-less
//! IPv4 TCP or UDP packet, read through one up-front length check.
//!
//! [`classify_fast`] answers `Some(meta)` only when the slow path
//! ([`super::classify_slow`]) would return `Classified::Ipv4(meta)` with the
//! very same `meta`; for anything else (VLAN tags, IP options, ICMP, ARP,
//! frames shorter than [`FAST_LEN`], and every packet the slow path drops)
//! it answers `None` and the caller runs the slow path, so drop reasons are
//! decided in one place only.
//!
//! The checks mirror the slow path exactly, for this shape of packet:
//! - Ethernet: outer EtherType 0x0800 (so untagged), source MAC not a group
//!   address;
//! - IPv4 (`ipv4::Packet::check`): version 4 and IHL 5 (byte 0x45), total
//!   length in `20..=frame.len() - 14`, header checksum valid, not a
//!   fragment (MF clear, offset 0), TTL non-zero, source not martian,
//!   destination unicast;
//! - TCP (`tcp::Packet::new_checked` on the IP payload of `total_len - 20`
//!   bytes): data offset at least 20 and at most the IP payload;
//! - UDP (`udp::Packet::new_checked`): UDP length at least 8 and at most the
//!   IP payload.
//!
//! The IP payload reaching at least the minimum L4 header follows from the
//! last check of each (data offset >= 20 and <= payload, UDP length >= 8 and
//! <= payload).

use super::{is_martian_src, is_not_unicast_dst};
use crate::net::meta::{FlowKey, FlowKey6, PacketMeta, PacketMeta6, PROTO_TCP, PROTO_UDP};

/// Bytes the fast path reads: Ethernet (14) + IPv4 without options (20) +
/// the first 14 bytes of the L4 header (TCP ports to flags; the whole
/// 8-byte UDP header). Shorter frames take the slow path.
pub(crate) const FAST_LEN: usize = 14 + 20 + 14;

/// Offset of the IPv4 header in an untagged frame.
const L3: usize = 14;
/// Offset of the L4 header behind an option-less IPv4 header.
const L4: usize = L3 + 20;

/// Big-endian `u16` at `at` (in bounds: every caller passes a constant).
#[inline(always)]
fn be16<const N: usize>(h: &[u8; N], at: usize) -> u16 {
    u16::from_be_bytes([h[at], h[at + 1]])
}

/// Big-endian `u32` at `at`.
#[inline(always)]
fn be32(h: &[u8; FAST_LEN], at: usize) -> u32 {
    u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]])
}

/// Little-endian `u32` at `at` (a plain load on x86 and ARM), widened.
#[inline(always)]
fn le32(h: &[u8; FAST_LEN], at: usize) -> u64 {
    u32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]) as u64
}

/// True when the 20-byte IPv4 header at [`L3`] has a valid checksum, i.e.
/// the slow path's `fold(sum(header)) == 0xffff`.
///
/// The one's-complement sum `S` of the ten big-endian 16-bit words folds to
/// 0xffff exactly when `S != 0` and `S % 0xffff == 0` (folding keeps the
/// value modulo 0xffff and maps a non-zero sum into `1..=0xffff`). Here the
/// five 32-bit words are read little-endian (plain loads, no byte swaps)
/// and summed in a `u64`: a 32-bit word is `2^16 * hi + lo`, congruent to
/// `hi + lo` (2^16 = 1 mod 0xffff), and a byte-swapped 16-bit word `b:a`
/// is `256 * (a:b)` modulo 0xffff. So this sum is congruent to `256 * S`,
/// and since 256 is invertible modulo 0xffff, it is a multiple of 0xffff
/// exactly when `S` is; it is zero exactly when every byte is zero, like `S`.
#[inline(always)]
fn ip_header_checksum_ok(h: &[u8; FAST_LEN]) -> bool {
    let s = le32(h, L3) + le32(h, L3 + 4) + le32(h, L3 + 8) + le32(h, L3 + 12) + le32(h, L3 + 16);
    s != 0 && s % 0xffff == 0
}

/// `is_not_unicast_dst(a)` when `dst`, else `is_martian_src(a)`.
const fn bad_addr(dst: bool, a: u32) -> bool {
    if dst {
        is_not_unicast_dst(a)
    } else {
        is_martian_src(a)
    }
}

/// A 256-entry table of [`bad_addr`] by first octet. The predicates depend
/// on the first octet only; this is checked at compile time on a few
/// patterns of the low 24 bits, so a change that breaks it fails the build.
const fn octet_table(dst: bool) -> [bool; 256] {
    const LOW: [u32; 5] = [
        0x00ff_ffff,
        0x0000_0001,
        0x00ff_ff00,
        0x0000_00ff,
        0x0080_0000,
    ];
    let mut t = [false; 256];
    let mut o = 0;
    while o < 256 {
        let a = (o as u32) << 24;
        let v = bad_addr(dst, a);
        let mut i = 0;
        while i < LOW.len() {
            assert!(
                bad_addr(dst, a | LOW[i]) == v,
                "address predicate depends on more than the first octet"
            );
            i += 1;
        }
        t[o] = v;
        o += 1;
    }
    t
}

/// `MARTIAN_SRC[a >> 24] == is_martian_src(a)`.
static MARTIAN_SRC: [bool; 256] = octet_table(false);
/// `NOT_UNICAST_DST[a >> 24] == is_not_unicast_dst(a)`.
static NOT_UNICAST_DST: [bool; 256] = octet_table(true);

/// The fast path: `Some(meta)` exactly when the frame is a valid untagged
/// IPv4 (IHL 5) TCP or UDP packet of at least [`FAST_LEN`] bytes, in which
/// case the slow path would return `Classified::Ipv4(meta)`; `None`
/// otherwise (the caller then runs the slow path).
#[inline(always)]
pub(crate) fn classify_fast(frame: &[u8], port: u16) -> Option<PacketMeta> {
    let mut m = PacketMeta::default();
    classify_fast_into(frame, port, &mut m).then_some(m)
}

/// [`classify_fast`] writing its answer into `*meta`: `true` with `*meta`
/// exactly what [`classify_fast`] returns; `false` with `*meta` untouched
/// (every check precedes the store).
#[inline(always)]
pub(crate) fn classify_fast_into(frame: &[u8], port: u16, meta: &mut PacketMeta) -> bool {
    let Some(h) = frame.get(..FAST_LEN) else {
        return false;
    };
    let Ok(h): Result<&[u8; FAST_LEN], _> = h.try_into() else {
        return false;
    };
    // EtherType IPv4 (untagged), version 4 with IHL 5; unicast source MAC.
    if be32(h, 12) >> 8 != 0x08_00_45 || h[6] & 1 != 0 {
        return false;
    }
    let tl = be16(h, L3 + 2);
    // frame.len() >= FAST_LEN > L3, no underflow.
    if tl < 20 || tl as usize > frame.len() - L3 {
        return false;
    }
    if !ip_header_checksum_ok(h) {
        return false;
    }
    let flags_frag = be16(h, L3 + 6);
    let ttl = h[L3 + 8];
    if flags_frag & 0x3fff != 0 || ttl == 0 {
        return false;
    }
    let (src, dst) = (be32(h, L3 + 12), be32(h, L3 + 16));
    if MARTIAN_SRC[(src >> 24) as usize] | NOT_UNICAST_DST[(dst >> 24) as usize] {
        return false;
    }
    let proto = h[L3 + 9];
    let ip_payload = tl - 20;
    let tcp_flags = match proto {
        PROTO_TCP => {
            let doff = ((h[L4 + 12] >> 4) as u16) * 4;
            if doff < 20 || doff > ip_payload {
                return false;
            }
            h[L4 + 13]
        }
        PROTO_UDP => {
            let ulen = be16(h, L4 + 4);
            if ulen < 8 || ulen > ip_payload {
                return false;
            }
            0
        }
        _ => return false,
    };
    *meta = PacketMeta {
        port,
        vlan: None,
        l3_off: L3 as u16,
        l4_off: L4 as u16,
        ip_len: tl,
        key: FlowKey {
            src,
            dst,
            sport: be16(h, L4),
            dport: be16(h, L4 + 2),
            proto,
        },
        tcp_flags,
        ttl,
        df: flags_frag & 0x4000 != 0,
        icmp: None,
    };
    true
}

/// Bytes the IPv6 fast path reads: Ethernet (14) + the fixed IPv6 header
/// (40) + the first 14 bytes of TCP (8 of UDP). Shorter frames take the
/// slow path.
pub(crate) const FAST6_LEN: usize = 14 + 40 + 14;

/// Offset of the L4 header behind an IPv6 header without extensions.
const L4_6: usize = L3 + 40;

/// Big-endian `u128` at `at`.
#[inline(always)]
fn be128(h: &[u8; FAST6_LEN], at: usize) -> u128 {
    let mut b = [0u8; 16];
    b.copy_from_slice(&h[at..at + 16]);
    u128::from_be_bytes(b)
}

/// The IPv6 fast path: `Some(meta)` exactly when the frame is an untagged
/// IPv6 packet whose fixed header is followed directly by TCP or UDP (no
/// extension header), valid as the slow path checks it (version 6,
/// 40 + payload length within the frame and at most 65535, hop limit
/// non-zero, source neither multicast nor ::1, destination neither ::,
/// ::1 nor multicast; TCP data offset at least 20 and at most the payload,
/// UDP length at least 8 and at most the payload), of at least
/// [`FAST6_LEN`] bytes: then the slow path would return
/// `Classified::Ipv6(meta)` with this very `meta`. `None` for everything
/// else (extension headers, ICMPv6, VLAN tags, short frames, every drop).
/// Out of line: inlined into the burst loop, it cost IPv4's fast path
/// instructions it never executes (register pressure).
#[inline(never)]
pub(crate) fn classify_fast6(frame: &[u8], port: u16) -> Option<PacketMeta6> {
    let h: &[u8; FAST6_LEN] = frame.get(..FAST6_LEN)?.try_into().ok()?;
    // EtherType IPv6 (untagged), version 6; unicast source MAC
    if be16(h, 12) != 0x86dd || h[L3] >> 4 != 6 || h[6] & 1 != 0 {
        return None;
    }
    let pl = be16(h, L3 + 4);
    let total = 40 + pl as usize;
    if total > frame.len() - L3 || total > u16::MAX as usize {
        return None;
    }
    let (proto, hop) = (h[L3 + 6], h[L3 + 7]);
    let (src, dst) = (be128(h, L3 + 8), be128(h, L3 + 24));
    // multicast: ff00::/8; ::1 and :: are neither source nor destination
    if hop == 0 || src >> 120 == 0xff || src == 1 || dst >> 120 == 0xff || dst <= 1 {
        return None;
    }
    let tcp_flags = match proto {
        PROTO_TCP => {
            let doff = ((h[L4_6 + 12] >> 4) as u16) * 4;
            if doff < 20 || doff > pl {
                return None;
            }
            h[L4_6 + 13]
        }
        PROTO_UDP => {
            let ulen = be16(h, L4_6 + 4);
            if ulen < 8 || ulen > pl {
                return None;
            }
            0
        }
        _ => return None,
    };
    Some(PacketMeta6 {
        port,
        vlan: None,
        l3_off: L3 as u16,
        l4_off: L4_6 as u16,
        ip_len: total as u16,
        key: FlowKey6 {
            src,
            dst,
            sport: be16(h, L4_6),
            dport: be16(h, L4_6 + 2),
            proto,
        },
        tcp_flags,
        hop_limit: hop,
        icmp: None,
    })
}

/// The lookup key an IPv6 frame will be classified with, read without
/// classifying it, for the burst path's early hash and prefetch: `Some`
/// for an untagged IPv6 frame of at least `FAST6_LEN` bytes whose first
/// next header is TCP or UDP. Checks nothing else, so it may answer for a
/// frame classify then drops; but whenever classify answers such a frame
/// with an IPv6 TCP/UDP meta (no ICMPv6 quote), its key is this one (no
/// extension header can come first, and the tuple's offsets are fixed).
#[inline]
pub fn peek_key6(frame: &[u8]) -> Option<FlowKey6> {
    let h: &[u8; FAST6_LEN] = frame.get(..FAST6_LEN)?.try_into().ok()?;
    let proto = h[L3 + 6];
    if be16(h, 12) != 0x86dd || (proto != PROTO_TCP && proto != PROTO_UDP) {
        return None;
    }
    Some(FlowKey6 {
        src: be128(h, L3 + 8),
        dst: be128(h, L3 + 24),
        sport: be16(h, L4_6),
        dport: be16(h, L4_6 + 2),
        proto,
    })
}
