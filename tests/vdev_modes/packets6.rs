//! IPv6 packet builders and checkers for the vdev tests: fixtures and
//! expectations built with etherparse (an independent implementation),
//! checksums recomputed by it.

use crate::packets::{eth, Mac};
use etherparse::{
    IcmpEchoHeader, Icmpv6Header, Icmpv6Type, IpNumber, Ipv6FlowLabel, Ipv6Header,
    Ipv6RawExtHeader, NetSlice, SlicedPacket, TcpHeader, TransportSlice,
};

/// An IPv6 address.
pub type Ip6 = [u8; 16];
/// EtherType IPv6.
pub const ETH_IPV6: u16 = 0x86dd;

/// `s` parsed as an IPv6 address.
pub fn ip6(s: &str) -> Ip6 {
    s.parse::<std::net::Ipv6Addr>()
        .unwrap_or_else(|e| panic!("{s}: {e}"))
        .octets()
}

/// The text form of `a`.
pub fn ip6_str(a: Ip6) -> String {
    std::net::Ipv6Addr::from(a).to_string()
}

/// An IPv6 header (etherparse) for a payload of `len` bytes.
pub fn ipv6_header(src: Ip6, dst: Ip6, next: IpNumber, len: usize, hop: u8) -> Ipv6Header {
    Ipv6Header {
        traffic_class: 0,
        flow_label: Ipv6FlowLabel::ZERO,
        payload_length: len as u16,
        next_header: next,
        hop_limit: hop,
        source: src,
        destination: dst,
    }
}

/// An IPv6 TCP segment description; [`ip6_tcp`] builds the packet.
#[derive(Clone)]
pub struct Seg6 {
    pub src: Ip6,
    pub dst: Ip6,
    pub sport: u16,
    pub dport: u16,
    pub syn: bool,
    pub ack: bool,
    pub seq: u32,
    pub hop: u8,
    /// Traffic class (DSCP << 2 | ECN).
    pub tc: u8,
    /// Flow label (20 bits).
    pub flow: u32,
    /// A Destination Options header (one PadN option) before TCP.
    pub dest_opts: bool,
    pub payload: Vec<u8>,
}

/// A SYN `src:sport -> dst:dport` (hop limit 61, traffic class and flow
/// label 0, no extension header, no payload).
pub fn seg6(src: Ip6, dst: Ip6, sport: u16, dport: u16) -> Seg6 {
    Seg6 {
        src,
        dst,
        sport,
        dport,
        syn: true,
        ack: false,
        seq: 1000,
        hop: 61,
        tc: 0,
        flow: 0,
        dest_opts: false,
        payload: Vec::new(),
    }
}

/// The Destination Options header [`Seg6::dest_opts`] adds: next header
/// TCP, one PadN option filling 8 bytes.
fn dest_opts_tcp() -> Ipv6RawExtHeader {
    Ipv6RawExtHeader::new_raw(IpNumber::TCP, &[1, 4, 0, 0, 0, 0]).unwrap()
}

/// IPv6 (+ Destination Options) + TCP with a right checksum (etherparse).
pub fn ip6_tcp(s: &Seg6) -> Vec<u8> {
    let mut t = TcpHeader::new(s.sport, s.dport, s.seq, 64240);
    t.syn = s.syn;
    if s.ack {
        t.ack = true;
        t.psh = !s.payload.is_empty();
        t.acknowledgment_number = 0x0bad_cafe;
    }
    let ext = s.dest_opts.then(dest_opts_tcp);
    let ext_len = ext.as_ref().map_or(0, |e| e.header_len());
    let mut ip = ipv6_header(
        s.src,
        s.dst,
        if ext.is_some() {
            IpNumber::IPV6_DESTINATION_OPTIONS
        } else {
            IpNumber::TCP
        },
        ext_len + t.header_len() + s.payload.len(),
        s.hop,
    );
    ip.traffic_class = s.tc;
    ip.flow_label = Ipv6FlowLabel::try_new(s.flow).unwrap();
    t.checksum = t.calc_checksum_ipv6(&ip, &s.payload).unwrap();
    let mut v = Vec::new();
    ip.write(&mut v).unwrap();
    if let Some(e) = ext {
        e.write(&mut v).unwrap();
    }
    t.write(&mut v).unwrap();
    v.extend_from_slice(&s.payload);
    v
}

/// IPv6 + UDP with a right checksum (etherparse).
pub fn ip6_udp(src: Ip6, dst: Ip6, sport: u16, dport: u16, hop: u8, payload: &[u8]) -> Vec<u8> {
    let ip = ipv6_header(src, dst, IpNumber::UDP, 8 + payload.len(), hop);
    let u = etherparse::UdpHeader::with_ipv6_checksum(sport, dport, &ip, payload).unwrap();
    let mut v = Vec::new();
    ip.write(&mut v).unwrap();
    u.write(&mut v).unwrap();
    v.extend_from_slice(payload);
    v
}

/// IPv6 + ICMPv6 message `ty` with `payload`, checksum right (etherparse).
pub fn ip6_icmp(src: Ip6, dst: Ip6, hop: u8, ty: Icmpv6Type, payload: &[u8]) -> Vec<u8> {
    let h = Icmpv6Header::with_checksum(ty, src, dst, payload).unwrap();
    let ip = ipv6_header(
        src,
        dst,
        IpNumber::IPV6_ICMP,
        h.header_len() + payload.len(),
        hop,
    );
    let mut v = Vec::new();
    ip.write(&mut v).unwrap();
    h.write(&mut v).unwrap();
    v.extend_from_slice(payload);
    v
}

/// IPv6 + ICMPv6 echo request (or reply).
pub fn ip6_echo(
    src: Ip6,
    dst: Ip6,
    hop: u8,
    reply: bool,
    id: u16,
    seq: u16,
    data: &[u8],
) -> Vec<u8> {
    let e = IcmpEchoHeader { id, seq };
    let ty = if reply {
        Icmpv6Type::EchoReply(e)
    } else {
        Icmpv6Type::EchoRequest(e)
    };
    ip6_icmp(src, dst, hop, ty, data)
}

/// The frame of an unsolicited Neighbour Advertisement (RFC 4861 §4.4,
/// §7.2.6) for `target` from a port with MAC `mac`: to all-nodes
/// (33:33:00:00:00:01, ff02::1) from the target itself, hop limit 255,
/// Override set, Router and Solicited clear, a Target Link-Layer Address
/// option carrying `mac`.
pub fn unsolicited_na(mac: Mac, target: Ip6) -> Vec<u8> {
    let mut body = target.to_vec();
    body.extend_from_slice(&[2, 1]);
    body.extend_from_slice(&mac);
    let ty = Icmpv6Type::Unknown {
        type_u8: 136,
        code_u8: 0,
        bytes5to8: [0x20, 0, 0, 0],
    };
    let all_nodes = ip6("ff02::1");
    eth(
        [0x33, 0x33, 0, 0, 0, 1],
        mac,
        ETH_IPV6,
        &ip6_icmp(target, all_nodes, 255, ty, &body),
    )
}

/// The (outer) IPv6 header of an Ethernet frame.
pub fn ipv6_of(frame: &[u8]) -> Ipv6Header {
    let p = SlicedPacket::from_ethernet(frame).expect("etherparse parses the frame");
    let Some(NetSlice::Ipv6(ip)) = p.net else {
        panic!("not IPv6: {frame:02x?}");
    };
    ip.header().to_header()
}

/// Verify the TCP checksum of an Ethernet/IPv6(/extensions)/TCP frame.
pub fn tcp6_checked(frame: &[u8]) -> TcpHeader {
    let ip = ipv6_of(frame);
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(TransportSlice::Tcp(t)) = p.transport else {
        panic!("not TCP: {frame:02x?}");
    };
    let h = t.to_header();
    assert_eq!(
        h.checksum,
        h.calc_checksum_ipv6(&ip, t.payload()).unwrap(),
        "TCP checksum"
    );
    h
}

/// Verify the UDP checksum (never 0 in IPv6) of an Ethernet/IPv6/UDP frame.
pub fn udp6_checked(frame: &[u8]) {
    let ip = ipv6_of(frame);
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(TransportSlice::Udp(u)) = p.transport else {
        panic!("not UDP: {frame:02x?}");
    };
    let h = u.to_header();
    assert_ne!(h.checksum, 0);
    assert_eq!(
        h.checksum,
        h.calc_checksum_ipv6(&ip, u.payload()).unwrap(),
        "UDP checksum"
    );
}

/// Verify the ICMPv6 checksum of an Ethernet/IPv6/ICMPv6 frame; the
/// message's header and payload.
pub fn icmp6_checked(frame: &[u8]) -> (Icmpv6Header, Vec<u8>) {
    let ip = ipv6_of(frame);
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(TransportSlice::Icmpv6(m)) = p.transport else {
        panic!("not ICMPv6: {frame:02x?}");
    };
    assert_eq!(
        m.checksum(),
        m.icmp_type()
            .calc_checksum(ip.source, ip.destination, m.payload())
            .unwrap(),
        "ICMPv6 checksum"
    );
    (m.header(), m.payload().to_vec())
}

/// A raw IPv6 packet (version 6, traffic class and flow label 0): the
/// fixed header with next header `next` and hop limit `hop`, then
/// `payload` as it is (a payload length that fits it).
pub fn raw6_to(src: Ip6, dst: Ip6, next: u8, hop: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![0x60, 0, 0, 0];
    v.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    v.extend_from_slice(&[next, hop]);
    v.extend_from_slice(&src);
    v.extend_from_slice(&dst);
    v.extend_from_slice(payload);
    v
}
