//! FullNAT: both sides of a packet rewritten, either family.
//!
//! A request leaves from the service's local address to the real server
//! (client:cport → VIP:vport becomes laddr:lport → RIP:rport), a reply
//! goes back from the VIP to the client (RIP:rport → laddr:lport becomes
//! VIP:vport → client:cport). The rewrite is [`super::nat::nat`]'s, for
//! two addresses and two ports: each checksum is adjusted once for all
//! its changed words (RFC 1624), the TTL or hop limit decremented once.
//!
//! ICMP errors about a FullNAT connection are translated outer and quoted
//! headers both ([`fullnat_icmp`]): the error reaches whom the quoted
//! packet's sender was on its side of dirigo.

use super::error::XmitError;
use super::nat::{fits, route_ip, set_addr, NatHeader, Side};
use super::quote::QuoteAt;
use super::route::{next_hop, set_eth};
use crate::net::buf::PacketBuf;
use crate::net::checksum;
use crate::net::egress::{Egress, EgressTo};
use crate::net::meta::{Meta, PacketMeta, PROTO_TCP, PROTO_UDP};
use crate::net::wire::{get, icmp, ipv4, set, tcp, udp};

/// An address and a port: one side of a rewritten packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct End<A> {
    /// Address (host order).
    pub addr: A,
    /// Port.
    pub port: u16,
}

/// Rewrite a TCP/UDP packet's source to `src` and destination to `dst`,
/// its checksums adjusted, TTL (hop limit) decremented; Ethernet toward
/// `dst.addr`. Returns the egress port. Nothing is modified on an error
/// (the next hop is asked first). A UDP checksum of 0 stays 0 in IPv4 and
/// is [`XmitError::Malformed`] in IPv6 (as [`super::nat::nat`]).
#[inline]
pub fn fullnat<A: NatHeader, B: PacketBuf>(
    buf: &mut B,
    meta: &Meta<A>,
    src: End<A>,
    dst: End<A>,
    egress: &impl EgressTo<A>,
) -> Result<u16, XmitError> {
    let nh = next_hop(egress, dst.addr)?;
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    let (ck, optional) = match meta.key.proto {
        PROTO_TCP => (tcp::field::CHECKSUM.start, false),
        PROTO_UDP => (udp::field::CHECKSUM.start, true),
        _ => return Err(XmitError::Malformed),
    };
    let d = buf.data_mut();
    if l4 < l3 + A::HEADER_LEN || !fits(meta, ck + size_of::<u16>(), d.len()) {
        return Err(XmitError::Malformed);
    }
    let (head, seg) = d.split_at_mut_checked(l4).ok_or(XmitError::Malformed)?;
    let seg = seg
        .get_mut(..ck + size_of::<u16>())
        .ok_or(XmitError::Malformed)?;
    let ip = head
        .get_mut(l3..l3 + A::HEADER_LEN)
        .ok_or(XmitError::Malformed)?;
    if !A::UDP_NO_CHECKSUM && optional && get::<u16>(seg, ck) == 0 {
        return Err(XmitError::Malformed);
    }
    let old_dst = A::rewrite_ip(ip, Side::Dst, dst.addr)?;
    let old_src = A::set_src(ip, src.addr)?;
    let old_sport = get::<u16>(seg, tcp::field::SRC_PORT);
    let old_dport = get::<u16>(seg, tcp::field::DST_PORT);
    set::<u16>(seg, tcp::field::SRC_PORT, src.port);
    set::<u16>(seg, tcp::field::DST_PORT, dst.port);
    let c = get::<u16>(seg, ck);
    if !(optional && c == 0) {
        let s = (!c as u32)
            + A::word_diff(old_src, src.addr)
            + A::word_diff(old_dst, dst.addr)
            + (!old_sport as u32)
            + src.port as u32
            + (!old_dport as u32)
            + dst.port as u32;
        let mut n = !checksum::fold(s);
        if optional && n == 0 {
            n = 0xffff;
        }
        set::<u16>(seg, ck, n);
    }
    set_eth(d, &nh)?;
    Ok(nh.port)
}

/// Translate an IPv4 ICMP error quoting a packet of a FullNAT connection:
/// the outer source becomes `outer_src` and the destination `to` (routed
/// there, TTL decremented), the quoted packet's source `q_src` and
/// destination `q_dst` (its IP header checksum adjusted, its TCP/UDP
/// checksum left as IPVS leaves it); the ICMP checksum is computed again.
///
/// * An error from the real server's side (to the local address, quoting
///   laddr:lport → RIP:rport): from the VIP to the client, quoting
///   client:cport → VIP:vport.
/// * An error from the client's side (to the VIP, quoting VIP:vport →
///   client:cport): from the local address to the real server, quoting
///   RIP:rport → laddr:lport.
pub fn fullnat_icmp<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    outer_src: u32,
    to: u32,
    q_src: End<u32>,
    q_dst: End<u32>,
    egress: &impl Egress,
) -> Result<u16, XmitError> {
    let QuoteAt {
        l3,
        l4,
        il3,
        il4,
        end,
        ..
    } = QuoteAt::v4(meta, buf.len())?;
    let nh = next_hop(egress, to)?;
    let d = buf.data_mut();
    let ip = d.get_mut(l3..l4).ok_or(XmitError::Malformed)?;
    let mut ip = ipv4::Packet::new_unchecked(ip);
    route_ip(&mut ip, Side::Dst, to)?;
    set_addr(&mut ip, Side::Src, outer_src);
    let inner = d.get_mut(il3..il4).ok_or(XmitError::Malformed)?;
    let mut inner = ipv4::Packet::new_unchecked(inner);
    set_addr(&mut inner, Side::Src, q_src.addr);
    set_addr(&mut inner, Side::Dst, q_dst.addr);
    // TCP and UDP ports sit at the same place; the quoted checksum is left
    let ports = d.get_mut(il4..end).ok_or(XmitError::Malformed)?;
    set::<u16>(ports, tcp::field::SRC_PORT, q_src.port);
    set::<u16>(ports, tcp::field::DST_PORT, q_dst.port);
    let msg = d.get_mut(l4..end).ok_or(XmitError::Malformed)?;
    icmp::Packet::new_unchecked(msg).fill_checksum();
    set_eth(d, &nh)?;
    Ok(nh.port)
}
