mod encap;
mod tshark;

use super::nat::{nat, nat_icmp, Side};
use super::*;
use crate::lb::testutil::*;
use crate::lb::tunnel::Tunnel;
use crate::net::buf::{PacketBuf, VecBuf};
use crate::net::egress::Egress;
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
    let port = tun::tun(
        &mut b,
        &m,
        ip(RIP),
        None,
        &FakeEgress::default(),
        &mut id,
        Tunnel::IPIP,
    )
    .unwrap();
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
        Tunnel::IPIP,
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
    let e = tun::tun(
        &mut b,
        &m,
        ip(RIP),
        None,
        &FakeEgress::default(),
        &mut id,
        Tunnel::IPIP,
    );
    assert_eq!(e, Err(XmitError::NeedFrag { mtu: 1480 }));
    assert_eq!(b.to_vec(), f, "untouched");
    let f2 = tcp_frame(CLIENT, 40000, VIP, 80, ACK, &payload, 64, false);
    let m2 = crate::lb::testutil::meta_of(&f2);
    let mut b2 = VecBuf::new(&f2);
    let e = tun::tun(
        &mut b2,
        &m2,
        ip(RIP),
        None,
        &FakeEgress::default(),
        &mut id,
        Tunnel::IPIP,
    );
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

/// `nat` with the fake egress on a copy of frame `f`: the result and the
/// frame after it.
fn run_nat(
    f: &[u8],
    side: Side,
    addr: [u8; 4],
    port: u16,
    route_to: [u8; 4],
) -> (Result<u16, XmitError>, Vec<u8>) {
    let m = crate::lb::testutil::meta_of(f);
    let mut b = VecBuf::new(f);
    let eg = FakeEgress::default();
    let r = nat(&mut b, &m, side, ip(addr), port, ip(route_to), &eg);
    (r, b.to_vec())
}

#[test]
fn nat_request_and_reply_tcp() {
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK | PSH, b"GET /", 64, true);
    let (port, out) = run_nat(&f, Side::Dst, RIP, 8080, RIP);
    assert_eq!(port, Ok(1));
    let request = tcp_frame(CLIENT, 40000, RIP, 8080, ACK | PSH, b"GET /", 63, true);
    assert_eq!(out, with_eth(request, mac_of(RIP), OUR_MAC));
    verify(&out);

    let r = tcp_frame(RIP, 8080, CLIENT, 40000, ACK, b"200 OK", 64, true);
    let (port, out) = run_nat(&r, Side::Src, VIP, 80, CLIENT);
    assert_eq!(port, Ok(0));
    let reply = tcp_frame(VIP, 80, CLIENT, 40000, ACK, b"200 OK", 63, true);
    assert_eq!(out, with_eth(reply, GW_MAC, OUR_MAC));
    verify(&out);
}

#[test]
fn nat_udp_checksum_and_zero() {
    let f = udp_frame(CLIENT, 5353, VIP, 53, b"query");
    let (port, out) = run_nat(&f, Side::Dst, RIP, 53, RIP);
    assert_eq!(port, Ok(1));
    // udp_frame uses TTL 64; NAT decrements it
    let want = udp_frame(CLIENT, 5353, RIP, 53, b"query");
    assert_eq!(out, with_eth(ttl_minus_one(want), mac_of(RIP), OUR_MAC));
    verify(&out);

    let mut z = udp_frame(CLIENT, 5353, VIP, 53, b"query");
    z[40] = 0;
    z[41] = 0;
    let (port, out) = run_nat(&z, Side::Dst, RIP, 53, RIP);
    assert_eq!(port, Ok(1));
    assert_eq!(&out[40..42], &[0, 0], "zero UDP checksum stays zero");
    verify(&out);
}

#[test]
fn nat_ttl_and_route_errors() {
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK, b"", 1, false);
    let (e, out) = run_nat(&f, Side::Dst, RIP, 80, RIP);
    assert_eq!(e, Err(XmitError::TtlExceeded));
    assert_eq!(out, f);
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
fn nat_icmp_quoting_udp() {
    // RS-side: the RS reports about a client -> RIP:5300 datagram
    let req = udp_frame(CLIENT, 5353, RIP, 5300, b"query");
    let f = icmp_error(RIP, CLIENT, 3, 3, [0; 4], &req[14..14 + 28]);
    let m = crate::lb::testutil::meta_of(&f);
    let mut b = VecBuf::new(&f);
    let port = nat_icmp(&mut b, &m, Side::Src, ip(VIP), 53, &FakeEgress::default()).unwrap();
    assert_eq!(port, 0);
    // quoted destination VIP:53 with a right IP checksum; the quoted UDP
    // checksum (inside the 8 quoted bytes) is left as it was, like IPVS
    let mut translated = udp_frame(CLIENT, 5353, VIP, 53, b"query");
    translated[40..42].copy_from_slice(&req[40..42]);
    let quote = &translated[14..14 + 28];
    let want = with_eth(
        ttl_minus_one(icmp_error(VIP, CLIENT, 3, 3, [0; 4], quote)),
        GW_MAC,
        OUR_MAC,
    );
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

#[test]
fn token_bucket_burst_refill_and_clock_edges() {
    const S: u64 = 1_000_000_000;
    let mut t = TokenBucket::new(10, 3);
    // starts with a full burst
    assert!(t.allow(0) && t.allow(0) && t.allow(0));
    assert!(!t.allow(0));
    // one token per 100 ms
    assert!(!t.allow(S / 10 - 1));
    assert!(t.allow(S / 10));
    assert!(!t.allow(S / 10));
    // a long pause refills only up to the burst
    let later = 1_000 * S;
    assert_eq!((0..10).filter(|_| t.allow(later)).count(), 3);
    // time going backwards neither panics nor refills
    assert!(!t.allow(5));
    // 1000 calls over 1 s at 10/s with a burst of 3 allow exactly 3 + 10
    let mut t = TokenBucket::new(10, 3);
    let n = (0..=1000u64).filter(|i| t.allow(i * S / 1000)).count();
    assert_eq!(n, 13);
    // extreme settings neither overflow nor panic: a rate above 1e9/s is
    // unlimited, 0 is taken as 1/s with a burst of 1
    let mut t = TokenBucket::new(u32::MAX, u32::MAX);
    assert!(t.allow(u64::MAX) && t.allow(u64::MAX));
    let mut t = TokenBucket::new(0, 0);
    assert!(t.allow(S));
    assert!(!t.allow(S));
    assert!(t.allow(2 * S));
}

#[test]
fn frag_needed_behind_a_vlan_tag_quotes_what_classify_reads() {
    use crate::net::classify::{classify, Classified};
    use etherparse::{PacketBuilder, VlanId};
    let mut f = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .single_vlan(VlanId::try_new(9).unwrap())
        .ipv4(CLIENT, VIP, 50)
        .tcp(40000, 80, 1, 1000)
        .write(&mut f, &[0x5a; 1460])
        .unwrap();
    let Classified::Ipv4(m) = classify(&f, 0) else {
        panic!("not classified")
    };
    assert_eq!(m.l3_off, 18);
    let mut b = VecBuf::new(&f);
    let mut id = 7;
    let port = icmp::frag_needed(&mut b, &m, 1480, &FakeEgress::default(), &mut id).unwrap();
    assert_eq!((port, id), (0, 8));
    let out = b.to_vec();
    // Ethernet (tag kept) + IPv4 + ICMP + the quoted IP header and 8 bytes
    assert_eq!(out.len(), 18 + 20 + 8 + 28);
    assert_eq!(&out[..12], &[GW_MAC, OUR_MAC].concat()[..]);
    assert_eq!(&out[12..18], &f[12..18]);
    assert_eq!(&out[46..], &f[18..46]);
    verify(&out);
    // classify reads the error and the connection it quotes
    let Classified::Ipv4(e) = classify(&out, 0) else {
        panic!("error not classified")
    };
    assert_eq!((e.key.src, e.key.dst), (ip(VIP), ip(CLIENT)));
    let q = e.icmp.expect("a quote");
    assert_eq!((q.icmp_type, q.code), (3, 4));
    assert_eq!(q.inner_key, m.key);
    assert_eq!(q.inner_l3_off, 46);
}

#[test]
fn frag_needed_errors_leave_the_frame() {
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK, b"", 64, true);
    let m = crate::lb::testutil::meta_of(&f);
    let eg = FakeEgress::default();
    let mut id = 0;
    // a 54-byte frame grows to 70: no tailroom
    let mut b = VecBuf::with_room(&f, 128, 0);
    let e = icmp::frag_needed(&mut b, &m, 1480, &eg, &mut id);
    assert_eq!(e, Err(XmitError::NoRoom));
    assert_eq!(b.to_vec(), f);
    // metadata that does not fit the frame
    let mut bad = m;
    bad.l4_off = bad.l3_off + 10;
    let mut b = VecBuf::new(&f);
    let e = icmp::frag_needed(&mut b, &bad, 1480, &eg, &mut id);
    assert_eq!(e, Err(XmitError::Malformed));
    let mut bad = m;
    bad.ip_len = 27;
    let e = icmp::frag_needed(&mut b, &bad, 1480, &eg, &mut id);
    assert_eq!(e, Err(XmitError::Malformed));
    assert_eq!(b.to_vec(), f);
    assert_eq!(id, 0, "no ID spent");
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

/// A TCP or UDP frame written by etherparse (checksums computed over the
/// whole packet); `zero_udp` leaves the UDP checksum 0 (none).
#[allow(clippy::too_many_arguments)]
fn reference_l4(
    udp: bool,
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    ttl: u8,
    ident: u16,
    payload: &[u8],
    zero_udp: bool,
) -> Vec<u8> {
    use etherparse::PacketBuilder;
    let b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC).ipv4(src, dst, ttl);
    let mut out = Vec::new();
    if udp {
        b.udp(sport, dport).write(&mut out, payload).unwrap();
        if zero_udp {
            out[40] = 0;
            out[41] = 0;
        }
    } else {
        b.tcp(sport, dport, 0x0102_0304, 1000)
            .ack(7)
            .write(&mut out, payload)
            .unwrap();
    }
    // etherparse writes identification 0: set one, and the header
    // checksum again
    out[18..20].copy_from_slice(&ident.to_be_bytes());
    out[24] = 0;
    out[25] = 0;
    let c = crate::net::checksum::checksum(&out[14..34]);
    out[24..26].copy_from_slice(&c.to_be_bytes());
    out
}

proptest::proptest! {
    /// `nat` (one checksum adjustment per header) leaves exactly the frame
    /// etherparse writes for the rewritten packet, checksums computed over
    /// the whole of it: for TCP and UDP (with and without a checksum),
    /// both sides, any addresses, ports, TTL and payload. A TTL of 0 or 1
    /// is refused with the frame untouched.
    #[test]
    fn nat_equals_a_packet_written_afresh(
        udp in proptest::prelude::any::<bool>(),
        zero_udp in proptest::prelude::any::<bool>(),
        reply in proptest::prelude::any::<bool>(),
        peer in proptest::prelude::any::<[u8; 4]>(),
        old in proptest::prelude::any::<[u8; 4]>(),
        new_last in proptest::prelude::any::<u8>(),
        ports in proptest::prelude::any::<(u16, u16, u16)>(),
        ttl in proptest::prelude::any::<u8>(),
        ident in proptest::prelude::any::<u16>(),
        payload in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
    ) {
        let (peer_port, old_port, new_port) = ports;
        // the new address is on the fake egress's link (10.0.0.x) for a
        // request; a reply is routed to the peer (the client)
        let new = [10, 0, 0, new_last];
        let (side, f, want, route_to) = if reply {
            let f = reference_l4(udp, old, old_port, peer, peer_port, ttl, ident, &payload, zero_udp);
            let w = reference_l4(udp, new, new_port, peer, peer_port, ttl.wrapping_sub(1), ident, &payload, zero_udp);
            (Side::Src, f, w, peer)
        } else {
            let f = reference_l4(udp, peer, peer_port, old, old_port, ttl, ident, &payload, zero_udp);
            let w = reference_l4(udp, peer, peer_port, new, new_port, ttl.wrapping_sub(1), ident, &payload, zero_udp);
            (Side::Dst, f, w, new)
        };
        let (r, out) = run_nat(&f, side, new, new_port, route_to);
        if ttl <= 1 {
            proptest::prop_assert_eq!(r, Err(XmitError::TtlExceeded));
            proptest::prop_assert_eq!(out, f);
            return Ok(());
        }
        let eg = FakeEgress::default();
        let crate::net::egress::Resolve::Ready(nh) = eg.next_hop(ip(route_to)) else {
            unreachable!("the fake egress resolves every address")
        };
        proptest::prop_assert_eq!(r, Ok(nh.port));
        let mut want = with_eth(want, nh.dst_mac, nh.src_mac);
        let mut out = out;
        // a TCP checksum has two forms of zero (0x0000 and 0xffff)
        if !udp {
            for fr in [&mut out, &mut want] {
                if fr[50..52] == [0xff, 0xff] {
                    fr[50] = 0;
                    fr[51] = 0;
                }
            }
        }
        proptest::prop_assert_eq!(out, want);
    }
}
