//! TUN to an IPv4 real server: prepend an outer IPv4 header, and the
//! real server's GUE or GRE header after it ([`super::encap`]).

use super::encap;
use super::error::XmitError;
use super::frame::{pull_link_header, trim_padding};
use super::route::{next_hop, set_eth};
use crate::lb::tunnel::Tunnel;
use crate::net::buf::PacketBuf;
use crate::net::egress::Egress;
use crate::net::meta::{PacketMeta, PROTO_IPIP};
use crate::net::wire::{ethernet, ipv4, udp};

/// Outer header length (no options).
pub const OUTER_LEN: usize = ipv4::Repr::HEADER_LEN;

/// Encapsulate the IP packet described by `meta` toward `rip` in tunnel
/// `t` (IPIP, GUE or GRE).
///
/// Outer header: source `tunnel_src` (or the egress port's address), dest
/// `rip`, TOS, TTL and DF copied from the inner header, ID from `ip_id`
/// (incremented), checksum computed. The Ethernet header (and any VLAN
/// tag) moves 20 bytes (+ the tunnel header, [`Tunnel::extra_len`]) to
/// the front and gets the next hop's MACs; Ethernet padding is trimmed
/// first. When inner length + the outer bytes exceeds the egress MTU the
/// packet is left untouched and [`XmitError::NeedFrag`] (DF set, with
/// the MTU less the outer bytes) or [`XmitError::TooBig`] is returned.
pub fn tun<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    rip: u32,
    tunnel_src: Option<u32>,
    egress: &impl Egress,
    ip_id: &mut u16,
    t: Tunnel,
) -> Result<u16, XmitError> {
    // IPIP gets the routine with its tunnel a constant: its extra bytes
    // and the tunnel header fold away, and its per-packet cost stays what
    // it was before GUE and GRE (callgrind); the others take one call
    if t.is_default() {
        encap(buf, meta, rip, tunnel_src, egress, ip_id, Tunnel::IPIP)
    } else {
        encap_other(buf, meta, rip, tunnel_src, egress, ip_id, t)
    }
}

/// [`tun`] for GUE and GRE, out of IPIP's line.
#[inline(never)]
fn encap_other<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    rip: u32,
    tunnel_src: Option<u32>,
    egress: &impl Egress,
    ip_id: &mut u16,
    t: Tunnel,
) -> Result<u16, XmitError> {
    encap(buf, meta, rip, tunnel_src, egress, ip_id, t)
}

/// The one encapsulation routine, parameterised by the tunnel.
#[inline(always)]
fn encap<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    rip: u32,
    tunnel_src: Option<u32>,
    egress: &impl Egress,
    ip_id: &mut u16,
    t: Tunnel,
) -> Result<u16, XmitError> {
    let nh = next_hop(egress, rip)?;
    let l3 = meta.l3_off as usize;
    let inner_len = meta.ip_len as usize;
    let extra = t.extra_len();
    let outer_len = OUTER_LEN + extra;
    if inner_len + outer_len > nh.mtu as usize {
        return Err(if meta.df {
            XmitError::NeedFrag {
                mtu: nh.mtu.saturating_sub(outer_len as u16),
            }
        } else {
            XmitError::TooBig
        });
    }
    // the outer total length must fit in 16 bits (the MTU check implies it)
    let Some(payload_len) = meta.ip_len.checked_add(extra as u16) else {
        return Err(XmitError::TooBig);
    };
    if payload_len.checked_add(OUTER_LEN as u16).is_none() {
        return Err(XmitError::TooBig);
    }
    if l3 < ethernet::HEADER_LEN || buf.len() < l3 + inner_len || inner_len < ipv4::MIN_HEADER_LEN {
        return Err(XmitError::Malformed);
    }
    let inner = buf.data().get(l3..).ok_or(XmitError::Malformed)?;
    let inner = ipv4::Packet::new_unchecked(inner);
    let (dscp_ecn, ttl, dont_frag) = (inner.dscp_ecn(), inner.ttl(), inner.dont_frag());
    trim_padding(buf, l3, inner_len)?;
    if !buf.prepend(outer_len) {
        return Err(XmitError::NoRoom);
    }
    let d = buf.data_mut();
    // the link header moves to the front; its addresses are rewritten by
    // `set_eth` below
    pull_link_header(d, l3, outer_len);
    let ident = *ip_id;
    *ip_id = ident.wrapping_add(1);
    let outer = d.get_mut(l3..l3 + OUTER_LEN).ok_or(XmitError::Malformed)?;
    let src = tunnel_src.unwrap_or(nh.src_ip);
    ipv4::Repr {
        src,
        dst: rip,
        protocol: encap::outer_proto(&t, PROTO_IPIP),
        payload_len,
        ttl,
        dscp_ecn,
        ident,
        dont_frag,
    }
    .emit(&mut ipv4::Packet::new_unchecked(outer));
    if extra != 0 {
        let end = l3 + outer_len + inner_len;
        let tail = d.get_mut(l3 + OUTER_LEN..end).ok_or(XmitError::Malformed)?;
        encap::emit(tail, &t, true, encap::src_port(&meta.key));
        if encap::udp_checksum_needed(&t) {
            udp::Packet::new_unchecked(tail).fill_checksum(src, rip);
        }
    }
    set_eth(d, &nh)?;
    Ok(nh.port)
}
