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

use super::{next_hop6, set_eth6, XmitError};
use crate::lb::xmit::{next_hop, set_eth, trim_padding};
use crate::net::buf::PacketBuf;
use crate::net::checksum::{update128, update16};
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{PacketMeta, PacketMeta6, PROTO_TCP, PROTO_UDP};
use crate::net::wire::{ethernet, ipv4, ipv6, tcp, udp};

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
    let old_sport = u16::from_be_bytes([seg[0], seg[1]]);
    let old_dport = u16::from_be_bytes([seg[2], seg[3]]);
    seg[0..2].copy_from_slice(&sport.to_be_bytes());
    seg[2..4].copy_from_slice(&dport.to_be_bytes());
    let mut sum = u16::from_be_bytes([seg[c.start], seg[c.start + 1]]);
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
    seg[c].copy_from_slice(&sum.to_be_bytes());
}

/// A request of a NAT64 connection, IPv6 → IPv4: from `src`:`sport` (a
/// pool address and port of this worker) to `dst`:`dport` (the real
/// server), routed toward `dst`. Returns the egress port.
#[allow(clippy::too_many_arguments)]
pub fn to4<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta6,
    src: u32,
    sport: u16,
    dst: u32,
    dport: u16,
    ident: &mut u16,
    egress: &impl Egress,
) -> Result<u16, XmitError> {
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
