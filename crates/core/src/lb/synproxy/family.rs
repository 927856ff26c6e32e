//! What the SYN proxy's segments need of the address family
//! ([`ProxyFamily`]): the packet's metadata and tuple, the IP header a
//! segment dirigo writes gets, the TCP checksum's pseudo header.
//! Everything else (cookies, options, translation, the next hop's
//! Ethernet addresses: `xmit::set_eth`) is written once over it; [`V4`]
//! and [`V6`] differ only here.

use super::cookie::CookieTuple;
use crate::net::family::{Family, V4, V6};
use crate::net::meta::{Flow, FlowKey, FlowKey6, Meta, PacketMeta, PacketMeta6, PROTO_TCP};
use crate::net::wire::{ethernet, ipv4, ipv6, tcp};

/// Where a packet's headers are and what its tuple is, whatever its
/// family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetaView<A> {
    /// Offset of the IP header.
    pub l3_off: usize,
    /// Offset of the TCP header.
    pub l4_off: usize,
    /// End of the IP packet (the frame may be longer: padding).
    pub end: usize,
    /// Source address.
    pub src: A,
    /// Destination address.
    pub dst: A,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
}

/// An address family as the SYN proxy writes its segments.
pub trait ProxyFamily: Family {
    /// The tuple of a packet, as cookies hash it.
    type Key: CookieTuple + Copy + From<Flow<Self::Addr>>;
    /// Bytes of the IP header of a segment dirigo writes.
    const IP_HEADER_LEN: usize;
    /// The EtherType of a generated frame.
    const ETHERTYPE: u16;
    /// The MSS announced to clients (a 1500-byte MTU less the IP and TCP
    /// headers).
    const MSS: u16;
    /// Offsets and tuple of `m`.
    #[inline]
    fn view(m: &Meta<Self::Addr>) -> MetaView<Self::Addr> {
        MetaView {
            l3_off: m.l3_off as usize,
            l4_off: m.l4_off as usize,
            end: m.l3_off as usize + m.ip_len as usize,
            src: m.key.src,
            dst: m.key.dst,
            sport: m.key.sport,
            dport: m.key.dport,
        }
    }
    /// The tuple of `m`.
    #[inline]
    fn key(m: &Meta<Self::Addr>) -> Self::Key {
        m.key.into()
    }
    /// `m`'s TCP flags.
    #[inline]
    fn tcp_flags(m: &Meta<Self::Addr>) -> u8 {
        m.tcp_flags
    }
    /// `m` for the segment dirigo wrote in its packet's place: a fresh
    /// IP header of [`Self::IP_HEADER_LEN`] bytes, `ip_len` bytes in all,
    /// `flags`.
    fn rewritten(m: &Meta<Self::Addr>, ip_len: u16, flags: u8) -> Meta<Self::Addr>;
    /// Write a fresh IP header (TCP, `payload_len` bytes after it) into
    /// `ip` (exactly [`Self::IP_HEADER_LEN`] bytes).
    fn emit_ip(ip: &mut [u8], src: Self::Addr, dst: Self::Addr, payload_len: u16);
    /// Compute the TCP checksum of segment `t` under the family's pseudo
    /// header.
    fn fill_checksum(t: &mut tcp::Packet<&mut [u8]>, src: Self::Addr, dst: Self::Addr);
}

impl ProxyFamily for V4 {
    type Key = FlowKey;
    const IP_HEADER_LEN: usize = ipv4::MIN_HEADER_LEN;
    const ETHERTYPE: u16 = ethernet::ethertype::IPV4;
    const MSS: u16 = 1460;

    fn rewritten(m: &PacketMeta, ip_len: u16, flags: u8) -> PacketMeta {
        PacketMeta {
            l4_off: m.l3_off + ipv4::MIN_HEADER_LEN as u16,
            ip_len,
            tcp_flags: flags,
            ..*m
        }
    }

    fn emit_ip(ip: &mut [u8], src: u32, dst: u32, payload_len: u16) {
        ipv4::Repr {
            src,
            dst,
            protocol: PROTO_TCP,
            payload_len,
            ttl: 64,
            dscp_ecn: 0,
            ident: 0,
            dont_frag: true,
        }
        .emit(&mut ipv4::Packet::new_unchecked(ip));
    }

    fn fill_checksum(t: &mut tcp::Packet<&mut [u8]>, src: u32, dst: u32) {
        t.fill_checksum(src, dst);
    }
}

impl ProxyFamily for V6 {
    type Key = FlowKey6;
    const IP_HEADER_LEN: usize = ipv6::HEADER_LEN;
    const ETHERTYPE: u16 = ethernet::ethertype::IPV6;
    const MSS: u16 = 1440;

    fn rewritten(m: &PacketMeta6, ip_len: u16, flags: u8) -> PacketMeta6 {
        PacketMeta6 {
            l4_off: m.l3_off + ipv6::HEADER_LEN as u16,
            ip_len,
            tcp_flags: flags,
            ttl: 64,
            ..*m
        }
    }

    fn emit_ip(ip: &mut [u8], src: u128, dst: u128, payload_len: u16) {
        ipv6::Repr {
            src,
            dst,
            next_header: PROTO_TCP,
            payload_len,
            hop_limit: 64,
            traffic_class: 0,
            flow_label: 0,
        }
        .emit(&mut ipv6::Packet::new_unchecked(ip));
    }

    fn fill_checksum(t: &mut tcp::Packet<&mut [u8]>, src: u128, dst: u128) {
        t.fill_checksum_v6(src, dst);
    }
}
