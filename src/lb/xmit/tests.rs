use super::nat::{nat, nat_icmp, Side};
use super::*;
use crate::lb::testutil::*;
use crate::net::buf::VecBuf;
use crate::net::meta::tcp_flags::{ACK, PSH, SYN};
use etherparse::{IpNumber, Ipv4Header};

fn with_eth(mut f: Vec<u8>, dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    f[0..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f
}

#[test]
fn dr_rewrites_only_macs() {
    let f = tcp_frame(CLIENT, 40000, VIP, 80, SYN, b"", 64, true);
    let mut b = VecBuf::new(&f);
    let port = dr::dr(&mut b, ip(RIP), &FakeEgress::default()).unwrap();
    assert_eq!(port, 1);
    assert_eq!(b.to_vec(), with_eth(f, mac_of(RIP), OUR_MAC));
    verify(b.data());
}

#[test]
fn tun_encapsulates() {
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK | PSH, b"hello", 57, true);
    let m = crate::lb::testutil::meta_of(&f);
    let mut b = VecBuf::new(&f);
    let mut id = 0x0101;
    let port = tun::tun(&mut b, &m, ip(RIP), None, &FakeEgress::default(), &mut id).unwrap();
    assert_eq!(port, 1);
    assert_eq!(id, 0x0102);
    let mut outer = Ipv4Header::new(f.len() as u16 - 14, 57, IpNumber::IPV4, OUR_IP, RIP).unwrap();
    outer.dont_fragment = true;
    outer.identification = 0x0101;
    outer.header_checksum = outer.calc_header_checksum();
    let mut want = Vec::new();
    want.extend_from_slice(&mac_of(RIP));
    want.extend_from_slice(&OUR_MAC);
    want.extend_from_slice(&[0x08, 0x00]);
    outer.write(&mut want).unwrap();
    want.extend_from_slice(&f[14..]);
    assert_eq!(b.to_vec(), want);
    verify(b.data());
}

#[test]
fn tun_configured_source_and_padding_trimmed() {
    let mut f = tcp_frame(CLIENT, 40000, VIP, 80, SYN, b"", 64, false);
    let unpadded = f.clone();
    f.extend_from_slice(&[0u8; 6]); // Ethernet padding to 60 bytes
    let m = crate::lb::testutil::meta_of(&f);
    let mut b = VecBuf::new(&f);
    let mut id = 7;
    tun::tun(
        &mut b,
        &m,
        ip(RIP),
        Some(ip([10, 0, 0, 99])),
        &FakeEgress::default(),
        &mut id,
    )
    .unwrap();
    let d = b.to_vec();
    assert_eq!(d.len(), unpadded.len() + 20);
    assert_eq!(&d[26..30], &[10, 0, 0, 99]);
    assert_eq!(d[20] & 0x40, 0, "DF copied (clear)");
    assert_eq!(&d[34..], &unpadded[14..]);
    verify(&d);
}

#[test]
fn tun_too_big() {
    let payload = vec![0xab; 1460]; // ip_len 1500
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK, &payload, 64, true);
    let m = crate::lb::testutil::meta_of(&f);
    let mut b = VecBuf::new(&f);
    let mut id = 0;
    let e = tun::tun(&mut b, &m, ip(RIP), None, &FakeEgress::default(), &mut id);
    assert_eq!(e, Err(XmitError::NeedFrag { mtu: 1480 }));
    assert_eq!(b.to_vec(), f, "untouched");
    let f2 = tcp_frame(CLIENT, 40000, VIP, 80, ACK, &payload, 64, false);
    let m2 = crate::lb::testutil::meta_of(&f2);
    let mut b2 = VecBuf::new(&f2);
    let e = tun::tun(&mut b2, &m2, ip(RIP), None, &FakeEgress::default(), &mut id);
    assert_eq!(e, Err(XmitError::TooBig));
}

#[test]
fn frag_needed_in_place() {
    let payload = vec![0xab; 1460];
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK, &payload, 64, true);
    let m = crate::lb::testutil::meta_of(&f);
    let mut b = VecBuf::new(&f);
    let mut id = 0x4242;
    let port = icmp::frag_needed(&mut b, &m, 1480, &FakeEgress::default(), &mut id).unwrap();
    assert_eq!(port, 0);
    // quoted: the original IP header + 8 bytes of TCP
    let quoted = &f[14..14 + 20 + 8];
    let mut want = icmp_error(VIP, CLIENT, 3, 4, [0, 0, 0x05, 0xc8], quoted);
    want[0..6].copy_from_slice(&GW_MAC);
    want[6..12].copy_from_slice(&OUR_MAC);
    // our ICMP has DF clear like the helper; TTL 64, ID 0x4242 in both
    assert_eq!(b.to_vec(), want);
    verify(b.data());
}

#[test]
fn nat_request_and_reply_tcp() {
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK | PSH, b"GET /", 64, true);
    let m = crate::lb::testutil::meta_of(&f);
    let mut b = VecBuf::new(&f);
    let port = nat(
        &mut b,
        &m,
        Side::Dst,
        ip(RIP),
        8080,
        ip(RIP),
        &FakeEgress::default(),
    )
    .unwrap();
    assert_eq!(port, 1);
    let want = with_eth(
        tcp_frame(CLIENT, 40000, RIP, 8080, ACK | PSH, b"GET /", 63, true),
        mac_of(RIP),
        OUR_MAC,
    );
    assert_eq!(b.to_vec(), want);
    verify(b.data());

    let r = tcp_frame(RIP, 8080, CLIENT, 40000, ACK, b"200 OK", 64, true);
    let m = crate::lb::testutil::meta_of(&r);
    let mut b = VecBuf::new(&r);
    let port = nat(
        &mut b,
        &m,
        Side::Src,
        ip(VIP),
        80,
        ip(CLIENT),
        &FakeEgress::default(),
    )
    .unwrap();
    assert_eq!(port, 0);
    let want = with_eth(
        tcp_frame(VIP, 80, CLIENT, 40000, ACK, b"200 OK", 63, true),
        GW_MAC,
        OUR_MAC,
    );
    assert_eq!(b.to_vec(), want);
    verify(b.data());
}

#[test]
fn nat_udp_checksum_and_zero() {
    let f = udp_frame(CLIENT, 5353, VIP, 53, b"query");
    let m = crate::lb::testutil::meta_of(&f);
    let mut b = VecBuf::new(&f);
    nat(
        &mut b,
        &m,
        Side::Dst,
        ip(RIP),
        53,
        ip(RIP),
        &FakeEgress::default(),
    )
    .unwrap();
    let mut want = with_eth(
        udp_frame(CLIENT, 5353, RIP, 53, b"query"),
        mac_of(RIP),
        OUR_MAC,
    );
    // udp_frame uses TTL 64; NAT decrements it
    want[22] = 63;
    let c = crate::net::checksum::checksum(&{
        let mut h = want[14..34].to_vec();
        h[10] = 0;
        h[11] = 0;
        h
    });
    want[24..26].copy_from_slice(&c.to_be_bytes());
    assert_eq!(b.to_vec(), want);
    verify(b.data());

    let mut z = udp_frame(CLIENT, 5353, VIP, 53, b"query");
    z[40] = 0;
    z[41] = 0;
    let m = crate::lb::testutil::meta_of(&z);
    let mut b = VecBuf::new(&z);
    nat(
        &mut b,
        &m,
        Side::Dst,
        ip(RIP),
        53,
        ip(RIP),
        &FakeEgress::default(),
    )
    .unwrap();
    assert_eq!(&b.data()[40..42], &[0, 0], "zero UDP checksum stays zero");
    verify(b.data());
}

#[test]
fn nat_ttl_and_route_errors() {
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK, b"", 1, false);
    let m = crate::lb::testutil::meta_of(&f);
    let mut b = VecBuf::new(&f);
    let e = nat(
        &mut b,
        &m,
        Side::Dst,
        ip(RIP),
        80,
        ip(RIP),
        &FakeEgress::default(),
    );
    assert_eq!(e, Err(XmitError::TtlExceeded));
    assert_eq!(b.to_vec(), f);
    let eg = FakeEgress {
        unresolved: vec![ip(RIP)],
        noroute: vec![ip(RIP2)],
        ..Default::default()
    };
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK, b"", 64, false);
    let mut b = VecBuf::new(&f);
    assert_eq!(dr::dr(&mut b, ip(RIP), &eg), Err(XmitError::Unresolved));
    assert_eq!(dr::dr(&mut b, ip(RIP2), &eg), Err(XmitError::NoRoute));
    assert_eq!(b.to_vec(), f);
}

#[test]
fn nat_icmp_both_directions() {
    // client-side router says "port unreachable" about our VIP:80 -> client packet
    let sent = tcp_frame(VIP, 80, CLIENT, 40000, ACK, b"", 64, true);
    let quoted = &sent[14..14 + 28];
    let f = icmp_error([203, 0, 113, 9], VIP, 3, 3, [0; 4], quoted);
    let m = crate::lb::testutil::meta_of(&f);
    let mut b = VecBuf::new(&f);
    let port = nat_icmp(&mut b, &m, Side::Dst, ip(RIP), 8080, &FakeEgress::default()).unwrap();
    assert_eq!(port, 1);
    let inner = tcp_frame(RIP, 8080, CLIENT, 40000, ACK, b"", 64, true);
    let want = with_eth(
        ttl_minus_one(icmp_error(
            [203, 0, 113, 9],
            RIP,
            3,
            3,
            [0; 4],
            &inner[14..14 + 28],
        )),
        mac_of(RIP),
        OUR_MAC,
    );
    assert_eq!(b.to_vec(), want);
    verify(b.data());

    // RS-side: RS reports about client -> RIP:8080
    let req = tcp_frame(CLIENT, 40000, RIP, 8080, ACK, b"", 63, true);
    let f = icmp_error(RIP, CLIENT, 3, 3, [0; 4], &req[14..14 + 28]);
    let m = crate::lb::testutil::meta_of(&f);
    let mut b = VecBuf::new(&f);
    let port = nat_icmp(&mut b, &m, Side::Src, ip(VIP), 80, &FakeEgress::default()).unwrap();
    assert_eq!(port, 0);
    // outer source becomes the VIP (as IPVS), quoted dst VIP:80
    let translated = tcp_frame(CLIENT, 40000, VIP, 80, ACK, b"", 63, true);
    let want = with_eth(
        ttl_minus_one(icmp_error(
            VIP,
            CLIENT,
            3,
            3,
            [0; 4],
            &translated[14..14 + 28],
        )),
        GW_MAC,
        OUR_MAC,
    );
    // the quoted TCP checksum is not part of the 8 quoted bytes, so the
    // quote equals a freshly built one byte for byte
    assert_eq!(b.to_vec(), want);
    verify(b.data());
}

#[test]
fn token_bucket() {
    let mut t = TokenBucket::new(10, 2);
    assert!(t.allow(1_000_000_000));
    assert!(t.allow(1_000_000_000));
    assert!(!t.allow(1_000_000_000));
    assert!(!t.allow(1_050_000_000));
    assert!(t.allow(1_100_000_000));
    assert!(!t.allow(1_100_000_000));
}

/// Decrement the TTL of the frame's IPv4 header and recompute its checksum
/// from scratch (the independent reference for NAT output).
fn ttl_minus_one(mut f: Vec<u8>) -> Vec<u8> {
    f[22] -= 1;
    f[24] = 0;
    f[25] = 0;
    let c = crate::net::checksum::checksum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    f
}
