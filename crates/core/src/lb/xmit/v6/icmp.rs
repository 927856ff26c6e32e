//! ICMPv6 Packet Too Big generated in place (a tunnelled packet that
//! would exceed the egress MTU).

use crate::lb::xmit::error::XmitError;
use crate::lb::xmit::route::{next_hop, set_eth};
use crate::net::buf::PacketBuf;
use crate::net::egress::Egress6;
use crate::net::meta::{PacketMeta6, PROTO_ICMPV6};
use crate::net::wire::{ethernet, icmpv6, ipv6};

/// Hop limit of generated ICMPv6 errors: Linux's `icmp6_send` takes the
/// route's default hop limit, 64 unless configured, the same as the TTL of
/// dirigo's IPv4 errors ([`crate::lb::xmit::icmp::ICMP_TTL`]). 255 is only
/// for Neighbour Discovery.
pub const ICMP_HOP_LIMIT: u8 = 64;

/// Bytes the error puts in front of the quote: its IPv6 and ICMPv6 headers.
const OVERHEAD: usize = ipv6::HEADER_LEN + icmpv6::HEADER_LEN;

/// The most of the original packet quoted: the error may not exceed the
/// IPv6 minimum MTU (RFC 4443 §2.4 (c)), so 1280 − 48 = 1232 bytes.
pub const MAX_QUOTE: usize = icmpv6::MIN_MTU - OVERHEAD;

/// Turn the packet into an ICMPv6 Packet Too Big (type 2, code 0) carrying
/// `mtu`, sent back to the packet's source from its destination (the VIP,
/// as Linux's `icmp6_send` picks the invoking packet's destination when it
/// is a local address, so the client's path-MTU cache entry is the one it
/// keys by), quoting as much of the original IPv6 packet as keeps the
/// error within 1280 bytes. Hop limit [`ICMP_HOP_LIMIT`], traffic class
/// and flow label 0, checksum over the pseudo header. Routed toward the
/// original source; returns the port. Rate limiting (a
/// [`crate::lb::xmit::TokenBucket`]) is the caller's.
///
/// An `mtu` below the IPv6 minimum of 1280 is reported as 1280: a node does
/// not lower its path MTU below it (RFC 8201 §4), so a smaller value
/// carries no information. (IPVS does not tunnel at all when the tunnel
/// MTU falls below 1280; a caller may do the same.)
///
/// No error is generated, and [`XmitError::TooBig`] is returned with the
/// frame untouched, when RFC 4443 §2.4 (e) forbids it: the packet is an
/// ICMPv6 error (IPVS's `ensure_mtu_is_adequate` skips those too), its
/// source is multicast or unspecified, or its destination is multicast
/// (no address of ours to send from). [`XmitError::Malformed`] when the
/// metadata does not fit the frame, [`XmitError::NoRoom`] when a short
/// packet cannot grow by the 48 bytes; the frame is untouched then too.
pub fn packet_too_big6<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta6,
    mtu: u16,
    egress: &impl Egress6,
) -> Result<u16, XmitError> {
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    let ip_len = meta.ip_len as usize;
    let end = l3 + ip_len;
    if l3 < ethernet::HEADER_LEN
        || ip_len < ipv6::HEADER_LEN
        || l4 < l3 + ipv6::HEADER_LEN
        || l4 > end
        || buf.len() < end
    {
        return Err(XmitError::Malformed);
    }
    let (client, vip, is_icmp_error) = {
        let d = buf.data();
        let ip = ipv6::Packet::new_unchecked(d.get(l3..end).ok_or(XmitError::Malformed)?);
        let msg = icmpv6::Packet::new_unchecked(d.get(l4..end).ok_or(XmitError::Malformed)?);
        // a message too short for its type reads type 0, an error: refused
        let icmp_error = meta.icmp.is_some()
            || (meta.key.proto == PROTO_ICMPV6 && icmpv6::msg_type::is_error(msg.msg_type()));
        (ip.src(), ip.dst(), icmp_error)
    };
    if is_icmp_error
        || client == ipv6::UNSPECIFIED
        || ipv6::is_multicast(client)
        || ipv6::is_multicast(vip)
    {
        return Err(XmitError::TooBig);
    }
    let nh = next_hop(egress, client)?;
    let quote = ip_len.min(MAX_QUOTE);
    let new_len = l3 + OVERHEAD + quote;
    if buf.len() < new_len && !buf.append(new_len - buf.len()) {
        return Err(XmitError::NoRoom);
    }
    let d = buf.data_mut();
    d.copy_within(l3..l3 + quote, l3 + OVERHEAD);
    let ip = d.get_mut(l3..new_len).ok_or(XmitError::Malformed)?;
    ipv6::Repr {
        src: vip,
        dst: client,
        next_header: PROTO_ICMPV6,
        payload_len: (icmpv6::HEADER_LEN + quote) as u16,
        hop_limit: ICMP_HOP_LIMIT,
        traffic_class: 0,
        flow_label: 0,
    }
    .emit(&mut ipv6::Packet::new_unchecked(ip));
    let msg = d
        .get_mut(l3 + ipv6::HEADER_LEN..new_len)
        .ok_or(XmitError::Malformed)?;
    let mut msg = icmpv6::Packet::new_unchecked(msg);
    msg.set_msg_type(icmpv6::msg_type::PACKET_TOO_BIG);
    msg.set_code(0);
    msg.set_mtu(u32::from(mtu).max(icmpv6::MIN_MTU as u32));
    msg.fill_checksum(vip, client);
    set_eth(d, &nh)?;
    if !buf.trim_to(new_len) {
        return Err(XmitError::Malformed);
    }
    Ok(nh.port)
}
