use super::*;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::{LbIds, SnapshotBuilder};
use crate::lb::spec::{Proto, ServiceKey, ServiceSpec, Timeouts};
use crate::lb::stats::sum_dest;
use crate::lb::testutil::V4 as _;
use crate::lb::testutil::*;
use crate::net::buf::VecBuf;
use crate::net::meta::tcp_flags::{ACK, FIN, PSH, RST, SYN};
use std::net::Ipv4Addr;

const S: u64 = 1_000_000_000;

fn svc(proto: Proto, port: u16) -> ServiceSpec {
    ServiceSpec {
        key: ServiceKey {
            proto,
            vip: std::net::IpAddr::V4(Ipv4Addr::from(VIP)),
            port,
        },
        sched: SchedKind::Rr,
        flags: SchedFlags::default(),
        persistent: None,
        netmask: Ipv4Addr::BROADCAST,
        prefix6: 128,
        synproxy: false,
    }
}

struct Env {
    ids: LbIds,
    w: Balancer,
    eg: FakeEgress,
}

fn env(cap: u32) -> Env {
    let ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        conn_capacity: cap,
        seed: 42,
        icmp_rate: 1,
        icmp_burst: 2,
        persist_capacity: 0,
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
    fn snap(&mut self, epoch: u64, f: impl FnOnce(&mut SnapshotBuilder)) -> Snapshot {
        let mut b = SnapshotBuilder::new();
        f(&mut b);
        b.build(&mut self.ids, epoch).unwrap()
    }
    fn send(&mut self, snap: &Snapshot, frame: &[u8], now: u64) -> (LbVerdict, Vec<u8>) {
        let m = meta_of(frame);
        let mut b = VecBuf::new(frame);
        let v = self.w.process(snap, &self.eg, &mut b, &m, now);
        (v, b.to_vec())
    }
    fn load(&self, snap: &Snapshot, si: usize, di: usize) -> (u64, u64) {
        let st = self.w.stats();
        let t = sum_dest(&[&st], snap.services()[si].dests[di].id);
        (t.active, t.inactive)
    }
    fn states(&self, now: u64) -> Vec<(&'static str, u32)> {
        self.w.conns(now).map(|c| (c.state, c.expires_s)).collect()
    }
}

fn tcp(flags: u8, cport: u16) -> Vec<u8> {
    tcp_frame(CLIENT, cport, VIP, 80, flags, b"", 64, true)
}

fn with_eth(mut f: Vec<u8>, dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    f[0..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f
}

#[test]
fn dr_connection_lifecycle_and_counters() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    let syn = tcp(SYN, 40000);
    let (v, out) = e.send(&s, &syn, 10 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(out, with_eth(syn, mac_of(RIP), OUR_MAC));
    verify(&out);
    assert_eq!(e.states(10 * S), [("SYN_RECV", 60)]);
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    let (v, _) = e.send(&s, &tcp(ACK, 40000), 11 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(e.states(11 * S), [("ESTABLISHED", 900)]);
    assert_eq!(e.load(&s, 0, 0), (1, 0));
    e.send(&s, &tcp(FIN | ACK, 40000), 12 * S);
    assert_eq!(e.states(12 * S), [("FIN_WAIT", 120)]);
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    let st = e.w.stats();
    let t = sum_dest(&[&st], s.services()[0].dests[0].id);
    assert_eq!((t.conns, t.pkts_in, t.bytes_in, t.pkts_out), (1, 3, 120, 0));
    assert_eq!(st.epoch_seen.load(Relaxed), 1);
}

#[test]
fn nat_full_table_both_directions() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
    });
    let (v, out) = e.send(&s, &tcp(SYN, 40000), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let want = with_eth(
        tcp_frame(CLIENT, 40000, RIP, 8080, SYN, b"", 63, true),
        mac_of(RIP),
        OUR_MAC,
    );
    assert_eq!(out, want);
    // SYN-ACK from the real server, translated back to the VIP
    let synack = tcp_frame(RIP, 8080, CLIENT, 40000, SYN | ACK, b"", 64, true);
    let (v, out) = e.send(&s, &synack, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let want = with_eth(
        tcp_frame(VIP, 80, CLIENT, 40000, SYN | ACK, b"", 63, true),
        GW_MAC,
        OUR_MAC,
    );
    assert_eq!(out, want);
    verify(&out);
    assert_eq!(e.states(S), [("SYN_RECV", 60)]);
    e.send(&s, &tcp(ACK, 40000), 2 * S);
    assert_eq!(e.states(2 * S), [("ESTABLISHED", 900)]);
    // server closes first: output FIN -> FIN_WAIT, then input ACK keeps it
    let fin = tcp_frame(RIP, 8080, CLIENT, 40000, FIN | ACK, b"", 64, true);
    e.send(&s, &fin, 3 * S);
    assert_eq!(e.states(3 * S), [("FIN_WAIT", 120)]);
    e.send(&s, &tcp(FIN | ACK, 40000), 4 * S);
    assert_eq!(e.states(4 * S), [("TIME_WAIT", 120)]);
    let st = e.w.stats();
    let t = sum_dest(&[&st], s.services()[0].dests[0].id);
    assert_eq!((t.pkts_in, t.pkts_out), (3, 2));
}

#[test]
fn udp_nat_and_timeout() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Udp, 53), vec![dest(RIP, 0, Method::Nat, 1)]);
    });
    let q = udp_frame(CLIENT, 5353, VIP, 53, b"q");
    let (v, out) = e.send(&s, &q, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    verify(&out);
    assert_eq!(&out[30..34], &RIP);
    assert_eq!(e.states(0), [("UDP", 300)]);
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    assert_eq!(e.w.expire(300 * S - 1, 1000), 0);
    assert_eq!(e.w.expire(300 * S, 1000), 1);
    assert_eq!(e.load(&s, 0, 0), (0, 0));
    assert_eq!(e.w.table().len(), 0);
}

#[test]
fn tun_forward_and_frag_needed_rate_limited() {
    let mut e = env(64);
    e.eg.mtu = 1500;
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Tun, 1)]);
    });
    let (v, out) = e.send(&s, &tcp(SYN, 40000), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(out.len(), 54 + 20);
    assert_eq!(out[23], 4);
    verify(&out);
    e.send(&s, &tcp(ACK, 40000), 0);
    let big = tcp_frame(CLIENT, 40000, VIP, 80, ACK, &[7u8; 1460], 64, true);
    let (v, out) = e.send(&s, &big, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    assert_eq!(&out[23], &1, "ICMP");
    assert_eq!((out[34], out[35]), (3, 4));
    assert_eq!(&out[40..42], &1480u16.to_be_bytes());
    assert_eq!(&out[26..30], &VIP);
    assert_eq!(&out[30..34], &CLIENT);
    verify(&out);
    e.send(&s, &big, S);
    let (v, _) = e.send(&s, &big, S);
    assert_eq!(v, LbVerdict::Drop(LbDrop::IcmpRateLimited));
    assert_eq!(e.w.stats().icmp_frag_sent.load(Relaxed), 2);
    // still established: the packets counted as input, state unchanged
    assert_eq!(e.states(S)[0].0, "ESTABLISHED");
}

#[test]
fn weight_zero_quiesces() {
    let mut e = env(256);
    let a = dest(RIP, 0, Method::Dr, 1);
    let b2 = dest(RIP2, 0, Method::Dr, 1);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![a.clone(), b2.clone()]);
    });
    e.send(&s, &tcp(SYN, 1), 0);
    e.send(&s, &tcp(SYN, 2), 0);
    let mut a0 = a.clone();
    a0.weight = 0;
    let s2 = e.snap(2, |b| {
        b.service(svc(Proto::Tcp, 80), vec![a0, b2]);
    });
    assert_eq!(
        s2.services()[0].dests[0].id,
        s.services()[0].dests[0].id,
        "stable slot"
    );
    for p in 10..20 {
        let (_, out) = e.send(&s2, &tcp(SYN, p), S);
        assert_eq!(
            &out[0..6],
            &mac_of(RIP2),
            "no new connection to a weight-0 server"
        );
    }
    // the existing connection to RIP continues
    let which: Vec<_> = e.w.conns(S).filter(|c| c.client.port() == 1).collect();
    let (v, out) = e.send(&s2, &tcp(ACK, which[0].client.port()), 2 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(
        &out[0..6],
        &mac_of(u32::from(which[0].rs.ip().v4()).to_be_bytes())
    );
    assert_eq!(
        e.load(&s2, 0, 0).0 + e.load(&s2, 0, 1).0,
        1,
        "the ACKed one is active"
    );
    let total: u64 = (0..2)
        .map(|i| {
            let (x, y) = e.load(&s2, 0, i);
            x + y
        })
        .sum();
    assert_eq!(total, 12);
    // all weights 0: no destination
    let s3 = e.snap(3, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 0)]);
    });
    let (v, _) = e.send(&s3, &tcp(SYN, 99), S);
    assert_eq!(v, LbVerdict::Drop(LbDrop::NoDest));
}

#[test]
fn thresholds_overload_and_clear() {
    let mut e = env(256);
    let mut a = dest(RIP, 0, Method::Dr, 1);
    a.upper = 2;
    a.lower = 1;
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![a]);
    });
    assert_eq!(e.send(&s, &tcp(SYN, 1), 0).0, LbVerdict::Tx { port: 1 });
    assert_eq!(e.send(&s, &tcp(SYN, 2), 0).0, LbVerdict::Tx { port: 1 });
    assert_eq!(
        e.send(&s, &tcp(SYN, 3), 0).0,
        LbVerdict::Drop(LbDrop::NoDest)
    );
    e.send(&s, &tcp(ACK, 1), 0);
    e.send(&s, &tcp(ACK, 2), 0);
    assert_eq!(e.load(&s, 0, 0), (2, 0));
    // one connection reset: total 1, not below lower (1): still overloaded
    e.send(&s, &tcp(RST, 1), S);
    e.w.expire(20 * S, 1000); // CLOSE lasts 10 s
    assert_eq!(e.load(&s, 0, 0), (1, 0));
    assert_eq!(
        e.send(&s, &tcp(SYN, 4), 20 * S).0,
        LbVerdict::Drop(LbDrop::NoDest)
    );
    e.send(&s, &tcp(RST, 2), 21 * S);
    e.w.expire(40 * S, 1000);
    assert_eq!(
        e.send(&s, &tcp(SYN, 5), 40 * S).0,
        LbVerdict::Tx { port: 1 }
    );
}

#[test]
fn table_full_drops_new_flows_and_evicts_embryonic() {
    let mut e = env(2);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    for p in [1, 2] {
        e.send(&s, &tcp(SYN, p), 0);
        e.send(&s, &tcp(ACK, p), 0);
    }
    let (v, _) = e.send(&s, &tcp(SYN, 3), 0);
    assert_eq!(v, LbVerdict::Drop(LbDrop::TableFull));
    assert_eq!(e.load(&s, 0, 0), (2, 0));
    // with an embryonic entry, the newest flow takes its place
    let mut e = env(1);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    e.send(&s, &tcp(SYN, 1), 0);
    // not while its handshake may still complete (EMBRYONIC_GRACE_MS)...
    let (v, _) = e.send(&s, &tcp(SYN, 2), S);
    assert_eq!(v, LbVerdict::Drop(LbDrop::TableFull));
    assert_eq!(e.w.stats().evicted.load(Relaxed), 0);
    // ...but once it has been idle that long
    let (v, _) = e.send(&s, &tcp(SYN, 2), 3 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(e.w.stats().evicted.load(Relaxed), 1);
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    let st = e.w.stats();
    assert_eq!(st.drops[LbDrop::TableFull.index()].load(Relaxed), 1);
}

/// Issue 23: a handshake in progress survives a SYN flood that overflows
/// the table many times over. The client's SYN is answered by the real
/// server slowly (its ACK comes 700 ms later); meanwhile 20 x the table's
/// capacity of spoofed SYNs arrive. Evicting the embryonic connection would
/// black-hole it for good (the ACK and all data `not_tracked`); instead
/// the flood's SYNs are refused until embryonic entries have been idle for
/// `EMBRYONIC_GRACE_MS`, after which they are reclaimed again.
#[test]
fn handshake_in_progress_survives_a_syn_flood() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    assert_eq!(e.send(&s, &tcp(SYN, 1), 0).0, LbVerdict::Tx { port: 1 });
    let ms = S / 1000;
    let mut refused = 0;
    for i in 0..64 * 20u64 {
        let now = i * 600 * ms / (64 * 20);
        if e.send(&s, &tcp(SYN, 1000 + i as u16), now).0 == LbVerdict::Drop(LbDrop::TableFull) {
            refused += 1;
        }
    }
    assert!(
        refused >= 64 * 19,
        "the flood was refused, not admitted: {refused}"
    );
    let (v, _) = e.send(&s, &tcp(ACK, 1), 700 * ms);
    assert_eq!(v, LbVerdict::Tx { port: 1 }, "the handshake completes");
    assert!(e.states(700 * ms).contains(&("ESTABLISHED", 900)));
    // once the flood's entries have idled for the grace, new flows evict them
    let (v, _) = e.send(&s, &tcp(SYN, 9), 3 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(e.w.stats().evicted.load(Relaxed), 1);
}

#[test]
fn not_a_service_not_for_us_and_drop_reasons() {
    let mut e = env(16);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    let f = tcp_frame(CLIENT, 1, VIP, 81, SYN, b"", 64, false);
    assert_eq!(e.send(&s, &f, 0).0, LbVerdict::Drop(LbDrop::NotAService));
    let f = udp_frame(CLIENT, 1, VIP, 80, b"");
    assert_eq!(e.send(&s, &f, 0).0, LbVerdict::Drop(LbDrop::NotAService));
    let f = tcp_frame(CLIENT, 1, [192, 0, 2, 11], 80, SYN, b"", 64, false);
    assert_eq!(e.send(&s, &f, 0).0, LbVerdict::NotForUs);
    assert_eq!(
        e.send(&s, &tcp(SYN | RST, 5), 0).0,
        LbVerdict::Drop(LbDrop::NotTracked)
    );
    // an unresolved next hop is handed back, packet untouched, not counted
    e.eg.unresolved = vec![ip(RIP)];
    let syn = tcp(SYN, 6);
    let (v, out) = e.send(&s, &syn, 0);
    assert_eq!(
        v,
        LbVerdict::Unresolved {
            ip: ip(RIP),
            port: 1
        }
    );
    assert_eq!(out, syn, "left as it was, to be processed again");
    e.eg.unresolved.clear();
    e.eg.noroute = vec![ip(RIP)];
    assert_eq!(
        e.send(&s, &tcp(ACK, 6), 0).0,
        LbVerdict::Drop(LbDrop::NoRoute)
    );
    let st = e.w.stats();
    let counts: Vec<_> = st.drop_counts().filter(|(_, n)| *n > 0).collect();
    assert_eq!(
        counts,
        [("not_a_service", 2), ("no_route", 1), ("not_tracked", 1)]
    );
}

#[test]
fn icmp_errors_follow_connections() {
    let mut e = env(16);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
        b.service(svc(Proto::Tcp, 443), vec![dest(RIP2, 8443, Method::Nat, 1)]);
    });
    e.send(&s, &tcp(SYN, 1000), 0);
    // a router near the client complains about VIP:80 -> client:1000 (sent by the RS)
    let sent = tcp_frame(VIP, 80, CLIENT, 1000, ACK, b"", 60, true);
    let err = icmp_error([203, 0, 113, 5], VIP, 3, 4, [0, 0, 5, 0xdc], &sent[14..42]);
    let (v, out) = e.send(&s, &err, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(out, with_eth(err, mac_of(RIP), OUR_MAC));
    // untracked quote: the stack's business
    let other = tcp_frame(VIP, 80, CLIENT, 1001, ACK, b"", 60, true);
    let err = icmp_error([203, 0, 113, 5], VIP, 3, 4, [0; 4], &other[14..42]);
    assert_eq!(e.send(&s, &err, 0).0, LbVerdict::NotForUs);
    // NAT: the real server reports port unreachable about client -> RIP2:8443
    let f = tcp_frame(CLIENT, 2000, VIP, 443, SYN, b"", 64, true);
    e.send(&s, &f, 0);
    let fwd = tcp_frame(CLIENT, 2000, RIP2, 8443, SYN, b"", 63, true);
    let err = icmp_error(RIP2, CLIENT, 3, 3, [0; 4], &fwd[14..42]);
    let (v, out) = e.send(&s, &err, 0);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    verify(&out);
    assert_eq!(&out[26..30], &VIP);
    assert_eq!(&out[42 + 16..42 + 20], &VIP);
    assert_eq!(&out[64..66], &443u16.to_be_bytes());
}

#[test]
fn removed_real_server_and_expire_nodest_conn() {
    for expire in [false, true] {
        let mut e = env(16);
        let s = e.snap(1, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
        });
        e.send(&s, &tcp(SYN, 1), 0);
        let s2 = e.snap(2, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP2, 0, Method::Dr, 1)]);
            b.expire_nodest_conn(expire);
        });
        let (v, out) = e.send(&s2, &tcp(ACK, 1), S);
        if expire {
            assert_eq!(v, LbVerdict::Drop(LbDrop::DestRemoved));
            assert_eq!(e.w.table().len(), 0);
        } else {
            assert_eq!(v, LbVerdict::Tx { port: 1 });
            assert_eq!(&out[0..6], &mac_of(RIP));
        }
        // the old slot is retired, not reusable while the connection lives
        let st = e.w.stats();
        let live = crate::lb::stats::dest_in_use(&[&st], 0);
        assert_eq!(live, !expire);
        assert_eq!(
            e.ids
                .dests
                .reclaim(2, |slot| crate::lb::stats::dest_in_use(&[&st], slot)),
            usize::from(expire)
        );
    }
}

#[test]
fn syn_reuses_time_wait_connection() {
    let mut e = env(16);
    let s = e.snap(1, |b| {
        b.service(
            svc(Proto::Tcp, 80),
            vec![dest(RIP, 0, Method::Dr, 1), dest(RIP2, 0, Method::Dr, 1)],
        );
    });
    e.send(&s, &tcp(SYN, 1), 0);
    e.send(&s, &tcp(ACK, 1), 0);
    e.send(&s, &tcp(FIN | ACK, 1), 0);
    e.send(&s, &tcp(FIN | ACK, 1), 0); // FIN_WAIT stays; RST closes
    e.send(&s, &tcp(RST, 1), 0);
    assert_eq!(e.states(0)[0].0, "CLOSE");
    let before = e.w.conns(0).next().map(|c| c.rs);
    e.send(&s, &tcp(SYN, 1), S);
    let after: Vec<_> = e.w.conns(S).collect();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].state, "SYN_RECV");
    assert_ne!(Some(after[0].rs), before, "rescheduled (rr moves on)");
}

#[test]
fn tun_icmp_error_forwarded_encapsulated() {
    let mut e = env(16);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Tun, 1)]);
        b.tunnel_src(Some(Ipv4Addr::new(10, 0, 0, 77)));
    });
    e.send(&s, &tcp(SYN, 1000), 0);
    let sent = tcp_frame(VIP, 80, CLIENT, 1000, ACK, b"", 60, true);
    let err = icmp_error([203, 0, 113, 5], VIP, 11, 0, [0; 4], &sent[14..42]);
    let (v, out) = e.send(&s, &err, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(&out[0..6], &mac_of(RIP));
    assert_eq!(out[23], 4, "IPIP");
    assert_eq!(&out[26..30], &[10, 0, 0, 77], "configured tunnel source");
    assert_eq!(&out[30..34], &RIP);
    assert_eq!(&out[34..], &err[14..], "inner ICMP untouched");
    verify(&out);
}

#[test]
fn vlan_tagged_tun_keeps_tag() {
    let mut e = env(16);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Tun, 1)]);
    });
    let plain = tcp(SYN, 7);
    let mut tagged = plain[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    tagged.extend_from_slice(&plain[12..]);
    let mut m = meta_of(&plain);
    m.vlan = Some(5);
    m.l3_off += 4;
    m.l4_off += 4;
    let mut b = VecBuf::new(&tagged);
    let v = e.w.process(&s, &e.eg, &mut b, &m, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let out = b.to_vec();
    assert_eq!(&out[12..18], &[0x81, 0x00, 0x00, 0x05, 0x08, 0x00]);
    assert_eq!(out[18], 0x45);
    assert_eq!(&out[38..], &plain[14..]);
}

proptest::proptest! {
    /// Whatever the frame and however inconsistent the metadata, the core
    /// never panics (every offset is checked).
    #[test]
    fn never_panics(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120),
        l3 in 0u16..140, l4 in 0u16..160, ip_len in 0u16..2000,
        sport in 0u16..3, dport in proptest::sample::select(vec![80u16, 443, 53]),
        proto in proptest::sample::select(vec![6u8, 17, 1]),
        flags in proptest::prelude::any::<u8>(), df in proptest::prelude::any::<bool>(),
        quote in proptest::option::of((0u16..160, 0u16..160)),
        mtu in 0u16..1600,
    ) {
        let mut e = env(8);
        e.eg.mtu = mtu;
        let s = e.snap(1, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Tun, 1)]);
            b.service(svc(Proto::Tcp, 443), vec![dest(RIP, 8443, Method::Nat, 1)]);
            b.service(svc(Proto::Udp, 53), vec![dest(RIP, 0, Method::Dr, 1)]);
        });
        let key = crate::net::meta::FlowKey { src: ip(CLIENT), dst: ip(VIP), sport, dport, proto };
        let m = PacketMeta {
            port: 0, vlan: None, l3_off: l3, l4_off: l4, ip_len, key, tcp_flags: flags, ttl: 64, df,
            icmp: quote.map(|(a, b)| crate::net::meta::IcmpQuote {
                icmp_type: 3, code: 4, inner_l3_off: a, inner_l4_off: b, inner_key: key.reversed(),
            }),
        };
        for now in [0, S] {
            let mut b = VecBuf::with_room(&bytes, 20, 40);
            let _ = e.w.process(&s, &e.eg, &mut b, &m, now);
            // also with a tracked connection behind it
            let mut m2 = m;
            m2.icmp = None;
            m2.tcp_flags = crate::net::meta::tcp_flags::SYN;
            let mut b = VecBuf::with_room(&bytes, 20, 40);
            let _ = e.w.process(&s, &e.eg, &mut b, &m2, now);
            let mut b = VecBuf::with_room(&bytes, 20, 40);
            let _ = e.w.process(&s, &e.eg, &mut b, &m, now);
        }
    }
}

mod burst;
mod loads;
mod persist;
mod pins;
mod sync;
mod synproxy;
mod timeouts;
mod v6;

#[test]
fn drop_reason_names() {
    crate::counters::check::<LbDrop>();
    assert!(LbDrop::ALL.iter().all(|d| d.is_drop()));
    // listed as `lb_<name>` by `dirigoctl drops`: the names never change
    let names: Vec<_> = LbDrop::ALL.iter().map(|d| d.name()).collect();
    assert_eq!(
        names.join(" "),
        "not_a_service no_dest table_full no_route not_tracked too_big \
         icmp_rate_limited ttl_exceeded no_room malformed dest_removed \
         synproxy_cookie_invalid synproxy_cookie_expired nat64_ports_exhausted"
    );
}

/// Every way a packet leaves names its own unresolved next hop: the real
/// server (on-link, port 1) for requests and for ICMP errors forwarded to
/// it, the client's gateway (port 0) for NAT replies, translated ICMP
/// errors and TUN's fragmentation-needed; the packet is left as it was and
/// nothing is counted as dropped.
#[test]
fn unresolved_next_hop_named_for_every_path() {
    let mut e = env(64);
    e.eg.mtu = 1500;
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Tun, 1)]);
        b.service(svc(Proto::Tcp, 443), vec![dest(RIP2, 8443, Method::Nat, 1)]);
        b.service(svc(Proto::Tcp, 22), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    let rs = |a| LbVerdict::Unresolved { ip: ip(a), port: 1 };
    let gw = LbVerdict::Unresolved {
        ip: ip(GW),
        port: 0,
    };
    let check = |e: &mut Env, frame: &[u8], unresolved: [u8; 4], want: LbVerdict| {
        e.eg.unresolved = vec![ip(unresolved)];
        let (v, out) = e.send(&s, frame, S);
        e.eg.unresolved.clear();
        assert_eq!(v, want);
        assert_eq!(out, frame, "left as it was");
    };
    // requests: to the real server
    let tun_syn = tcp(SYN, 40000);
    check(&mut e, &tun_syn, RIP, rs(RIP));
    let nat_syn = tcp_frame(CLIENT, 2000, VIP, 443, SYN, b"", 64, true);
    check(&mut e, &nat_syn, RIP2, rs(RIP2));
    let dr_syn = tcp_frame(CLIENT, 3000, VIP, 22, SYN, b"", 64, true);
    check(&mut e, &dr_syn, RIP, rs(RIP));
    for f in [&tun_syn, &nat_syn, &dr_syn] {
        assert!(matches!(e.send(&s, f, S).0, LbVerdict::Tx { .. }));
    }
    // a NAT reply: to the client, via its gateway
    let synack = tcp_frame(RIP2, 8443, CLIENT, 2000, SYN | ACK, b"", 64, true);
    check(&mut e, &synack, CLIENT, gw);
    // TUN, too big with DF: fragmentation-needed goes back to the client
    let big = tcp_frame(CLIENT, 40000, VIP, 80, ACK, &[7u8; 1460], 64, true);
    check(&mut e, &big, CLIENT, gw);
    // ICMP errors: forwarded to a DR real server, translated to the client
    let sent = tcp_frame(VIP, 22, CLIENT, 3000, ACK, b"", 60, true);
    let err = icmp_error([203, 0, 113, 5], VIP, 3, 4, [0, 0, 5, 0xdc], &sent[14..42]);
    check(&mut e, &err, RIP, rs(RIP));
    let fwd = tcp_frame(CLIENT, 2000, RIP2, 8443, SYN, b"", 63, true);
    let err = icmp_error(RIP2, CLIENT, 3, 3, [0; 4], &fwd[14..42]);
    check(&mut e, &err, CLIENT, gw);
    let st = e.w.stats();
    assert!(
        st.drop_counts().all(|(_, n)| n == 0),
        "holding is not dropping"
    );
}

/// The established shortcut (DR and TUN requests) writes what the general
/// path writes: the same frames, verdicts, states, timers and counters as a
/// balancer whose snapshot sends every packet the general way
/// (`expire_nodest_conn` on, with its real server present, changes nothing
/// else).
#[test]
fn established_shortcut_writes_what_the_general_path_writes() {
    for method in [Method::Dr, Method::Tun, Method::Nat] {
        let rport = if method == Method::Nat { 8080 } else { 0 };
        let mut short = env(64);
        let mut general = env(64);
        let s1 = short.snap(1, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP, rport, method, 1)]);
        });
        let s2 = general.snap(1, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP, rport, method, 1)]);
            b.expire_nodest_conn(true);
        });
        let frames = [
            (tcp(SYN, 5), 0),
            (tcp(ACK, 5), S),
            (
                tcp_frame(CLIENT, 5, VIP, 80, ACK | PSH, b"GET /", 64, true),
                2 * S,
            ),
            (tcp(ACK, 5), 3 * S),
            (tcp(SYN | ACK, 5), 4 * S),
            (tcp(ACK, 6), 5 * S),
            (tcp(FIN | ACK, 5), 6 * S),
            (tcp(ACK, 5), 7 * S),
        ];
        let mut after_ack = None;
        for (i, (f, now)) in frames.iter().enumerate() {
            let a = short.send(&s1, f, *now);
            let b = general.send(&s2, f, *now);
            assert_eq!(a, b, "{method:?} frame {i}");
            assert_eq!(short.states(*now), general.states(*now), "{method:?} {i}");
            assert_eq!(
                short.load(&s1, 0, 0),
                general.load(&s2, 0, 0),
                "{method:?} {i}"
            );
            if i == 1 || i == 3 {
                // each established ACK restarts the timer: as long to go
                // after the second as after the first
                let st = short.states(*now);
                assert_eq!(st[0].0, "ESTABLISHED");
                assert_eq!(*after_ack.get_or_insert(st[0].1), st[0].1, "{method:?}");
            }
        }
        let (a, b) = (short.w.stats(), general.w.stats());
        assert_eq!(
            sum_dest(&[&a], s1.services()[0].dests[0].id),
            sum_dest(&[&b], s2.services()[0].dests[0].id),
            "{method:?}"
        );
    }
}
