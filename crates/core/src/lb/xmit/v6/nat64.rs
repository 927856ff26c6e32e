//! NAT64 (an IPv6 VIP with IPv4 real servers): RFC 7915 header
//! translation of TCP/UDP packets, IPv6 → IPv4 for requests and IPv4 →
//! IPv6 for replies, with the addresses and ports of the connection and
//! the TCP/UDP checksum updated incrementally (the pseudo header's
//! addresses change family; its length and protocol words are the same in
//! both, RFC 1624 carries the rest).
//!
//! IPv6 → IPv4 (RFC 7915 §5.1): TOS = traffic class, TTL = hop limit − 1,
//! identification from the worker's counter, DF set when the IPv4 packet
//! is longer than 1260 bytes (smaller packets may be fragmented by IPv4
//! routers; the IPv6 sender then never hears Packet Too Big), extension
//! headers dropped. IPv4 → IPv6 (§4.1): traffic class = TOS, flow label 0,
//! hop limit = TTL − 1, IPv4 options dropped; a UDP checksum of 0 (allowed
//! in IPv4) is computed in full, since IPv6 requires one.
//!
//! ICMP errors about a connection cross the same way (RFC 7915 §4.2 and
//! §5.2): an ICMPv4 error about a request becomes ICMPv6 for the client
//! ([`icmp_to6`]), an ICMPv6 error about a reply (a router on the client's
//! side, Packet Too Big above all) becomes ICMPv4 for the real server
//! ([`icmp_to4`]). A reply that would not fit the client's link once 20
//! bytes longer is [`XmitError::NeedFrag`] with the IPv4 MTU that fits
//! ([`to6`]): the caller answers the server with fragmentation needed.
//!
//! Errors leave the frame untouched.

use crate::lb::xmit::error::XmitError;
use crate::lb::xmit::frame::trim_padding;
use crate::lb::xmit::route::{next_hop, set_eth};
use crate::net::buf::PacketBuf;
use crate::net::checksum::{update128, update16};
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{PacketMeta, PacketMeta6, PROTO_TCP, PROTO_UDP};
use crate::net::wire::{ethernet, get, ipv4, ipv6, set, tcp, udp};

/// The largest IPv4 packet sent without DF (RFC 7915 §5.1: 1280 − 20).
const DF_ABOVE: usize = 1260;

/// The TCP/UDP checksum offset in a segment of `proto`.
fn csum_at(proto: u8) -> Option<std::ops::Range<usize>> {
    match proto {
        PROTO_TCP => Some(tcp::field::CHECKSUM),
        PROTO_UDP => Some(udp::field::CHECKSUM),
        _ => None,
    }
}

/// Rewrite the ports of `seg` and its checksum for the pseudo-header
/// addresses changed from (`os`, `od`) to (`ns`, `nd`) (IPv4 ones as the
/// low 32 bits of a u128). A UDP checksum of 0 is left for the caller.
fn ports_and_checksum(seg: &mut [u8], proto: u8, addrs: [u128; 4], sport: u16, dport: u16) {
    let [os, od, ns, nd] = addrs;
    let Some(c) = csum_at(proto) else {
        return;
    };
    // TCP's and UDP's ports are at the same offsets
    use tcp::field::{DST_PORT, SRC_PORT};
    let old_sport = get::<u16>(seg, SRC_PORT);
    let old_dport = get::<u16>(seg, DST_PORT);
    set::<u16>(seg, SRC_PORT, sport);
    set::<u16>(seg, DST_PORT, dport);
    let mut sum = get::<u16>(seg, c.clone());
    if proto == PROTO_UDP && sum == 0 {
        return;
    }
    sum = update128(sum, os, ns);
    sum = update128(sum, od, nd);
    sum = update16(sum, old_sport, sport);
    sum = update16(sum, old_dport, dport);
    if proto == PROTO_UDP && sum == 0 {
        sum = 0xffff; // 0 means "no checksum" in UDP
    }
    set::<u16>(seg, c, sum);
}

/// The IPv4 leg of a NAT64 connection: from `src`:`sport` (a pool
/// address and port of the worker that owns the connection) to
/// `dst`:`dport` (the real server).
#[derive(Clone, Copy, Debug)]
pub struct Leg4 {
    pub src: u32,
    pub sport: u16,
    pub dst: u32,
    pub dport: u16,
}

/// A request of a NAT64 connection, IPv6 → IPv4, on its IPv4 `leg`,
/// routed toward the real server. Returns the egress port.
pub fn to4<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta6,
    leg: Leg4,
    ident: &mut u16,
    egress: &impl Egress,
) -> Result<u16, XmitError> {
    let Leg4 {
        src,
        sport,
        dst,
        dport,
    } = leg;
    let nh = next_hop(egress, dst)?;
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    let end = l3 + meta.ip_len as usize;
    let proto = meta.key.proto;
    let c = csum_at(proto).ok_or(XmitError::Malformed)?;
    if l3 < ethernet::HEADER_LEN
        || l4 < l3 + ipv6::HEADER_LEN
        || l4 + c.end > end
        || buf.len() < end
    {
        return Err(XmitError::Malformed);
    }
    let seg_len = end - l4;
    let out_len = ipv4::MIN_HEADER_LEN + seg_len;
    if out_len > nh.mtu as usize {
        return Err(XmitError::NeedFrag {
            mtu: nh
                .mtu
                .saturating_add((l4 - l3 - ipv4::MIN_HEADER_LEN) as u16),
        });
    }
    let (tc, hop, osrc, odst) = {
        let ip = ipv6::Packet::new_unchecked(buf.data().get(l3..).ok_or(XmitError::Malformed)?);
        (ip.traffic_class(), ip.hop_limit(), ip.src(), ip.dst())
    };
    if hop <= 1 {
        return Err(XmitError::TtlExceeded);
    }
    {
        let seg = buf.data().get(l4..end).ok_or(XmitError::Malformed)?;
        if proto == PROTO_UDP && udp::Packet::new_unchecked(seg).checksum() == 0 {
            return Err(XmitError::Malformed); // not valid IPv6 (nat6's rule)
        }
    }
    trim_padding(buf, l3, meta.ip_len as usize)?;
    // the Ethernet header (and VLAN tag) moves up to sit before the IPv4
    // header, which takes the last 20 bytes before the segment
    let shrink = l4 - l3 - ipv4::MIN_HEADER_LEN;
    let d = buf.data_mut();
    d.copy_within(0..l3, shrink);
    if !buf.adj(shrink) {
        return Err(XmitError::Malformed); // not reached: shrink < len
    }
    let d = buf.data_mut();
    ethernet::Frame::new_unchecked(&mut d[..]).set_ethertype(ethernet::ethertype::IPV4);
    let id = *ident;
    *ident = id.wrapping_add(1);
    let ip_end = l3 + ipv4::MIN_HEADER_LEN;
    ipv4::Repr {
        src,
        dst,
        protocol: proto,
        payload_len: seg_len as u16,
        ttl: hop - 1,
        dscp_ecn: tc,
        ident: id,
        dont_frag: out_len > DF_ABOVE,
    }
    .emit(&mut ipv4::Packet::new_unchecked(&mut d[l3..ip_end]));
    let seg = d.get_mut(ip_end..).ok_or(XmitError::Malformed)?;
    ports_and_checksum(
        seg,
        proto,
        [osrc, odst, src as u128, dst as u128],
        sport,
        dport,
    );
    set_eth(d, &nh)?;
    Ok(nh.port)
}

/// A reply of a NAT64 connection, IPv4 → IPv6: from `src`:`sport` (the
/// VIP) to `dst`:`dport` (the client), routed toward `dst`. Needs 20 bytes
/// of headroom (plus the IPv4 options' length, which it gives back).
///
/// A reply that would exceed the egress MTU once translated (20 bytes
/// longer) is left untouched: with DF set, [`XmitError::NeedFrag`] carries
/// the IPv4 MTU that makes it fit (egress MTU − 20 for a header without
/// options), for the caller's ICMPv4 fragmentation needed to the real
/// server (RFC 7915 §4.1's "Packet Too Big" case, seen from the IPv4
/// side); with DF clear, [`XmitError::TooBig`]: RFC 7915 would have the
/// translator fragment it into IPv6 fragments, which dirigo does not do
/// (one packet in, at most one out), so it is dropped.
pub fn to6<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    src: u128,
    sport: u16,
    dst: u128,
    dport: u16,
    egress: &impl Egress6,
) -> Result<u16, XmitError> {
    let nh = next_hop(egress, dst)?;
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    let end = l3 + meta.ip_len as usize;
    let proto = meta.key.proto;
    let c = csum_at(proto).ok_or(XmitError::Malformed)?;
    if l3 < ethernet::HEADER_LEN
        || l4 < l3 + ipv4::MIN_HEADER_LEN
        || l4 + c.end > end
        || buf.len() < end
    {
        return Err(XmitError::Malformed);
    }
    let seg_len = end - l4;
    if ipv6::HEADER_LEN + seg_len > nh.mtu as usize {
        // the IPv4 packet that fits once translated: its own header (with
        // any options, which are dropped) where the 40 bytes go
        let fits = (nh.mtu as usize + (l4 - l3)).saturating_sub(ipv6::HEADER_LEN);
        return Err(if meta.df {
            XmitError::NeedFrag {
                mtu: fits.min(u16::MAX as usize) as u16,
            }
        } else {
            XmitError::TooBig
        });
    }
    if meta.ttl <= 1 {
        return Err(XmitError::TtlExceeded);
    }
    let tos =
        ipv4::Packet::new_unchecked(buf.data().get(l3..).ok_or(XmitError::Malformed)?).dscp_ecn();
    let (osrc, odst) = (meta.key.src, meta.key.dst);
    trim_padding(buf, l3, meta.ip_len as usize)?;
    // the IPv6 header takes 40 bytes where the IPv4 one took l4 - l3
    let grow = ipv6::HEADER_LEN - (l4 - l3).min(ipv6::HEADER_LEN);
    let cut = (l4 - l3).saturating_sub(ipv6::HEADER_LEN); // options beyond 20 bytes
    if grow > 0 {
        if !buf.prepend(grow) {
            return Err(XmitError::NoRoom);
        }
        buf.data_mut().copy_within(grow..grow + l3, 0);
    } else if cut > 0 {
        buf.data_mut().copy_within(0..l3, cut);
        if !buf.adj(cut) {
            return Err(XmitError::Malformed);
        }
    }
    let d = buf.data_mut();
    ethernet::Frame::new_unchecked(&mut d[..]).set_ethertype(ethernet::ethertype::IPV6);
    let ip_end = l3 + ipv6::HEADER_LEN;
    ipv6::Repr {
        src,
        dst,
        next_header: proto,
        payload_len: seg_len as u16,
        hop_limit: meta.ttl - 1,
        traffic_class: tos,
        flow_label: 0,
    }
    .emit(&mut ipv6::Packet::new_unchecked(&mut d[l3..ip_end]));
    let seg = d.get_mut(ip_end..).ok_or(XmitError::Malformed)?;
    let zero_udp = proto == PROTO_UDP && udp::Packet::new_unchecked(&seg[..]).checksum() == 0;
    ports_and_checksum(
        seg,
        proto,
        [osrc as u128, odst as u128, src, dst],
        sport,
        dport,
    );
    if zero_udp {
        udp::Packet::new_unchecked(&mut seg[..]).fill_checksum_v6(src, dst);
    }
    set_eth(d, &nh)?;
    Ok(nh.port)
}

/// The ICMPv6 type, code and 4 type-specific bytes for an ICMPv4 error
/// (RFC 7915 §4.2), None for what is not translated (then dropped):
/// fragmentation needed → Packet Too Big (MTU + 20, at least 1280), other
/// unreachables → Destination Unreachable (port → 4, the administrative
/// ones → 1, the rest → 0), time exceeded → Time Exceeded (same code).
fn icmp_type6(t: u8, code: u8, next_hop_mtu: u16) -> Option<(u8, u8, u32)> {
    use crate::net::wire::icmpv6::{msg_type as m6, MIN_MTU};
    match (t, code) {
        (3, 4) => {
            // the IPv6 header is 20 bytes longer than IPv4's
            let grow = (ipv6::HEADER_LEN - ipv4::MIN_HEADER_LEN) as u32;
            let mtu = (u32::from(next_hop_mtu) + grow).max(MIN_MTU as u32);
            Some((m6::PACKET_TOO_BIG, 0, mtu))
        }
        (3, 3) => Some((m6::DEST_UNREACHABLE, 4, 0)),
        (3, 9 | 10 | 13) => Some((m6::DEST_UNREACHABLE, 1, 0)),
        (3, 0 | 1 | 5 | 6 | 7 | 8 | 11 | 12) => Some((m6::DEST_UNREACHABLE, 0, 0)),
        (11, c @ 0..=1) => Some((m6::TIME_EXCEEDED, c, 0)),
        _ => None,
    }
}

/// An ICMPv4 error about a NAT64 connection's request (quoting pool
/// address:port → real server), translated to ICMPv6 for its client (RFC
/// 7915 §4.2) as IPVS's NAT translates errors: from the VIP `vip` to the
/// client `client`, quoting the request as the client sent it (`client`:
/// `cport` → `vip`:`vport`, an IPv6 header in place of the IPv4 one, the
/// quoted ports restored), at most 1280 bytes, the ICMPv6 checksum
/// computed; hop limit 64. Needs 20 bytes of head or tail room more than
/// the frame has. Errors leave the frame untouched: a type or code RFC 7915
/// does not translate is [`XmitError::Malformed`].
pub fn icmp_to6<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    vip: u128,
    vport: u16,
    client: u128,
    cport: u16,
    egress: &impl Egress6,
) -> Result<u16, XmitError> {
    use crate::net::wire::{icmp, icmpv6};
    let q = meta.icmp.ok_or(XmitError::Malformed)?;
    let nh = next_hop(egress, client)?;
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    let end = (l3 + meta.ip_len as usize).min(buf.len());
    let (il3, il4) = (q.inner_l3_off as usize, q.inner_l4_off as usize);
    if l3 < ethernet::HEADER_LEN
        || !(l4 < il3 && il3 < il4 && il4 + icmp::QUOTED_PAYLOAD_LEN <= end)
    {
        return Err(XmitError::Malformed);
    }
    let d = buf.data();
    let msg = icmp::Packet::new_unchecked(d.get(l4..end).ok_or(XmitError::Malformed)?);
    let (t6, c6, rest) =
        icmp_type6(msg.msg_type(), msg.code(), msg.next_hop_mtu()).ok_or(XmitError::Malformed)?;
    let inner = ipv4::Packet::new_unchecked(d.get(il3..il4).ok_or(XmitError::Malformed)?);
    let (iproto, ittl, itos) = (inner.protocol(), inner.ttl(), inner.dscp_ecn());
    // the translated message: ICMPv6 header, inner IPv6 header, the quoted
    // L4 bytes, within 1280 bytes of IPv6
    const ROOM: usize = icmpv6::MIN_MTU - ipv6::HEADER_LEN;
    let quoted = d.get(il4..end).ok_or(XmitError::Malformed)?;
    let qlen = quoted
        .len()
        .min(ROOM - icmpv6::HEADER_LEN - ipv6::HEADER_LEN);
    let mlen = icmpv6::HEADER_LEN + ipv6::HEADER_LEN + qlen;
    let mut m = [0u8; ROOM];
    {
        let (hdr, rest_m) = m.split_at_mut(icmpv6::HEADER_LEN);
        let mut i6 = icmpv6::Packet::new_unchecked(&mut hdr[..]);
        i6.set_msg_type(t6);
        i6.set_code(c6);
        i6.set_rest(rest);
        let (ih, il) = rest_m.split_at_mut(ipv6::HEADER_LEN);
        ipv6::Repr {
            src: client,
            dst: vip,
            next_header: iproto,
            payload_len: inner.total_len().saturating_sub(inner.header_len() as u16),
            hop_limit: ittl,
            traffic_class: itos,
            flow_label: 0,
        }
        .emit(&mut ipv6::Packet::new_unchecked(&mut ih[..]));
        il[..qlen].copy_from_slice(&quoted[..qlen]);
        // the quoted ports as the client sent them
        set::<u16>(il, tcp::field::SRC_PORT, cport);
        set::<u16>(il, tcp::field::DST_PORT, vport);
    }
    let new_len = l3 + ipv6::HEADER_LEN + mlen;
    let have = buf.len();
    let sized = if new_len > have {
        buf.append(new_len - have)
    } else {
        buf.trim_to(new_len)
    };
    if !sized {
        return Err(XmitError::NoRoom);
    }
    let d = buf.data_mut();
    ethernet::Frame::new_unchecked(&mut d[..]).set_ethertype(ethernet::ethertype::IPV6);
    ipv6::Repr {
        src: vip,
        dst: client,
        next_header: crate::net::meta::PROTO_ICMPV6,
        payload_len: mlen as u16,
        hop_limit: super::icmp::ICMP_HOP_LIMIT,
        traffic_class: 0,
        flow_label: 0,
    }
    .emit(&mut ipv6::Packet::new_unchecked(
        &mut d[l3..l3 + ipv6::HEADER_LEN],
    ));
    let body = &mut d[l3 + ipv6::HEADER_LEN..new_len];
    body.copy_from_slice(&m[..mlen]);
    icmpv6::Packet::new_unchecked(&mut body[..]).fill_checksum(vip, client);
    set_eth(d, &nh)?;
    Ok(nh.port)
}

/// The ICMPv4 type, code and 4 type-specific bytes for an ICMPv6 error
/// with type `t`, code `code` and type-specific bytes `rest6` (RFC 7915
/// §5.2), None for what is not translated (then dropped):
///
/// * Packet Too Big → fragmentation needed, its MTU 20 bytes smaller (the
///   IPv4 header is 20 bytes shorter than IPv6's; the quoted reply had no
///   Fragment header) and at most `link_mtu`, the IPv4 link's;
/// * Destination Unreachable: no route, beyond scope, address unreachable
///   → host unreachable (1), administratively prohibited → 10, port
///   unreachable → port unreachable (3);
/// * Time Exceeded → Time Exceeded, same code;
/// * Parameter Problem: unrecognised next header → protocol unreachable
///   (3/2); an erroneous header field → Parameter Problem with the pointer
///   moved to the IPv4 header's field (RFC 7915 Figure 6; a pointer into
///   the flow label or past the header has no IPv4 field: dropped).
fn icmp_type4(t: u8, code: u8, rest6: u32, link_mtu: u16) -> Option<(u8, u8, u32)> {
    use crate::net::wire::icmp::{msg_type as m4, CODE_FRAG_NEEDED};
    use crate::net::wire::icmpv6::msg_type as m6;
    const SHRINK: u32 = (ipv6::HEADER_LEN - ipv4::MIN_HEADER_LEN) as u32;
    match (t, code) {
        (m6::PACKET_TOO_BIG, _) => {
            let mtu = rest6.saturating_sub(SHRINK).min(u32::from(link_mtu));
            Some((m4::DEST_UNREACHABLE, CODE_FRAG_NEEDED, mtu))
        }
        (m6::DEST_UNREACHABLE, 0 | 2 | 3) => Some((m4::DEST_UNREACHABLE, 1, 0)),
        (m6::DEST_UNREACHABLE, 1) => Some((m4::DEST_UNREACHABLE, 10, 0)),
        (m6::DEST_UNREACHABLE, 4) => Some((m4::DEST_UNREACHABLE, 3, 0)),
        (m6::TIME_EXCEEDED, c @ 0..=1) => Some((m4::TIME_EXCEEDED, c, 0)),
        (m6::PARAMETER_PROBLEM, 1) => Some((m4::DEST_UNREACHABLE, 2, 0)),
        (m6::PARAMETER_PROBLEM, 0) => {
            use ipv4::field as f4;
            use ipv6::field as f6;
            let p = usize::try_from(rest6).ok()?;
            let at = if p == f6::VER_TC_FLOW.start {
                f4::VER_IHL
            } else if p == f6::VER_TC_FLOW.start + 1 {
                f4::DSCP_ECN // the traffic class' high half
            } else if f6::LENGTH.contains(&p) {
                f4::LENGTH.start
            } else if p == f6::NXT_HDR {
                f4::PROTOCOL
            } else if p == f6::HOP_LIMIT {
                f4::TTL
            } else if f6::SRC.contains(&p) {
                f4::SRC.start
            } else if f6::DST.contains(&p) {
                f4::DST.start
            } else {
                return None;
            };
            // the pointer is the first of the 4 bytes
            Some((m4::PARAMETER_PROBLEM, 0, (at as u32) << 24))
        }
        _ => None,
    }
}

/// An ICMPv6 error about a NAT64 connection's reply (quoting VIP:vport →
/// client:cport as dirigo sent it; from a router on the client's side,
/// to the VIP), translated to ICMPv4 for its real server (RFC 7915 §5.2):
/// from the pool address `leg.src` to the real server `leg.dst`, quoting
/// the reply as the server sent it — `leg.dst`:`leg.dport` →
/// `leg.src`:`leg.sport`, an IPv4 header (TOS and TTL the quoted traffic
/// class and hop limit, identification 0, DF as [`to4`] sets it and always
/// for fragmentation needed) in place of the IPv6 one and its extension
/// headers, the quoted ports restored and the quoted TCP/UDP checksum
/// updated with them and the addresses when the quote reaches it (so it
/// reads as the server's own) — with TTL 64, identification from `ident`,
/// the ICMPv4 checksum computed, as much of the quote as the IPv4 egress
/// MTU takes. The type and code map as [`icmp_type4`] says (a Packet Too
/// Big's MTU 20 bytes smaller: the server's IPv4 packets grow by 20 on
/// their way to the client). In place: the message shrinks by 40 bytes or
/// more, so no room is needed.
///
/// Errors leave the frame untouched: [`XmitError::Malformed`] for
/// metadata that does not fit the frame, an ICMPv6 checksum that is wrong
/// (a damaged error would otherwise reach the server with a valid ICMPv4
/// checksum), or a type or code RFC 7915 does not translate;
/// [`XmitError::NoRoute`] and [`XmitError::Unresolved`] for the real
/// server.
pub fn icmp_to4<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta6,
    leg: Leg4,
    ident: &mut u16,
    egress: &impl Egress,
) -> Result<u16, XmitError> {
    use crate::lb::xmit::icmp::ICMP_TTL;
    use crate::net::meta::{PROTO_ICMP, PROTO_ICMPV6};
    use crate::net::wire::{icmp, icmpv6};
    let q = meta.icmp.ok_or(XmitError::Malformed)?;
    let nh = next_hop(egress, leg.dst)?;
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    let end = l3 + meta.ip_len as usize;
    let (il3, il4) = (q.inner_l3_off as usize, q.inner_l4_off as usize);
    // the quote holds at least the two ports
    if meta.key.proto != PROTO_ICMPV6
        || l3 < ethernet::HEADER_LEN
        || l4 < l3 + ipv6::HEADER_LEN
        || il3 < l4 + icmpv6::HEADER_LEN
        || il4 < il3 + ipv6::HEADER_LEN
        || il4 + icmpv6::QUOTED_PAYLOAD_MIN > end
        || buf.len() < end
    {
        return Err(XmitError::Malformed);
    }
    let proto = q.inner_key.proto;
    csum_at(proto).ok_or(XmitError::Malformed)?;
    // the new message: IPv4 header, ICMPv4 header, the quoted IPv4 header,
    // then the quoted upper layer, moved up from `il4`
    let msg_at = l3 + ipv4::MIN_HEADER_LEN;
    let iip = msg_at + icmp::HEADER_LEN;
    let iseg = iip + ipv4::MIN_HEADER_LEN;
    let room = (nh.mtu as usize).saturating_sub(iseg - l3);
    let qlen = (end - il4).min(room);
    if qlen < icmp::QUOTED_PAYLOAD_LEN {
        return Err(XmitError::TooBig); // an IPv4 link below 56 bytes
    }
    let new_len = iseg + qlen;
    let d = buf.data();
    let (src6, dst6) = {
        let ip = ipv6::Packet::new_unchecked(d.get(l3..l4).ok_or(XmitError::Malformed)?);
        (ip.src(), ip.dst())
    };
    let msg = icmpv6::Packet::new_unchecked(d.get(l4..end).ok_or(XmitError::Malformed)?);
    if !msg.verify_checksum(src6, dst6) {
        return Err(XmitError::Malformed);
    }
    let (t4, c4, rest4) =
        icmp_type4(msg.msg_type(), msg.code(), msg.rest(), nh.mtu).ok_or(XmitError::Malformed)?;
    let (itc, ihop, isrc, idst, iseg_len) = {
        let ip = ipv6::Packet::new_unchecked(d.get(il3..il4).ok_or(XmitError::Malformed)?);
        // the quoted packet's upper layer: its payload less the extension
        // headers
        let ext = il4 - il3 - ipv6::HEADER_LEN;
        let seg = (ip.payload_len() as usize).saturating_sub(ext);
        (ip.traffic_class(), ip.hop_limit(), ip.src(), ip.dst(), seg)
    };
    let iseg_len = iseg_len.min(u16::MAX as usize - ipv4::MIN_HEADER_LEN);
    // nothing fails from here on: the frame changes
    let d = buf.data_mut();
    // il4 > iseg: the quote moves toward the front
    d.copy_within(il4..il4 + qlen, iseg);
    ethernet::Frame::new_unchecked(&mut d[..]).set_ethertype(ethernet::ethertype::IPV4);
    let id = *ident;
    *ident = id.wrapping_add(1);
    ipv4::Repr {
        src: leg.src,
        dst: leg.dst,
        protocol: PROTO_ICMP,
        payload_len: (new_len - msg_at) as u16,
        ttl: ICMP_TTL,
        dscp_ecn: 0,
        ident: id,
        dont_frag: false,
    }
    .emit(&mut ipv4::Packet::new_unchecked(&mut d[l3..msg_at]));
    ipv4::Repr {
        src: leg.dst,
        dst: leg.src,
        protocol: proto,
        payload_len: iseg_len as u16,
        ttl: ihop,
        dscp_ecn: itc,
        ident: 0,
        dont_frag: ipv4::MIN_HEADER_LEN + iseg_len > DF_ABOVE
            || (t4, c4) == (icmp::msg_type::DEST_UNREACHABLE, icmp::CODE_FRAG_NEEDED),
    }
    .emit(&mut ipv4::Packet::new_unchecked(&mut d[iip..iseg]));
    ports_and_checksum(
        &mut d[iseg..new_len],
        proto,
        [isrc, idst, leg.dst as u128, leg.src as u128],
        leg.dport,
        leg.sport,
    );
    let mut m = icmp::Packet::new_unchecked(&mut d[msg_at..new_len]);
    m.set_msg_type(t4);
    m.set_code(c4);
    m.set_rest(rest4);
    m.fill_checksum();
    set_eth(d, &nh)?;
    if !buf.trim_to(new_len) {
        return Err(XmitError::Malformed); // not reached: new_len < end
    }
    Ok(nh.port)
}
