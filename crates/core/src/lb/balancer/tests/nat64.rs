//! NAT64 in the balancer: an IPv6 client's connection to an IPv4 real
//! server, both ways, and the ICMP errors about it in both directions.

use super::v6::{from_client, meta6, svc6, tcp6_frame};
use super::*;
use crate::net::classify::{classify, Classified};
use etherparse::PacketBuilder;

/// The IPv6 frame's TCP/UDP checksum is right (etherparse's own sum).
fn verify6(frame: &[u8]) {
    let p = etherparse::SlicedPacket::from_ethernet(frame).expect("parse");
    let Some(etherparse::NetSlice::Ipv6(ip)) = &p.net else {
        panic!("not IPv6")
    };
    let h = ip.header();
    let (s, d) = (h.source(), h.destination());
    match &p.transport {
        Some(etherparse::TransportSlice::Tcp(t)) => {
            assert_eq!(
                t.calc_checksum_ipv6(s, d).unwrap(),
                t.checksum(),
                "tcp checksum"
            )
        }
        Some(etherparse::TransportSlice::Udp(u)) => {
            let want = u
                .to_header()
                .calc_checksum_ipv6_raw(s, d, u.payload())
                .unwrap();
            assert_eq!(want, u.checksum(), "udp checksum")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn nat64_both_ways() {
    let mut e = env(1024);
    let pool = [std::net::Ipv4Addr::new(10, 0, 0, 200)];
    let d = dest(RIP, 8080, Method::Nat, 1);
    let s = e.snap(1, |b| {
        b.nat64_pool(&pool);
        b.service(svc6(Proto::Tcp, 80), vec![d.clone()]);
    });
    let payload = b"GET / HTTP/1.0\r\n\r\n";
    let req = tcp6_frame(
        CLIENT6,
        40000,
        VIP6,
        80,
        ACK,
        payload,
        64,
        (CLIENT_MAC, OUR_MAC),
    );
    // a SYN first (only a SYN creates a connection)
    let (v, out) = e.send6(&s, &from_client(SYN, 40000, 80), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    verify(&out);
    let p = etherparse::SlicedPacket::from_ethernet(&out).unwrap();
    let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else {
        panic!("an IPv4 request")
    };
    let h = ip.header().to_header();
    assert_eq!(h.source, [10, 0, 0, 200], "from the pool");
    assert_eq!(h.destination, RIP);
    assert_eq!(h.time_to_live, 63);
    assert_eq!(&out[0..6], &mac_of(RIP));
    let Some(etherparse::TransportSlice::Tcp(t)) = &p.transport else {
        panic!("tcp")
    };
    let lport = t.source_port();
    assert_eq!(t.destination_port(), 8080);
    assert!(lport >= 1024, "{lport}");
    // a data segment keeps its payload, byte for byte
    let (v, out) = e.send6(&s, &req, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    verify(&out);
    assert!(out.ends_with(payload));
    assert_eq!(out.len(), req.len() - 20, "40-byte header became 20");
    // the real server's reply to the pool address and port comes back as
    // IPv6 from the VIP to the client, toward the gateway
    let reply = tcp_frame(
        RIP,
        8080,
        [10, 0, 0, 200],
        lport,
        SYN | ACK,
        b"hello",
        64,
        true,
    );
    let m = meta_of(&reply);
    let mut b = VecBuf::with_room(&reply, 128, 0);
    let v =
        e.w.nat64_reply(&BurstCtx::new(&s, &e.eg, 2 * S), &mut b, &m);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let out = b.to_vec();
    verify6(&out);
    let mm = meta6(&out);
    assert_eq!(mm.key.src, VIP6);
    assert_eq!(mm.key.dst, CLIENT6);
    assert_eq!((mm.key.sport, mm.key.dport), (80, 40000));
    assert_eq!(mm.ttl, 63);
    assert!(out.ends_with(b"hello"));
    assert_eq!(&out[0..6], &GW_MAC);
    let c: Vec<_> = e.w.conns(2 * S).collect();
    assert_eq!(c[0].state, "ESTABLISHED");
    assert_eq!(c[0].rs.to_string(), "[::ffff:10.0.0.21]:8080");
    // a reply for no connection: counted, not ours to pass on
    let stray = tcp_frame(RIP, 8080, [10, 0, 0, 200], lport ^ 1, ACK, b"", 64, true);
    let mut b = VecBuf::with_room(&stray, 128, 0);
    assert_eq!(
        e.w.nat64_reply(&BurstCtx::new(&s, &e.eg, 2 * S), &mut b, &meta_of(&stray)),
        LbVerdict::Drop(LbDrop::NotTracked)
    );
    // without a pool, the mix of families is refused
    let mut b = SnapshotBuilder::new();
    b.service(svc6(Proto::Tcp, 80), vec![d]);
    assert!(matches!(
        b.build(&mut e.ids, 3),
        Err(crate::lb::snapshot::BuildError::MixedFamily(..))
    ));
}

/// An ICMPv4 fragmentation-needed about a NAT64 request reaches the IPv6
/// client as Packet Too Big (MTU + 20) from the VIP, quoting the request
/// as the client sent it.
#[test]
fn nat64_icmp_frag_needed_becomes_packet_too_big() {
    let mut e = env(1024);
    let pool = [10, 0, 0, 200];
    let s = e.snap(1, |b| {
        b.nat64_pool(&[pool.into()]);
        b.service(svc6(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
    });
    let (_, out) = e.send6(&s, &from_client(SYN, 40000, 80), 0);
    let lport = u16::from_be_bytes([out[34], out[35]]);
    // what the router quotes: the request as it left dirigo (IPv4)
    let mut quoted = Vec::new();
    etherparse::PacketBuilder::ipv4(pool, RIP, 63)
        .tcp(lport, 8080, 1000, 64240)
        .ack(1)
        .write(&mut quoted, &[9u8; 1400])
        .unwrap();
    let mut err = Vec::new();
    etherparse::PacketBuilder::ethernet2(mac_of(RIP), OUR_MAC)
        .ipv4([10, 0, 0, 254], pool, 64)
        .icmpv4(etherparse::Icmpv4Type::DestinationUnreachable(
            etherparse::icmpv4::DestUnreachableHeader::FragmentationNeeded { next_hop_mtu: 1400 },
        ))
        .write(&mut err, &quoted[..548])
        .unwrap();
    let m = crate::net::classify::classify(&err, 1);
    let Classified::Ipv4(m) = m else {
        panic!("{m:?}")
    };
    assert!(m.icmp.is_some());
    let mut b = VecBuf::with_room(&err, 128, 64);
    let v = e.w.nat64_reply(&BurstCtx::new(&s, &e.eg, S), &mut b, &m);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let out = b.to_vec();
    let p = etherparse::SlicedPacket::from_ethernet(&out).unwrap();
    let Some(etherparse::NetSlice::Ipv6(ip)) = &p.net else {
        panic!("IPv6")
    };
    let h = ip.header();
    assert_eq!(u128::from_be_bytes(h.source()), VIP6);
    assert_eq!(u128::from_be_bytes(h.destination()), CLIENT6);
    let Some(etherparse::TransportSlice::Icmpv6(i)) = &p.transport else {
        panic!("ICMPv6")
    };
    assert_eq!(
        i.icmp_type(),
        etherparse::Icmpv6Type::PacketTooBig { mtu: 1420 }
    );
    let want = i
        .icmp_type()
        .calc_checksum(h.source(), h.destination(), i.payload())
        .unwrap();
    assert_eq!(i.checksum(), want, "ICMPv6 checksum");
    let q = meta6(&out).icmp.expect("a quote classify reads");
    assert_eq!(q.inner_key.src, CLIENT6);
    assert_eq!(q.inner_key.dst, VIP6);
    assert_eq!((q.inner_key.sport, q.inner_key.dport), (40000, 80));
    assert_eq!(out.len(), 14 + 40 + 8 + 40 + (548 - 20));
}

/// The NAT64 pool address of the tests below.
const POOL4: [u8; 4] = [10, 0, 0, 200];

/// A NAT64 service (IPv4 real server RIP:8080) and one connection opened
/// by the client's SYN; the pool port it left from.
fn nat64_conn() -> (Env, Snapshot, u16) {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.nat64_pool(&[POOL4.into()]);
        b.service(svc6(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
    });
    let (v, out) = e.send6(&s, &from_client(SYN, 40000, 80), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let lport = u16::from_be_bytes([out[34], out[35]]);
    (e, s, lport)
}

impl Env {
    /// An IPv4 frame to the NAT64 pool through [`Balancer::nat64_reply`]
    /// (as the pipeline hands it), with room to grow.
    fn nat64_in(&mut self, snap: &Snapshot, frame: &[u8], now: u64) -> (LbVerdict, Vec<u8>) {
        let m = meta_of(frame);
        let mut b = VecBuf::with_room(frame, 128, 0);
        let v = self
            .w
            .nat64_reply(&BurstCtx::new(snap, &self.eg, now), &mut b, &m);
        (v, b.to_vec())
    }
}

/// The IPv4 ICMP error of frame `out`, checked against what the real
/// server of [`nat64_conn`] must read: from the pool address to it (its
/// MAC), every checksum right (the quoted header's too), quoting its own
/// packet RIP:8080 → pool:`lport`. Returns etherparse's reading of the
/// ICMP type.
fn icmp4_to_the_server(out: &[u8], lport: u16) -> etherparse::Icmpv4Type {
    verify(out);
    assert_eq!(&out[0..6], &mac_of(RIP), "toward the real server");
    let p = etherparse::SlicedPacket::from_ethernet(out).unwrap();
    let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else {
        panic!("IPv4")
    };
    let h = ip.header().to_header();
    assert_eq!((h.source, h.destination), (POOL4, RIP));
    let Classified::Ipv4(m) = classify(out, 1) else {
        panic!("not IPv4 for the balancer")
    };
    let q = m.icmp.expect("an ICMP error classify reads");
    assert_eq!(
        (q.inner_key.src, q.inner_key.dst),
        (ip_of(RIP), ip_of(POOL4)),
        "the server's own packet"
    );
    assert_eq!((q.inner_key.sport, q.inner_key.dport), (8080, lport));
    let Some(etherparse::TransportSlice::Icmpv4(i)) = &p.transport else {
        panic!("ICMPv4")
    };
    i.icmp_type()
}

fn ip_of(a: [u8; 4]) -> u32 {
    u32::from_be_bytes(a)
}

fn frag_needed(mtu: u16) -> etherparse::Icmpv4Type {
    etherparse::Icmpv4Type::DestinationUnreachable(
        etherparse::icmpv4::DestUnreachableHeader::FragmentationNeeded { next_hop_mtu: mtu },
    )
}

/// An ICMPv6 Packet Too Big from a router on the client's side, about a
/// NAT64 reply as dirigo sent it (VIP:80 -> client), reaches the IPv4 real
/// server as ICMPv4 fragmentation needed (MTU - 20) from the pool address,
/// quoting the reply as the server sent it (its TCP checksum included).
#[test]
fn nat64_packet_too_big_about_a_reply_reaches_the_server_as_frag_needed() {
    let (mut e, s, lport) = nat64_conn();
    let reply = tcp_frame(RIP, 8080, POOL4, lport, ACK | PSH, &[7; 1400], 64, true);
    let (v, sent) = e.nat64_in(&s, &reply, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 }, "to the client");
    assert_eq!(meta6(&sent).key.src, VIP6);
    // the link beyond the router takes 1280 bytes: it quotes what fits
    let router: u128 = 0x2001_0db8_00e0_0000_0000_0000_0000_00fe;
    let mut err = Vec::new();
    PacketBuilder::ethernet2(GW_MAC, OUR_MAC)
        .ipv6(router.to_be_bytes(), VIP6.to_be_bytes(), 64)
        .icmpv6(etherparse::Icmpv6Type::PacketTooBig { mtu: 1280 })
        .write(&mut err, &sent[14..14 + 1232])
        .unwrap();
    let before = e.w.stats().icmp_frag_sent.load(Relaxed);
    let (v, out) = e.send6(&s, &err, 2 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 }, "to the real server");
    assert_eq!(icmp4_to_the_server(&out, lport), frag_needed(1260));
    // the quote: the server's TCP header as it sent it, checksum included
    assert_eq!(&out[14 + 48..14 + 48 + 20], &reply[14 + 20..14 + 40]);
    assert_eq!(out.len(), 14 + 48 + 1232 - 40);
    // a translation, not an error dirigo made up
    assert_eq!(e.w.stats().icmp_frag_sent.load(Relaxed), before);
    // a port unreachable from the client's side: port unreachable
    let mut err = Vec::new();
    PacketBuilder::ethernet2(GW_MAC, OUR_MAC)
        .ipv6(router.to_be_bytes(), VIP6.to_be_bytes(), 64)
        .icmpv6(etherparse::Icmpv6Type::DestinationUnreachable(
            etherparse::icmpv6::DestUnreachableCode::Port,
        ))
        .write(&mut err, &sent[14..14 + 100])
        .unwrap();
    let (v, out) = e.send6(&s, &err, 2 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(
        icmp4_to_the_server(&out, lport),
        etherparse::Icmpv4Type::DestinationUnreachable(
            etherparse::icmpv4::DestUnreachableHeader::Port
        )
    );
}

/// A NAT64 reply that fits the IPv4 link but not the client's once 20
/// bytes longer: with DF, the real server gets fragmentation needed from
/// the pool address with the MTU that fits (1500 - 20), counted; without
/// DF it is dropped as too big; one that fits goes to the client.
#[test]
fn nat64_reply_too_big_for_the_client_link_yields_frag_needed() {
    let (mut e, s, lport) = nat64_conn();
    let big = tcp_frame(RIP, 8080, POOL4, lport, ACK | PSH, &[7; 1460], 64, true);
    assert_eq!(big.len(), 14 + 1500);
    let (v, out) = e.nat64_in(&s, &big, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 }, "back to the real server");
    assert_eq!(icmp4_to_the_server(&out, lport), frag_needed(1480));
    assert_eq!(&out[14 + 28..], &big[14..14 + 28], "its header and 8 bytes");
    assert_eq!(e.w.stats().icmp_frag_sent.load(Relaxed), 1);
    // DF clear: RFC 7915 would fragment; dirigo drops and counts it
    let nodf = tcp_frame(RIP, 8080, POOL4, lport, ACK | PSH, &[7; 1460], 64, false);
    let (v, _) = e.nat64_in(&s, &nodf, S);
    assert_eq!(v, LbVerdict::Drop(LbDrop::TooBig));
    assert_eq!(e.w.stats().drops[LbDrop::TooBig.index()].load(Relaxed), 1);
    // the server's next try at 1480 bytes fits: 1500 of IPv6
    let fits = tcp_frame(RIP, 8080, POOL4, lport, ACK | PSH, &[7; 1440], 64, true);
    let (v, out) = e.nat64_in(&s, &fits, 2 * S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    assert_eq!(out.len(), 14 + 1500);
    verify6(&out);
    assert_eq!(e.w.stats().icmp_frag_sent.load(Relaxed), 1);
}
