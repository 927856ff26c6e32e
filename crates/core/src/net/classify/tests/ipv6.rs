//! IPv6: ICMPv6 reaches the responder with its offsets, TCP/UDP and
//! ICMPv6 errors about them the balancer (`ipv6_balance`), everything else
//! is a counted drop; the IPv4 fast path never answers for IPv6.

use super::*;
use crate::net::classify::fast::classify_fast;

const SRC: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const DST: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

pub(super) fn icmpv6_echo() -> Vec<u8> {
    let mut v = Vec::new();
    PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv6(SRC, DST, 64)
        .icmpv6_echo_request(1, 2)
        .write(&mut v, b"ping")
        .unwrap();
    v
}

/// An MLDv2 report behind a Hop-by-Hop router alert, to ff02::16.
pub(super) fn icmpv6_behind_hop_by_hop() -> Vec<u8> {
    let mut f = Vec::new();
    f.extend([0x33, 0x33, 0, 0, 0, 0x16]);
    f.extend(MAC_A);
    f.extend([0x86, 0xdd, 0x60, 0, 0, 0, 0, 16, 0, 1]);
    f.extend(SRC);
    f.extend([0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x16]);
    f.extend([58, 0, 5, 2, 0, 0, 1, 0]);
    f.extend([143, 0, 0, 0, 0, 0, 0, 0]);
    f
}

pub(super) fn udp6(vlan: bool) -> Vec<u8> {
    let mut v = Vec::new();
    if vlan {
        PacketBuilder::ethernet2(MAC_A, MAC_B)
            .single_vlan(etherparse::VlanId::try_new(5).unwrap())
            .ipv6(SRC, DST, 64)
            .udp(1, 2)
            .write(&mut v, b"x")
            .unwrap();
    } else {
        PacketBuilder::ethernet2(MAC_A, MAC_B)
            .ipv6(SRC, DST, 64)
            .udp(1, 2)
            .write(&mut v, b"x")
            .unwrap();
    }
    v
}

#[test]
fn icmpv6_carries_its_offsets() {
    let f = icmpv6_echo();
    let c = Classified::Icmpv6 {
        l3_off: 14,
        l4_off: 54,
        len: 12,
        vlan: None,
    };
    assert_eq!(classify(&f, 0), c);
    // Ethernet padding is not the message's
    let mut p = f.clone();
    p.extend([0; 6]);
    assert_eq!(classify(&p, 0), c);
    // the fast path leaves IPv6 to the slow one
    assert_eq!(classify_fast(&f, 0), None);
    let mut m = PacketMeta::default();
    assert_eq!(classify_into(&f, 0, &mut m), Some(c));
    // behind a Hop-by-Hop header, to a multicast group
    assert_eq!(
        classify(&icmpv6_behind_hop_by_hop(), 0),
        Classified::Icmpv6 {
            l3_off: 14,
            l4_off: 62,
            len: 8,
            vlan: None
        }
    );
}

#[test]
fn ipv6_vlan_tagged() {
    let mut v = Vec::new();
    PacketBuilder::ethernet2(MAC_A, MAC_B)
        .single_vlan(etherparse::VlanId::try_new(5).unwrap())
        .ipv6(SRC, DST, 64)
        .icmpv6_echo_request(1, 2)
        .write(&mut v, b"")
        .unwrap();
    assert_eq!(
        classify(&v, 0),
        Classified::Icmpv6 {
            l3_off: 18,
            l4_off: 58,
            len: 8,
            vlan: Some(5)
        }
    );
}

#[test]
fn ipv6_drops() {
    let f = icmpv6_echo();
    // no upper layer (next header 59), or one dirigo does not speak (SCTP)
    for nh in [59u8, 132] {
        let mut b = f.clone();
        b[20] = nh;
        assert_eq!(drop_of(&b), NetDrop::Ipv6, "{nh}");
    }
    // truncated header, version, payload length past the frame
    assert_eq!(drop_of(&f[..14 + 39]), NetDrop::BadIpv6);
    let mut b = f.clone();
    b[14] = 0x40;
    assert_eq!(drop_of(&b), NetDrop::BadIpv6);
    assert_eq!(drop_of(&f[..f.len() - 1]), NetDrop::BadIpv6);
    // an ICMPv6 message shorter than its header
    let mut b = f[..14 + 40 + 7].to_vec();
    b[18..20].copy_from_slice(&[0, 7]);
    assert_eq!(drop_of(&b), NetDrop::L4Truncated);
    // sources and destinations no packet may have
    let mut b = f.clone();
    b[22] = 0xff;
    assert_eq!(drop_of(&b), NetDrop::MartianSrc);
    let mut b = f.clone();
    b[22..38].copy_from_slice(&1u128.to_be_bytes());
    assert_eq!(drop_of(&b), NetDrop::MartianSrc);
    for d in [0u128, 1] {
        let mut b = f.clone();
        b[38..54].copy_from_slice(&d.to_be_bytes());
        assert_eq!(drop_of(&b), NetDrop::NotUnicastDst, "{d}");
    }
    // a multicast destination is the responder's to judge
    let mut b = f.clone();
    b[38] = 0xff;
    assert!(matches!(classify(&b, 0), Classified::Icmpv6 { .. }));

    // extension headers: a fragment, Hop-by-Hop not first, truncated,
    // unknown (Mobility), too many
    let with_ext = |first: u8, ext: &[u8]| {
        let mut b = f[..54].to_vec();
        b[20] = first;
        let plen = (ext.len() + 12) as u16;
        b[18..20].copy_from_slice(&plen.to_be_bytes());
        b.extend_from_slice(ext);
        b.extend_from_slice(&f[54..]);
        b
    };
    let frag = [58, 0, 0, 0, 0, 0, 0, 1];
    assert_eq!(drop_of(&with_ext(44, &frag)), NetDrop::Ipv6Fragment);
    let hbh_second = [0, 0, 1, 4, 0, 0, 0, 0, 58, 0, 1, 4, 0, 0, 0, 0];
    assert_eq!(drop_of(&with_ext(60, &hbh_second)), NetDrop::Ipv6ExtHeader);
    let long = [58, 3, 1, 4, 0, 0, 0, 0]; // 32 bytes stated, 20 there
    assert_eq!(drop_of(&with_ext(60, &long)), NetDrop::Ipv6ExtHeader);
    let mobility = [58, 0, 1, 4, 0, 0, 0, 0];
    assert_eq!(drop_of(&with_ext(135, &mobility)), NetDrop::Ipv6ExtHeader);
    let mut chain = Vec::new();
    for _ in 0..9 {
        chain.extend([60, 0, 1, 4, 0, 0, 0, 0]);
    }
    assert_eq!(drop_of(&with_ext(60, &chain)), NetDrop::Ipv6ExtHeader);
    // one Destination Options header is walked
    let dest = [58, 0, 1, 4, 0, 0, 0, 0];
    assert!(matches!(
        classify(&with_ext(60, &dest), 0),
        Classified::Icmpv6 {
            l4_off: 62,
            len: 12,
            ..
        }
    ));
}
