//! IPv4 FullNAT in the balancer: both addresses rewritten each way
//! (checked with etherparse), the local ports a worker owns, an exhausted
//! pool refused and counted without evicting, a reply on the wrong worker,
//! ICMP errors both ways, persistence, and what the snapshot refuses.

use super::*;
use crate::lb::snapshot::BuildError;
use etherparse::{NetSlice, SlicedPacket, TransportSlice};

const LADDR: [u8; 4] = [10, 0, 0, 200];
const LADDR2: [u8; 4] = [10, 0, 0, 201];

fn fsvc(proto: Proto, port: u16, laddrs: &[[u8; 4]]) -> ServiceSpec {
    ServiceSpec {
        local_addresses: laddrs
            .iter()
            .map(|a| std::net::IpAddr::V4(Ipv4Addr::from(*a)))
            .collect(),
        ..svc(proto, port)
    }
}

/// A balancer that is worker `worker` of `workers`.
fn env_of(cap: u32, worker: u32, workers: u32) -> Env {
    let ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        conn_capacity: cap,
        seed: 42,
        icmp_rate: 1,
        icmp_burst: 2,
        persist_capacity: 1024,
        worker,
        workers,
        ..BalancerConfig::default()
    };
    let w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
    Env {
        ids,
        w,
        eg: FakeEgress::default(),
    }
}

/// The frame's addresses and ports (etherparse's reading), its TTL; every
/// checksum verified.
pub(super) fn seen(frame: &[u8]) -> ([u8; 4], u16, [u8; 4], u16, u8) {
    verify(frame);
    let p = SlicedPacket::from_ethernet(frame).expect("parse");
    let Some(NetSlice::Ipv4(ip)) = &p.net else {
        panic!("not IPv4")
    };
    let h = ip.header().to_header();
    let (sp, dp) = match &p.transport {
        Some(TransportSlice::Tcp(t)) => (t.source_port(), t.destination_port()),
        Some(TransportSlice::Udp(u)) => (u.source_port(), u.destination_port()),
        other => panic!("{other:?}"),
    };
    (h.source, sp, h.destination, dp, h.time_to_live)
}

/// A reply (or ICMP error) to a local address, as the pipeline hands it.
fn to_laddr(e: &mut Env, s: &Snapshot, frame: &[u8], now: u64) -> (LbVerdict, Vec<u8>) {
    let m = meta_of(frame);
    let mut b = VecBuf::with_room(frame, 128, 0);
    let v = e.w.nat64_reply(&BurstCtx::new(s, &e.eg, now), &mut b, &m);
    (v, b.to_vec())
}

#[test]
fn fullnat_tcp_both_ways() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            fsvc(Proto::Tcp, 80, &[LADDR]),
            vec![dest(RIP, 8080, Method::FullNat, 1)],
        );
    });
    assert!(s.is_pool4(ip(LADDR)) && s.fullnat4);
    let (v, out) = e.send(&s, &tcp(SYN, 40000), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let (src, lport, dst, dport, ttl) = seen(&out);
    assert_eq!((src, dst, dport, ttl), (LADDR, RIP, 8080, 63));
    assert!(lport >= 1024, "{lport}");
    assert_eq!(&out[0..6], &mac_of(RIP));
    // a data segment: the same rewrite, the payload byte for byte
    let data = tcp_frame(CLIENT, 40000, VIP, 80, ACK | PSH, b"hello", 64, true);
    let (v, out) = e.send(&s, &data, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(seen(&out), (LADDR, lport, RIP, 8080, 63));
    assert!(out.ends_with(b"hello"));
    assert_eq!(out.len(), data.len());
    // the real server's reply to the local address: from the VIP to the
    // client, toward the gateway
    let reply = tcp_frame(RIP, 8080, LADDR, lport, ACK | PSH, b"world", 64, true);
    let (v, out) = to_laddr(&mut e, &s, &reply, 2 * S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    assert_eq!(seen(&out), (VIP, 80, CLIENT, 40000, 63));
    assert!(out.ends_with(b"world"));
    assert_eq!(&out[0..6], &GW_MAC);
    let c: Vec<_> = e.w.conns(2 * S).collect();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].client.to_string(), "198.51.100.7:40000");
    assert_eq!(c[0].vip.to_string(), "192.0.2.10:80");
    assert_eq!(c[0].rs.to_string(), "10.0.0.21:8080");
    assert_eq!(c[0].state, "ESTABLISHED");
    // counted as the service's and the server's, both ways
    let st = e.w.stats();
    let t = sum_dest(&[&st], s.services()[0].dests[0].id);
    assert_eq!((t.conns, t.pkts_in, t.pkts_out, t.active), (1, 2, 1, 1));
    // a reply to no connection's port: counted, not passed on
    let stray = tcp_frame(RIP, 8080, LADDR, lport ^ 1, ACK, b"", 64, true);
    assert_eq!(
        to_laddr(&mut e, &s, &stray, 2 * S).0,
        LbVerdict::Drop(LbDrop::NotTracked)
    );
    // TTL 1 is not forwarded (as NAT)
    let last = tcp_frame(CLIENT, 40000, VIP, 80, ACK, b"", 1, true);
    assert_eq!(
        e.send(&s, &last, 3 * S).0,
        LbVerdict::Drop(LbDrop::TtlExceeded)
    );
}

/// UDP both ways; a worker takes its ports of one local address, then of
/// the next (here 64 per address: worker 3 of 1000).
#[test]
fn fullnat_udp_both_ways_and_local_addresses_used() {
    let mut e = env_of(1024, 3, 1000);
    let s = e.snap(1, |b| {
        b.service(
            fsvc(Proto::Udp, 53, &[LADDR, LADDR2]),
            vec![dest(RIP, 0, Method::FullNat, 1)],
        );
    });
    let mut used = std::collections::HashSet::new();
    for cport in 5000..5100 {
        let q = udp_frame(CLIENT, cport, VIP, 53, b"query");
        let (v, out) = e.send(&s, &q, 0);
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        let (src, lport, dst, dport, _) = seen(&out);
        assert_eq!((dst, dport, lport % 1000), (RIP, 53, 3));
        assert!(out.ends_with(b"query"));
        used.insert(src);
        let a = udp_frame(RIP, 53, src, lport, b"answer");
        let (v, out) = to_laddr(&mut e, &s, &a, S);
        assert_eq!(v, LbVerdict::Tx { port: 0 });
        assert_eq!(seen(&out), (VIP, 53, CLIENT, cport, 63));
        assert!(out.ends_with(b"answer"));
    }
    assert_eq!(used.len(), 2, "both local addresses serve");
    assert_eq!(e.w.table6().len(), 100);
}

/// Each worker's source ports are its own (`port % workers`), so that
/// the steering finds the owner by the port; a reply on another worker
/// is not that worker's (counted, not forwarded).
#[test]
fn fullnat_ports_per_worker_and_wrong_worker() {
    let mut w0 = env_of(1024, 0, 2);
    let mut w1 = env_of(1024, 1, 2);
    let build = |e: &mut Env| {
        e.snap(1, |b| {
            b.service(
                fsvc(Proto::Tcp, 80, &[LADDR]),
                vec![dest(RIP, 0, Method::FullNat, 1)],
            );
        })
    };
    let (s0, s1) = (build(&mut w0), build(&mut w1));
    for cport in 1000..1050 {
        let (_, out) = w1.send(&s1, &tcp(SYN, cport), 0);
        let (_, lport, ..) = seen(&out);
        assert_eq!(lport % 2, 1, "worker 1's port");
        let (_, out) = w0.send(&s0, &tcp(SYN, cport), 0);
        assert_eq!(seen(&out).1 % 2, 0, "worker 0's port");
    }
    let (_, out) = w1.send(&s1, &tcp(SYN, 2000), 0);
    let lport = seen(&out).1;
    let reply = tcp_frame(RIP, 80, LADDR, lport, SYN | ACK, b"", 64, true);
    // the wrong worker has no such connection
    assert_eq!(
        to_laddr(&mut w0, &s0, &reply, S).0,
        LbVerdict::Drop(LbDrop::NotTracked)
    );
    assert_eq!(
        to_laddr(&mut w1, &s1, &reply, S).0,
        LbVerdict::Tx { port: 0 }
    );
}

/// A worker whose share of ports is small (many workers): once each
/// local port to the server is taken, a new connection is refused and
/// counted; no live connection is evicted for it.
#[test]
fn fullnat_exhausted_pool_refuses_and_counts() {
    // 1000 workers: ports p = 7 + 1000k in 1024..=65535, 64 of them
    let mut e = env_of(4096, 7, 1000);
    let s = e.snap(1, |b| {
        b.service(
            fsvc(Proto::Tcp, 80, &[LADDR]),
            vec![dest(RIP, 0, Method::FullNat, 1)],
        );
    });
    let mut ok = 0;
    let mut refused = 0;
    for cport in 10000..10100 {
        match e.send(&s, &tcp(SYN, cport), 0).0 {
            LbVerdict::Tx { .. } => ok += 1,
            LbVerdict::Drop(LbDrop::FullNatPortsExhausted) => refused += 1,
            v => panic!("{v:?}"),
        }
    }
    assert_eq!(ok, 64, "every port of the worker's share");
    assert_eq!(refused, 36);
    assert_eq!(e.w.table6().len(), 64, "nothing evicted");
    assert_eq!(e.w.stats().evicted.load(Relaxed), 0);
    let counts: Vec<_> = e.w.stats().drop_counts().filter(|(_, n)| *n > 0).collect();
    assert_eq!(counts, [("fullnat_ports_exhausted", 36)]);
    // the first connections still forward
    let data = tcp_frame(CLIENT, 10000, VIP, 80, ACK, b"x", 64, true);
    assert_eq!(e.send(&s, &data, S).0, LbVerdict::Tx { port: 1 });
}

/// ICMP errors both ways: one about a request (from the real server's
/// side, to the local address) reaches the client from the VIP quoting
/// client → VIP; one about a reply (from the client's side, to the VIP)
/// reaches the real server from the local address quoting RIP → laddr.
#[test]
fn fullnat_icmp_both_ways() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            fsvc(Proto::Tcp, 80, &[LADDR]),
            vec![dest(RIP, 8080, Method::FullNat, 1)],
        );
    });
    let (_, sent) = e.send(&s, &tcp(SYN, 40000), 0);
    let lport = seen(&sent).1;
    // fragmentation needed from a router on the servers' side
    let err = icmp_error([10, 0, 0, 254], LADDR, 3, 4, [0, 0, 5, 0xdc], &sent[14..54]);
    let (v, out) = to_laddr(&mut e, &s, &err, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    verify(&out);
    let m = meta_of(&out);
    assert_eq!((m.key.src, m.key.dst), (ip(VIP), ip(CLIENT)));
    let q = m.icmp.expect("a quote").inner_key;
    assert_eq!(
        (q.src, q.sport, q.dst, q.dport),
        (ip(CLIENT), 40000, ip(VIP), 80)
    );
    assert_eq!(&out[(m.l4_off as usize) + 4..][..4], &[0, 0, 5, 0xdc]);
    // the reply as dirigo sent it, and an error about it from the client's side
    let reply = tcp_frame(RIP, 8080, LADDR, lport, SYN | ACK, b"", 64, true);
    let (_, sent_back) = to_laddr(&mut e, &s, &reply, S);
    let err = icmp_error([203, 0, 113, 5], VIP, 3, 1, [0; 4], &sent_back[14..54]);
    let (v, out) = e.send(&s, &err, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    verify(&out);
    assert_eq!(&out[0..6], &mac_of(RIP));
    let m = meta_of(&out);
    assert_eq!((m.key.src, m.key.dst), (ip(LADDR), ip(RIP)));
    let q = m.icmp.expect("a quote").inner_key;
    assert_eq!(
        (q.src, q.sport, q.dst, q.dport),
        (ip(RIP), 8080, ip(LADDR), lport)
    );
    // an error quoting no connection: not ours
    let other = tcp_frame(VIP, 80, CLIENT, 1, ACK, b"", 64, true);
    let err = icmp_error([203, 0, 113, 5], VIP, 3, 1, [0; 4], &other[14..54]);
    assert_eq!(e.send(&s, &err, S).0, LbVerdict::NotForUs);
}

/// A persistent FullNAT service keeps a client on its real server; the
/// template lives while its connections do and is released with them.
#[test]
fn fullnat_persistence() {
    let mut e = env_of(1024, 0, 1);
    let s = e.snap(1, |b| {
        let mut spec = fsvc(Proto::Tcp, 80, &[LADDR]);
        spec.persistent = Some(60);
        b.service(
            spec,
            vec![
                dest(RIP, 0, Method::FullNat, 1),
                dest(RIP2, 0, Method::FullNat, 1),
            ],
        );
    });
    let (_, out) = e.send(&s, &tcp(SYN, 1000), 0);
    let first = seen(&out).2;
    for cport in 1001..1010 {
        let (_, out) = e.send(&s, &tcp(SYN, cport), 0);
        assert_eq!(seen(&out).2, first, "the same real server");
    }
    assert_eq!(e.w.persist().len(), 1);
    // all expire and detach (the template keyed by the IPv4 client, not
    // its mapped address): it outlives them by its timeout, then goes
    e.w.expire6(1000 * S, 1 << 20);
    assert_eq!(e.w.table6().len(), 0);
    e.w.expire(2000 * S, 1 << 20);
    assert_eq!(e.w.persist().len(), 0, "no connection holds it");
}

#[test]
fn fullnat_snapshot_refusals() {
    let mut e = env(16);
    let full = dest(RIP, 0, Method::FullNat, 1);
    let mut b = SnapshotBuilder::new();
    b.service(svc(Proto::Tcp, 80), vec![full.clone()]);
    assert!(matches!(
        b.build(&mut e.ids, 1),
        Err(BuildError::FullNatNoLaddr(_))
    ));
    let mut b = SnapshotBuilder::new();
    b.service(
        fsvc(Proto::Tcp, 80, &[LADDR]),
        vec![full.clone(), dest(RIP2, 0, Method::Nat, 1)],
    );
    assert!(matches!(
        b.build(&mut e.ids, 1),
        Err(BuildError::FullNatMixed(..))
    ));
    let mut b = SnapshotBuilder::new();
    let mut spec = fsvc(Proto::Tcp, 80, &[]);
    spec.local_addresses = vec!["2001:db8::1".parse().unwrap()];
    b.service(spec, vec![full.clone()]);
    assert!(matches!(
        b.build(&mut e.ids, 1),
        Err(BuildError::LaddrFamily(..))
    ));
    let mut b = SnapshotBuilder::new();
    b.service(fsvc(Proto::Tcp, 80, &[VIP]), vec![full.clone()]);
    assert!(matches!(
        b.build(&mut e.ids, 1),
        Err(BuildError::LaddrIsVip(..))
    ));
    let mut b = SnapshotBuilder::new();
    b.service(fsvc(Proto::Tcp, 80, &[[255, 255, 255, 255]]), vec![full]);
    assert!(matches!(
        b.build(&mut e.ids, 1),
        Err(BuildError::BadAddress(..))
    ));
}
