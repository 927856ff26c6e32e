//! NAT and ICMPv6 errors about NAT connections.

use super::*;
use crate::lb::testutil::{CLIENT6, RIP6, RIP6_2, VIP6};
use crate::lb::xmit::nat::{nat as nat_rw, Side};
use crate::net::buf::VecBuf;

/// `nat6` with the fake egress on a copy of frame `f`: the result and the
/// frame after it.
fn run_nat(
    f: &[u8],
    side: Side,
    addr: u128,
    port: u16,
    route_to: u128,
) -> (Result<u16, XmitError>, Vec<u8>) {
    let m = meta6_of(f);
    let mut b = VecBuf::new(f);
    let r = nat_rw(
        &mut b,
        &m,
        side,
        addr,
        port,
        route_to,
        &FakeEgress::default(),
    );
    (r, b.to_vec())
}

#[test]
fn nat6_request_and_reply_tcp() {
    // the checksums of the expected frames are etherparse's, in full
    let f = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), b"GET /", 64);
    let (port, out) = run_nat(&f, Side::Dst, RIP6, 8080, RIP6);
    assert_eq!(port, Ok(1));
    let want = frame6(CLIENT6, RIP6, L4::Tcp(40000, 8080), b"GET /", 63);
    assert_eq!(out, with_eth(want, mac6_of(RIP6), OUR_MAC));
    verify6(&out);

    let r = frame6(RIP6, CLIENT6, L4::Tcp(8080, 40000), b"200 OK", 64);
    let (port, out) = run_nat(&r, Side::Src, VIP6, 80, CLIENT6);
    assert_eq!(port, Ok(0));
    let want = frame6(VIP6, CLIENT6, L4::Tcp(80, 40000), b"200 OK", 63);
    assert_eq!(out, with_eth(want, GW_MAC, OUR_MAC));
    verify6(&out);
}

#[test]
fn nat6_udp_keeps_tc_flow_label_and_a_vlan_tag() {
    let ip = packet6(
        ip6(CLIENT6, VIP6, 2, 0x2e, 0xabcde),
        L4::Udp(5353, 53),
        b"query",
    );
    let f = eth(&ip, Some(5));
    let (port, out) = run_nat(&f, Side::Dst, RIP6_2, 5300, RIP6_2);
    assert_eq!(port, Ok(1));
    let want = packet6(
        ip6(CLIENT6, RIP6_2, 1, 0x2e, 0xabcde),
        L4::Udp(5353, 5300),
        b"query",
    );
    assert_eq!(out, with_eth(eth(&want, Some(5)), mac6_of(RIP6_2), OUR_MAC));
    verify6(&out);
}

#[test]
fn nat6_after_an_extension_header_and_with_padding() {
    // a destination-options header (8 bytes of PadN) before TCP, and
    // Ethernet padding the rewrite leaves alone
    let with_opts = |ip: Vec<u8>| {
        let mut v = ip[..40].to_vec();
        v[6] = 60;
        let len = be16(&v, 4) + 8;
        v[4..6].copy_from_slice(&len.to_be_bytes());
        v.extend_from_slice(&[6, 0, 1, 4, 0, 0, 0, 0]);
        v.extend_from_slice(&ip[40..]);
        v
    };
    let ip = with_opts(packet6(
        ip6(CLIENT6, VIP6, 64, 0, 0),
        L4::Tcp(40000, 80),
        b"x",
    ));
    let mut f = eth(&ip, None);
    f.extend_from_slice(&[0; 3]);
    let m = meta6_of(&f);
    assert_eq!((m.l4_off, m.key.proto, m.key.dport), (62, 6, 80));
    let (port, out) = run_nat(&f, Side::Dst, RIP6, 8080, RIP6);
    assert_eq!(port, Ok(1));
    let want = with_opts(packet6(
        ip6(CLIENT6, RIP6, 63, 0, 0),
        L4::Tcp(40000, 8080),
        b"x",
    ));
    let mut want = with_eth(eth(&want, None), mac6_of(RIP6), OUR_MAC);
    want.extend_from_slice(&[0; 3]);
    assert_eq!(out, want);
    verify6(&out[..out.len() - 3]);
}

#[test]
fn nat6_refuses_a_zero_udp_checksum() {
    let mut f = frame6(CLIENT6, VIP6, L4::Udp(5353, 53), b"query", 64);
    f[14 + 46] = 0;
    f[14 + 47] = 0;
    let (e, out) = run_nat(&f, Side::Dst, RIP6, 53, RIP6);
    assert_eq!(e, Err(XmitError::Malformed));
    assert_eq!(out, f);
}

#[test]
fn nat6_hop_limit() {
    for hop in [0, 1] {
        let f = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), b"", hop);
        let (e, out) = run_nat(&f, Side::Dst, RIP6, 80, RIP6);
        assert_eq!(e, Err(XmitError::TtlExceeded), "hop limit {hop}");
        assert_eq!(out, f);
    }
    let f = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), b"", 2);
    let (e, out) = run_nat(&f, Side::Dst, RIP6, 80, RIP6);
    assert_eq!(e, Ok(1));
    assert_eq!(out[14 + 7], 1);
    verify6(&out);
}

#[test]
fn nat6_errors_leave_the_frame() {
    let f = frame6(CLIENT6, VIP6, L4::Tcp(40000, 80), b"data", 64);
    let m = meta6_of(&f);
    let run = |m: &PacketMeta6, b: &mut VecBuf, route_to: u128, eg: &FakeEgress| {
        nat_rw(b, m, Side::Dst, RIP6, 8080, route_to, eg)
    };
    let eg = FakeEgress {
        unresolved: vec![RIP6 as u32],
        noroute: vec![RIP6_2 as u32],
        ..Default::default()
    };
    let mut b = VecBuf::new(&f);
    assert_eq!(run(&m, &mut b, RIP6, &eg), Err(XmitError::Unresolved));
    assert_eq!(run(&m, &mut b, RIP6_2, &eg), Err(XmitError::NoRoute));
    assert_eq!(b.to_vec(), f);
    let eg = FakeEgress::default();
    let mut icmp = m;
    icmp.key.proto = 58;
    for bad in [
        icmp,
        PacketMeta6 { l3_off: 13, ..m },
        PacketMeta6 { l4_off: 53, ..m },
        // the TCP header up to its checksum is past the IPv6 packet
        PacketMeta6 { ip_len: 57, ..m },
        PacketMeta6 {
            ip_len: m.ip_len + 1,
            ..m
        },
        PacketMeta6 {
            l4_off: u16::MAX,
            ip_len: u16::MAX,
            ..m
        },
    ] {
        assert_eq!(run(&bad, &mut b, RIP6, &eg), Err(XmitError::Malformed));
        assert_eq!(b.to_vec(), f);
    }
    // exactly the TCP header up to its checksum: fine
    let ok = PacketMeta6 { ip_len: 58, ..m };
    assert_eq!(run(&ok, &mut b, RIP6, &eg), Ok(1));
    let mut short = VecBuf::new(&f[..f.len() - 1]);
    assert_eq!(run(&m, &mut short, RIP6, &eg), Err(XmitError::Malformed));
}

/// `nat6_icmp` on frame `f`.
fn run_icmp(f: &[u8], side: Side, addr: u128, port: u16) -> (Result<u16, XmitError>, Vec<u8>) {
    let m = meta6_of(f);
    assert!(m.icmp.is_some());
    let mut b = VecBuf::new(f);
    let r = nat6_icmp(&mut b, &m, side, addr, port, &FakeEgress::default());
    (r, b.to_vec())
}

#[test]
fn nat6_icmp_from_the_client_side() {
    // a router near the client reports "port unreachable" about our
    // VIP:80 -> client reply; the RS gets it about its own RIP:8080 packet
    let sent = packet6(ip6(VIP6, CLIENT6, 63, 0, 0), L4::Tcp(80, 40000), b"200 OK");
    let f = eth(&icmp6_error(ROUTER6, VIP6, 60, 1, 4, [0; 4], &sent), None);
    let (port, out) = run_icmp(&f, Side::Dst, RIP6, 8080);
    assert_eq!(port, Ok(1));
    // the quote is what the RS sent, checksum included
    let orig = packet6(
        ip6(RIP6, CLIENT6, 63, 0, 0),
        L4::Tcp(8080, 40000),
        b"200 OK",
    );
    let want = icmp6_error(ROUTER6, RIP6, 59, 1, 4, [0; 4], &orig);
    assert_eq!(out, with_eth(eth(&want, None), mac6_of(RIP6), OUR_MAC));
    verify6(&out);
}

#[test]
fn nat6_icmp_from_the_server_side() {
    // the RS reports "packet too big" about a client -> RIP:8080 packet;
    // the client gets it from the VIP about its client -> VIP:80 packet
    let got = packet6(
        ip6(CLIENT6, RIP6, 63, 0, 0),
        L4::Tcp(40000, 8080),
        &[3; 1200],
    );
    let e = icmp6_error(RIP6, CLIENT6, 64, 2, 0, 1280u32.to_be_bytes(), &got[..1232]);
    let (port, out) = run_icmp(&eth(&e, Some(3)), Side::Src, VIP6, 80);
    assert_eq!(port, Ok(0));
    let orig = packet6(ip6(CLIENT6, VIP6, 63, 0, 0), L4::Tcp(40000, 80), &[3; 1200]);
    let want = icmp6_error(
        VIP6,
        CLIENT6,
        63,
        2,
        0,
        1280u32.to_be_bytes(),
        &orig[..1232],
    );
    assert_eq!(out, with_eth(eth(&want, Some(3)), GW_MAC, OUR_MAC));
    verify6(&out);
}

#[test]
fn nat6_icmp_short_quotes() {
    // a quote ending right after the ports: no quoted checksum to update
    let got = packet6(ip6(CLIENT6, RIP6, 63, 0, 0), L4::Tcp(40000, 8080), b"");
    let e = icmp6_error(RIP6, CLIENT6, 64, 1, 4, [0; 4], &got[..44]);
    let (port, out) = run_icmp(&eth(&e, None), Side::Src, VIP6, 80);
    assert_eq!(port, Ok(0));
    let orig = packet6(ip6(CLIENT6, VIP6, 63, 0, 0), L4::Tcp(40000, 80), b"");
    let want = icmp6_error(VIP6, CLIENT6, 63, 1, 4, [0; 4], &orig[..44]);
    assert_eq!(out, with_eth(eth(&want, None), GW_MAC, OUR_MAC));
    verify6(&out);
    // a UDP quote of 48 bytes holds its checksum, which is updated
    let got = packet6(ip6(CLIENT6, RIP6, 63, 0, 0), L4::Udp(5353, 5300), b"query");
    let e = icmp6_error(RIP6, CLIENT6, 64, 1, 4, [0; 4], &got[..48]);
    let (port, out) = run_icmp(&eth(&e, None), Side::Src, VIP6, 53);
    assert_eq!(port, Ok(0));
    let orig = packet6(ip6(CLIENT6, VIP6, 63, 0, 0), L4::Udp(5353, 53), b"query");
    let want = icmp6_error(VIP6, CLIENT6, 63, 1, 4, [0; 4], &orig[..48]);
    assert_eq!(out, with_eth(eth(&want, None), GW_MAC, OUR_MAC));
    verify6(&out);
}

#[test]
fn nat6_icmp_errors_leave_the_frame() {
    let sent = packet6(ip6(VIP6, CLIENT6, 63, 0, 0), L4::Tcp(80, 40000), b"");
    let f = eth(&icmp6_error(ROUTER6, VIP6, 60, 1, 4, [0; 4], &sent), None);
    let m = meta6_of(&f);
    let q = m.icmp.unwrap();
    let run = |m: &PacketMeta6, eg: &FakeEgress, want| {
        let mut b = VecBuf::new(&f);
        assert_eq!(nat6_icmp(&mut b, m, Side::Dst, RIP6, 8080, eg), Err(want));
        assert_eq!(b.to_vec(), f);
    };
    let eg = FakeEgress {
        unresolved: vec![RIP6 as u32],
        ..Default::default()
    };
    run(&m, &eg, XmitError::Unresolved);
    let eg = FakeEgress::default();
    let quote = |q6: IcmpQuote6| PacketMeta6 {
        icmp: Some(q6),
        ..m
    };
    for bad in [
        PacketMeta6 { icmp: None, ..m },
        PacketMeta6 {
            key: FlowKey6 { proto: 6, ..m.key },
            ..m
        },
        PacketMeta6 { l4_off: 53, ..m },
        quote(IcmpQuote6 {
            inner_l3_off: q.inner_l3_off - 1,
            ..q
        }),
        quote(IcmpQuote6 {
            inner_l4_off: q.inner_l4_off - 1,
            ..q
        }),
        // the quote ends before the destination port
        PacketMeta6 {
            ip_len: m.ip_len - 20 + 3,
            ..m
        },
        PacketMeta6 {
            ip_len: m.ip_len + 1,
            ..m
        },
        quote(IcmpQuote6 {
            inner_l3_off: u16::MAX,
            inner_l4_off: u16::MAX,
            ..q
        }),
    ] {
        run(&bad, &eg, XmitError::Malformed);
    }
    let f1 = eth(&icmp6_error(ROUTER6, VIP6, 1, 1, 4, [0; 4], &sent), None);
    let (e, out) = run_icmp(&f1, Side::Dst, RIP6, 8080);
    assert_eq!(e, Err(XmitError::TtlExceeded));
    assert_eq!(out, f1);
}
