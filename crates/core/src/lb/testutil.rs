//! Test helpers: a fake egress, etherparse-built frames, a tiny classify
//! stand-in and an independent checksum verifier.

use crate::lb::spec::{DestKey, DestSpec, Method};
use crate::net::egress::{Egress, Egress6, NextHop, NextHop6, Resolve, Resolve6};
use crate::net::meta::{FlowKey, IcmpQuote, PacketMeta};
use etherparse::{
    IpHeaders, IpNumber, Ipv4Header, NetSlice, PacketBuilder, SlicedPacket, TcpHeader,
    TransportSlice,
};
use std::net::Ipv4Addr;

pub const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0xc1];
pub const OUR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0xd1];
pub const RS_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x51];
pub const GW_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x61];
pub const GW: [u8; 4] = [203, 0, 113, 254];
pub const CLIENT: [u8; 4] = [198, 51, 100, 7];
pub const VIP: [u8; 4] = [192, 0, 2, 10];
pub const RIP: [u8; 4] = [10, 0, 0, 21];
pub const RIP2: [u8; 4] = [10, 0, 0, 22];
pub const OUR_IP: [u8; 4] = [10, 0, 0, 1];

/// A real server spec without thresholds.
pub fn dest(a: [u8; 4], port: u16, method: Method, weight: u32) -> DestSpec {
    DestSpec {
        key: DestKey {
            addr: std::net::IpAddr::V4(Ipv4Addr::from(a)),
            port,
        },
        method,
        weight,
        upper: 0,
        lower: 0,
        tun: Default::default(),
    }
}

pub fn ip(a: [u8; 4]) -> u32 {
    u32::from_be_bytes(a)
}

/// Routes: 10.0.0.0/24 on link (port 1, RS MACs by last octet), everything
/// else via the gateway on port 0; `unresolved` / `noroute` addresses fail.
pub struct FakeEgress {
    pub mtu: u16,
    pub unresolved: Vec<u32>,
    pub noroute: Vec<u32>,
}

impl Default for FakeEgress {
    fn default() -> Self {
        FakeEgress {
            mtu: 1500,
            unresolved: vec![],
            noroute: vec![],
        }
    }
}

impl Egress for FakeEgress {
    fn next_hop(&self, dst: u32) -> Resolve {
        if self.noroute.contains(&dst) {
            return Resolve::NoRoute;
        }
        let on_link = dst >> 8 == ip([10, 0, 0, 0]) >> 8;
        if self.unresolved.contains(&dst) {
            // on-link: the host itself on port 1; else the gateway on port 0
            let (ip, port) = if on_link { (dst, 1) } else { (ip(GW), 0) };
            return Resolve::Unresolved { ip, port };
        }
        if on_link {
            let mut mac = RS_MAC;
            mac[5] = dst as u8;
            Resolve::Ready(NextHop {
                port: 1,
                src_mac: OUR_MAC,
                dst_mac: mac,
                src_ip: ip(OUR_IP),
                mtu: self.mtu,
            })
        } else {
            Resolve::Ready(NextHop {
                port: 0,
                src_mac: OUR_MAC,
                dst_mac: GW_MAC,
                src_ip: ip([203, 0, 113, 1]),
                mtu: self.mtu,
            })
        }
    }
    fn on_link(&self, addr: u32) -> Option<u16> {
        (addr >> 8 == ip([10, 0, 0, 0]) >> 8).then_some(1)
    }
}

/// IPv6 test addresses: the client, the VIP, two on-link real servers
/// (2001:db8:1::/64 on port 1), dirigo's address there and its gateway
/// (link-local, port 0) and port 0's own global address.
#[allow(dead_code)] // used by the IPv6 balancing tests as they land
pub const CLIENT6: u128 = 0x2001_0db8_00c0_0000_0000_0000_0000_0007;
#[allow(dead_code)]
pub const VIP6: u128 = 0x2001_0db8_00f0_0000_0000_0000_0000_0010;
pub const RIP6: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0021;
#[allow(dead_code)]
pub const RIP6_2: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0022;
pub const OUR_IP6: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0001;
pub const OUR_IP6_WAN: u128 = 0x2001_0db8_00e0_0000_0000_0000_0000_0001;
pub const GW6: u128 = 0xfe80_0000_0000_0000_0000_0000_0000_00fe;

fn lan6(a: u128) -> bool {
    a >> 64 == RIP6 >> 64
}

impl Egress6 for FakeEgress {
    /// 2001:db8:1::/64 on link (port 1, MACs by the last byte), everything
    /// else via [`GW6`] on port 0; `unresolved`/`noroute` hold IPv4
    /// addresses, so IPv6 ones are listed by their low 32 bits there.
    fn next_hop6(&self, dst: u128) -> Resolve6 {
        if self.noroute.contains(&(dst as u32)) {
            return Resolve6::NoRoute;
        }
        let on_link = lan6(dst);
        if self.unresolved.contains(&(dst as u32)) {
            let (ip, port) = if on_link { (dst, 1) } else { (GW6, 0) };
            return Resolve6::Unresolved { ip, port };
        }
        if on_link {
            let mut mac = RS_MAC;
            mac[5] = dst as u8;
            Resolve6::Ready(NextHop6 {
                port: 1,
                src_mac: OUR_MAC,
                dst_mac: mac,
                src_ip: OUR_IP6,
                mtu: self.mtu,
            })
        } else {
            Resolve6::Ready(NextHop6 {
                port: 0,
                src_mac: OUR_MAC,
                dst_mac: GW_MAC,
                src_ip: OUR_IP6_WAN,
                mtu: self.mtu,
            })
        }
    }
    fn on_link6(&self, addr: u128) -> Option<u16> {
        lan6(addr).then_some(1)
    }
}

/// MAC the fake egress uses for an on-link host.
pub fn mac_of(a: [u8; 4]) -> [u8; 6] {
    let mut m = RS_MAC;
    m[5] = a[3];
    m
}

fn ipv4(src: [u8; 4], dst: [u8; 4], proto: IpNumber, ttl: u8, df: bool) -> Ipv4Header {
    let mut h = Ipv4Header::new(0, ttl, proto, src, dst).unwrap();
    h.dont_fragment = df;
    h.identification = 0x4242;
    h
}

/// An Ethernet/IPv4/TCP frame.
#[allow(clippy::too_many_arguments)]
pub fn tcp_frame(
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    flags: u8,
    payload: &[u8],
    ttl: u8,
    df: bool,
) -> Vec<u8> {
    use crate::net::meta::tcp_flags::*;
    let mut t = TcpHeader::new(sport, dport, 1000, 64240);
    t.syn = flags & SYN != 0;
    t.ack = flags & ACK != 0;
    t.fin = flags & FIN != 0;
    t.rst = flags & RST != 0;
    t.psh = flags & PSH != 0;
    if t.ack {
        t.acknowledgment_number = 777;
    }
    let b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ip(IpHeaders::Ipv4(
            ipv4(src, dst, IpNumber::TCP, ttl, df),
            Default::default(),
        ))
        .tcp_header(t);
    let mut v = Vec::new();
    b.write(&mut v, payload).unwrap();
    v
}

/// An Ethernet/IPv4/UDP frame.
pub fn udp_frame(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, payload: &[u8]) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ip(IpHeaders::Ipv4(
            ipv4(src, dst, IpNumber::UDP, 64, false),
            Default::default(),
        ))
        .udp(sport, dport);
    let mut v = Vec::new();
    b.write(&mut v, payload).unwrap();
    v
}

/// An ICMP error from `src` to `dst` quoting `quoted` (an IP packet).
pub fn icmp_error(
    src: [u8; 4],
    dst: [u8; 4],
    typ: u8,
    code: u8,
    rest: [u8; 4],
    quoted: &[u8],
) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ip(IpHeaders::Ipv4(
            ipv4(src, dst, IpNumber::ICMP, 64, false),
            Default::default(),
        ))
        .icmpv4_raw(typ, code, rest);
    let mut v = Vec::new();
    b.write(&mut v, quoted).unwrap();
    v
}

fn be32(d: &[u8], o: usize) -> u32 {
    u32::from_be_bytes([d[o], d[o + 1], d[o + 2], d[o + 3]])
}
fn be16(d: &[u8], o: usize) -> u16 {
    u16::from_be_bytes([d[o], d[o + 1]])
}

fn key_at(d: &[u8], l3: usize) -> (FlowKey, usize) {
    let l4 = l3 + (d[l3] & 0xf) as usize * 4;
    let proto = d[l3 + 9];
    let (sport, dport) = if proto == 6 || proto == 17 {
        (be16(d, l4), be16(d, l4 + 2))
    } else {
        (0, 0)
    };
    (
        FlowKey {
            src: be32(d, l3 + 12),
            dst: be32(d, l3 + 16),
            sport,
            dport,
            proto,
        },
        l4,
    )
}

/// The classify stand-in: PacketMeta for an untagged Ethernet/IPv4 frame.
pub fn meta_of(d: &[u8]) -> PacketMeta {
    let l3 = 14;
    let (key, l4) = key_at(d, l3);
    let mut m = PacketMeta {
        port: 0,
        vlan: None,
        l3_off: l3 as u16,
        l4_off: l4 as u16,
        ip_len: be16(d, l3 + 2),
        key,
        tcp_flags: if key.proto == 6 { d[l4 + 13] } else { 0 },
        ttl: d[l3 + 8],
        df: d[l3 + 6] & 0x40 != 0,
        icmp: None,
    };
    if key.proto == 1 && matches!(d[l4], 3 | 4 | 5 | 11 | 12) {
        let il3 = l4 + 8;
        let (ik, il4) = key_at(d, il3);
        m.icmp = Some(IcmpQuote {
            icmp_type: d[l4],
            code: d[l4 + 1],
            inner_l3_off: il3 as u16,
            inner_l4_off: il4 as u16,
            inner_key: ik,
        });
    }
    m
}

/// Verify every checksum of an Ethernet/IPv4 frame independently with
/// etherparse (recursing into IPIP). Panics on mismatch.
pub fn verify(frame: &[u8]) {
    let p = SlicedPacket::from_ethernet(frame).expect("parse");
    verify_sliced(&p);
}

fn verify_sliced(p: &SlicedPacket) {
    let Some(NetSlice::Ipv4(ipv4)) = &p.net else {
        panic!("not ipv4")
    };
    let h = ipv4.header().to_header();
    assert_eq!(
        h.calc_header_checksum(),
        h.header_checksum,
        "ipv4 header checksum"
    );
    match &p.transport {
        Some(TransportSlice::Tcp(t)) => {
            assert_eq!(
                t.calc_checksum_ipv4(h.source, h.destination).unwrap(),
                t.checksum(),
                "tcp checksum"
            );
        }
        Some(TransportSlice::Udp(u)) => {
            if u.checksum() != 0 {
                let c = u.to_header().calc_checksum_ipv4(&h, u.payload()).unwrap();
                assert_eq!(c, u.checksum(), "udp checksum");
            }
        }
        Some(TransportSlice::Icmpv4(i)) => {
            let c = i.icmp_type().calc_checksum(i.payload());
            assert_eq!(c, i.checksum(), "icmp checksum");
            // the quoted IPv4 header's checksum
            let q = i.payload();
            if q.len() >= 20 && q[0] >> 4 == 4 {
                let ihl = (q[0] & 0xf) as usize * 4;
                assert_eq!(
                    crate::net::checksum::checksum(&q[..ihl]),
                    0,
                    "quoted ipv4 checksum"
                );
            }
        }
        _ => {
            if h.protocol == IpNumber::IPV4 {
                let inner = SlicedPacket::from_ip(ipv4.payload().payload).expect("inner");
                verify_sliced(&inner);
            }
        }
    }
}

/// The IPv4 address inside an `IpAddr` the tests know to be IPv4.
pub trait V4 {
    /// The IPv4 address (panics on IPv6: a test's mistake).
    fn v4(&self) -> Ipv4Addr;
}

impl V4 for std::net::IpAddr {
    fn v4(&self) -> Ipv4Addr {
        match self {
            std::net::IpAddr::V4(a) => *a,
            std::net::IpAddr::V6(a) => panic!("{a} is not IPv4"),
        }
    }
}
