//! The fast path of [`super::classify`]: a valid, untagged, option-less
//! IPv4 TCP or UDP packet, read through one up-front length check.
//!
//! [`classify_fast`] answers `Some(meta)` only when the slow path
//! ([`super::slow::classify_slow`]) would return `Classified::Ipv4(meta)` with the
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

use super::addr_class::{is_martian_src, is_not_unicast_dst};
use crate::net::meta::{FlowKey, FlowKey6, PacketMeta, PacketMeta6, PROTO_TCP, PROTO_UDP};
use crate::net::wire::ethernet::field::{ETHERTYPE, SRC as ETH_SRC};
use crate::net::wire::ethernet::{self, ethertype};
use crate::net::wire::ipv4::{self, field as ip4};
use crate::net::wire::ipv6::{self, field as ip6};
use crate::net::wire::tcp::{self, field as tcpf};
use crate::net::wire::udp::{self, field as udpf};
use crate::net::wire::{be128_at, be16_at as be16, be32_at, le32_at};

/// Offset of the IPv4 (or IPv6) header in an untagged frame.
const L3: usize = ethernet::HEADER_LEN;
/// Offset of the L4 header behind an option-less IPv4 header.
const L4: usize = L3 + ipv4::MIN_HEADER_LEN;
/// The part of the L4 header the fast paths read: TCP's ports to flags,
/// which covers the whole UDP header.
const L4_READ: usize = tcpf::FLAGS + 1;
const _: () = assert!(udp::HEADER_LEN <= L4_READ);
// Both transports' ports are read at TCP's offsets.
const _: () = assert!(
    tcpf::SRC_PORT.start == udpf::SRC_PORT.start && tcpf::DST_PORT.start == udpf::DST_PORT.start
);

/// Bytes the fast path reads: Ethernet (14) + IPv4 without options (20) +
/// the first 14 bytes of the L4 header (TCP ports to flags; the whole
/// 8-byte UDP header). Shorter frames take the slow path.
pub(crate) const FAST_LEN: usize = L4 + L4_READ;

/// EtherType IPv4 followed by version 4 and IHL 5, as the big-endian
/// `u32` at [`ETHERTYPE`] reads them (shifted right past the DSCP byte).
const IPV4_NO_OPTIONS: u32 = (ethertype::IPV4 as u32) << 8 | ipv4::VER_IHL_NO_OPTIONS as u32;

/// Big-endian `u32` at `at`.
#[inline(always)]
fn be32(h: &[u8; FAST_LEN], at: usize) -> u32 {
    be32_at(h, at)
}

/// Little-endian `u32` at `at` (a plain load on x86 and ARM), widened.
#[inline(always)]
fn le32(h: &[u8; FAST_LEN], at: usize) -> u64 {
    le32_at(h, at) as u64
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
    // the five 32-bit words, named by the field each starts with
    let s = le32(h, L3 + ip4::VER_IHL)
        + le32(h, L3 + ip4::IDENT.start)
        + le32(h, L3 + ip4::TTL)
        + le32(h, L3 + ip4::SRC.start)
        + le32(h, L3 + ip4::DST.start);
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
    if be32(h, ETHERTYPE.start) >> 8 != IPV4_NO_OPTIONS || h[ETH_SRC.start] & 1 != 0 {
        return false;
    }
    let tl = be16(h, L3 + ip4::LENGTH.start);
    // frame.len() >= FAST_LEN > L3, no underflow.
    if tl < ipv4::MIN_HEADER_LEN as u16 || tl as usize > frame.len() - L3 {
        return false;
    }
    if !ip_header_checksum_ok(h) {
        return false;
    }
    let flags_frag = be16(h, L3 + ip4::FLG_OFF.start);
    let ttl = h[L3 + ip4::TTL];
    if flags_frag & (ipv4::FLAG_MF | ipv4::FRAG_OFFSET_MASK) != 0 || ttl == 0 {
        return false;
    }
    let (src, dst) = (be32(h, L3 + ip4::SRC.start), be32(h, L3 + ip4::DST.start));
    if MARTIAN_SRC[(src >> 24) as usize] | NOT_UNICAST_DST[(dst >> 24) as usize] {
        return false;
    }
    let proto = h[L3 + ip4::PROTOCOL];
    let ip_payload = tl - ipv4::MIN_HEADER_LEN as u16;
    let tcp_flags = match proto {
        PROTO_TCP => {
            let doff = ((h[L4 + tcpf::DATA_OFF] >> 4) as u16) * 4;
            if doff < tcp::MIN_HEADER_LEN as u16 || doff > ip_payload {
                return false;
            }
            h[L4 + tcpf::FLAGS]
        }
        PROTO_UDP => {
            let ulen = be16(h, L4 + udpf::LENGTH.start);
            if ulen < udp::HEADER_LEN as u16 || ulen > ip_payload {
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
            sport: be16(h, L4 + tcpf::SRC_PORT.start),
            dport: be16(h, L4 + tcpf::DST_PORT.start),
            proto,
        },
        tcp_flags,
        ttl,
        df: flags_frag & ipv4::FLAG_DF != 0,
        icmp: None,
    };
    true
}

/// Bytes the IPv6 fast path reads: Ethernet (14) + the fixed IPv6 header
/// (40) + the first 14 bytes of TCP (8 of UDP). Shorter frames take the
/// slow path.
pub(crate) const FAST6_LEN: usize = L4_6 + L4_READ;

/// Offset of the L4 header behind an IPv6 header without extensions.
const L4_6: usize = L3 + ipv6::HEADER_LEN;

/// Big-endian `u128` at `at`.
#[inline(always)]
fn be128(h: &[u8; FAST6_LEN], at: usize) -> u128 {
    be128_at(h, at)
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
    let mut m = PacketMeta6::default();
    classify_fast6_into(frame, port, &mut m).then_some(m)
}

/// [`classify_fast6`] writing its answer into `*meta`: `true` with `*meta`
/// exactly what [`classify_fast6`] returns; `false` with `*meta` untouched
/// (every check precedes the store). For the burst path's early IPv6
/// stage, which classifies into its scratch (no copy of the meta through
/// a return value).
#[inline(always)]
pub fn classify_fast6_into(frame: &[u8], port: u16, meta: &mut PacketMeta6) -> bool {
    let Some(h) = frame.get(..FAST6_LEN) else {
        return false;
    };
    let Ok(h): Result<&[u8; FAST6_LEN], _> = h.try_into() else {
        return false;
    };
    // EtherType IPv6 (untagged), version 6; unicast source MAC
    if be16(h, ETHERTYPE.start) != ethertype::IPV6
        || h[L3 + ip6::VER_TC_FLOW.start] >> 4 != 6
        || h[ETH_SRC.start] & 1 != 0
    {
        return false;
    }
    let pl = be16(h, L3 + ip6::LENGTH.start);
    let total = ipv6::HEADER_LEN + pl as usize;
    if total > frame.len() - L3 || total > u16::MAX as usize {
        return false;
    }
    let (proto, hop) = (h[L3 + ip6::NXT_HDR], h[L3 + ip6::HOP_LIMIT]);
    let (src, dst) = (be128(h, L3 + ip6::SRC.start), be128(h, L3 + ip6::DST.start));
    // multicast: ff00::/8; ::1 and :: are neither source nor destination
    if hop == 0 || src >> 120 == 0xff || src == 1 || dst >> 120 == 0xff || dst <= 1 {
        return false;
    }
    let tcp_flags = match proto {
        PROTO_TCP => {
            let doff = ((h[L4_6 + tcpf::DATA_OFF] >> 4) as u16) * 4;
            if doff < tcp::MIN_HEADER_LEN as u16 || doff > pl {
                return false;
            }
            h[L4_6 + tcpf::FLAGS]
        }
        PROTO_UDP => {
            let ulen = be16(h, L4_6 + udpf::LENGTH.start);
            if ulen < udp::HEADER_LEN as u16 || ulen > pl {
                return false;
            }
            0
        }
        _ => return false,
    };
    *meta = PacketMeta6 {
        port,
        vlan: None,
        l3_off: L3 as u16,
        l4_off: L4_6 as u16,
        ip_len: total as u16,
        key: FlowKey6 {
            src,
            dst,
            sport: be16(h, L4_6 + tcpf::SRC_PORT.start),
            dport: be16(h, L4_6 + tcpf::DST_PORT.start),
            proto,
        },
        tcp_flags,
        ttl: hop,
        df: true,
        icmp: None,
    };
    true
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
    let proto = h[L3 + ip6::NXT_HDR];
    if be16(h, ETHERTYPE.start) != ethertype::IPV6 || (proto != PROTO_TCP && proto != PROTO_UDP) {
        return None;
    }
    Some(FlowKey6 {
        src: be128(h, L3 + ip6::SRC.start),
        dst: be128(h, L3 + ip6::DST.start),
        sport: be16(h, L4_6 + tcpf::SRC_PORT.start),
        dport: be16(h, L4_6 + tcpf::DST_PORT.start),
        proto,
    })
}
