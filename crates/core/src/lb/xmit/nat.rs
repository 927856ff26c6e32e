//! NAT: rewrite VIP:vport <-> RIP:rport with incremental checksums
//! (RFC 1624), for TCP/UDP packets and for ICMP errors quoting them.

use super::error::XmitError;
use super::quote::QuoteAt;
use super::route::{next_hop, set_eth};
use crate::net::buf::PacketBuf;
use crate::net::checksum;
use crate::net::egress::{Egress, EgressTo};
use crate::net::family::Addr;
use crate::net::meta::{Meta, PacketMeta, PROTO_TCP, PROTO_UDP};
use crate::net::wire::{be16_at, be32_at, ethernet, get, icmp, ipv4, ipv6, set, tcp, udp};

/// Which side of the packet to rewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Destination address and port (requests: VIP:vport -> RIP:rport).
    Dst,
    /// Source address and port (replies: RIP:rport -> VIP:vport).
    Src,
}

impl Side {
    /// The side of a packet quoted in an ICMP error about this one: the
    /// quote travelled the other way.
    fn quoted(self) -> Side {
        match self {
            Side::Dst => Side::Src,
            Side::Src => Side::Dst,
        }
    }
}

/// Decrement the TTL of `ip` and set its `side` address to `addr`, keeping
/// the header checksum right; returns the old address.
/// [`XmitError::TtlExceeded`] (nothing written) when the TTL is 1 or 0.
#[inline]
pub(super) fn route_ip(
    ip: &mut ipv4::Packet<&mut [u8]>,
    side: Side,
    addr: u32,
) -> Result<u32, XmitError> {
    let ttl = ip.ttl();
    if ttl <= 1 {
        return Err(XmitError::TtlExceeded);
    }
    ip.set_ttl_update_checksum(ttl - 1);
    Ok(set_addr(ip, side, addr))
}

/// Set the `side` address of `ip` to `addr`, keeping the header checksum
/// right; returns the old address.
#[inline]
pub(super) fn set_addr(ip: &mut ipv4::Packet<&mut [u8]>, side: Side, addr: u32) -> u32 {
    match side {
        Side::Dst => ip.set_dst_update_checksum(addr),
        Side::Src => ip.set_src_update_checksum(addr),
    }
}

/// What NAT's one-pass rewrite needs of a family's fixed IP header,
/// implemented by its address type.
pub trait NatHeader: Addr + Eq {
    /// The fixed header's length.
    const HEADER_LEN: usize;
    /// Whether a UDP checksum of 0 (none) is carried as it is. IPv4: yes.
    /// IPv6: no, such a packet is [`XmitError::Malformed`]: IPv6 has no
    /// checksum-less UDP (RFC 8200 §8.1, a receiver discards it), and
    /// computing one here would vouch for data its sender never covered.
    /// (IPVS keeps the 0; RFC 6935's zero-checksum tunnels are not
    /// balanced through a VIP.)
    const UDP_NO_CHECKSUM: bool;
    /// Whether the metadata's bounds are checked again (IPv6: the header
    /// up to its checksum inside the IPv6 packet, the packet inside the
    /// frame). IPv4 trusts classify's (every established NAT packet comes
    /// here; the slices below still never panic).
    const RECHECK_META: bool;
    /// The TTL (hop limit) decremented and the `side` address of the
    /// fixed header `ip` set to `addr` (IPv4: its header checksum adjusted
    /// once for both); the old address. [`XmitError::TtlExceeded`]
    /// (nothing written) when it is 1 or 0.
    fn rewrite_ip(ip: &mut [u8], side: Side, addr: Self) -> Result<Self, XmitError>;
    /// The source address of the fixed header `ip` set to `addr` (IPv4:
    /// its header checksum adjusted), the TTL left alone: FullNAT's
    /// second address, after [`Self::rewrite_ip`] set the first. The old
    /// address.
    fn set_src(ip: &mut [u8], addr: Self) -> Result<Self, XmitError>;
    /// `!old + new` over the address's 16-bit words, unfolded (the
    /// pseudo header's part of an RFC 1624 update).
    fn word_diff(old: Self, new: Self) -> u32;
}

impl NatHeader for u32 {
    const HEADER_LEN: usize = ipv4::MIN_HEADER_LEN;
    const UDP_NO_CHECKSUM: bool = true;
    const RECHECK_META: bool = false;
    #[inline(always)]
    fn rewrite_ip(ip: &mut [u8], side: Side, addr: u32) -> Result<u32, XmitError> {
        let ip: &mut [u8; ipv4::MIN_HEADER_LEN] =
            ip.try_into().map_err(|_| XmitError::Malformed)?;
        rewrite_ip(ip, side, addr)
    }
    #[inline(always)]
    fn set_src(ip: &mut [u8], addr: u32) -> Result<u32, XmitError> {
        let ip = ip
            .get_mut(..ipv4::MIN_HEADER_LEN)
            .ok_or(XmitError::Malformed)?;
        Ok(ipv4::Packet::new_unchecked(ip).set_src_update_checksum(addr))
    }
    #[inline(always)]
    fn word_diff(old: u32, new: u32) -> u32 {
        word_diff32(old, new)
    }
}

impl NatHeader for u128 {
    const HEADER_LEN: usize = ipv6::HEADER_LEN;
    const UDP_NO_CHECKSUM: bool = false;
    const RECHECK_META: bool = true;
    #[inline(always)]
    fn rewrite_ip(ip: &mut [u8], side: Side, addr: u128) -> Result<u128, XmitError> {
        use ipv6::field::{DST, HOP_LIMIT, SRC};
        let hop = get::<u8>(ip, HOP_LIMIT);
        if hop <= 1 {
            return Err(XmitError::TtlExceeded); // RFC 8200 §3
        }
        set::<u8>(ip, HOP_LIMIT, hop - 1);
        let at = match side {
            Side::Dst => DST,
            Side::Src => SRC,
        };
        let old = get::<u128>(ip, at.clone());
        set::<u128>(ip, at, addr);
        Ok(old)
    }
    #[inline(always)]
    fn set_src(ip: &mut [u8], addr: u128) -> Result<u128, XmitError> {
        use ipv6::field::SRC;
        if ip.len() < ipv6::HEADER_LEN {
            return Err(XmitError::Malformed);
        }
        let old = get::<u128>(ip, SRC);
        set::<u128>(ip, SRC, addr);
        Ok(old)
    }
    #[inline(always)]
    fn word_diff(old: u128, new: u128) -> u32 {
        checksum::sum128(!old) + checksum::sum128(new)
    }
}

/// Whether `meta`'s packet, with `l4_need` bytes of its L4 header, lies
/// inside a frame of `frame_len` bytes as it says.
#[inline]
pub(super) fn fits<A>(meta: &Meta<A>, l4_need: usize, frame_len: usize) -> bool {
    let end = meta.l3_off as usize + meta.ip_len as usize;
    meta.l3_off as usize >= ethernet::HEADER_LEN
        && meta.l4_off as usize + l4_need <= end
        && end <= frame_len
}

/// Rewrite one side of a TCP/UDP packet in place, either family: address
/// and port (`Side::Dst` for requests, VIP:vport → RIP:rport; `Side::Src`
/// for replies, RIP:rport → VIP:vport), the IP checksum (IPv4) and the
/// L4 checksum (UDP's 0 stays 0 in IPv4, see
/// [`NatHeader::UDP_NO_CHECKSUM`]), TTL or hop limit decremented; then
/// Ethernet toward `route_to` (the RS for requests, the client for
/// replies). Returns the egress port. Nothing is modified when an error
/// is returned, except for [`XmitError::NoRoute`]/[`XmitError::Unresolved`]
/// which are checked first too.
///
/// Every established NAT packet comes here, so the rewrite is done in one
/// pass over fixed-size views: each checksum is read, adjusted for all its
/// changed words in one RFC 1624 sum (the TTL word and the address for the
/// IPv4 header; the pseudo-header address and the port for TCP/UDP) and
/// written once.
///
/// IPv6: the pseudo header is taken to hold the fixed header's
/// destination: a packet still carrying a Routing header with segments
/// left is not for the VIP to balance.
#[inline(always)]
pub fn nat<A: NatHeader, B: PacketBuf>(
    buf: &mut B,
    meta: &Meta<A>,
    side: Side,
    addr: A,
    port: u16,
    route_to: A,
    egress: &impl EgressTo<A>,
) -> Result<u16, XmitError> {
    let nh = next_hop(egress, route_to)?;
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    // where the L4 checksum is; the header up to it must be there
    let (ck, optional) = match meta.key.proto {
        PROTO_TCP => (tcp::field::CHECKSUM.start, false),
        PROTO_UDP => (udp::field::CHECKSUM.start, true),
        _ => return Err(XmitError::Malformed),
    };
    let d = buf.data_mut();
    if l4 < l3 + A::HEADER_LEN || (A::RECHECK_META && !fits(meta, ck + size_of::<u16>(), d.len())) {
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
    let old_addr = A::rewrite_ip(ip, side, addr)?;
    // the port, and the L4 checksum for it and the pseudo header's address
    // (TCP's and UDP's ports are at the same offsets)
    let at = match side {
        Side::Dst => tcp::field::DST_PORT,
        Side::Src => tcp::field::SRC_PORT,
    };
    let old_port = get::<u16>(seg, at.clone());
    set::<u16>(seg, at, port);
    let c = get::<u16>(seg, ck);
    if !(optional && c == 0) {
        let s = (!c as u32) + A::word_diff(old_addr, addr) + (!old_port as u32) + port as u32;
        let mut n = !checksum::fold(s);
        if optional && n == 0 {
            n = 0xffff;
        }
        set::<u16>(seg, ck, n);
    }
    set_eth(d, &nh)?;
    Ok(nh.port)
}

/// `!old + new` over the two 16-bit words of a 32-bit field, unfolded
/// (an RFC 1624 term: at most 4 × 0xffff).
#[inline(always)]
fn word_diff32(old: u32, new: u32) -> u32 {
    ((!old >> 16) & 0xffff) + (!old & 0xffff) + (new >> 16) + (new & 0xffff)
}

/// The IPv4 part of [`nat`] on the fixed header: the TTL decremented and
/// the `side` address set to `addr`, the header checksum adjusted once for
/// both; returns the old address. [`XmitError::TtlExceeded`] (nothing
/// written) when the TTL is 1 or 0.
#[inline(always)]
fn rewrite_ip(
    ip: &mut [u8; ipv4::MIN_HEADER_LEN],
    side: Side,
    addr: u32,
) -> Result<u32, XmitError> {
    use ipv4::field::{CHECKSUM, DST, SRC, TTL};
    let ttl = ip[TTL];
    if ttl <= 1 {
        return Err(XmitError::TtlExceeded);
    }
    ip[TTL] = ttl - 1;
    let at = match side {
        Side::Dst => DST,
        Side::Src => SRC,
    };
    let old = be32_at(ip, at.start);
    ip[at].copy_from_slice(&addr.to_be_bytes());
    // the TTL/protocol word drops by 0x0100: `!m + m'` is the one's
    // complement of 0x0100
    let c = be16_at(ip, CHECKSUM.start);
    let s = (!c as u32) + 0xfeff + word_diff32(old, addr);
    ip[CHECKSUM].copy_from_slice(&(!checksum::fold(s)).to_be_bytes());
    Ok(old)
}

/// Translate an ICMP error quoting a NAT connection.
///
/// * `Side::Dst` (error from the client side, sent to the VIP, quoting our
///   VIP:vport → client packet): outer destination VIP → `addr` (RIP),
///   quoted source VIP:vport → RIP:rport; routed to the RS.
/// * `Side::Src` (error from the RS side, quoting client → RIP:rport):
///   outer source → VIP (as IPVS), quoted destination RIP:rport →
///   VIP:vport; routed to the outer destination (the client).
///
/// Both IPv4 header checksums are fixed incrementally and the ICMP checksum
/// is recomputed over the message, as IPVS `ip_vs_nat_icmp` does (the
/// quoted TCP/UDP checksum is left as is, like IPVS). TTL decremented.
pub fn nat_icmp<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    side: Side,
    addr: u32,
    port: u16,
    egress: &impl Egress,
) -> Result<u16, XmitError> {
    let QuoteAt {
        l3,
        l4,
        il3,
        il4,
        end,
        proto: quoted_proto,
    } = QuoteAt::v4(meta, buf.len())?;
    let route_to = match side {
        Side::Dst => addr,
        Side::Src => {
            let ip = buf.data().get(l3..l4).ok_or(XmitError::Malformed)?;
            ipv4::Packet::new_unchecked(ip).dst()
        }
    };
    let nh = next_hop(egress, route_to)?;
    let d = buf.data_mut();
    let ip = d.get_mut(l3..l4).ok_or(XmitError::Malformed)?;
    route_ip(&mut ipv4::Packet::new_unchecked(ip), side, addr)?;
    let inner = d.get_mut(il3..il4).ok_or(XmitError::Malformed)?;
    set_addr(&mut ipv4::Packet::new_unchecked(inner), side.quoted(), addr);
    // TCP and UDP ports sit at the same place; the quoted checksum is left
    let ports = d.get_mut(il4..end).ok_or(XmitError::Malformed)?;
    match (quoted_proto, side.quoted()) {
        (PROTO_TCP, Side::Dst) => tcp::Packet::new_unchecked(ports).set_dst_port(port),
        (PROTO_TCP, Side::Src) => tcp::Packet::new_unchecked(ports).set_src_port(port),
        (_, Side::Dst) => udp::Packet::new_unchecked(ports).set_dst_port(port),
        (_, Side::Src) => udp::Packet::new_unchecked(ports).set_src_port(port),
    }
    let msg = d.get_mut(l4..end).ok_or(XmitError::Malformed)?;
    icmp::Packet::new_unchecked(msg).fill_checksum();
    set_eth(d, &nh)?;
    Ok(nh.port)
}
