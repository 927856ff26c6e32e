//! IPv6-in-IPv6 tunnelling (RFC 2473): prepend an outer IPv6 header toward
//! the real server, as Linux IPVS does for IPv6 real servers, and the real
//! server's GUE or GRE header after it ([`crate::lb::xmit::encap`]).

use crate::lb::tunnel::Tunnel;
use crate::lb::xmit::encap;
use crate::lb::xmit::error::XmitError;
use crate::lb::xmit::route::{next_hop, set_eth};
use crate::net::buf::PacketBuf;
use crate::net::egress::Egress6;
use crate::net::meta::PacketMeta6;
use crate::net::wire::{ethernet, ipv6, udp};

/// Outer header length (no extension headers).
pub const OUTER_LEN: usize = ipv6::HEADER_LEN;

/// Encapsulate the IPv6 packet described by `meta` toward `rip` in tunnel
/// `t` (IPIP, GUE or GRE: the outer bytes are 40 + [`Tunnel::extra_len`]).
///
/// Outer header: next header 41 (IPv6; 17 for GUE, 47 for GRE), source `tunnel_src` or else the
/// egress port's address toward `rip` ([`XmitError::NoRoute`] when that is
/// unspecified), destination `rip`, payload length = the inner packet's
/// length. Copied from the inner header:
///
/// * the **hop limit**, as IPVS's `ip_vs_tunnel_xmit_v6` does (it takes
///   `ttl` from `ip_vs_prepare_tunneled_skb`, the inner hop limit, not the
///   route's default) and as dirigo's IPv4 TUN copies the TTL;
/// * the **traffic class** (IPVS: `ipv6_change_dsfield(.., dsfield)`);
/// * the **flow label**. IPVS writes 0; copying keeps one inner flow on one
///   ECMP path between director and real server while different flows
///   spread (RFC 6438's aim for tunnels), at no cost. An inner label of 0
///   stays 0.
///
/// The Ethernet header (and any VLAN tag) moves 40 bytes to the front and
/// gets the next hop's MACs; Ethernet padding after the inner packet is
/// dropped. When the inner packet + 40 exceeds the egress MTU the frame is
/// left untouched and [`XmitError::NeedFrag`] carries the MTU to report
/// (egress MTU − 40): IPv6 routers never fragment, so there is no
/// "fragment it anyway" case as IPv4's DF-clear [`XmitError::TooBig`].
/// Every other error leaves the frame untouched too.
pub fn tun6<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta6,
    rip: u128,
    tunnel_src: Option<u128>,
    egress: &impl Egress6,
    t: Tunnel,
) -> Result<u16, XmitError> {
    let nh = next_hop(egress, rip)?;
    let src = tunnel_src.unwrap_or(nh.src_ip);
    if src == ipv6::UNSPECIFIED {
        return Err(XmitError::NoRoute);
    }
    let l3 = meta.l3_off as usize;
    let inner_len = meta.ip_len as usize;
    let end = l3 + inner_len;
    if l3 < ethernet::HEADER_LEN || inner_len < ipv6::HEADER_LEN || buf.len() < end {
        return Err(XmitError::Malformed);
    }
    let extra = t.extra_len();
    let outer_len = OUTER_LEN + extra;
    if inner_len + outer_len > nh.mtu as usize {
        return Err(XmitError::NeedFrag {
            mtu: nh.mtu.saturating_sub(outer_len as u16),
        });
    }
    let Some(payload_len) = meta.ip_len.checked_add(extra as u16) else {
        return Err(XmitError::TooBig);
    };
    let inner = buf.data().get(l3..end).ok_or(XmitError::Malformed)?;
    let inner = ipv6::Packet::new_unchecked(inner);
    let (traffic_class, flow_label, hop_limit) =
        (inner.traffic_class(), inner.flow_label(), inner.hop_limit());
    // grow first, then drop the padding: a failure changes nothing
    if !buf.prepend(outer_len) {
        return Err(XmitError::NoRoom);
    }
    if !buf.trim_to(outer_len + end) {
        return Err(XmitError::Malformed);
    }
    let d = buf.data_mut();
    // the link header moves to the front; its addresses are rewritten by
    // `set_eth6` below
    crate::lb::xmit::frame::pull_link_header(d, l3, outer_len);
    let outer = d.get_mut(l3..l3 + OUTER_LEN).ok_or(XmitError::Malformed)?;
    ipv6::Repr {
        src,
        dst: rip,
        next_header: encap::outer_proto(&t, ipv6::NEXT_HEADER_IPV6),
        payload_len,
        hop_limit,
        traffic_class,
        flow_label,
    }
    .emit(&mut ipv6::Packet::new_unchecked(outer));
    if extra != 0 {
        let tail = d
            .get_mut(l3 + OUTER_LEN..outer_len + end)
            .ok_or(XmitError::Malformed)?;
        encap::emit(tail, &t, false, encap::src_port(&meta.key));
        if encap::udp_checksum_needed(&t) {
            udp::Packet::new_unchecked(tail).fill_checksum_v6(src, rip);
        }
    }
    set_eth(d, &nh)?;
    Ok(nh.port)
}
