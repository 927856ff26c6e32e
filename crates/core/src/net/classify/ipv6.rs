//! IPv6 frames: the fixed header, the bounded extension-header walk
//! ([`crate::net::wire::ipv6ext::walk`]), then
//!
//! - TCP or UDP to a unicast destination: [`Classified::Ipv6`] for the
//!   balancer (L4 header checked as IPv4's is);
//! - an ICMPv6 error (types 1 to 4) whose quote holds an IPv6 header, its
//!   own extension chain walked the same bounded way, and 8 bytes of TCP or
//!   UDP: [`Classified::Ipv6`] with the quote ([`IcmpQuote6`]), so the
//!   connection it is about gets it;
//! - any other ICMPv6 (neighbour discovery, echo, errors with a quote of
//!   no use): [`Classified::Icmpv6`] for the responder, as before;
//! - anything else a counted drop: a fragment, an extension chain that
//!   cannot be walked, another upper layer ([`NetDrop::Ipv6`]), hop limit 0
//!   (RFC 8200 §3: never forwarded; [`NetDrop::TtlExpired`]), TCP/UDP to
//!   a multicast destination.
//!
//! Nothing here reads past the IPv6 payload length or indexes unchecked.

use super::verdict::{l4_err, Classified, NetDrop};
use crate::net::meta::{FlowKey6, IcmpQuote6, PacketMeta6, PROTO_TCP, PROTO_UDP};
use crate::net::wire::ipv6ext::ExtError;
use crate::net::wire::{icmpv6, ipv6, tcp, udp};

/// The IPv6 loopback address ::1.
const LOOPBACK6: u128 = 1;

/// The IPv6 packet `p` (the Ethernet payload, at `l3_off` in the frame).
#[cold]
pub(super) fn ipv6_inner(
    p: &[u8],
    l3_off: usize,
    vlan: Option<u16>,
    port: u16,
) -> Result<Classified, NetDrop> {
    let ip = ipv6::Packet::new_checked(p).map_err(|_| NetDrop::BadIpv6)?;
    let (src, dst) = (ip.src(), ip.dst());
    if ipv6::is_multicast(src) || src == LOOPBACK6 {
        return Err(NetDrop::MartianSrc);
    }
    if dst == ipv6::UNSPECIFIED || dst == LOOPBACK6 {
        return Err(NetDrop::NotUnicastDst);
    }
    let ul = ip.upper_layer().map_err(ext_err)?;
    let payload = ip.payload();
    // the walk's offset is at most the payload's length
    let upper = payload.get(ul.offset..).unwrap_or(&[]);
    let l4_off = l3_off + ipv6::HEADER_LEN + ul.offset;
    let (Ok(l3), Ok(l4), Ok(ip_len)) = (
        u16::try_from(l3_off),
        u16::try_from(l4_off),
        u16::try_from(ip.total_len()),
    ) else {
        return Err(NetDrop::BadIpv6);
    };
    let mut meta = PacketMeta6 {
        port,
        vlan,
        l3_off: l3,
        l4_off: l4,
        ip_len,
        key: FlowKey6 {
            src,
            dst,
            sport: 0,
            dport: 0,
            proto: ul.protocol,
        },
        tcp_flags: 0,
        ttl: ip.hop_limit(),
        df: true,
        icmp: None,
    };
    match ul.protocol {
        ipv6::next_header::ICMPV6 => {
            if upper.len() < icmpv6::HEADER_LEN {
                return Err(NetDrop::L4Truncated);
            }
            let Ok(len) = u16::try_from(upper.len()) else {
                return Err(NetDrop::BadIpv6);
            };
            let to_balance = !ipv6::is_multicast(dst) && ip.hop_limit() != 0;
            match quote6(upper, l4_off).filter(|_| to_balance) {
                Some(q) => {
                    meta.icmp = Some(q);
                    Ok(Classified::Ipv6(meta))
                }
                None => Ok(Classified::Icmpv6 {
                    l3_off: l3,
                    l4_off: l4,
                    len,
                    vlan,
                }),
            }
        }
        PROTO_TCP | PROTO_UDP => {
            if ipv6::is_multicast(dst) {
                return Err(NetDrop::NotUnicastDst);
            }
            if ip.hop_limit() == 0 {
                return Err(NetDrop::TtlExpired);
            }
            if ul.protocol == PROTO_TCP {
                let t = tcp::Packet::new_checked(upper).map_err(l4_err)?;
                meta.key.sport = t.src_port();
                meta.key.dport = t.dst_port();
                meta.tcp_flags = t.flags();
            } else {
                let u = udp::Packet::new_checked(upper).map_err(l4_err)?;
                meta.key.sport = u.src_port();
                meta.key.dport = u.dst_port();
            }
            Ok(Classified::Ipv6(meta))
        }
        _ => Err(NetDrop::Ipv6),
    }
}

fn ext_err(e: ExtError) -> NetDrop {
    match e {
        ExtError::Fragment { .. } => NetDrop::Ipv6Fragment,
        _ => NetDrop::Ipv6ExtHeader,
    }
}

/// The packet an ICMPv6 error `msg` (at `l4_off` in the frame) quotes,
/// when it is an error of types 1 to 4 quoting an IPv6 header (version
/// 6), whose extension chain walks to TCP or UDP with at least 8 bytes of
/// it in the quote. The quoted payload length is not checked: the quote
/// is usually cut short.
fn quote6(msg: &[u8], l4_off: usize) -> Option<IcmpQuote6> {
    let t = *msg.get(icmpv6::field::TYPE)?;
    if !icmpv6::msg_type::quotes_packet(t) {
        return None;
    }
    let q = msg.get(icmpv6::HEADER_LEN..)?;
    let fixed = q.get(..ipv6::HEADER_LEN)?;
    let ip = ipv6::Packet::new_unchecked(fixed);
    if ip.version() != 6 {
        return None;
    }
    let after = q.get(ipv6::HEADER_LEN..)?;
    let ul = crate::net::wire::ipv6ext::walk(ip.next_header(), after).ok()?;
    let l4 = after.get(ul.offset..ul.offset + icmpv6::QUOTED_PAYLOAD_MIN)?;
    let (sport, dport) = match ul.protocol {
        PROTO_TCP => {
            let t = tcp::Packet::new_unchecked(l4);
            (t.src_port(), t.dst_port())
        }
        PROTO_UDP => {
            let u = udp::Packet::new_unchecked(l4);
            (u.src_port(), u.dst_port())
        }
        _ => return None,
    };
    let inner_l3 = l4_off + icmpv6::HEADER_LEN;
    let inner_l4 = inner_l3 + ipv6::HEADER_LEN + ul.offset;
    Some(IcmpQuote6 {
        icmp_type: t,
        code: *msg.get(icmpv6::field::CODE)?,
        inner_l3_off: u16::try_from(inner_l3).ok()?,
        inner_l4_off: u16::try_from(inner_l4).ok()?,
        inner_key: FlowKey6 {
            src: ip.src(),
            dst: ip.dst(),
            sport,
            dport,
            proto: ul.protocol,
        },
    })
}
