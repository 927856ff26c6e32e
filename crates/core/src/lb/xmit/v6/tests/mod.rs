//! Tests of the IPv6 transmit functions: frames built with etherparse,
//! outputs parsed back with etherparse and checked field by field, the
//! ICMPv6 checksum by an independent RFC 1071 sum written here.

mod dr_tun;
mod encap;
mod icmp;
mod nat;
mod nat64;
mod props;

use super::*;
use crate::lb::testutil::{FakeEgress, CLIENT_MAC, GW_MAC, OUR_MAC, RS_MAC};
use crate::lb::xmit::dr::dr;
use crate::lb::xmit::{next_hop, set_eth, XmitError};
use crate::net::egress::{Egress6, Resolve6};
use crate::net::meta::{FlowKey6, IcmpQuote6, PacketMeta6};
use etherparse::{
    IpHeaders, IpNumber, Ipv6FlowLabel, Ipv6Header, NetSlice, PacketBuilder, SlicedPacket,
    TcpHeader, TransportSlice,
};

/// A router on the client's side of the network, source of ICMPv6 errors.
const ROUTER6: u128 = 0x2001_0db8_00c0_0000_0000_0000_0000_00fe;

/// The MAC the fake egress gives an on-link IPv6 host.
fn mac6_of(a: u128) -> [u8; 6] {
    let mut m = RS_MAC;
    m[5] = a as u8;
    m
}

/// The transport header of a test packet.
#[derive(Clone, Copy, Debug)]
enum L4 {
    /// TCP from port to port (ACK|PSH, seq 1000, ack 777).
    Tcp(u16, u16),
    /// UDP from port to port.
    Udp(u16, u16),
}

/// An IPv6 header with the test's fields.
fn ip6(src: u128, dst: u128, hop_limit: u8, traffic_class: u8, flow: u32) -> Ipv6Header {
    Ipv6Header {
        traffic_class,
        flow_label: Ipv6FlowLabel::try_new(flow).unwrap(),
        payload_length: 0, // the builder sets it
        next_header: IpNumber::TCP,
        hop_limit,
        source: src.to_be_bytes(),
        destination: dst.to_be_bytes(),
    }
}

/// An IPv6 packet (no Ethernet) with checksums computed by etherparse.
fn packet6(h: Ipv6Header, l4: L4, payload: &[u8]) -> Vec<u8> {
    packet_ip(IpHeaders::Ipv6(h, Default::default()), l4, payload)
}

/// An IP packet (no Ethernet) of headers `ip` carrying `l4` with
/// `payload`, its checksums computed by etherparse.
fn packet_ip(ip: IpHeaders, l4: L4, payload: &[u8]) -> Vec<u8> {
    let b = PacketBuilder::ip(ip);
    let mut v = Vec::new();
    match l4 {
        L4::Tcp(s, d) => {
            let mut t = TcpHeader::new(s, d, 1000, 64240);
            t.ack = true;
            t.psh = true;
            t.acknowledgment_number = 777;
            b.tcp_header(t).write(&mut v, payload).unwrap();
        }
        L4::Udp(s, d) => b.udp(s, d).write(&mut v, payload).unwrap(),
    }
    v
}

/// An ICMPv6 error packet (no Ethernet) from `src` to `dst` quoting
/// `quoted`, its checksum computed by etherparse.
fn icmp6_error(
    src: u128,
    dst: u128,
    hop: u8,
    typ: u8,
    code: u8,
    rest: [u8; 4],
    quoted: &[u8],
) -> Vec<u8> {
    let b = PacketBuilder::ip(IpHeaders::Ipv6(
        ip6(src, dst, hop, 0, 0),
        Default::default(),
    ))
    .icmpv6_raw(typ, code, rest);
    let mut v = Vec::new();
    b.write(&mut v, quoted).unwrap();
    v
}

/// `ip` behind an Ethernet header from the client to us, with one 802.1Q
/// tag when `vlan` is given.
fn eth(ip: &[u8], vlan: Option<u16>) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&OUR_MAC);
    f.extend_from_slice(&CLIENT_MAC);
    if let Some(v) = vlan {
        f.extend_from_slice(&[0x81, 0x00]);
        f.extend_from_slice(&v.to_be_bytes());
    }
    f.extend_from_slice(&[0x86, 0xdd]);
    f.extend_from_slice(ip);
    f
}

/// An untagged Ethernet/IPv6 frame.
fn frame6(src: u128, dst: u128, l4: L4, payload: &[u8], hop: u8) -> Vec<u8> {
    eth(&packet6(ip6(src, dst, hop, 0, 0), l4, payload), None)
}

/// Frame `f` with other Ethernet addresses.
fn with_eth(mut f: Vec<u8>, dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    f[0..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f
}

fn be16(d: &[u8], o: usize) -> u16 {
    u16::from_be_bytes([d[o], d[o + 1]])
}

fn be128(d: &[u8], o: usize) -> u128 {
    u128::from_be_bytes(d[o..o + 16].try_into().unwrap())
}

/// The tuple of the IPv6 packet at `l3` and its L4 offset, after the
/// extension headers these tests use (hop-by-hop, routing, destination
/// options); ports read when they are there.
fn key6_at(d: &[u8], l3: usize) -> (FlowKey6, usize) {
    let mut nh = d[l3 + 6];
    let mut l4 = l3 + 40;
    while matches!(nh, 0 | 43 | 60) {
        nh = d[l4];
        l4 += (d[l4 + 1] as usize + 1) * 8;
    }
    let (sport, dport) = if matches!(nh, 6 | 17) && l4 + 4 <= d.len() {
        (be16(d, l4), be16(d, l4 + 2))
    } else {
        (0, 0)
    };
    let key = FlowKey6 {
        src: be128(d, l3 + 8),
        dst: be128(d, l3 + 24),
        sport,
        dport,
        proto: nh,
    };
    (key, l4)
}

/// The classify stand-in: the PacketMeta6 of an Ethernet/IPv6 frame
/// (one VLAN tag at most).
fn meta6_of(d: &[u8]) -> PacketMeta6 {
    let (l3, vlan) = if be16(d, 12) == 0x8100 {
        (18, Some(be16(d, 14) & 0x0fff))
    } else {
        (14, None)
    };
    let (key, l4) = key6_at(d, l3);
    let mut m = PacketMeta6 {
        port: 0,
        vlan,
        l3_off: l3 as u16,
        l4_off: l4 as u16,
        ip_len: 40 + be16(d, l3 + 4),
        key,
        tcp_flags: if key.proto == 6 { d[l4 + 13] } else { 0 },
        ttl: d[l3 + 7],
        df: true,
        icmp: None,
    };
    if key.proto == 58 {
        m.key.sport = 0;
        m.key.dport = 0;
        if matches!(d[l4], 1..=4) {
            let il3 = l4 + 8;
            let (inner_key, il4) = key6_at(d, il3);
            m.icmp = Some(IcmpQuote6 {
                icmp_type: d[l4],
                code: d[l4 + 1],
                inner_l3_off: il3 as u16,
                inner_l4_off: il4 as u16,
                inner_key,
            });
        }
    }
    m
}

/// The one's-complement sum (RFC 1071) of the concatenated byte strings,
/// folded; an odd string is padded with a zero byte.
fn rfc1071_sum(parts: &[&[u8]]) -> u16 {
    let mut acc: u64 = 0;
    for p in parts {
        for w in p.chunks(2) {
            let hi = w[0] as u64;
            let lo = w.get(1).copied().unwrap_or(0) as u64;
            acc += hi << 8 | lo;
        }
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// True when the ICMPv6 message's checksum is right under its pseudo
/// header (RFC 4443 §2.3), summed independently of `net::checksum`.
fn icmpv6_checksum_ok(src: [u8; 16], dst: [u8; 16], msg: &[u8]) -> bool {
    let len = (msg.len() as u32).to_be_bytes();
    rfc1071_sum(&[&src, &dst, &len, &[0, 0, 0, 58], msg]) == 0xffff
}

/// Verify every checksum of an Ethernet/IPv6 frame with etherparse and the
/// sum above (recursing into IPv6-in-IPv6). Panics on a mismatch.
fn verify6(frame: &[u8]) {
    let p = SlicedPacket::from_ethernet(frame).expect("parse");
    verify6_sliced(&p);
}

fn verify6_sliced(p: &SlicedPacket) {
    let Some(NetSlice::Ipv6(ip)) = &p.net else {
        panic!("not ipv6")
    };
    let h = ip.header();
    let (src, dst) = (h.source(), h.destination());
    match &p.transport {
        Some(TransportSlice::Tcp(t)) => {
            assert_eq!(
                t.calc_checksum_ipv6(src, dst).unwrap(),
                t.checksum(),
                "tcp checksum"
            );
        }
        Some(TransportSlice::Udp(u)) => {
            assert_ne!(u.checksum(), 0, "IPv6 UDP needs a checksum");
            let c = u
                .to_header()
                .calc_checksum_ipv6_raw(src, dst, u.payload())
                .unwrap();
            assert_eq!(c, u.checksum(), "udp checksum");
        }
        Some(TransportSlice::Icmpv6(i)) => {
            assert!(icmpv6_checksum_ok(src, dst, i.slice()), "icmpv6 checksum");
        }
        _ => {
            assert_eq!(ip.payload().ip_number, IpNumber::IPV6, "an unknown payload");
            let inner = SlicedPacket::from_ip(ip.payload().payload).expect("inner");
            verify6_sliced(&inner);
        }
    }
}

/// The fake egress, answering with an unspecified source address (a port
/// without a global IPv6 address).
struct NoSource(FakeEgress);

impl Egress6 for NoSource {
    fn next_hop6(&self, dst: u128) -> Resolve6 {
        match self.0.next_hop6(dst) {
            Resolve6::Ready(mut nh) => {
                nh.src_ip = 0;
                Resolve6::Ready(nh)
            }
            r => r,
        }
    }
    fn on_link6(&self, addr: u128) -> Option<u16> {
        self.0.on_link6(addr)
    }
}

#[test]
fn helpers_agree_with_etherparse() {
    use crate::lb::testutil::{CLIENT6, VIP6};
    // the independent sum accepts what etherparse built, rejects a flip
    let e = icmp6_error(ROUTER6, VIP6, 64, 1, 4, [0; 4], &[0x60, 0, 0, 0, 1, 2]);
    assert!(icmpv6_checksum_ok(
        ROUTER6.to_be_bytes(),
        VIP6.to_be_bytes(),
        &e[40..]
    ));
    let mut bad = e.clone();
    bad[45] ^= 1;
    assert!(!icmpv6_checksum_ok(
        ROUTER6.to_be_bytes(),
        VIP6.to_be_bytes(),
        &bad[40..]
    ));
    verify6(&eth(&e, None));
    // the meta stand-in
    let f = eth(
        &packet6(ip6(CLIENT6, VIP6, 9, 0, 0), L4::Udp(5353, 53), b"q"),
        Some(7),
    );
    let m = meta6_of(&f);
    assert_eq!(
        (m.l3_off, m.l4_off, m.ip_len, m.vlan),
        (18, 58, 49, Some(7))
    );
    assert_eq!(
        (m.key.src, m.key.dst, m.key.sport, m.key.dport),
        (CLIENT6, VIP6, 5353, 53)
    );
    assert_eq!((m.key.proto, m.ttl), (17, 9));
}

#[test]
fn next_hop6_maps_the_answers() {
    use crate::lb::testutil::{CLIENT6, OUR_IP6, OUR_IP6_WAN, RIP6, RIP6_2};
    let eg = FakeEgress {
        unresolved: vec![RIP6_2 as u32],
        noroute: vec![CLIENT6 as u32],
        ..Default::default()
    };
    let nh = next_hop(&eg, RIP6).unwrap();
    assert_eq!(
        (nh.port, nh.dst_mac, nh.src_mac),
        (1, mac6_of(RIP6), OUR_MAC)
    );
    assert_eq!((nh.src_ip, nh.mtu), (OUR_IP6, 1500));
    assert_eq!(next_hop(&eg, RIP6_2), Err(XmitError::Unresolved));
    assert_eq!(next_hop(&eg, CLIENT6), Err(XmitError::NoRoute));
    let nh = next_hop(&FakeEgress::default(), CLIENT6).unwrap();
    assert_eq!((nh.port, nh.dst_mac, nh.src_ip), (0, GW_MAC, OUR_IP6_WAN));
    // the Ethernet helper writes both addresses, refuses a short frame
    let mut d = [0u8; 14];
    set_eth(&mut d, &nh).unwrap();
    assert_eq!(&d[..12], &[GW_MAC, OUR_MAC].concat()[..]);
    assert_eq!(set_eth(&mut d[..11], &nh), Err(XmitError::Malformed));
}
