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
//! Errors leave the frame untouched.

use super::route::{next_hop6, set_eth6};
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
pub fn to6<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    src: u128,
    sport: u16,
    dst: u128,
    dport: u16,
    egress: &impl Egress6,
) -> Result<u16, XmitError> {
    let nh = next_hop6(egress, dst)?;
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
        return Err(XmitError::TooBig);
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
    set_eth6(d, &nh)?;
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
    let nh = next_hop6(egress, client)?;
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
    set_eth6(d, &nh)?;
    Ok(nh.port)
}
