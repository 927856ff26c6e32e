//! NAT: rewrite VIP:vport <-> RIP:rport with incremental checksums
//! (RFC 1624), for TCP/UDP packets and for ICMP errors quoting them.

use super::{next_hop, rd16, rd32, set_eth, wr16, wr32, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::checksum::{checksum, update16, update32};
use crate::net::egress::Egress;
use crate::net::meta::{PacketMeta, PROTO_TCP, PROTO_UDP};

/// IPv4 source address offset.
const SRC: usize = 12;
/// IPv4 destination address offset.
const DST: usize = 16;

/// Which side of the packet to rewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Destination address and port (requests: VIP:vport -> RIP:rport).
    Dst,
    /// Source address and port (replies: RIP:rport -> VIP:vport).
    Src,
}

/// Decrement the TTL of the IPv4 header at `l3`, updating its checksum.
fn dec_ttl(d: &mut [u8], l3: usize) -> Result<(), XmitError> {
    let w = rd16(d, l3 + 8)?;
    if (w >> 8) <= 1 {
        return Err(XmitError::TtlExceeded);
    }
    let nw = w - 0x100;
    wr16(d, l3 + 8, nw)?;
    let c = rd16(d, l3 + 10)?;
    wr16(d, l3 + 10, update16(c, w, nw))
}

/// Replace the address at `l3 + off` and fix the IPv4 header checksum;
/// returns the old address.
fn set_addr(d: &mut [u8], l3: usize, off: usize, new: u32) -> Result<u32, XmitError> {
    let old = rd32(d, l3 + off)?;
    wr32(d, l3 + off, new)?;
    let c = rd16(d, l3 + 10)?;
    wr16(d, l3 + 10, update32(c, old, new))?;
    Ok(old)
}

/// Rewrite one side of a TCP/UDP packet in place: address, port, IP and
/// L4 checksums (UDP checksum 0 stays 0), TTL decremented; then Ethernet
/// toward `route_to` (the RS for requests, the client for replies).
/// Returns the egress port. Nothing is modified when an error is returned,
/// except for [`XmitError::NoRoute`]/[`XmitError::Unresolved`] which are
/// checked first too.
pub fn nat<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    side: Side,
    addr: u32,
    port: u16,
    route_to: u32,
    egress: &impl Egress,
) -> Result<u16, XmitError> {
    let nh = next_hop(egress, route_to)?;
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    let csum_off = match meta.key.proto {
        PROTO_TCP => l4 + 16,
        PROTO_UDP => l4 + 6,
        _ => return Err(XmitError::Malformed),
    };
    let d = buf.data_mut();
    if d.len() < csum_off + 2 || l4 < l3 + 20 {
        return Err(XmitError::Malformed);
    }
    if d[l3 + 8] <= 1 {
        return Err(XmitError::TtlExceeded);
    }
    let (aoff, poff) = match side {
        Side::Dst => (DST, 2),
        Side::Src => (SRC, 0),
    };
    dec_ttl(d, l3)?;
    let old_addr = set_addr(d, l3, aoff, addr)?;
    let old_port = rd16(d, l4 + poff)?;
    wr16(d, l4 + poff, port)?;
    let c = rd16(d, csum_off)?;
    if !(meta.key.proto == PROTO_UDP && c == 0) {
        let mut n = update16(update32(c, old_addr, addr), old_port, port);
        if meta.key.proto == PROTO_UDP && n == 0 {
            n = 0xffff;
        }
        wr16(d, csum_off, n)?;
    }
    set_eth(d, &nh)?;
    Ok(nh.port)
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
    let q = meta.icmp.ok_or(XmitError::Malformed)?;
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    let il3 = q.inner_l3_off as usize;
    let il4 = q.inner_l4_off as usize;
    let end = l3 + meta.ip_len as usize;
    if l4 < l3 + 20 || il3 < l4 + 8 || il4 < il3 + 20 || il4 + 4 > end || buf.len() < end {
        return Err(XmitError::Malformed);
    }
    let route_to = match side {
        Side::Dst => addr,
        Side::Src => rd32(buf.data(), l3 + DST)?,
    };
    let nh = next_hop(egress, route_to)?;
    let d = buf.data_mut();
    if d[l3 + 8] <= 1 {
        return Err(XmitError::TtlExceeded);
    }
    dec_ttl(d, l3)?;
    match side {
        Side::Dst => {
            set_addr(d, l3, DST, addr)?;
            set_addr(d, il3, SRC, addr)?;
            wr16(d, il4, port)?;
        }
        Side::Src => {
            set_addr(d, l3, SRC, addr)?;
            set_addr(d, il3, DST, addr)?;
            wr16(d, il4 + 2, port)?;
        }
    }
    wr16(d, l4 + 2, 0)?;
    let c = checksum(d.get(l4..end).ok_or(XmitError::Malformed)?);
    wr16(d, l4 + 2, c)?;
    set_eth(d, &nh)?;
    Ok(nh.port)
}
