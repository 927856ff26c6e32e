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
        proto: PROTO_TCP,
        state: state as u8,
        no_output: true,
        method: Some(Method::Dr),
        template: false,
        caddr: ip(CLIENT),
        vaddr: ip(VIP),
        daddr: ip(daddr),
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
            ip(CLIENT),
            7,
            ip(VIP),
            80,
            80
        )
    );
    assert!(c.daddr == ip(RIP) || c.daddr == ip(RIP2));
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
