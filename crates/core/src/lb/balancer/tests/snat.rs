//! SNAT (`[[snat]]`) in the balancer: a real server's own connection out
//! leaves from a pool address and a port of the worker's share, its
//! destination unchanged (checked with etherparse); the reply, found by
//! its tuple, goes back to the real server; ICMP errors about it too; an
//! exhausted pool and the bound are counted refusals that evict nothing;
//! the rule's counters follow its connections; what the snapshot refuses.

use super::fullnat::seen;
use super::*;
use crate::lb::mark::Prefix;
use crate::lb::snapshot::BuildError;
use crate::lb::snat::SnatRule;

/// The pool address (the client's side: 203.0.113.0/24 is the gateway's).
const POOL: [u8; 4] = [203, 0, 113, 50];
const POOL2: [u8; 4] = [203, 0, 113, 51];
/// A host on the outside the real servers talk to.
const OUT: [u8; 4] = [198, 51, 100, 80];

fn rule(src: &str, pool: &[[u8; 4]], max_conns: u32) -> SnatRule {
    SnatRule {
        source: src.parse::<Prefix>().unwrap(),
        pool: pool
            .iter()
            .map(|a| std::net::IpAddr::V4(Ipv4Addr::from(*a)))
            .collect(),
        max_conns,
        port_lo: 1024,
        port_hi: 65535,
    }
}

/// A balancer that is worker `worker` of `workers`, its IPv6 table
/// (FullNAT's and SNAT's) of `cap6` records.
fn env_of(cap6: u32, worker: u32, workers: u32) -> Env {
    let ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        conn_capacity: 4096,
        conn6_capacity: cap6,
        seed: 42,
        icmp_rate: 1,
        icmp_burst: 2,
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

impl Env {
    /// A packet as the pipeline hands it to SNAT: the IPv4 path first
    /// (which must not take it), then [`Balancer::snat_out`].
    fn out(&mut self, s: &Snapshot, frame: &[u8], now: u64) -> (LbVerdict, Vec<u8>) {
        let (v, _) = self.send(s, frame, now);
        assert_eq!(v, LbVerdict::NotForUs, "the IPv4 path leaves it alone");
        let m = meta_of(frame);
        let mut b = VecBuf::new(frame);
        let v = self
            .w
            .snat_out(&BurstCtx::new(s, &self.eg, now), &mut b, &m);
        (v, b.to_vec())
    }
    /// A packet to a pool address, as the pipeline hands it.
    fn reply_in(&mut self, s: &Snapshot, frame: &[u8], now: u64) -> (LbVerdict, Vec<u8>) {
        let m = meta_of(frame);
        let mut b = VecBuf::with_room(frame, 128, 0);
        let v = self
            .w
            .nat64_reply(&BurstCtx::new(s, &self.eg, now), &mut b, &m);
        (v, b.to_vec())
    }
    fn rule_counts(&self, i: usize) -> (u64, u32, u32) {
        let st = self.w.stats();
        (
            st.snat[i].conns.load(Relaxed),
            st.snat[i].live.load(Relaxed),
            st.snat_live.load(Relaxed),
        )
    }
}

#[test]
fn snat_tcp_both_ways_and_counted() {
    let mut e = env_of(1024, 0, 1);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Nat, 1)]);
        b.snat(&[rule("10.0.0.0/24", &[POOL], 0)]);
    });
    assert!(s.has_snat4() && s.is_pool4(ip(POOL)));
    // the real server's SYN out: from the pool address, to the same host
    let syn = tcp_frame(RIP, 33000, OUT, 443, SYN, b"", 64, true);
    let (v, out) = e.out(&s, &syn, 0);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let (src, lport, dst, dport, ttl) = seen(&out);
    assert_eq!((src, dst, dport, ttl), (POOL, OUT, 443, 63));
    assert!(lport >= 1024);
    assert_eq!(&out[0..6], &GW_MAC, "routed toward the outside");
    // the reply to the pool address: back to the real server
    let synack = tcp_frame(OUT, 443, POOL, lport, SYN | ACK, b"", 64, true);
    let (v, back) = e.reply_in(&s, &synack, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(seen(&back), (OUT, 443, RIP, 33000, 63));
    assert_eq!(&back[0..6], &mac_of(RIP));
    // data both ways, byte for byte
    let data = tcp_frame(RIP, 33000, OUT, 443, ACK | PSH, b"GET /", 64, true);
    let (v, out) = e.out(&s, &data, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    assert_eq!(seen(&out), (POOL, lport, OUT, 443, 63));
    assert!(out.ends_with(b"GET /"));
    let resp = tcp_frame(OUT, 443, POOL, lport, ACK | PSH, b"200 OK", 64, true);
    let (v, back) = e.reply_in(&s, &resp, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert!(back.ends_with(b"200 OK"));
    let c: Vec<_> = e.w.conns(S).collect();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].client.to_string(), "10.0.0.21:33000");
    assert_eq!(c[0].rs.to_string(), "198.51.100.80:443");
    assert_eq!(c[0].state, "ESTABLISHED");
    // the rule's counters; no service's or real server's
    assert_eq!(e.rule_counts(0), (1, 1, 1));
    let st = e.w.stats();
    assert_eq!(sum_dest(&[&st], s.services()[0].dests[0].id).conns, 0);
    // a non-SYN segment of no connection is not tracked; a source of no
    // rule is not ours
    let stray = tcp_frame(RIP, 33001, OUT, 443, ACK, b"", 64, true);
    assert_eq!(e.out(&s, &stray, S).0, LbVerdict::Drop(LbDrop::NotTracked));
    let other = tcp_frame([10, 0, 1, 5], 33000, OUT, 443, SYN, b"", 64, true);
    assert_eq!(e.out(&s, &other, S).0, LbVerdict::NotForUs);
    // a reply to a port of no connection: counted, not passed on
    let stray = tcp_frame(OUT, 443, POOL, lport ^ 1, ACK, b"", 64, true);
    assert_eq!(
        e.reply_in(&s, &stray, S).0,
        LbVerdict::Drop(LbDrop::NotTracked)
    );
    // the real server's own VIP traffic still goes to the service (the
    // rules are asked only where everything else missed)
    let to_vip = tcp_frame(RIP2, 5000, VIP, 80, SYN, b"", 64, true);
    let (v, out) = e.send(&s, &to_vip, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(seen(&out).2, RIP);
    // the connection ends (expiry): the rule's count goes back
    e.w.expire6(100_000 * S, 1 << 20);
    assert_eq!(e.w.table6().len(), 0);
    assert_eq!(e.rule_counts(0), (1, 0, 0));
}

/// UDP both ways; worker 3 of 1000 uses only its ports (`port % 1000 ==
/// 3`), 64 per pool address, then the next address; the reply on another
/// worker finds nothing.
#[test]
fn snat_udp_worker_ports_and_pool_addresses() {
    let mut e = env_of(1024, 3, 1000);
    let s = e.snap(1, |b| {
        b.snat(&[rule("10.0.0.0/24", &[POOL, POOL2], 0)]);
    });
    let mut used = std::collections::HashSet::new();
    for sport in 5000..5100 {
        let q = udp_frame(RIP, sport, OUT, 53, b"query");
        let (v, out) = e.out(&s, &q, 0);
        assert_eq!(v, LbVerdict::Tx { port: 0 });
        let (src, lport, dst, dport, _) = seen(&out);
        assert_eq!((dst, dport), (OUT, 53));
        assert_eq!(lport % 1000, 3, "this worker's port");
        assert!(used.insert((src, lport)), "a pool address and port once");
        let a = udp_frame(OUT, 53, src, lport, b"answer");
        let (v, back) = e.reply_in(&s, &a, S);
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        assert_eq!(seen(&back), (OUT, 53, RIP, sport, 63));
        assert!(back.ends_with(b"answer"));
    }
    assert!(used.iter().any(|u| u.0 == POOL) && used.iter().any(|u| u.0 == POOL2));
    // worker 4 never made these: a reply steered wrongly is dropped
    let mut w4 = env_of(1024, 4, 1000);
    let s4 = w4.snap(1, |b| {
        b.snat(&[rule("10.0.0.0/24", &[POOL, POOL2], 0)]);
    });
    let (src, lport) = *used.iter().next().unwrap();
    let a = udp_frame(OUT, 53, src, lport, b"answer");
    assert_eq!(
        w4.reply_in(&s4, &a, S).0,
        LbVerdict::Drop(LbDrop::NotTracked)
    );
}

/// Worker 7 of 1000 has 64 ports per pool address: the 65th connection to
/// one destination is refused and counted, nothing evicted, the first
/// still forwarded.
#[test]
fn snat_exhausted_pool_refuses_and_counts() {
    let mut e = env_of(4096, 7, 1000);
    let s = e.snap(1, |b| {
        b.snat(&[rule("10.0.0.0/24", &[POOL], 0)]);
    });
    let (mut ok, mut refused) = (0, 0);
    for sport in 10000..10100 {
        let syn = tcp_frame(RIP, sport, OUT, 443, SYN, b"", 64, true);
        match e.out(&s, &syn, 0).0 {
            LbVerdict::Tx { .. } => ok += 1,
            LbVerdict::Drop(LbDrop::SnatPortsExhausted) => refused += 1,
            v => panic!("{v:?}"),
        }
    }
    assert_eq!((ok, refused), (64, 36));
    assert_eq!(e.w.table6().len(), 64, "nothing evicted");
    assert_eq!(e.w.stats().evicted.load(Relaxed), 0);
    let counts: Vec<_> = e.w.stats().drop_counts().filter(|(_, n)| *n > 0).collect();
    assert_eq!(counts, [("snat_ports_exhausted", 36)]);
    let data = tcp_frame(RIP, 10000, OUT, 443, ACK, b"x", 64, true);
    assert_eq!(e.out(&s, &data, S).0, LbVerdict::Tx { port: 0 });
}

/// The bounds: a rule's `max_conns`, and all rules together at half the
/// IPv6 table; over them a new connection is refused and counted
/// (`snat_limit`), nothing evicted, and a connection that ended makes room.
#[test]
fn snat_bounds_refuse_and_count() {
    let mut e = env_of(1024, 0, 1);
    let s = e.snap(1, |b| {
        b.snat(&[
            rule("10.0.0.0/24", &[POOL], 10),
            rule("10.0.1.0/24", &[POOL2], 0),
        ]);
    });
    let refused = |e: &Env| {
        e.w.stats()
            .drop_counts()
            .find(|(n, _)| *n == "snat_limit")
            .map_or(0, |c| c.1)
    };
    for sport in 1000..1020 {
        let q = udp_frame(RIP, sport, OUT, 53, b"q");
        let v = e.out(&s, &q, 0).0;
        if sport < 1010 {
            assert_eq!(v, LbVerdict::Tx { port: 0 });
        } else {
            assert_eq!(v, LbVerdict::Drop(LbDrop::SnatLimit));
        }
    }
    assert_eq!(e.rule_counts(0), (10, 10, 10));
    assert_eq!(refused(&e), 10);
    // the second rule has no limit of its own: all rules together stop
    // at half the table (512), whatever the flood
    let bound = e.w.snat_bound();
    assert_eq!(bound, 512);
    let mut sent = 0;
    for n in 0..2000u32 {
        let src = [10, 0, 1, (n % 200) as u8 + 1];
        let q = udp_frame(src, 2000 + (n / 200) as u16, OUT, 53, b"q");
        if e.out(&s, &q, 0).0 == (LbVerdict::Tx { port: 0 }) {
            sent += 1;
        }
    }
    assert_eq!(sent, bound - 10);
    assert_eq!(e.w.table6().len(), bound);
    assert_eq!(e.w.stats().snat_live.load(Relaxed), bound);
    assert_eq!(refused(&e), 10 + 2000 - (bound as u64 - 10));
    assert_eq!(e.w.stats().evicted.load(Relaxed), 0);
    // UDP's timeout (300 s) later they are gone, and room is made
    e.w.expire6(301 * S, 1 << 20);
    assert_eq!(e.w.stats().snat_live.load(Relaxed), 0);
    let q = udp_frame([10, 0, 1, 9], 9999, OUT, 53, b"q");
    assert_eq!(e.out(&s, &q, 302 * S).0, LbVerdict::Tx { port: 0 });
}

/// ICMP errors both ways: one about a connection's packet out
/// (fragmentation needed from a router, to the pool address) reaches the
/// real server from that router, quoting its own packet (real server →
/// destination); one from the real server about a reply (port
/// unreachable) leaves from the pool address quoting destination → pool
/// address and port.
#[test]
fn snat_icmp_error_translated() {
    let mut e = env_of(1024, 0, 1);
    let s = e.snap(1, |b| {
        b.snat(&[rule("10.0.0.0/24", &[POOL], 0)]);
    });
    let syn = tcp_frame(RIP, 33000, OUT, 443, SYN, b"", 64, true);
    let (_, sent) = e.out(&s, &syn, 0);
    let lport = seen(&sent).1;
    let err = icmp_error(GW, POOL, 3, 4, [0, 0, 5, 0xdc], &sent[14..54]);
    let (v, out) = e.reply_in(&s, &err, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    verify(&out);
    let m = meta_of(&out);
    assert_eq!((m.key.src, m.key.dst), (ip(GW), ip(RIP)));
    let q = m.icmp.expect("a quote").inner_key;
    assert_eq!(
        (q.src, q.sport, q.dst, q.dport),
        (ip(RIP), 33000, ip(OUT), 443)
    );
    assert_eq!(&out[(m.l4_off as usize) + 4..][..4], &[0, 0, 5, 0xdc]);
    // the reply as dirigo sent it to the real server, and the real
    // server's error about it
    let reply = tcp_frame(OUT, 443, POOL, lport, SYN | ACK, b"", 64, true);
    let (_, back) = e.reply_in(&s, &reply, S);
    let err = icmp_error(RIP, OUT, 3, 3, [0; 4], &back[14..54]);
    let (v, out) = e.out(&s, &err, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    verify(&out);
    let m = meta_of(&out);
    assert_eq!((m.key.src, m.key.dst), (ip(POOL), ip(OUT)));
    let q = m.icmp.expect("a quote").inner_key;
    assert_eq!(
        (q.src, q.sport, q.dst, q.dport),
        (ip(OUT), 443, ip(POOL), lport)
    );
    // an error quoting no connection, or from a source of no rule: not ours
    let other = tcp_frame(OUT, 443, RIP, 1, ACK, b"", 64, true);
    let err = icmp_error(RIP, OUT, 3, 3, [0; 4], &other[14..54]);
    assert_eq!(e.out(&s, &err, S).0, LbVerdict::NotForUs);
    let err = icmp_error([10, 0, 9, 9], OUT, 3, 3, [0; 4], &back[14..54]);
    assert_eq!(e.out(&s, &err, S).0, LbVerdict::NotForUs);
}

#[test]
fn snat_rules_refused_by_the_snapshot() {
    let mut e = env_of(1024, 0, 1);
    let mut refused = |f: &dyn Fn(&mut SnapshotBuilder)| {
        let mut b = SnapshotBuilder::new();
        f(&mut b);
        match b.build(&mut e.ids, 1) {
            Err(BuildError::Snat(m)) => m,
            other => panic!("{other:?}"),
        }
    };
    let m = refused(&|b| {
        b.snat(&[
            rule("10.0.0.0/16", &[POOL], 0),
            rule("10.0.5.0/24", &[POOL2], 0),
        ]);
    });
    assert!(m.contains("overlaps"), "{m}");
    let m = refused(&|b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Nat, 1)]);
        b.snat(&[rule("10.0.0.0/24", &[VIP], 0)]);
    });
    assert!(m.contains("is a VIP"), "{m}");
    let m = refused(&|b| {
        b.snat(&[rule("10.0.0.0/24", &[], 0)]);
    });
    assert!(m.contains("no address"), "{m}");
    let m = refused(&|b| {
        b.snat(&[rule("10.0.0.0/24", &[[10, 0, 0, 9]], 0)]);
    });
    assert!(m.contains("inside the source"), "{m}");
    let m = refused(&|b| {
        b.snat(&[SnatRule {
            source: "2001:db8::/64".parse().unwrap(),
            pool: vec!["2001:db8:1::1".parse().unwrap()],
            max_conns: 0,
            port_lo: 1024,
            port_hi: 65535,
        }]);
    });
    assert!(m.contains("IPv6"), "{m}");
    let m = refused(&|b| {
        b.snat(&[SnatRule {
            source: "10.0.0.0/24".parse().unwrap(),
            pool: vec!["2001:db8:1::1".parse().unwrap()],
            max_conns: 0,
            port_lo: 1024,
            port_hi: 65535,
        }]);
    });
    assert!(m.contains("different families"), "{m}");
}

/// A rule's own port range: worker 1 of 2 takes only its ports of
/// 20000..=20019 (the odd ones, 10 per pool address), then refuses.
#[test]
fn snat_port_range_of_the_rule() {
    let mut e = env_of(1024, 1, 2);
    let mut r = rule("10.0.0.0/24", &[POOL], 0);
    (r.port_lo, r.port_hi) = (20000, 20019);
    let s = e.snap(1, |b| {
        b.snat(&[r]);
    });
    let mut ports = std::collections::BTreeSet::new();
    let mut refused = 0;
    for sport in 3000..3020 {
        let q = udp_frame(RIP, sport, OUT, 53, b"q");
        match e.out(&s, &q, 0) {
            (LbVerdict::Tx { .. }, out) => {
                ports.insert(seen(&out).1);
            }
            (LbVerdict::Drop(LbDrop::SnatPortsExhausted), _) => refused += 1,
            (v, _) => panic!("{v:?}"),
        }
    }
    let want: std::collections::BTreeSet<u16> = (20000..=20019).filter(|p| p % 2 == 1).collect();
    assert_eq!(ports, want);
    assert_eq!(refused, 10);
}

/// The census counts SNAT connections every way too (their rules'
/// counter standing for a real server's), established ones as active.
#[test]
fn snat_census_consistent() {
    let mut e = env_of(1024, 0, 1);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Nat, 1)]);
        b.snat(&[rule("10.0.0.0/24", &[POOL], 0)]);
    });
    let syn = tcp_frame(RIP, 33000, OUT, 443, SYN, b"", 64, true);
    let lport = seen(&e.out(&s, &syn, 0).1).1;
    let synack = tcp_frame(OUT, 443, POOL, lport, SYN | ACK, b"", 64, true);
    e.reply_in(&s, &synack, 0);
    let ack = tcp_frame(RIP, 33000, OUT, 443, ACK, b"", 64, true);
    e.out(&s, &ack, 0);
    e.out(&s, &udp_frame(RIP, 5000, OUT, 53, b"q"), 0);
    e.send(&s, &tcp(SYN, 7000), 0);
    let c = e.w.census();
    assert_eq!((c.entries, c.walked_active, c.active), (3, 1, 1), "{c:?}");
    assert!(c.consistent(), "{c:?}");
}
