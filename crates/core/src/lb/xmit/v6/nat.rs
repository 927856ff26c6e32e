//! IPv6 NAT: rewrite VIP:vport <-> RIP:rport with incremental checksums
//! (RFC 1624), for TCP/UDP packets and for ICMPv6 errors quoting them.

use crate::lb::xmit::error::XmitError;
use crate::lb::xmit::nat::Side;
use crate::lb::xmit::quote::QuoteAt;
use crate::lb::xmit::route::{next_hop, set_eth};
use crate::net::buf::PacketBuf;
use crate::net::egress::Egress6;
use crate::net::meta::{PacketMeta6, PROTO_TCP};
use crate::net::wire::{icmpv6, ipv6, tcp, udp};

/// The side of a packet quoted in an ICMPv6 error about this one: the
/// quote travelled the other way.
pub(super) fn quoted(side: Side) -> Side {
    match side {
        Side::Dst => Side::Src,
        Side::Src => Side::Dst,
    }
}

/// The hop limit of `ip` less one; [`XmitError::TtlExceeded`] when it is 1
/// or 0 (a router does not forward it, RFC 8200 §3).
#[inline]
pub(super) fn next_hop_limit(ip: &ipv6::Packet<&mut [u8]>) -> Result<u8, XmitError> {
    match ip.hop_limit() {
        0 | 1 => Err(XmitError::TtlExceeded),
        h => Ok(h - 1),
    }
}

/// Set the `side` address of `ip` to `addr`; returns the old address.
#[inline]
pub(super) fn set_addr(ip: &mut ipv6::Packet<&mut [u8]>, side: Side, addr: u128) -> u128 {
    match side {
        Side::Dst => {
            let old = ip.dst();
            ip.set_dst(addr);
            old
        }
        Side::Src => {
            let old = ip.src();
            ip.set_src(addr);
            old
        }
    }
}

/// Set the `side` port of the TCP/UDP header `seg` (TCP when `proto` says
/// so, else UDP's layout, whose ports sit where TCP's do) and update its
/// checksum for the port and for the pseudo-header address changed from
/// `old` to `new`, when the checksum is within `seg`.
#[inline]
pub(super) fn set_port(seg: &mut [u8], proto: u8, side: Side, port: u16, old: u128, new: u128) {
    match (proto, side) {
        (PROTO_TCP, Side::Dst) => {
            tcp::Packet::new_unchecked(seg).set_dst_port_update_checksum_v6(port, old, new)
        }
        (PROTO_TCP, Side::Src) => {
            tcp::Packet::new_unchecked(seg).set_src_port_update_checksum_v6(port, old, new)
        }
        (_, Side::Dst) => {
            udp::Packet::new_unchecked(seg).set_dst_port_update_checksum_v6(port, old, new)
        }
        (_, Side::Src) => {
            udp::Packet::new_unchecked(seg).set_src_port_update_checksum_v6(port, old, new)
        }
    }
}

/// Translate an ICMPv6 error (Destination Unreachable, Packet Too Big,
/// Time Exceeded, Parameter Problem) quoting a NAT connection, as IPVS's
/// `ip_vs_nat_icmp_v6`:
///
/// * `Side::Dst` (an error from the client side, sent to the VIP, quoting
///   our VIP:vport → client packet): outer destination VIP → `addr` (the
///   RIP), quoted source VIP:vport → RIP:rport; routed to the RS.
/// * `Side::Src` (an error from the RS side, quoting client → RIP:rport):
///   outer source → `addr` (the VIP, as IPVS), quoted destination
///   RIP:rport → VIP:vport; routed to the outer destination (the client).
///
/// The hop limit is decremented ([`XmitError::TtlExceeded`] at 1 or 0).
/// The ICMPv6 checksum, which covers the outer addresses through the
/// pseudo header, is recomputed over the whole message (at most 1232
/// bytes; IPVS recomputes it too). The quoted TCP/UDP checksum is updated
/// incrementally for the quoted address and port when the quote reaches
/// it (IPVS leaves it): the quote then reads as the packet the receiver of
/// the error sent, checksum included. Errors leave the frame untouched.
pub fn nat6_icmp<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta6,
    side: Side,
    addr: u128,
    port: u16,
    egress: &impl Egress6,
) -> Result<u16, XmitError> {
    let QuoteAt {
        l3,
        l4,
        il3,
        il4,
        end,
        proto: quoted_proto,
    } = QuoteAt::v6(meta, buf.len())?;
    let (src, dst) = {
        let ip = buf.data().get(l3..l4).ok_or(XmitError::Malformed)?;
        let ip = ipv6::Packet::new_unchecked(ip);
        (ip.src(), ip.dst())
    };
    let route_to = match side {
        Side::Dst => addr,
        Side::Src => dst,
    };
    let nh = next_hop(egress, route_to)?;
    let d = buf.data_mut();
    let mut ip = ipv6::Packet::new_unchecked(d.get_mut(l3..l4).ok_or(XmitError::Malformed)?);
    let hop_limit = next_hop_limit(&ip)?;
    ip.set_hop_limit(hop_limit);
    set_addr(&mut ip, side, addr);
    let (src, dst) = match side {
        Side::Dst => (src, addr),
        Side::Src => (addr, dst),
    };
    let inner = d.get_mut(il3..il4).ok_or(XmitError::Malformed)?;
    let old = set_addr(&mut ipv6::Packet::new_unchecked(inner), quoted(side), addr);
    let seg = d.get_mut(il4..end).ok_or(XmitError::Malformed)?;
    set_port(seg, quoted_proto, quoted(side), port, old, addr);
    let msg = d.get_mut(l4..end).ok_or(XmitError::Malformed)?;
    icmpv6::Packet::new_unchecked(msg).fill_checksum(src, dst);
    set_eth(d, &nh)?;
    Ok(nh.port)
}
