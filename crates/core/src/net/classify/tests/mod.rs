use super::*;
use crate::net::meta::{
    tcp_flags, FlowKey, IcmpQuote, PacketMeta, PROTO_ICMP, PROTO_TCP, PROTO_UDP,
};
use crate::net::wire::ipv4;
use etherparse::PacketBuilder;
use proptest::prelude::*;

const MAC_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0a];
const MAC_B: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0b];
const CLIENT: [u8; 4] = [198, 51, 100, 7];
const VIP: [u8; 4] = [203, 0, 113, 10];

fn tcp_syn() -> Vec<u8> {
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv4(CLIENT, VIP, 61)
        .tcp(40000, 80, 1000, 65535)
        .syn();
    let mut v = Vec::new();
    b.write(&mut v, &[1, 2, 3]).unwrap();
    v
}

fn udp_vlan() -> Vec<u8> {
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B)
        .single_vlan(etherparse::VlanId::try_new(42).unwrap())
        .ipv4(CLIENT, VIP, 64)
        .udp(5000, 53);
    let mut v = Vec::new();
    b.write(&mut v, &[9; 10]).unwrap();
    v
}

fn icmp_echo() -> Vec<u8> {
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv4(CLIENT, VIP, 64)
        .icmpv4_echo_request(7, 1);
    let mut v = Vec::new();
    b.write(&mut v, b"ping").unwrap();
    v
}

/// An ICMP port-unreachable from `CLIENT` quoting the UDP packet VIP:53 -> CLIENT:5000,
/// with `quote_l4` bytes of the quoted UDP datagram.
fn icmp_error(quote_l4: usize) -> Vec<u8> {
    let inner = {
        let b = PacketBuilder::ipv4(VIP, CLIENT, 63).udp(53, 5000);
        let mut v = Vec::new();
        b.write(&mut v, &[0; 16]).unwrap();
        v
    };
    let quoted = &inner[..20 + quote_l4];
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv4(CLIENT, VIP, 64)
        .icmpv4(etherparse::Icmpv4Type::DestinationUnreachable(
            etherparse::icmpv4::DestUnreachableHeader::Port,
        ));
    let mut v = Vec::new();
    b.write(&mut v, quoted).unwrap();
    v
}

fn meta(c: Classified) -> PacketMeta {
    match c {
        Classified::Ipv4(m) => m,
        other => panic!("expected Ipv4, got {other:?}"),
    }
}

#[test]
fn tcp_every_field() {
    let f = tcp_syn();
    let m = meta(classify(&f, 3));
    assert_eq!(
        m,
        PacketMeta {
            port: 3,
            vlan: None,
            l3_off: 14,
            l4_off: 34,
            ip_len: 43,
            key: FlowKey {
                src: 0xc633_6407,
                dst: 0xcb00_710a,
                sport: 40000,
                dport: 80,
                proto: PROTO_TCP
            },
            tcp_flags: tcp_flags::SYN,
            ttl: 61,
            df: true,
            icmp: None,
        }
    );
}

#[test]
fn udp_behind_vlan_with_padding() {
    let mut f = udp_vlan();
    f.extend_from_slice(&[0; 6]); // Ethernet padding after the IP packet
    let m = meta(classify(&f, 0));
    assert_eq!(m.vlan, Some(42));
    assert_eq!((m.l3_off, m.l4_off, m.ip_len), (18, 38, 38));
    assert_eq!(
        (m.key.sport, m.key.dport, m.key.proto),
        (5000, 53, PROTO_UDP)
    );
    assert_eq!(m.tcp_flags, 0);
}

#[test]
fn ip_options_shift_l4() {
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B);
    let mut ip =
        etherparse::Ipv4Header::new(0, 64, etherparse::IpNumber::UDP, CLIENT, VIP).unwrap();
    ip.options = [0x94u8, 4, 0, 0][..].try_into().unwrap(); // router alert
    let b = b
        .ip(etherparse::IpHeaders::Ipv4(ip, Default::default()))
        .udp(1, 2);
    let mut f = Vec::new();
    b.write(&mut f, &[]).unwrap();
    let m = meta(classify(&f, 0));
    assert_eq!((m.l3_off, m.l4_off, m.ip_len), (14, 38, 32));
    assert_eq!((m.key.sport, m.key.dport), (1, 2));
    assert!(m.df); // etherparse sets DF by default
}

#[test]
fn icmp_echo_has_zero_ports() {
    let m = meta(classify(&icmp_echo(), 1));
    assert_eq!(m.key.proto, PROTO_ICMP);
    assert_eq!((m.key.sport, m.key.dport), (0, 0));
    assert_eq!(m.icmp, None);
}

#[test]
fn icmp_error_quote() {
    let f = icmp_error(8);
    let m = meta(classify(&f, 0));
    assert_eq!(
        m.icmp,
        Some(IcmpQuote {
            icmp_type: 3,
            code: 3,
            inner_l3_off: 42,
            inner_l4_off: 62,
            inner_key: FlowKey {
                src: 0xcb00_710a,
                dst: 0xc633_6407,
                sport: 53,
                dport: 5000,
                proto: PROTO_UDP
            },
        })
    );
    // quote shorter than IP header + 8: no quote, still an ICMP packet
    let m = meta(classify(&icmp_error(7), 0));
    assert_eq!(m.icmp, None);
    assert_eq!(m.key.proto, PROTO_ICMP);
}

fn arp_frame(tagged: bool) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&MAC_A);
    if tagged {
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    }
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&MAC_A);
    f.extend_from_slice(&[10, 0, 0, 2, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1]);
    f
}

#[test]
fn arp() {
    assert_eq!(
        classify(&arp_frame(false), 0),
        Classified::Arp {
            arp_off: 14,
            vlan: None
        }
    );
    assert_eq!(
        classify(&arp_frame(true), 0),
        Classified::Arp {
            arp_off: 18,
            vlan: Some(5)
        }
    );
    let f = arp_frame(false);
    assert_eq!(classify(&f[..41], 0), Classified::Drop(NetDrop::BadArp));
    let mut f = arp_frame(false);
    f[14 + 5] = 16; // plen 16
    assert_eq!(classify(&f, 0), Classified::Drop(NetDrop::BadArp));
}

fn fix_ip_csum(f: &mut [u8], l3: usize) {
    let mut p = ipv4::Packet::new_unchecked(&mut f[l3..]);
    p.fill_checksum();
}

fn drop_of(f: &[u8]) -> NetDrop {
    match classify(f, 0) {
        Classified::Drop(d) => d,
        other => panic!("expected drop, got {other:?}"),
    }
}

#[test]
fn drop_reasons() {
    let good = tcp_syn();
    assert_eq!(drop_of(&good[..13]), NetDrop::Truncated);
    assert_eq!(drop_of(&good[..33]), NetDrop::Truncated);

    let mut f = good.clone();
    f[12..14].copy_from_slice(&[0x88, 0xcc]);
    assert_eq!(drop_of(&f), NetDrop::UnknownEthertype);
    // an IPv4 packet under the IPv6 EtherType: version 4
    f[12..14].copy_from_slice(&[0x86, 0xdd]);
    assert_eq!(drop_of(&f), NetDrop::BadIpv6);
    f[12..14].copy_from_slice(&[0x88, 0xa8]);
    assert_eq!(drop_of(&f), NetDrop::StackedVlan);
    let mut v = udp_vlan();
    v[16..18].copy_from_slice(&[0x81, 0x00]);
    assert_eq!(drop_of(&v), NetDrop::StackedVlan);

    let mut f = good.clone();
    f[6] = 0x03;
    assert_eq!(drop_of(&f), NetDrop::BadSrcMac);

    let mut f = good.clone();
    f[14] = 0x65;
    assert_eq!(drop_of(&f), NetDrop::BadVersion);
    f[14] = 0x44;
    assert_eq!(drop_of(&f), NetDrop::BadIhl);

    let mut f = good.clone();
    f[24] ^= 0xff;
    assert_eq!(drop_of(&f), NetDrop::BadIpChecksum);

    let mut f = good.clone();
    f[17] = 19;
    fix_ip_csum(&mut f, 14);
    assert_eq!(drop_of(&f), NetDrop::BadTotalLen);
    f[17] = 44; // one past the frame
    fix_ip_csum(&mut f, 14);
    assert_eq!(drop_of(&f), NetDrop::BadTotalLen);

    for ff in [[0x20u8, 0x00], [0x00, 0x01], [0x40, 0x10]] {
        let mut f = good.clone();
        f[20..22].copy_from_slice(&ff);
        fix_ip_csum(&mut f, 14);
        assert_eq!(drop_of(&f), NetDrop::Fragment, "{ff:?}");
    }

    let mut f = good.clone();
    f[22] = 0;
    fix_ip_csum(&mut f, 14);
    assert_eq!(drop_of(&f), NetDrop::TtlExpired);
    f[22] = 1; // TTL 1 is left to the caller (it may be addressed to us)
    fix_ip_csum(&mut f, 14);
    assert_eq!(meta(classify(&f, 0)).ttl, 1);

    for src in [
        [224, 0, 0, 1],
        [255, 255, 255, 255],
        [0, 0, 0, 0],
        [127, 0, 0, 1],
    ] {
        let mut f = good.clone();
        f[26..30].copy_from_slice(&src);
        fix_ip_csum(&mut f, 14);
        assert_eq!(drop_of(&f), NetDrop::MartianSrc, "{src:?}");
    }
    for dst in [[239, 1, 1, 1], [255, 255, 255, 255], [0, 0, 0, 0]] {
        let mut f = good.clone();
        f[30..34].copy_from_slice(&dst);
        fix_ip_csum(&mut f, 14);
        assert_eq!(drop_of(&f), NetDrop::NotUnicastDst, "{dst:?}");
    }

    let mut f = good.clone();
    f[23] = 47; // GRE
    fix_ip_csum(&mut f, 14);
    assert_eq!(drop_of(&f), NetDrop::UnsupportedProto);

    let mut f = good.clone();
    f[14 + 20 + 12] = 0x40; // TCP data offset 4
    assert_eq!(drop_of(&f), NetDrop::BadL4Header);
    f[14 + 20 + 12] = 0x60; // 24-byte header, 23 bytes of IP payload
    assert_eq!(drop_of(&f), NetDrop::L4Truncated);

    // IP total length cuts the TCP header short even though the frame is long
    let mut f = good.clone();
    f[17] = 39;
    fix_ip_csum(&mut f, 14);
    assert_eq!(drop_of(&f), NetDrop::L4Truncated);

    let mut u = udp_vlan();
    u[18 + 20 + 5] = 7; // UDP length 7
    assert_eq!(drop_of(&u), NetDrop::BadL4Header);
    u[18 + 20 + 5] = 19; // beyond the 18-byte IP payload
    assert_eq!(drop_of(&u), NetDrop::L4Truncated);

    let e = icmp_echo();
    let mut f = e[..14 + 20 + 7].to_vec();
    f[17] = 27;
    fix_ip_csum(&mut f, 14);
    assert_eq!(drop_of(&f), NetDrop::L4Truncated);
}

#[test]
fn drop_index_and_names() {
    assert_eq!(NetDrop::COUNT, 20);
    crate::counters::check::<NetDrop>();
    assert!(NetDrop::ALL.iter().all(|d| d.is_drop()));
    // the names are the control protocol's: they never change
    let names: Vec<_> = NetDrop::ALL.iter().map(|d| d.name()).collect();
    assert_eq!(
        names.join(" "),
        "truncated unknown_ethertype ipv6 stacked_vlan bad_src_mac bad_arp bad_version \
         bad_ihl bad_ip_checksum bad_total_len fragment ttl_expired martian_src \
         not_unicast_dst unsupported_proto bad_l4_header l4_truncated bad_ipv6 \
         ipv6_ext_header ipv6_fragment"
    );
}

fn check_invariants(f: &[u8]) {
    if let Classified::Ipv4(m) = classify(f, 9) {
        assert_eq!(m.port, 9);
        assert!(m.l3_off as usize + m.ip_len as usize <= f.len());
        assert!(m.l4_off > m.l3_off && m.l4_off <= m.l3_off + m.ip_len);
        if let Some(q) = m.icmp {
            assert!(q.inner_l4_off as usize + 8 <= f.len());
            assert!(q.inner_l3_off as usize >= m.l4_off as usize + 8);
        }
    }
    if let Classified::Icmpv6 {
        l3_off,
        l4_off,
        len,
        ..
    } = classify(f, 9)
    {
        assert!(l4_off as usize >= l3_off as usize + 40);
        assert!(len >= 8 && l4_off as usize + len as usize <= f.len());
    }
}

fn valid_frames() -> Vec<Vec<u8>> {
    vec![
        tcp_syn(),
        udp_vlan(),
        icmp_echo(),
        icmp_error(8),
        icmp_error(12),
        arp_frame(false),
        arp_frame(true),
        ipv6::icmpv6_echo(),
        ipv6::icmpv6_behind_hop_by_hop(),
    ]
}

proptest! {
    #[test]
    fn random_bytes_never_panic(f in proptest::collection::vec(any::<u8>(), 0..200)) {
        check_invariants(&f);
    }

    #[test]
    fn mutated_valid_packets_never_panic(
        which in 0usize..9,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
        fix in any::<bool>(),
    ) {
        let mut f = valid_frames().swap_remove(which);
        for (i, v) in edits {
            let n = f.len();
            f[i % n] = v;
        }
        if fix && f.len() >= 34 {
            // keep the IP checksum valid so the mutation reaches deeper checks
            fix_ip_csum(&mut f, 14);
        }
        let n = f.len();
        f.truncate(cut % (n + 1));
        check_invariants(&f);
    }
}

mod fast;
mod fast6;
mod ipv6;
mod ipv6_balance;

#[test]
fn ipv4_dst_of_what_classify_drops_for_the_kernel() {
    // OSPF hello to 224.0.0.5: classify drops it, ipv4_dst still reads it
    let mut f = Vec::new();
    PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [1, 0, 0x5e, 0, 0, 5])
        .ipv4([10, 0, 0, 2], [224, 0, 0, 5], 1)
        .write(
            &mut f,
            etherparse::IpNumber(89),
            &[0u8; 24], // an OSPF header's worth
        )
        .unwrap();
    assert_eq!(classify(&f, 0), Classified::Drop(NetDrop::NotUnicastDst));
    assert_eq!(ipv4_dst(&f), Some(0xe000_0005));
    assert!(is_link_local_multicast(0xe000_0005));
    assert!(
        !is_link_local_multicast(0xe000_0105),
        "224.0.1.5 is routable"
    );
    assert!(!is_link_local_multicast(0xef00_0005));
    // a protocol dirigo does not speak, behind a VLAN tag
    let mut f = Vec::new();
    PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .single_vlan(etherparse::VlanId::try_new(5).unwrap())
        .ipv4([10, 0, 0, 2], [10, 0, 0, 1], 64)
        .write(&mut f, etherparse::IpNumber(47), &[0u8; 8])
        .unwrap();
    assert_eq!(classify(&f, 0), Classified::Drop(NetDrop::UnsupportedProto));
    assert_eq!(ipv4_dst(&f), Some(0x0a00_0001));
    // a broken header checksum, ARP, a truncated frame: nothing
    let mut bad = f.clone();
    bad[18 + 10] ^= 0xff;
    assert_eq!(ipv4_dst(&bad), None);
    assert_eq!(ipv4_dst(&arp_frame(false)), None);
    assert_eq!(ipv4_dst(&f[..20]), None);
}

#[test]
fn ipv6_dst_of_what_classify_drops_for_the_kernel() {
    // an OSPFv3 hello to ff02::5, behind a VLAN tag: classify drops it
    // (an upper layer it does not handle), ipv6_dst still reads it
    let ospf6 = 0xff02_0000_0000_0000_0000_0000_0000_0005u128;
    let mut f = Vec::new();
    PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [0x33, 0x33, 0, 0, 0, 5])
        .single_vlan(etherparse::VlanId::try_new(5).unwrap())
        .ipv6(
            [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
            ospf6.to_be_bytes(),
            1,
        )
        .write(&mut f, etherparse::IpNumber(89), &[0u8; 16])
        .unwrap();
    assert_eq!(classify(&f, 0), Classified::Drop(NetDrop::Ipv6));
    assert_eq!(ipv6_dst(&f), Some(ospf6));
    assert_eq!(ipv4_dst(&f), None);
    assert!(is_link_local_multicast6(ospf6));
    assert!(is_link_local_multicast6(ospf6 | 0x0010 << 112), "ff12::5");
    assert!(
        !is_link_local_multicast6(0xff05u128 << 112 | 5),
        "site scope"
    );
    assert!(!is_link_local_multicast6(0xfe80u128 << 112 | 5), "unicast");
    // IPv4, ARP, a truncated IPv6 header: nothing
    assert_eq!(ipv6_dst(&tcp_syn()), None);
    assert_eq!(ipv6_dst(&arp_frame(false)), None);
    assert_eq!(ipv6_dst(&f[..40]), None);
}
