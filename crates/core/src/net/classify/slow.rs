//! The general classifier through the checked wire views: every frame
//! shape, every drop reason.

use super::addr_class::{is_martian_src, is_not_unicast_dst};
use super::ipv6;
use super::verdict::{l4_err, Classified, NetDrop};
use crate::net::meta::{FlowKey, IcmpQuote, PacketMeta, PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use crate::net::wire::{self, arp, ethernet, icmp, ipv4, tcp, udp, WireError};

/// The general classifier through the checked wire views: every frame
/// shape, every drop reason. [`classify`](super::classify) gives the same answer
/// faster.
#[inline(never)]
pub(crate) fn classify_slow(frame: &[u8], port: u16) -> Classified {
    match classify_inner(frame, port) {
        Ok(c) => c,
        Err(d) => Classified::Drop(d),
    }
}

fn classify_inner(frame: &[u8], port: u16) -> Result<Classified, NetDrop> {
    let eth = ethernet::Frame::new_checked(frame).map_err(|_| NetDrop::Truncated)?;
    if wire::mac_is_group(eth.src()) {
        return Err(NetDrop::BadSrcMac);
    }
    let vlan = eth.vlan();
    let l3_off = eth.header_len();
    match eth.ethertype() {
        ethernet::ethertype::IPV4 => {}
        ethernet::ethertype::ARP => {
            arp::Packet::new_checked(eth.payload()).map_err(|_| NetDrop::BadArp)?;
            return Ok(Classified::Arp {
                arp_off: l3_off as u16,
                vlan,
            });
        }
        ethernet::ethertype::IPV6 => return ipv6::ipv6_inner(eth.payload(), l3_off, vlan, port),
        ethernet::ethertype::VLAN | ethernet::ethertype::QINQ => return Err(NetDrop::StackedVlan),
        _ => return Err(NetDrop::UnknownEthertype),
    }
    let ip = ipv4::Packet::new_checked(eth.payload()).map_err(|e| match e {
        WireError::BadVersion => NetDrop::BadVersion,
        WireError::BadHeaderLen => NetDrop::BadIhl,
        WireError::BadTotalLen => NetDrop::BadTotalLen,
        _ => NetDrop::Truncated,
    })?;
    if !ip.verify_checksum() {
        return Err(NetDrop::BadIpChecksum);
    }
    if ip.is_fragment() {
        return Err(NetDrop::Fragment);
    }
    if ip.ttl() == 0 {
        return Err(NetDrop::TtlExpired);
    }
    let (src, dst) = (ip.src(), ip.dst());
    if is_martian_src(src) {
        return Err(NetDrop::MartianSrc);
    }
    if is_not_unicast_dst(dst) {
        return Err(NetDrop::NotUnicastDst);
    }
    let l4_off = l3_off + ip.header_len();
    let proto = ip.protocol();
    let payload = ip.payload();
    let mut meta = PacketMeta {
        port,
        vlan,
        l3_off: l3_off as u16,
        l4_off: l4_off as u16,
        ip_len: ip.total_len(),
        key: FlowKey {
            src,
            dst,
            sport: 0,
            dport: 0,
            proto,
        },
        tcp_flags: 0,
        ttl: ip.ttl(),
        df: ip.dont_frag(),
        icmp: None,
    };
    match proto {
        PROTO_TCP => {
            let t = tcp::Packet::new_checked(payload).map_err(l4_err)?;
            meta.key.sport = t.src_port();
            meta.key.dport = t.dst_port();
            meta.tcp_flags = t.flags();
        }
        PROTO_UDP => {
            let u = udp::Packet::new_checked(payload).map_err(l4_err)?;
            meta.key.sport = u.src_port();
            meta.key.dport = u.dst_port();
        }
        PROTO_ICMP => {
            let i = icmp::Packet::new_checked(payload).map_err(l4_err)?;
            if icmp::msg_type::is_error(i.msg_type()) {
                meta.icmp = quote(&i, l4_off + icmp::HEADER_LEN);
            }
        }
        _ => return Err(NetDrop::UnsupportedProto),
    }
    Ok(Classified::Ipv4(meta))
}

/// The quoted packet of an ICMP error, when it holds a plausible IPv4
/// header (version 4, IHL >= 5) and at least 8 bytes after it. The quoted
/// total length and checksum are not checked: routers may quote packets
/// they already changed, and the quote is usually cut short.
fn quote(i: &icmp::Packet<&[u8]>, inner_l3_off: usize) -> Option<IcmpQuote> {
    let q = i.data();
    let ip = ipv4::Packet::new_unchecked(q);
    let hl = ip.header_len();
    if q.len() < ipv4::MIN_HEADER_LEN || ip.version() != 4 || hl < ipv4::MIN_HEADER_LEN {
        return None;
    }
    let l4 = q.get(hl..hl + icmp::QUOTED_PAYLOAD_LEN)?;
    let proto = ip.protocol();
    let (sport, dport) = match proto {
        PROTO_TCP => {
            let t = tcp::Packet::new_unchecked(l4);
            (t.src_port(), t.dst_port())
        }
        PROTO_UDP => {
            let u = udp::Packet::new_unchecked(l4);
            (u.src_port(), u.dst_port())
        }
        _ => (0, 0),
    };
    Some(IcmpQuote {
        icmp_type: i.msg_type(),
        code: i.code(),
        inner_l3_off: inner_l3_off as u16,
        inner_l4_off: (inner_l3_off + hl) as u16,
        inner_key: FlowKey {
            src: ip.src(),
            dst: ip.dst(),
            sport,
            dport,
            proto,
        },
    })
}
