//! IPv6 services through the worker (sans-IO, injected clock): frames
//! built by etherparse, classified by the real classifier, answers
//! compared byte for byte with etherparse's.

use super::*;
use crate::lb::spec::DestSpec;
use crate::net::classify::{classify, Classified};
use crate::net::meta::PacketMeta6;
use etherparse::PacketBuilder;

fn v6(a: u128) -> std::net::IpAddr {
    std::net::IpAddr::V6(a.into())
}

pub(super) fn svc6(proto: Proto, port: u16) -> ServiceSpec {
    let mut s = svc(proto, port);
    s.key.vip = v6(VIP6);
    s
}

pub(super) fn dest6(a: u128, port: u16, method: Method, weight: u32) -> DestSpec {
    let mut d = dest([0, 0, 0, 0], port, method, weight);
    d.key.addr = v6(a);
    d
}

fn meta6(f: &[u8]) -> PacketMeta6 {
    match classify(f, 0) {
        Classified::Ipv6(m) => m,
        other => panic!("not an IPv6 packet for the balancer: {other:?}"),
    }
}

/// An Ethernet/IPv6/TCP frame; `eth` is (source MAC, destination MAC).
#[allow(clippy::too_many_arguments)]
fn tcp6_frame(
    src: u128,
    sport: u16,
    dst: u128,
    dport: u16,
    flags: u8,
    payload: &[u8],
    hop: u8,
    eth: ([u8; 6], [u8; 6]),
) -> Vec<u8> {
    let mut v = Vec::new();
    let b = PacketBuilder::ethernet2(eth.0, eth.1)
        .ipv6(src.to_be_bytes(), dst.to_be_bytes(), hop)
        .tcp(sport, dport, 1000, 64240);
    let b = if flags & SYN != 0 { b.syn() } else { b };
    let b = if flags & ACK != 0 { b.ack(1) } else { b };
    let b = if flags & FIN != 0 { b.fin() } else { b };
    let b = if flags & RST != 0 { b.rst() } else { b };
    b.write(&mut v, payload).unwrap();
    v
}

pub(super) fn from_client(flags: u8, cport: u16, dport: u16) -> Vec<u8> {
    tcp6_frame(
        CLIENT6,
        cport,
        VIP6,
        dport,
        flags,
        b"",
        64,
        (CLIENT_MAC, OUR_MAC),
    )
}

impl Env {
    pub(super) fn send6(
        &mut self,
        snap: &Snapshot,
        frame: &[u8],
        now: u64,
    ) -> (LbVerdict, Vec<u8>) {
        let m = meta6(frame);
        let mut b = VecBuf::new(frame);
        let v = self
            .w
            .process6(&BurstCtx::new(snap, &self.eg, now), &mut b, &m);
        (v, b.to_vec())
    }
}

#[test]
fn dr6_lifecycle_counters_and_listing() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc6(Proto::Tcp, 80), vec![dest6(RIP6, 0, Method::Dr, 1)]);
    });
    let syn = from_client(SYN, 40000, 80);
    let (v, out) = e.send6(&s, &syn, 10 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let mut want = syn.clone();
    want[0..6].copy_from_slice(&mac_of([0, 0, 0, 0x21]));
    want[6..12].copy_from_slice(&OUR_MAC);
    assert_eq!(out, want, "DR changes the MACs only");
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    let (v, _) = e.send6(&s, &from_client(ACK, 40000, 80), 11 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(e.load(&s, 0, 0), (1, 0));
    let c: Vec<_> = e.w.conns(11 * S).collect();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].state, "ESTABLISHED");
    assert_eq!(c[0].client.to_string(), "[2001:db8:c0::7]:40000");
    assert_eq!(c[0].vip.to_string(), "[2001:db8:f0::10]:80");
    assert_eq!(c[0].rs.to_string(), "[2001:db8:1::21]:80");
    // the IPv4 table is untouched; the conns gauge counts both
    assert_eq!(e.w.table().len(), 0);
    assert_eq!(e.w.table6().len(), 1);
    assert_eq!(e.w.stats().conns.load(Relaxed), 1);
    // expiry: 900 s later the sweep removes it and gives its count back
    let n = e.w.expire6(2000 * S, 4096);
    assert_eq!(n, 1);
    assert_eq!(e.load(&s, 0, 0), (0, 0));
    assert_eq!(e.w.stats().conns.load(Relaxed), 0);
}

#[test]
fn nat6_both_directions_byte_exact() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            svc6(Proto::Tcp, 80),
            vec![dest6(RIP6, 8080, Method::Nat, 1)],
        );
    });
    let (v, out) = e.send6(&s, &from_client(SYN, 40000, 80), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let want = tcp6_frame(
        CLIENT6,
        40000,
        RIP6,
        8080,
        SYN,
        b"",
        63,
        (OUR_MAC, mac_of([0, 0, 0, 0x21])),
    );
    assert_eq!(out, want, "request: VIP:80 -> RIP:8080, hop limit - 1");
    let synack = tcp6_frame(
        RIP6,
        8080,
        CLIENT6,
        40000,
        SYN | ACK,
        b"",
        64,
        (mac_of([0, 0, 0, 0x21]), OUR_MAC),
    );
    let (v, out) = e.send6(&s, &synack, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let want = tcp6_frame(
        VIP6,
        80,
        CLIENT6,
        40000,
        SYN | ACK,
        b"",
        63,
        (OUR_MAC, GW_MAC),
    );
    assert_eq!(out, want, "reply: RIP:8080 -> VIP:80 toward the gateway");
    let c: Vec<_> = e.w.conns(S).collect();
    assert_eq!(c[0].state, "SYN_RECV");
    assert_eq!(c[0].rs.to_string(), "[2001:db8:1::21]:8080");
    // a reply for no connection is not ours
    let stray = tcp6_frame(
        RIP6,
        8080,
        CLIENT6,
        40001,
        ACK,
        b"",
        64,
        (mac_of([0, 0, 0, 0x21]), OUR_MAC),
    );
    assert_eq!(e.send6(&s, &stray, S).0, LbVerdict::NotForUs);
}

#[test]
fn tun6_encapsulates_and_answers_packet_too_big() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc6(Proto::Tcp, 80), vec![dest6(RIP6, 0, Method::Tun, 1)]);
    });
    let syn = from_client(SYN, 40000, 80);
    let (v, out) = e.send6(&s, &syn, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    // Ethernet, outer IPv6 (next header 41) from our address to the RS,
    // then the client's packet unchanged
    assert_eq!(out.len(), syn.len() + 40);
    assert_eq!(&out[12..14], &[0x86, 0xdd]);
    assert_eq!(out[14 + 6], 41);
    assert_eq!(&out[14 + 8..14 + 24], &OUR_IP6.to_be_bytes());
    assert_eq!(&out[14 + 24..14 + 40], &RIP6.to_be_bytes());
    assert_eq!(&out[54..], &syn[14..]);
    // a full-size segment does not fit the 1500-byte link once wrapped:
    // Packet Too Big back to the client, from the VIP
    let big = tcp6_frame(
        CLIENT6,
        40000,
        VIP6,
        80,
        ACK,
        &[7u8; 1440],
        64,
        (CLIENT_MAC, OUR_MAC),
    );
    let (v, out) = e.send6(&s, &big, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let m = meta6(&out);
    assert_eq!(m.key.src, VIP6);
    assert_eq!(m.key.dst, CLIENT6);
    let q = m.icmp.expect("a Packet Too Big quoting the segment");
    assert_eq!(q.icmp_type, 2);
    assert_eq!(u32::from_be_bytes(out[58..62].try_into().unwrap()), 1460);
}

#[test]
fn rr6_spreads_and_weight_zero_quiesces() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            svc6(Proto::Tcp, 80),
            vec![
                dest6(RIP6, 0, Method::Dr, 1),
                dest6(RIP6_2, 0, Method::Dr, 1),
            ],
        );
    });
    let mut seen = std::collections::HashMap::new();
    for p in 0..10u16 {
        let (v, out) = e.send6(&s, &from_client(SYN, 41000 + p, 80), 0);
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        *seen.entry(out[5]).or_insert(0) += 1;
    }
    assert_eq!(seen.get(&0x21), Some(&5));
    assert_eq!(seen.get(&0x22), Some(&5));
    let s2 = e.snap(2, |b| {
        b.service(
            svc6(Proto::Tcp, 80),
            vec![
                dest6(RIP6, 0, Method::Dr, 0),
                dest6(RIP6_2, 0, Method::Dr, 1),
            ],
        );
    });
    for p in 0..4u16 {
        let (_, out) = e.send6(&s2, &from_client(SYN, 42000 + p, 80), 0);
        assert_eq!(out[5], 0x22, "weight 0 takes no new connection");
    }
    // existing connections to the quiesced server continue
    let (_, out) = e.send6(&s2, &from_client(ACK, 41000, 80), 0);
    assert_eq!(out[5], 0x21);
}

#[test]
fn ipv6_drops_and_unresolved() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc6(Proto::Tcp, 80), vec![dest6(RIP6, 0, Method::Dr, 1)]);
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    assert_eq!(
        e.send6(&s, &from_client(SYN, 40000, 81), 0).0,
        LbVerdict::Drop(LbDrop::NotAService)
    );
    assert_eq!(
        e.send6(&s, &from_client(ACK, 40000, 80), 0).0,
        LbVerdict::Drop(LbDrop::NotTracked)
    );
    let other = tcp6_frame(CLIENT6, 1, RIP6, 80, SYN, b"", 64, (CLIENT_MAC, OUR_MAC));
    assert_eq!(e.send6(&s, &other, 0).0, LbVerdict::NotForUs);
    // the IPv4 path does not see the IPv6 service and vice versa
    assert_eq!(e.w.table6().len(), 0);
    e.eg.unresolved.push(RIP6 as u32);
    assert_eq!(
        e.send6(&s, &from_client(SYN, 40002, 80), 0).0,
        LbVerdict::Unresolved6 {
            ip: RIP6.into(),
            port: 1
        }
    );
    let st = e.w.stats();
    let drops = |d: LbDrop| st.drops[d.index()].load(Relaxed);
    assert_eq!(drops(LbDrop::NotAService), 1);
    assert_eq!(drops(LbDrop::NotTracked), 1);
}

#[test]
fn icmpv6_error_reaches_the_nat_client_translated() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            svc6(Proto::Tcp, 80),
            vec![dest6(RIP6, 8080, Method::Nat, 1)],
        );
    });
    e.send6(&s, &from_client(SYN, 40000, 80), 0);
    // the real server's reply met a small link on the way back: the
    // router there quotes the reply as dirigo sent it (VIP:80 -> client)
    let mut reply = Vec::new();
    PacketBuilder::ipv6(VIP6.to_be_bytes(), CLIENT6.to_be_bytes(), 63)
        .tcp(80, 40000, 1, 1000)
        .ack(1)
        .write(&mut reply, &[0u8; 64])
        .unwrap();
    let router: u128 = 0x2001_0db8_00e0_0000_0000_0000_0000_00fe;
    let mut err = Vec::new();
    PacketBuilder::ethernet2(GW_MAC, OUR_MAC)
        .ipv6(router.to_be_bytes(), VIP6.to_be_bytes(), 64)
        .icmpv6(etherparse::Icmpv6Type::PacketTooBig { mtu: 1280 })
        .write(&mut err, &reply)
        .unwrap();
    let (v, out) = e.send6(&s, &err, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 }, "to the real server");
    let m = meta6(&out);
    assert_eq!(m.key.dst, RIP6);
    let q = m.icmp.unwrap();
    assert_eq!(q.inner_key.src, RIP6);
    assert_eq!(q.inner_key.sport, 8080);
    // etherparse accepts the translated ICMPv6 checksum
    let p = etherparse::SlicedPacket::from_ethernet(&out).unwrap();
    match p.transport {
        Some(etherparse::TransportSlice::Icmpv6(i)) => {
            let ip = match p.net {
                Some(etherparse::NetSlice::Ipv6(ip)) => ip,
                _ => panic!("not IPv6"),
            };
            let h = ip.header();
            let want = i
                .icmp_type()
                .calc_checksum(h.source(), h.destination(), i.payload())
                .unwrap();
            assert_eq!(i.checksum(), want);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn persistence6_by_prefix() {
    let mut e = env(1024);
    let mut p = svc6(Proto::Tcp, 80);
    p.persistent = Some(300);
    p.prefix6 = 64;
    let s = e.snap(1, |b| {
        b.service(
            p.clone(),
            vec![
                dest6(RIP6, 0, Method::Dr, 1),
                dest6(RIP6_2, 0, Method::Dr, 1),
            ],
        );
    });
    let syn_from = |client: u128, port: u16| {
        tcp6_frame(client, port, VIP6, 80, SYN, b"", 64, (CLIENT_MAC, OUR_MAC))
    };
    // clients of one /64 stick to the first one's server, rr or not
    let (_, out) = e.send6(&s, &syn_from(CLIENT6, 40000), 0);
    let first = out[5];
    for (i, host) in [0x8u128, 0x9, 0xffff_0000_0001].iter().enumerate() {
        let c = (CLIENT6 & !0xffff_ffff_ffff_ffff) | host;
        let (v, out) = e.send6(&s, &syn_from(c, 40001 + i as u16), S);
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        assert_eq!(out[5], first, "client {c:x} of the same /64");
    }
    assert_eq!(e.w.persist().len(), 1, "one template for the /64");
    // another /64: its own template (rr gives it the other server)
    let other = CLIENT6 ^ (1u128 << 64);
    let (_, out) = e.send6(&s, &syn_from(other, 40100), S);
    assert_ne!(out[5], first);
    assert_eq!(e.w.persist().len(), 2);
    // connections gone (expired), the templates outlive them by the
    // persistence timeout, then go too
    e.w.expire6(100 * S, 4096);
    assert_eq!(e.w.table6().len(), 0);
    e.w.expire(100 * S, 4096);
    assert_eq!(
        e.w.persist().len(),
        2,
        "templates outlive their connections"
    );
    e.w.expire(500 * S, 4096);
    assert_eq!(e.w.persist().len(), 0);
    // a mask of the wrong family is refused
    let mut bad = p.clone();
    bad.netmask = std::net::Ipv4Addr::new(255, 255, 255, 0);
    let mut b = SnapshotBuilder::new();
    b.service(bad, vec![]);
    assert!(matches!(
        b.build(&mut e.ids, 2),
        Err(crate::lb::snapshot::BuildError::MaskFamily(_))
    ));
}

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
    assert_eq!(mm.hop_limit, 63);
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

/// IPv6's established shortcut (a segment that keeps a connection
/// ESTABLISHED: only the timer restarts) writes what the general path
/// (state machine, then transmit) writes: for DR, TUN and NAT (both
/// directions), a balancer on the shortcut and one forced down the general
/// path (`expire_nodest_conn` on, the server present) give the same frames,
/// verdicts, states, timers and per-server counters.
#[test]
fn established_shortcut6_writes_what_the_general_path_writes() {
    for method in [Method::Dr, Method::Tun, Method::Nat] {
        let rport = if method == Method::Nat { 8080 } else { 0 };
        let mut short = env(64);
        let mut general = env(64);
        let s1 = short.snap(1, |b| {
            b.service(svc6(Proto::Tcp, 80), vec![dest6(RIP6, rport, method, 1)]);
        });
        let s2 = general.snap(1, |b| {
            b.service(svc6(Proto::Tcp, 80), vec![dest6(RIP6, rport, method, 1)]);
            b.expire_nodest_conn(true);
        });
        let reply = |flags: u8| {
            tcp6_frame(
                RIP6,
                8080,
                CLIENT6,
                40000,
                flags,
                b"",
                64,
                (mac_of([0, 0, 0, 0x21]), OUR_MAC),
            )
        };
        let mut frames = vec![
            (from_client(SYN, 40000, 80), 0),
            (from_client(ACK, 40000, 80), S),
            (from_client(ACK | PSH, 40000, 80), 2 * S),
            (from_client(ACK, 40000, 80), 3 * S),
            (from_client(SYN | ACK, 40000, 80), 4 * S),
            (from_client(ACK, 40001, 80), 5 * S),
        ];
        if method == Method::Nat {
            // the reply direction: its first segment clears NOOUTPUT (the
            // general path), the next ones keep ESTABLISHED (the shortcut)
            frames.push((reply(SYN | ACK), 5 * S));
            frames.push((reply(ACK), 6 * S));
            frames.push((reply(ACK | PSH), 7 * S));
        }
        frames.push((from_client(FIN | ACK, 40000, 80), 8 * S));
        frames.push((from_client(ACK, 40000, 80), 9 * S));
        shortcut_agrees(
            method,
            &mut short,
            &s1,
            &mut general,
            &s2,
            &frames,
            Env::send6,
        );
    }
}
