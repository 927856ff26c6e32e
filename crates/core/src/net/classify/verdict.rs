//! What classify says of a frame: what it is ([`Classified`]) or why it
//! was dropped ([`NetDrop`]).

use crate::net::meta::{PacketMeta, PacketMeta6};
use crate::net::wire::WireError;

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
    /// one (for the balancer; see [`ipv6`](super::ipv6)).
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

pub(crate) fn l4_err(e: WireError) -> NetDrop {
    match e {
        WireError::Truncated => NetDrop::L4Truncated,
        _ => NetDrop::BadL4Header,
    }
}
