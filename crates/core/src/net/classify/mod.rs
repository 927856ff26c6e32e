//! First look at a received frame: ARP, a validated IPv4 packet, an ICMPv6
//! message for the IPv6 responder, or a drop with a countable reason.
//!
//! [`classify`] reads at most the Ethernet, IPv4 and L4 headers (plus the
//! quoted header of an ICMP error; for IPv6 the fixed header and the
//! bounded extension-header walk), never allocates and never panics on any
//! input. The common IPv6 packet (untagged, TCP or UDP right behind the
//! fixed header) has a fast path of its own (`fast::classify_fast6`);
//! extension headers, ICMPv6 and every IPv6 drop take the slow path. It verifies the IPv4 header checksum but not TCP/UDP checksums
//! (a director passes those through unchanged or updates them incrementally).
//!
//! TTL: only TTL 0 is dropped here ([`NetDrop::TtlExpired`]). A packet with
//! TTL 1 addressed to one of our addresses or VIPs is valid (the last hop of
//! a traceroute, a `ping -t 1` from the same segment) and LVS forwarding does
//! not decrement TTL; a path that does decrement checks `meta.ttl <= 1`.

use crate::net::meta::{
    FlowKey, IcmpQuote, PacketMeta, PacketMeta6, PROTO_ICMP, PROTO_TCP, PROTO_UDP,
};
use crate::net::wire::{self, arp, ethernet, icmp, ipv4, tcp, udp, WireError};

crate::counters::counter_enum! {
    /// Why classify dropped a frame. One counter per variant: keep a
    /// `Counts<NetDrop, { NetDrop::COUNT }>` and bump `counts[reason]`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum NetDrop {
        /// Frame shorter than the Ethernet/VLAN/IPv4 header it announces.
        Truncated: drop = "truncated",
        /// EtherType neither IPv4, ARP, IPv6 nor one 802.1Q tag.
        UnknownEthertype: drop = "unknown_ethertype",
        /// IPv6 whose upper layer dirigo does not handle: neither TCP, UDP
        /// nor ICMPv6 (e.g. next header 59, none).
        Ipv6: drop = "ipv6",
        /// More than one VLAN tag (QinQ or stacked 802.1Q).
        StackedVlan: drop = "stacked_vlan",
        /// Ethernet source is a group (multicast/broadcast) MAC.
        BadSrcMac: drop = "bad_src_mac",
        /// ARP that is not Ethernet/IPv4, or shorter than 28 bytes.
        BadArp: drop = "bad_arp",
        /// IPv4 version field is not 4.
        BadVersion: drop = "bad_version",
        /// IPv4 IHL below 5.
        BadIhl: drop = "bad_ihl",
        /// IPv4 header checksum wrong.
        BadIpChecksum: drop = "bad_ip_checksum",
        /// IPv4 total length below the header length or beyond the frame.
        BadTotalLen: drop = "bad_total_len",
        /// An IPv4 fragment (MF set or offset non-zero); not reassembled.
        Fragment: drop = "fragment",
        /// TTL is 0.
        TtlExpired: drop = "ttl_expired",
        /// Source address is multicast, broadcast, 0.0.0.0, loopback or
        /// class E (IPv6: multicast or ::1).
        MartianSrc: drop = "martian_src",
        /// Destination is multicast, broadcast, 0.0.0.0 or loopback (IPv6:
        /// :: or ::1; IPv6 multicast is the responder's to judge).
        NotUnicastDst: drop = "not_unicast_dst",
        /// IP protocol other than TCP, UDP and ICMP.
        UnsupportedProto: drop = "unsupported_proto",
        /// L4 header inconsistent (TCP data offset < 5, UDP length < 8).
        BadL4Header: drop = "bad_l4_header",
        /// IP payload shorter than the L4 header (or UDP length beyond it).
        L4Truncated: drop = "l4_truncated",
        /// IPv6 fixed header truncated, version not 6, or payload length
        /// beyond the frame.
        BadIpv6: drop = "bad_ipv6",
        /// IPv6 extension headers dirigo cannot walk: truncated, too many,
        /// Hop-by-Hop not first, or a kind it does not know.
        Ipv6ExtHeader: drop = "ipv6_ext_header",
        /// An IPv6 fragment (a Fragment header); not reassembled.
        Ipv6Fragment: drop = "ipv6_fragment",
    }
}

/// What a frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classified {
    /// An Ethernet/IPv4 ARP packet (28 bytes validated) at `arp_off`.
    Arp {
        /// Offset of the ARP header (14, or 18 behind a VLAN tag).
        arp_off: u16,
        /// VLAN id of the tag, if any.
        vlan: Option<u16>,
    },
    /// A validated unicast IPv4 TCP/UDP/ICMP packet.
    Ipv4(PacketMeta),
    /// A validated unicast IPv6 TCP/UDP packet, or an ICMPv6 error quoting
    /// one (for the balancer; see [`ipv6`]).
    Ipv6(PacketMeta6),
    /// An ICMPv6 message in a sound IPv6 packet (fixed header, extension
    /// headers walked, at least the 8-byte ICMPv6 header): for the IPv6
    /// responder ([`crate::net::nd`]), which checks the rest (type,
    /// checksum, addresses).
    Icmpv6 {
        /// Offset of the IPv6 header (14, or 18 behind a VLAN tag).
        l3_off: u16,
        /// Offset of the ICMPv6 message (after any extension headers).
        l4_off: u16,
        /// Length of the ICMPv6 message (to the end of the IPv6 payload;
        /// Ethernet padding excluded).
        len: u16,
        /// VLAN id of the tag, if any.
        vlan: Option<u16>,
    },
    /// Dropped, with the reason.
    Drop(NetDrop),
}

/// True for a source address no host may use: 0.0.0.0/8, 127.0.0.0/8,
/// 224.0.0.0/4 (multicast) and 240.0.0.0/4 (class E, incl. broadcast).
#[inline]
pub const fn is_martian_src(a: u32) -> bool {
    let o = a >> 24;
    o == 0 || o == 127 || o >= 224
}

/// True for a destination that is not a unicast host address:
/// 0.0.0.0/8, 127.0.0.0/8, multicast, class E and broadcast.
#[inline]
pub const fn is_not_unicast_dst(a: u32) -> bool {
    is_martian_src(a)
}

/// Classify one received frame from `port`.
///
/// The common packet (untagged, option-less, valid IPv4 TCP/UDP; untagged
/// IPv6 TCP/UDP without extension headers) is answered by a fast path that
/// reads the headers through one length check; everything else goes to the
/// general parser, which alone decides drops. Both give the same answer
/// for every input.
#[inline]
pub fn classify(frame: &[u8], port: u16) -> Classified {
    match fast::classify_fast(frame, port) {
        Some(m) => Classified::Ipv4(m),
        None => match fast::classify_fast6(frame, port) {
            Some(m) => Classified::Ipv6(m),
            None => classify_slow(frame, port),
        },
    }
}

/// [`classify`] for a burst loop: an IPv4 result is written straight into
/// `*meta` (no copy of the meta through the return value) and `None`
/// returned; anything else (ARP, a drop) is returned, `*meta` untouched.
#[inline]
pub fn classify_into(frame: &[u8], port: u16, meta: &mut PacketMeta) -> Option<Classified> {
    match classify_into_fast(frame, port, meta) {
        Placed::Other(c) => Some(c),
        Placed::Fast | Placed::Slow => None,
    }
}

/// What [`classify_into_fast`] did with a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placed {
    /// The fast path wrote the meta: a plain TCP or UDP packet, no ICMP
    /// error (`meta.icmp` is `None`).
    Fast,
    /// The slow path wrote the meta.
    Slow,
    /// Not IPv4 to balance (the meta is untouched).
    Other(Classified),
}

/// [`classify_into`] telling which path answered ([`Placed`]).
#[inline(always)]
pub fn classify_into_fast(frame: &[u8], port: u16, meta: &mut PacketMeta) -> Placed {
    if fast::classify_fast_into(frame, port, meta) {
        return Placed::Fast;
    }
    if let Some(m) = fast::classify_fast6(frame, port) {
        return Placed::Other(Classified::Ipv6(m));
    }
    match classify_slow(frame, port) {
        Classified::Ipv4(m) => {
            *meta = m;
            Placed::Slow
        }
        other => Placed::Other(other),
    }
}

/// The general classifier through the checked wire views: every frame
/// shape, every drop reason. [`classify`] gives the same answer faster.
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

/// The IPv4 destination of a frame whose Ethernet (+ one VLAN tag) and
/// IPv4 headers are sound, whatever classify decided about the rest: the
/// pipeline asks it about the few drops the kernel interface may still
/// want (link-local multicast, a protocol dirigo does not speak to one of
/// its addresses). `None` for anything else.
pub fn ipv4_dst(frame: &[u8]) -> Option<u32> {
    let eth = ethernet::Frame::new_checked(frame).ok()?;
    if eth.ethertype() != ethernet::ethertype::IPV4 {
        return None;
    }
    let ip = ipv4::Packet::new_checked(eth.payload()).ok()?;
    ip.verify_checksum().then(|| ip.dst())
}

/// Whether `a` is in 224.0.0.0/24, the link-local multicast block routing
/// protocols speak on (OSPF, VRRP, RIP v2, PIM); never forwarded by routers.
#[inline]
pub const fn is_link_local_multicast(a: u32) -> bool {
    a >> 8 == 0xe0_00_00
}

pub(crate) fn l4_err(e: WireError) -> NetDrop {
    match e {
        WireError::Truncated => NetDrop::L4Truncated,
        _ => NetDrop::BadL4Header,
    }
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

mod fast;
pub use fast::peek_key6;
pub mod ipv6;

#[cfg(test)]
mod tests;
