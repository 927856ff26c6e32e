//! IPv6 FullNAT in the balancer: both sides rewritten each way, compared
//! byte for byte with etherparse's frames; the local ports a worker owns
//! and an exhausted pool counted; a reply for another worker's port.

use super::v6::{dest6, from_client, meta6, svc6, tcp6_frame};
use super::*;

const LADDR6: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0200;

fn fsvc6(proto: Proto, port: u16) -> ServiceSpec {
    ServiceSpec {
        local_addresses: vec![std::net::IpAddr::V6(LADDR6.into())],
        ..svc6(proto, port)
    }
}

fn rs_mac() -> [u8; 6] {
    mac_of([0, 0, 0, 0x21])
}

#[test]
fn fullnat6_both_ways_byte_exact() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            fsvc6(Proto::Tcp, 80),
            vec![dest6(RIP6, 8080, Method::FullNat, 1)],
        );
    });
    assert!(s.is_pool6(LADDR6));
    let (v, out) = e.send6(&s, &from_client(SYN, 40000, 80), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let lport = meta6(&out).key.sport;
    assert!(lport >= 1024, "{lport}");
    let want = tcp6_frame(LADDR6, lport, RIP6, 8080, SYN, b"", 63, (OUR_MAC, rs_mac()));
    assert_eq!(out, want, "request: laddr:lport -> RIP:8080, hop limit - 1");
    // data both ways, byte for byte
    let data = tcp6_frame(
        CLIENT6,
        40000,
        VIP6,
        80,
        ACK,
        b"hello",
        64,
        (CLIENT_MAC, OUR_MAC),
    );
    let (v, out) = e.send6(&s, &data, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let want = tcp6_frame(
        LADDR6,
        lport,
        RIP6,
        8080,
        ACK,
        b"hello",
        63,
        (OUR_MAC, rs_mac()),
    );
    assert_eq!(out, want);
    let reply = tcp6_frame(
        RIP6,
        8080,
        LADDR6,
        lport,
        ACK,
        b"world",
        64,
        (rs_mac(), OUR_MAC),
    );
    let (v, out) = e.send6(&s, &reply, 2 * S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let want = tcp6_frame(
        VIP6,
        80,
        CLIENT6,
        40000,
        ACK,
        b"world",
        63,
        (OUR_MAC, GW_MAC),
    );
    assert_eq!(out, want, "reply: VIP:80 -> client toward the gateway");
    let c: Vec<_> = e.w.conns(2 * S).collect();
    assert_eq!(c[0].rs.to_string(), "[2001:db8:1::21]:8080");
    assert_eq!(c[0].state, "ESTABLISHED");
    // a reply to another port of the local address: not a connection's
    let stray = tcp6_frame(
        RIP6,
        8080,
        LADDR6,
        lport ^ 1,
        ACK,
        b"",
        64,
        (rs_mac(), OUR_MAC),
    );
    assert_eq!(e.send6(&s, &stray, 2 * S).0, LbVerdict::NotForUs);
}

/// Worker 5 of 1000 owns 64 ports per local address: the 65th new
/// connection to one real server port is refused and counted, none evicted.
#[test]
fn fullnat6_ports_per_worker_and_exhaustion() {
    let ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        conn_capacity: 1024,
        seed: 42,
        worker: 5,
        workers: 1000,
        ..BalancerConfig::default()
    };
    let w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
    let mut e = Env {
        ids,
        w,
        eg: FakeEgress::default(),
    };
    let s = e.snap(1, |b| {
        b.service(
            fsvc6(Proto::Tcp, 80),
            vec![dest6(RIP6, 0, Method::FullNat, 1)],
        );
    });
    let mut refused = 0;
    for cport in 20000..20070 {
        match e.send6(&s, &from_client(SYN, cport, 80), 0) {
            (LbVerdict::Tx { .. }, out) => assert_eq!(meta6(&out).key.sport % 1000, 5),
            (LbVerdict::Drop(LbDrop::FullNatPortsExhausted), _) => refused += 1,
            (v, _) => panic!("{v:?}"),
        }
    }
    assert_eq!(refused, 6);
    assert_eq!(e.w.table6().len(), 64);
    let counts: Vec<_> = e.w.stats().drop_counts().filter(|(_, n)| *n > 0).collect();
    assert_eq!(counts, [("fullnat_ports_exhausted", 6)]);
}

/// The ICMPv6 checksum of `out` is right (etherparse's own sum); its
/// outer (source, destination) and quoted (source, sport, destination,
/// dport).
fn icmp6_seen(out: &[u8]) -> ((u128, u128), (u128, u16, u128, u16)) {
    let p = etherparse::SlicedPacket::from_ethernet(out).unwrap();
    let (Some(etherparse::TransportSlice::Icmpv6(i)), Some(etherparse::NetSlice::Ipv6(ip))) =
        (&p.transport, &p.net)
    else {
        panic!("not ICMPv6")
    };
    let h = ip.header();
    let want = i
        .icmp_type()
        .calc_checksum(h.source(), h.destination(), i.payload())
        .unwrap();
    assert_eq!(i.checksum(), want, "icmpv6 checksum");
    let m = meta6(out);
    let q = m.icmp.expect("a quote").inner_key;
    ((m.key.src, m.key.dst), (q.src, q.sport, q.dst, q.dport))
}

/// ICMPv6 errors both ways: one about a request (from the servers' side,
/// to the local address) reaches the client from the VIP quoting client
/// → VIP; one about a reply (to the VIP) reaches the real server from the
/// local address quoting RIP → laddr.
#[test]
fn fullnat6_icmp_both_ways() {
    use etherparse::{Icmpv6Type, PacketBuilder};
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            fsvc6(Proto::Tcp, 80),
            vec![dest6(RIP6, 8080, Method::FullNat, 1)],
        );
    });
    let (_, sent) = e.send6(&s, &from_client(SYN, 40000, 80), 0);
    let lport = meta6(&sent).key.sport;
    let router: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_00fe;
    let mut err = Vec::new();
    PacketBuilder::ethernet2(rs_mac(), OUR_MAC)
        .ipv6(router.to_be_bytes(), LADDR6.to_be_bytes(), 64)
        .icmpv6(Icmpv6Type::PacketTooBig { mtu: 1280 })
        .write(&mut err, &sent[14..])
        .unwrap();
    let (v, out) = e.send6(&s, &err, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 }, "to the client");
    assert_eq!(
        icmp6_seen(&out),
        ((VIP6, CLIENT6), (CLIENT6, 40000, VIP6, 80))
    );
    // the reply as dirigo sent it, quoted by a router on the client's side
    let reply = tcp6_frame(
        RIP6,
        8080,
        LADDR6,
        lport,
        SYN | ACK,
        b"",
        64,
        (rs_mac(), OUR_MAC),
    );
    let (_, back) = e.send6(&s, &reply, S);
    let gw: u128 = 0x2001_0db8_00e0_0000_0000_0000_0000_00fe;
    let mut err = Vec::new();
    PacketBuilder::ethernet2(GW_MAC, OUR_MAC)
        .ipv6(gw.to_be_bytes(), VIP6.to_be_bytes(), 64)
        .icmpv6(Icmpv6Type::PacketTooBig { mtu: 1280 })
        .write(&mut err, &back[14..])
        .unwrap();
    let (v, out) = e.send6(&s, &err, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 }, "to the real server");
    assert_eq!(&out[0..6], &rs_mac());
    assert_eq!(
        icmp6_seen(&out),
        ((LADDR6, RIP6), (RIP6, 8080, LADDR6, lport))
    );
}
