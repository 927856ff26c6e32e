//! DR and TUN.

use super::*;
use crate::lb::testutil::{CLIENT6, OUR_IP6, RIP6, RIP6_2, VIP6};
use crate::lb::tunnel::Tunnel;
use crate::net::buf::{PacketBuf, VecBuf};

#[test]
fn dr6_rewrites_only_macs() {
    let f = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), b"GET /", 57);
    let mut b = VecBuf::new(&f);
    let port = dr(&mut b, RIP6, &FakeEgress::default()).unwrap();
    assert_eq!(port, 1);
    assert_eq!(b.to_vec(), with_eth(f, mac6_of(RIP6), OUR_MAC));
    let p = SlicedPacket::from_ethernet(b.data()).unwrap();
    let Some(NetSlice::Ipv6(ip)) = &p.net else {
        panic!("not ipv6")
    };
    assert_eq!(ip.header().hop_limit(), 57, "hop limit kept");
    verify6(b.data());
}

#[test]
fn dr6_keeps_a_vlan_tag_and_forwards_icmpv6_errors_unchanged() {
    let quoted = packet6(ip6(VIP6, CLIENT6, 64, 0, 0), L4::Tcp(80, 40000), b"");
    let e = icmp6_error(ROUTER6, VIP6, 60, 2, 0, 1400u32.to_be_bytes(), &quoted);
    let f = eth(&e, Some(42));
    let mut b = VecBuf::new(&f);
    assert_eq!(dr(&mut b, RIP6_2, &FakeEgress::default()), Ok(1));
    assert_eq!(b.to_vec(), with_eth(f, mac6_of(RIP6_2), OUR_MAC));
    verify6(b.data());
}

#[test]
fn dr6_errors_leave_the_frame() {
    let eg = FakeEgress {
        unresolved: vec![RIP6 as u32],
        noroute: vec![RIP6_2 as u32],
        ..Default::default()
    };
    let f = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), b"", 64);
    let mut b = VecBuf::new(&f);
    assert_eq!(dr(&mut b, RIP6, &eg), Err(XmitError::Unresolved));
    assert_eq!(dr(&mut b, RIP6_2, &eg), Err(XmitError::NoRoute));
    assert_eq!(b.to_vec(), f);
    let mut short = VecBuf::new(&f[..11]);
    assert_eq!(
        dr(&mut short, RIP6, &FakeEgress::default()),
        Err(XmitError::Malformed)
    );
    assert_eq!(short.to_vec(), &f[..11]);
}

/// Check a TUN output: Ethernet toward `rip` (tag kept), an outer IPv6
/// header with next header 41 and the inner header's hop limit, traffic
/// class and flow label, and the inner packet byte for byte.
fn check_tun(out: &[u8], inner: &[u8], l3: usize, src: u128, rip: u128) {
    assert_eq!(&out[..6], &mac6_of(rip));
    assert_eq!(&out[6..12], &OUR_MAC);
    assert_eq!(be16(out, l3 - 2), 0x86dd);
    assert_eq!(out.len(), l3 + 40 + inner.len());
    let o = etherparse::Ipv6HeaderSlice::from_slice(&out[l3..])
        .unwrap()
        .to_header();
    let i = etherparse::Ipv6HeaderSlice::from_slice(inner)
        .unwrap()
        .to_header();
    assert_eq!(o.next_header, IpNumber::IPV6);
    assert_eq!(o.payload_length as usize, inner.len());
    assert_eq!(
        (o.source, o.destination),
        (src.to_be_bytes(), rip.to_be_bytes())
    );
    assert_eq!(o.hop_limit, i.hop_limit, "hop limit copied");
    assert_eq!(o.traffic_class, i.traffic_class, "traffic class copied");
    assert_eq!(o.flow_label, i.flow_label, "flow label copied");
    assert_eq!(&out[l3 + 40..], inner, "inner packet unchanged");
    verify6(out);
}

#[test]
fn tun6_encapsulates() {
    let inner = packet6(
        ip6(CLIENT6, VIP6, 57, 0xb8, 0x12345),
        L4::Tcp(40000, 80),
        b"hello",
    );
    let f = eth(&inner, None);
    let m = meta6_of(&f);
    let mut b = VecBuf::new(&f);
    let port = tun6(&mut b, &m, RIP6, None, &FakeEgress::default(), Tunnel::IPIP).unwrap();
    assert_eq!(port, 1);
    check_tun(b.data(), &inner, 14, OUR_IP6, RIP6);
    assert_eq!(b.headroom(), VecBuf::HEADROOM - 40);
    // etherparse reads the whole as IPv6 in IPv6 with the inner TCP
    let p = SlicedPacket::from_ethernet(b.data()).unwrap();
    let Some(NetSlice::Ipv6(o)) = &p.net else {
        panic!("not ipv6")
    };
    assert_eq!(o.payload().ip_number, IpNumber::IPV6);
    let ip = SlicedPacket::from_ip(o.payload().payload).unwrap();
    let Some(TransportSlice::Tcp(t)) = ip.transport else {
        panic!("no inner tcp")
    };
    assert_eq!((t.source_port(), t.destination_port()), (40000, 80));
    assert_eq!(t.payload(), b"hello");
}

#[test]
fn tun6_configured_source_vlan_and_padding_trimmed() {
    // a short UDP packet padded by the sender's NIC, behind a VLAN tag
    let inner = packet6(ip6(CLIENT6, VIP6, 1, 0x04, 0), L4::Udp(5353, 53), b"q");
    let mut f = eth(&inner, Some(100));
    f.extend_from_slice(&[0xee; 9]);
    let m = meta6_of(&f);
    let tsrc = 0x2001_0db8_0001_0000_0000_0000_0000_0099u128;
    let mut b = VecBuf::new(&f);
    let port = tun6(
        &mut b,
        &m,
        RIP6_2,
        Some(tsrc),
        &FakeEgress::default(),
        Tunnel::IPIP,
    )
    .unwrap();
    assert_eq!(port, 1);
    let out = b.to_vec();
    assert_eq!(&out[12..16], &[0x81, 0x00, 0x00, 100], "tag kept");
    check_tun(&out, &inner, 18, tsrc, RIP6_2);
}

#[test]
fn tun6_needs_frag_above_the_mtu() {
    // ip_len 1460 + 40 fits a 1500 MTU exactly; one byte more does not
    let fits = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), &[0xab; 1400], 64);
    let m = meta6_of(&fits);
    assert_eq!(m.ip_len, 1460);
    let mut b = VecBuf::new(&fits);
    assert_eq!(
        tun6(&mut b, &m, RIP6, None, &FakeEgress::default(), Tunnel::IPIP),
        Ok(1)
    );
    assert_eq!(b.len(), fits.len() + 40);

    let big = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), &[0xab; 1401], 64);
    let m = meta6_of(&big);
    let mut b = VecBuf::new(&big);
    let e = tun6(&mut b, &m, RIP6, None, &FakeEgress::default(), Tunnel::IPIP);
    assert_eq!(e, Err(XmitError::NeedFrag { mtu: 1460 }));
    assert_eq!(b.to_vec(), big, "untouched");
    // a small MTU: the value to report, not clamped here
    let eg = FakeEgress {
        mtu: 1300,
        ..Default::default()
    };
    let e = tun6(&mut b, &m, RIP6, None, &eg, Tunnel::IPIP);
    assert_eq!(e, Err(XmitError::NeedFrag { mtu: 1260 }));
    assert_eq!(b.to_vec(), big);
}

/// The error `tun6` gives for frame `f` (of meta `m`) in a buffer with
/// `headroom`, checking the frame is left as it was.
fn tun_err(f: &[u8], m: &PacketMeta6, headroom: usize, rip: u128, eg: &impl Egress6) -> XmitError {
    let mut b = VecBuf::with_room(f, headroom, 0);
    let e = tun6(&mut b, m, rip, None, eg, Tunnel::IPIP).expect_err("an error");
    assert_eq!(b.to_vec(), f, "{e:?} left the frame changed");
    e
}

#[test]
fn tun6_errors_leave_the_frame() {
    let f = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), b"x", 64);
    let m = meta6_of(&f);
    let fake = FakeEgress {
        unresolved: vec![RIP6 as u32],
        noroute: vec![RIP6_2 as u32],
        ..Default::default()
    };
    assert_eq!(tun_err(&f, &m, 128, RIP6, &fake), XmitError::Unresolved);
    assert_eq!(tun_err(&f, &m, 128, RIP6_2, &fake), XmitError::NoRoute);
    // no address to send from, unless one is configured
    let nosrc = NoSource(FakeEgress::default());
    assert_eq!(tun_err(&f, &m, 128, RIP6, &nosrc), XmitError::NoRoute);
    let mut b = VecBuf::new(&f);
    assert_eq!(
        tun6(&mut b, &m, RIP6, Some(OUR_IP6), &nosrc, Tunnel::IPIP),
        Ok(1)
    );
    // 39 bytes of headroom
    let eg = FakeEgress::default();
    assert_eq!(tun_err(&f, &m, 39, RIP6, &eg), XmitError::NoRoom);
    // metadata that does not fit the frame
    for bad in [
        PacketMeta6 { ip_len: 39, ..m },
        PacketMeta6 { l3_off: 13, ..m },
        PacketMeta6 {
            ip_len: m.ip_len + 1,
            ..m
        },
        PacketMeta6 {
            l3_off: u16::MAX,
            ip_len: u16::MAX,
            ..m
        },
    ] {
        assert_eq!(tun_err(&f, &bad, 128, RIP6, &eg), XmitError::Malformed);
    }
    // a frame cut short of what its metadata says
    let short = &f[..f.len() - 1];
    assert_eq!(tun_err(short, &m, 128, RIP6, &eg), XmitError::Malformed);
}

#[test]
fn tun6_forwards_an_icmpv6_error_whole_and_never_answers_it() {
    // a Packet Too Big about our VIP:80 -> client reply, for the RS
    let sent = packet6(ip6(VIP6, CLIENT6, 63, 0, 0), L4::Tcp(80, 40000), &[9; 1300]);
    let e = icmp6_error(
        ROUTER6,
        VIP6,
        60,
        2,
        0,
        1280u32.to_be_bytes(),
        &sent[..1232],
    );
    let f = eth(&e, None);
    let m = meta6_of(&f);
    assert!(m.icmp.is_some());
    let mut b = VecBuf::new(&f);
    assert_eq!(
        tun6(&mut b, &m, RIP6, None, &FakeEgress::default(), Tunnel::IPIP),
        Ok(1)
    );
    check_tun(b.data(), &e, 14, OUR_IP6, RIP6);
    // on a link too small for it: NeedFrag, and no error about an error
    let eg = FakeEgress {
        mtu: 1300,
        ..Default::default()
    };
    let mut b = VecBuf::new(&f);
    assert_eq!(
        tun6(&mut b, &m, RIP6, None, &eg, Tunnel::IPIP),
        Err(XmitError::NeedFrag { mtu: 1260 })
    );
    assert_eq!(
        packet_too_big6(&mut b, &m, 1260, &eg),
        Err(XmitError::TooBig)
    );
    assert_eq!(b.to_vec(), f);
}
