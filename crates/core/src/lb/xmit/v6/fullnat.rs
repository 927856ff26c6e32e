//! IPv6 FullNAT's ICMPv6 errors: both outer addresses and both sides of
//! the quote rewritten (IPv4's is `xmit::fullnat::fullnat_icmp`).

use super::nat::{next_hop_limit, set_addr, set_port};
use crate::lb::xmit::error::XmitError;
use crate::lb::xmit::fullnat::End;
use crate::lb::xmit::nat::Side;
use crate::lb::xmit::quote::QuoteAt;
use crate::lb::xmit::route::{next_hop, set_eth};
use crate::net::buf::PacketBuf;
use crate::net::egress::Egress6;
use crate::net::meta::PacketMeta6;
use crate::net::wire::{icmpv6, ipv6};

/// Translate an ICMPv6 error quoting a packet of an IPv6 FullNAT
/// connection: the outer source becomes `outer_src` and the destination
/// `to` (routed there, hop limit decremented), the quoted packet's source
/// `q_src` and destination `q_dst` (its TCP/UDP checksum adjusted where
/// the quote reaches it, as [`super::nat6_icmp`]); the ICMPv6 checksum is
/// computed again over the new pseudo header.
///
/// * From the real server's side (to the local address, quoting laddr →
///   RIP): from the VIP to the client, quoting client → VIP.
/// * From the client's side (to the VIP, quoting VIP → client): from the
///   local address to the real server, quoting RIP → laddr.
pub fn fullnat6_icmp<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta6,
    outer_src: u128,
    to: u128,
    q_src: End<u128>,
    q_dst: End<u128>,
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
    let nh = next_hop(egress, to)?;
    let d = buf.data_mut();
    let mut ip = ipv6::Packet::new_unchecked(d.get_mut(l3..l4).ok_or(XmitError::Malformed)?);
    let hop_limit = next_hop_limit(&ip)?;
    ip.set_hop_limit(hop_limit);
    set_addr(&mut ip, Side::Dst, to);
    set_addr(&mut ip, Side::Src, outer_src);
    let inner = d.get_mut(il3..il4).ok_or(XmitError::Malformed)?;
    let mut inner = ipv6::Packet::new_unchecked(inner);
    let old_src = set_addr(&mut inner, Side::Src, q_src.addr);
    let old_dst = set_addr(&mut inner, Side::Dst, q_dst.addr);
    let seg = d.get_mut(il4..end).ok_or(XmitError::Malformed)?;
    let proto = quoted_proto;
    set_port(seg, proto, Side::Src, q_src.port, old_src, q_src.addr);
    set_port(seg, proto, Side::Dst, q_dst.port, old_dst, q_dst.addr);
    let msg = d.get_mut(l4..end).ok_or(XmitError::Malformed)?;
    icmpv6::Packet::new_unchecked(msg).fill_checksum(outer_src, to);
    set_eth(d, &nh)?;
    Ok(nh.port)
}
