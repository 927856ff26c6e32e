//! sloppy_tcp and connection sync: what is sent when, what is installed.

use super::*;
use crate::lb::sync::{SyncConn, SyncCount, SyncPolicy, SyncQueue};

fn count(e: &Env, c: SyncCount) -> u64 {
    e.w.stats().sync[c.index()].load(Relaxed)
}

fn with_sync(e: &mut Env, policy: SyncPolicy) -> Arc<SyncQueue> {
    let q = Arc::new(SyncQueue::new(64));
    e.w.set_sync(Some((q.clone(), policy)));
    q
}

fn drain(q: &SyncQueue) -> Vec<SyncConn> {
    std::iter::from_fn(|| q.pop()).collect()
}

fn dr_service(b: &mut SnapshotBuilder) {
    b.service(
        svc(Proto::Tcp, 80),
        vec![dest(RIP, 0, Method::Dr, 1), dest(RIP2, 0, Method::Dr, 1)],
    );
}

pub(super) fn synced(state: TcpState, daddr: [u8; 4], cport: u16) -> SyncConn {
    SyncConn {
        v6: false,
        proto: PROTO_TCP,
        state: state as u8,
        no_output: true,
        method: Some(Method::Dr),
        template: false,
        caddr: ip(CLIENT).into(),
        vaddr: ip(VIP).into(),
        daddr: ip(daddr).into(),
        cport,
        vport: 80,
        dport: 80,
        timeout_s: 900,
    }
}

#[test]
fn sloppy_tcp_takes_over_mid_stream_flows() {
    let mut e = env(64);
    let strict = e.snap(1, dr_service);
    assert_eq!(
        e.send(&strict, &tcp(ACK, 1000), S).0,
        LbVerdict::Drop(LbDrop::NotTracked)
    );
    let sloppy = e.snap(2, |b| {
        dr_service(b);
        b.sloppy_tcp(true);
    });
    let (v, out) = e.send(&sloppy, &tcp(ACK | PSH, 1000), S);
    assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
    assert!(out[0..6] == mac_of(RIP) || out[0..6] == mac_of(RIP2));
    // taken over established: active at once, the established timeout
    assert_eq!(e.states(S), [("ESTABLISHED", 900)]);
    assert_eq!(e.load(&sloppy, 0, 0).0 + e.load(&sloppy, 0, 1).0, 1);
    // an RST never creates a connection
    assert_eq!(
        e.send(&sloppy, &tcp(RST, 1001), S).0,
        LbVerdict::Drop(LbDrop::NotTracked)
    );
    assert_eq!(e.w.table().len(), 1);
}

#[test]
fn sloppy_mh_picks_the_same_server_whatever_the_order() {
    let servers = [RIP, RIP2, [10, 0, 0, 23], [10, 0, 0, 24]];
    let picks = |order: &[usize]| -> Vec<[u8; 6]> {
        let mut e = env(4096);
        let s = e.snap(1, |b| {
            let mut spec = svc(Proto::Tcp, 80);
            spec.sched = SchedKind::Mh;
            spec.flags.port = true; // mh-port: flows differ by client port
            let ds = order
                .iter()
                .map(|&i| dest(servers[i], 0, Method::Dr, 1))
                .collect();
            b.service(spec, ds);
            b.sloppy_tcp(true);
        });
        (0..500u16)
            .map(|p| {
                let f = tcp_frame(CLIENT, 2000 + p, VIP, 80, ACK, b"x", 64, true);
                let (v, out) = e.send(&s, &f, S);
                assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
                [out[0], out[1], out[2], out[3], out[4], out[5]]
            })
            .collect()
    };
    let a = picks(&[0, 1, 2, 3]);
    assert_eq!(a, picks(&[3, 1, 0, 2]));
    assert_eq!(a, picks(&[2, 3, 1, 0]));
    // and the flows do spread
    let distinct: std::collections::HashSet<_> = a.iter().collect();
    assert_eq!(distinct.len(), 4);
}

#[test]
fn tcp_is_sent_on_state_changes_and_refreshed() {
    let mut e = env(64);
    let q = with_sync(&mut e, SyncPolicy::new(3, 10)); // 2^14 ms = 16.4 s
    let s = e.snap(1, dr_service);
    e.send(&s, &tcp(SYN, 7), S);
    assert!(drain(&q).is_empty(), "a handshake in progress is not sent");
    e.send(&s, &tcp(ACK, 7), S);
    let sent = drain(&q);
    assert_eq!(sent.len(), 1);
    let c = sent[0];
    assert_eq!(
        (c.proto, c.state, c.caddr, c.cport, c.vaddr, c.vport, c.dport),
        (
            PROTO_TCP,
            TcpState::Established as u8,
            ip(CLIENT).into(),
            7,
            ip(VIP).into(),
            80,
            80
        )
    );
    assert!(!c.v6);
    assert!(c.daddr == ip(RIP).into() || c.daddr == ip(RIP2).into());
    assert_eq!(
        (c.method, c.no_output, c.timeout_s),
        (Some(Method::Dr), true, 900)
    );
    // more packets in the same refresh window: nothing
    for _ in 0..10 {
        e.send(&s, &tcp(ACK, 7), S + 1_000_000);
    }
    assert!(drain(&q).is_empty());
    // the expiry crosses a multiple of 2^14 ms once per 16.4 s of traffic
    let mut refreshes = 0;
    for t in 2..60 {
        e.send(&s, &tcp(ACK, 7), t * S);
        refreshes += drain(&q).len();
    }
    assert!(
        (3..=4).contains(&refreshes),
        "{refreshes} refreshes in 58 s"
    );
    e.send(&s, &tcp(FIN | ACK, 7), 61 * S);
    let fin = drain(&q);
    assert_eq!(fin.len(), 1);
    assert_eq!(
        (fin[0].state, fin[0].timeout_s),
        (TcpState::FinWait as u8, 120)
    );
    assert_eq!(count(&e, SyncCount::Queued), 2 + refreshes as u64);
}

#[test]
fn udp_is_sent_at_its_threshold_packet_and_a_full_queue_is_counted() {
    let mut e = env(64);
    let q = Arc::new(SyncQueue::new(1));
    e.w.set_sync(Some((q.clone(), SyncPolicy::new(3, 0))));
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Udp, 53), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    let dns = |p: u16| udp_frame(CLIENT, p, VIP, 53, b"q");
    e.send(&s, &dns(9), S);
    e.send(&s, &dns(9), S);
    assert!(q.is_empty(), "one- and two-packet flows are not sent");
    e.send(&s, &dns(9), S);
    assert_eq!(q.len(), 1);
    for _ in 0..300 {
        e.send(&s, &dns(9), S);
    }
    assert_eq!(
        q.len(),
        1,
        "sent once (no refresh configured), the counter saturates"
    );
    assert_eq!(q.pop().unwrap().proto, PROTO_UDP);
    // a second flow while the queue is full: counted, not waited for
    q.push(SyncConn::default()).unwrap();
    for _ in 0..3 {
        e.send(&s, &dns(10), S);
    }
    assert_eq!(count(&e, SyncCount::QueueFull), 1);
    assert_eq!(e.states(S)[0].0, "UDP");
}

#[test]
fn a_synced_connection_forwards_a_flow_never_seen_here() {
    let mut e = env(64);
    let s = e.snap(1, dr_service);
    e.w.install_synced(&s, &synced(TcpState::Established, RIP2, 4000), S);
    assert_eq!(count(&e, SyncCount::Installed), 1);
    assert_eq!(e.states(S), [("ESTABLISHED", 900)]);
    assert_eq!(e.load(&s, 0, 1), (1, 0), "counted active on its server");
    // the flow's next segment (no SYN, sloppy_tcp off) goes where it went
    for _ in 0..5 {
        let (v, out) = e.send(&s, &tcp(ACK | PSH, 4000), 2 * S);
        assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
        assert_eq!(out[0..6], mac_of(RIP2));
    }
    // used here: this director's own now, a peer's word no longer changes it
    e.w.install_synced(&s, &synced(TcpState::TimeWait, RIP2, 4000), 3 * S);
    assert_eq!(count(&e, SyncCount::LocalKept), 1);
    assert_eq!(e.states(3 * S)[0].0, "ESTABLISHED");
}

#[test]
fn a_copy_is_updated_and_expires_with_its_timeout() {
    let mut e = env(64);
    let s = e.snap(1, dr_service);
    let mut c = synced(TcpState::Established, RIP, 4001);
    e.w.install_synced(&s, &c, 0);
    c.state = TcpState::FinWait as u8;
    c.timeout_s = 5;
    e.w.install_synced(&s, &c, S);
    assert_eq!(count(&e, SyncCount::Updated), 1);
    assert_eq!(e.states(S), [("FIN_WAIT", 5)]);
    assert_eq!(e.load(&s, 0, 0), (0, 1), "no longer active");
    assert_eq!(e.w.expire(6 * S, 64), 1);
    assert_eq!(e.load(&s, 0, 0), (0, 0));
    assert_eq!(e.w.table().len(), 0);
}

#[test]
fn what_cannot_be_installed_is_counted_by_reason() {
    let mut e = env(64);
    let s = e.snap(1, dr_service);
    let mut other_svc = synced(TcpState::Established, RIP, 1);
    other_svc.vport = 443;
    e.w.install_synced(&s, &other_svc, S);
    assert_eq!(count(&e, SyncCount::NoService), 1);
    e.w.install_synced(&s, &synced(TcpState::Established, [10, 0, 0, 99], 2), S);
    assert_eq!(count(&e, SyncCount::NoDest), 1);
    let mut t = synced(TcpState::Established, RIP, 3);
    t.template = true;
    e.w.install_synced(&s, &t, S);
    let mut local = synced(TcpState::Established, RIP, 4);
    local.method = None;
    e.w.install_synced(&s, &local, S);
    let mut bad = synced(TcpState::Established, RIP, 5);
    bad.state = 11;
    e.w.install_synced(&s, &bad, S);
    let mut icmp = synced(TcpState::Established, RIP, 6);
    icmp.proto = 1;
    e.w.install_synced(&s, &icmp, S);
    assert_eq!(count(&e, SyncCount::Unsupported), 4);
    assert_eq!(e.w.table().len(), 0);
}

#[test]
fn a_sync_flood_leaves_room_for_local_connections() {
    let mut e = env(64);
    let s = e.snap(1, dr_service);
    for p in 0..1000u16 {
        e.w.install_synced(&s, &synced(TcpState::Established, RIP, 10_000 + p), S);
    }
    assert_eq!(e.w.table().len(), 56, "7/8 of 64");
    assert_eq!(count(&e, SyncCount::Installed), 56);
    assert_eq!(count(&e, SyncCount::TableFull), 1000 - 56);
    // local SYNs still find records
    for p in 0..8 {
        let (v, _) = e.send(&s, &tcp(SYN, 100 + p), S);
        assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
    }
    assert_eq!(e.w.table().len(), 64);
}

#[test]
fn a_synced_nat_connection_translates_replies() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
    });
    let mut c = synced(TcpState::Established, RIP, 5000);
    c.method = Some(Method::Nat);
    c.no_output = false;
    c.dport = 8080;
    e.w.install_synced(&s, &c, S);
    assert_eq!(count(&e, SyncCount::Installed), 1);
    let reply = tcp_frame(RIP, 8080, CLIENT, 5000, ACK, b"data", 64, true);
    let (v, out) = e.send(&s, &reply, 2 * S);
    assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
    let m = meta_of(&out);
    assert_eq!((m.key.src, m.key.sport), (ip(VIP), 80));
    verify(&out);
}

#[test]
fn the_whole_table_is_sent_again_in_slices_and_a_full_queue_pauses_it() {
    let mut e = env(256);
    let q = Arc::new(SyncQueue::new(8));
    e.w.set_sync(Some((q.clone(), SyncPolicy::new(3, 0))));
    let s = e.snap(1, dr_service);
    for p in 0..20u16 {
        e.send(&s, &tcp(SYN, 100 + p), S);
        e.send(&s, &tcp(ACK, 100 + p), S);
    }
    // handshakes in progress are not worth sending
    for p in 0..5u16 {
        e.send(&s, &tcp(SYN, 500 + p), S);
    }
    drain(&q);
    assert!(!e.w.resending());
    e.w.resend_all();
    let mut got = Vec::new();
    let mut rounds = 0;
    while e.w.resending() {
        e.w.resend_step(10 * S, 64);
        got.extend(drain(&q));
        rounds += 1;
        assert!(rounds < 100, "the walk ends");
    }
    assert_eq!(got.len(), 20, "every established connection, once");
    assert!(got.iter().all(|c| c.state == TcpState::Established as u8));
    assert!(
        got.iter().all(|c| c.timeout_s == 891),
        "the time left: 900 - 9 s"
    );
    assert_eq!(count(&e, SyncCount::Resent), 20);
    // no resend without sync
    let mut plain = env(64);
    plain.w.resend_all();
    assert!(!plain.w.resending());
    assert_eq!(plain.w.resend_step(S, 64), 0);
}

/// An IPv6 DR service with two real servers, in the order given.
fn dr6_service(order: [u128; 2]) -> impl FnOnce(&mut SnapshotBuilder) {
    move |b| {
        b.service(
            super::v6::svc6(Proto::Tcp, 80),
            order
                .iter()
                .map(|&a| super::v6::dest6(a, 0, Method::Dr, 1))
                .collect(),
        );
    }
}

#[test]
fn an_ipv6_connection_synced_from_a_is_forwarded_by_b_without_scheduling() {
    use super::v6::from_client;
    // director A: a handshake, sent once ESTABLISHED
    let mut a = env(64);
    let q = with_sync(&mut a, SyncPolicy::new(3, 10));
    let sa = a.snap(1, dr6_service([RIP6, RIP6_2]));
    a.send6(&sa, &from_client(SYN, 40000, 80), S);
    assert!(drain(&q).is_empty(), "a handshake in progress is not sent");
    let (v, out_a) = a.send6(&sa, &from_client(ACK, 40000, 80), S);
    assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
    let sent = drain(&q);
    assert_eq!(sent.len(), 1);
    let c = sent[0];
    assert!(c.v6);
    assert_eq!(
        (c.proto, c.state, c.caddr, c.cport, c.vaddr, c.vport, c.dport),
        (
            PROTO_TCP,
            TcpState::Established as u8,
            CLIENT6,
            40000,
            VIP6,
            80,
            80
        )
    );
    assert!(c.daddr == RIP6 || c.daddr == RIP6_2);
    assert_eq!(
        (c.method, c.no_output, c.timeout_s),
        (Some(Method::Dr), true, 900)
    );
    // refreshed like IPv4's (the established shortcut is not taken)
    let mut refreshes = 0;
    for t in 2..40 {
        a.send6(&sa, &from_client(ACK, 40000, 80), t * S);
        refreshes += drain(&q).len();
    }
    assert!(
        (2..=3).contains(&refreshes),
        "{refreshes} refreshes in 38 s"
    );

    // director B, its servers in the other order: scheduling would pick
    // the other one
    let mut b = env(64);
    let sb = b.snap(1, dr6_service([RIP6_2, RIP6]));
    b.w.install_synced(&sb, &c, S);
    assert_eq!(count(&b, SyncCount::Installed), 1);
    assert_eq!((b.w.table6().len(), b.w.table().len()), (1, 0));
    assert_eq!(b.states(S), [("ESTABLISHED", 900)]);
    let di = usize::from(c.daddr == RIP6);
    assert_eq!(b.load(&sb, 0, di), (1, 0), "counted active on its server");
    // the flow's next segments (no SYN, sloppy_tcp off) go where A sent it
    for t in 2..5 {
        let (v, out_b) = b.send6(&sb, &from_client(ACK | PSH, 40000, 80), t * S);
        assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
        assert_eq!(out_b[0..6], out_a[0..6], "the same real server");
    }
    assert_eq!(b.load(&sb, 0, di), (1, 0));
    // B's own now: a later word from A is not taken
    let later = SyncConn {
        state: TcpState::TimeWait as u8,
        ..c
    };
    b.w.install_synced(&sb, &later, 6 * S);
    assert_eq!(count(&b, SyncCount::LocalKept), 1);
    // a copy not used yet is updated, to a server B has or not
    let other = SyncConn { cport: 40001, ..c };
    b.w.install_synced(&sb, &other, 6 * S);
    b.w.install_synced(
        &sb,
        &SyncConn {
            state: TcpState::FinWait as u8,
            timeout_s: 5,
            ..other
        },
        7 * S,
    );
    assert_eq!(count(&b, SyncCount::Updated), 1);
    let gone = SyncConn {
        cport: 40002,
        daddr: RIP6 + 9,
        ..c
    };
    b.w.install_synced(&sb, &gone, 7 * S);
    assert_eq!(count(&b, SyncCount::NoDest), 1);
    let no_svc = SyncConn {
        cport: 40003,
        vport: 443,
        ..c
    };
    b.w.install_synced(&sb, &no_svc, 7 * S);
    assert_eq!(count(&b, SyncCount::NoService), 1);
    assert_eq!(b.w.table6().len(), 2);
    // the copy expires with its timeout
    assert_eq!(b.w.expire6(13 * S, 64), 1);
    assert_eq!(b.w.table6().len(), 1);
}

#[test]
fn a_synced_nat6_connection_translates_replies() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(
            super::v6::svc6(Proto::Tcp, 80),
            vec![super::v6::dest6(RIP6, 8080, Method::Nat, 1)],
        );
    });
    let c = SyncConn {
        v6: true,
        proto: PROTO_TCP,
        state: TcpState::Established as u8,
        no_output: false,
        method: Some(Method::Nat),
        template: false,
        caddr: CLIENT6,
        vaddr: VIP6,
        daddr: RIP6,
        cport: 5000,
        vport: 80,
        dport: 8080,
        timeout_s: 900,
    };
    e.w.install_synced(&s, &c, S);
    assert_eq!(count(&e, SyncCount::Installed), 1);
    // the client's segment goes to RIP6:8080
    let (v, out) = e.send6(&s, &super::v6::from_client(ACK, 5000, 80), 2 * S);
    assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
    let p = etherparse::SlicedPacket::from_ethernet(&out).unwrap();
    let Some(etherparse::NetSlice::Ipv6(ip6)) = &p.net else {
        panic!("IPv6")
    };
    assert_eq!(u128::from_be_bytes(ip6.header().destination()), RIP6);
    let Some(etherparse::TransportSlice::Tcp(t)) = &p.transport else {
        panic!("tcp")
    };
    assert_eq!(t.destination_port(), 8080);
}

#[test]
fn nat64_connections_are_not_sent_and_resend_covers_ipv6() {
    use super::v6::from_client;
    let mut e = env(64);
    let q = with_sync(&mut e, SyncPolicy::new(3, 10));
    let s = e.snap(1, |b| {
        b.nat64_pool(&[std::net::Ipv4Addr::new(10, 0, 0, 200)]);
        b.service(
            super::v6::svc6(Proto::Tcp, 80),
            vec![dest(RIP, 8080, Method::Nat, 1)],
        );
        b.service(
            super::v6::svc6(Proto::Tcp, 81),
            vec![super::v6::dest6(RIP6, 0, Method::Dr, 1)],
        );
        dr_service(b);
    });
    // NAT64: a handshake and traffic, never sent
    for (t, flags) in [(0, SYN), (1, ACK), (2, ACK), (30, ACK)] {
        let (v, _) = e.send6(&s, &from_client(flags, 40000, 80), t * S);
        assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
    }
    assert!(drain(&q).is_empty(), "NAT64 is not synced");
    // an IPv6 DR connection and an IPv4 one are
    e.send6(&s, &from_client(SYN, 40001, 81), 30 * S);
    e.send6(&s, &from_client(ACK, 40001, 81), 30 * S);
    e.send(&s, &tcp(SYN, 7), 30 * S);
    e.send(&s, &tcp(ACK, 7), 30 * S);
    let sent = drain(&q);
    assert_eq!(sent.iter().map(|c| c.v6).collect::<Vec<_>>(), [true, false]);
    assert_eq!(e.w.table6().len(), 2);
    // resend: the IPv4 connection, then the IPv6 one; not the NAT64 one
    e.w.resend_all();
    let mut got = Vec::new();
    while e.w.resending() {
        e.w.resend_step(31 * S, 16);
        got.extend(drain(&q));
    }
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(!got[0].v6 && got[0].caddr == ip(CLIENT).into());
    assert!(got[1].v6 && got[1].cport == 40001 && got[1].daddr == RIP6);
    assert_eq!(got[1].timeout_s, 899);
}
