//! Packet Too Big.

use super::*;
use crate::lb::testutil::{CLIENT6, OUR_IP6, RIP6, VIP6};
use crate::lb::tunnel::Tunnel;
use crate::net::buf::{PacketBuf, VecBuf};
use etherparse::Icmpv6Type;

/// The Packet Too Big etherparse builds: VIP6 to CLIENT6, hop limit 64,
/// quoting `quote`, behind Ethernet toward the gateway (tag `vlan`).
fn want_ptb(mtu: u32, quote: &[u8], vlan: Option<u16>) -> Vec<u8> {
    let h = ip6(VIP6, CLIENT6, 64, 0, 0);
    let b = PacketBuilder::ip(IpHeaders::Ipv6(h, Default::default()))
        .icmpv6(Icmpv6Type::PacketTooBig { mtu });
    let mut ip = Vec::new();
    b.write(&mut ip, quote).unwrap();
    with_eth(eth(&ip, vlan), GW_MAC, OUR_MAC)
}

#[test]
fn packet_too_big_quotes_up_to_1280_bytes() {
    // a 1500-byte packet: the error is 1280 bytes of IPv6
    let f = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), &[0x5a; 1440], 64);
    let m = meta6_of(&f);
    assert_eq!(m.ip_len, 1500);
    let mut b = VecBuf::new(&f);
    let port = packet_too_big6(&mut b, &m, 1460, &FakeEgress::default()).unwrap();
    assert_eq!(port, 0, "toward the client, through the gateway");
    let out = b.to_vec();
    assert_eq!(out.len(), 14 + 1280);
    assert_eq!(out, want_ptb(1460, &f[14..14 + 1232], None));
    // field by field, independently of the builder
    let p = SlicedPacket::from_ethernet(&out).unwrap();
    let Some(NetSlice::Ipv6(ip)) = &p.net else {
        panic!("not ipv6")
    };
    let h = ip.header();
    assert_eq!(h.source(), VIP6.to_be_bytes());
    assert_eq!(h.destination(), CLIENT6.to_be_bytes());
    assert_eq!((h.hop_limit(), h.payload_length()), (64, 1240));
    assert_eq!(h.next_header(), IpNumber::IPV6_ICMP);
    let Some(TransportSlice::Icmpv6(i)) = &p.transport else {
        panic!("not icmpv6")
    };
    assert_eq!((i.type_u8(), i.code_u8()), (2, 0));
    assert_eq!(i.bytes5to8(), 1460u32.to_be_bytes());
    assert_eq!(i.payload(), &f[14..14 + 1232]);
    verify6(&out);
}

#[test]
fn packet_too_big_of_a_small_packet_grows_and_clamps_the_mtu() {
    // a whole small packet is quoted: 100 bytes of IPv6 become 148
    let f = frame6(CLIENT6, VIP6, L4::Udp(5353, 53), &[7; 52], 64);
    let m = meta6_of(&f);
    assert_eq!(m.ip_len, 100);
    let mut b = VecBuf::new(&f);
    assert_eq!(
        packet_too_big6(&mut b, &m, 1000, &FakeEgress::default()),
        Ok(0)
    );
    // an MTU below the IPv6 minimum is reported as 1280
    assert_eq!(b.to_vec(), want_ptb(1280, &f[14..], None));
    verify6(b.data());

    // without tailroom to grow: NoRoom, untouched
    let mut b = VecBuf::with_room(&f, 128, 47);
    assert_eq!(
        packet_too_big6(&mut b, &m, 1400, &FakeEgress::default()),
        Err(XmitError::NoRoom)
    );
    assert_eq!(b.to_vec(), f);
    let mut b = VecBuf::with_room(&f, 128, 48);
    assert_eq!(
        packet_too_big6(&mut b, &m, 1400, &FakeEgress::default()),
        Ok(0)
    );
    assert_eq!(b.to_vec(), want_ptb(1400, &f[14..], None));
}

#[test]
fn packet_too_big_behind_a_vlan_tag_without_padding() {
    let ip = packet6(ip6(CLIENT6, VIP6, 3, 0x10, 77), L4::Tcp(40000, 80), b"abc");
    let mut f = eth(&ip, Some(9));
    f.extend_from_slice(&[0xff; 5]); // padding, not quoted
    let m = meta6_of(&f);
    let mut b = VecBuf::new(&f);
    assert_eq!(
        packet_too_big6(&mut b, &m, 1452, &FakeEgress::default()),
        Ok(0)
    );
    assert_eq!(b.to_vec(), want_ptb(1452, &ip, Some(9)));
    verify6(b.data());
    // a tunnelled packet that was too big comes back this way whole
    let eg = FakeEgress {
        mtu: 1280,
        ..Default::default()
    };
    let f = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), &[1; 1241], 64);
    let m = meta6_of(&f);
    let mut b = VecBuf::new(&f);
    let Err(XmitError::NeedFrag { mtu }) = tun6(&mut b, &m, RIP6, None, &eg, Tunnel::IPIP) else {
        panic!("fits")
    };
    assert_eq!(mtu, 1240);
    assert_eq!(packet_too_big6(&mut b, &m, mtu, &eg), Ok(0));
    assert_eq!(b.to_vec(), want_ptb(1280, &f[14..14 + 1232], None));
}

#[test]
fn no_packet_too_big_where_rfc_4443_forbids_it() {
    let eg = FakeEgress::default();
    let refused = |ip: Vec<u8>| {
        let f = eth(&ip, None);
        let m = meta6_of(&f);
        let mut b = VecBuf::new(&f);
        assert_eq!(
            packet_too_big6(&mut b, &m, 1400, &eg),
            Err(XmitError::TooBig)
        );
        assert_eq!(b.to_vec(), f);
    };
    // about an ICMPv6 error
    let q = packet6(ip6(VIP6, CLIENT6, 64, 0, 0), L4::Tcp(80, 40000), &[0; 1300]);
    refused(icmp6_error(CLIENT6, VIP6, 64, 1, 4, [0; 4], &q[..1232]));
    // from the unspecified or a multicast address, or to a multicast one
    let mcast = 0xff02_0000_0000_0000_0000_0000_0000_0001u128;
    refused(packet6(ip6(0, VIP6, 64, 0, 0), L4::Udp(1, 2), &[0; 1400]));
    refused(packet6(
        ip6(mcast, VIP6, 64, 0, 0),
        L4::Udp(1, 2),
        &[0; 1400],
    ));
    refused(packet6(
        ip6(CLIENT6, mcast, 64, 0, 0),
        L4::Udp(1, 2),
        &[0; 1400],
    ));
    // an ICMPv6 error the metadata does not mark (type < 128 at l4) too
    let e = icmp6_error(CLIENT6, VIP6, 64, 3, 0, [0; 4], &q[..1232]);
    let f = eth(&e, None);
    let mut m = meta6_of(&f);
    m.icmp = None;
    let mut b = VecBuf::new(&f);
    assert_eq!(
        packet_too_big6(&mut b, &m, 1400, &eg),
        Err(XmitError::TooBig)
    );
    // an echo request is answered
    let b = PacketBuilder::ip(IpHeaders::Ipv6(
        ip6(CLIENT6, VIP6, 64, 0, 0),
        Default::default(),
    ))
    .icmpv6_echo_request(1, 2);
    let mut ip = Vec::new();
    b.write(&mut ip, &[0xcc; 1400]).unwrap();
    let f = eth(&ip, None);
    let m = meta6_of(&f);
    let mut b = VecBuf::new(&f);
    assert_eq!(packet_too_big6(&mut b, &m, 1400, &eg), Ok(0));
    assert_eq!(b.to_vec(), want_ptb(1400, &ip[..1232], None));
}

#[test]
fn packet_too_big_errors_leave_the_frame() {
    let f = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), &[0; 1300], 64);
    let m = meta6_of(&f);
    let run = |m: &PacketMeta6, eg: &FakeEgress, want| {
        let mut b = VecBuf::new(&f);
        assert_eq!(packet_too_big6(&mut b, m, 1400, eg), Err(want));
        assert_eq!(b.to_vec(), f);
    };
    let eg = FakeEgress {
        unresolved: vec![CLIENT6 as u32],
        ..Default::default()
    };
    run(&m, &eg, XmitError::Unresolved);
    let eg = FakeEgress {
        noroute: vec![CLIENT6 as u32],
        ..Default::default()
    };
    run(&m, &eg, XmitError::NoRoute);
    let eg = FakeEgress::default();
    for bad in [
        PacketMeta6 { l3_off: 10, ..m },
        PacketMeta6 { ip_len: 39, ..m },
        PacketMeta6 {
            ip_len: m.ip_len + 1,
            ..m
        },
        PacketMeta6 { l4_off: 50, ..m },
        PacketMeta6 {
            l4_off: 14 + m.ip_len + 1,
            ..m
        },
        PacketMeta6 {
            l3_off: u16::MAX,
            l4_off: u16::MAX,
            ip_len: u16::MAX,
            ..m
        },
    ] {
        run(&bad, &eg, XmitError::Malformed);
    }
    // our own address as the source is fine (not a forbidden one)
    let f = frame6(OUR_IP6, VIP6, L4::Udp(1, 2), &[0; 1300], 64);
    let mut b = VecBuf::new(&f);
    assert_eq!(packet_too_big6(&mut b, &meta6_of(&f), 1400, &eg), Ok(1));
}
