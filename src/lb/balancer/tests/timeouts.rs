//! Timeouts: an injected clock, the state tables' timers, `--set` at run time.

use super::*;

#[test]
fn timeouts_injected_clock_and_runtime_change() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    e.send(&s, &tcp(SYN, 1), 0);
    // SYN_RECV lasts 60 s
    assert_eq!(e.w.expire(60 * S - 1_000_000, 64), 0);
    assert_eq!(e.w.expire(60 * S, 64), 1);
    assert_eq!(e.load(&s, 0, 0), (0, 0));
    // without the connection an ACK is not tracked (only SYN creates)
    let (v, _) = e.send(&s, &tcp(ACK, 1), 61 * S);
    assert_eq!(v, LbVerdict::Drop(LbDrop::NotTracked));
    // ipvsadm --set 30 5 0
    let s2 = e.snap(2, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
        b.timeouts(Timeouts {
            tcp: 30,
            tcpfin: 5,
            udp: 0,
        });
    });
    e.send(&s2, &tcp(SYN, 2), 100 * S);
    e.send(&s2, &tcp(ACK, 2), 100 * S);
    assert_eq!(e.states(100 * S), [("ESTABLISHED", 30)]);
    e.send(&s2, &tcp(FIN | ACK, 2), 110 * S);
    assert_eq!(e.states(110 * S), [("FIN_WAIT", 5)]);
    // an expired connection found by lookup is expired on the spot
    let (v, _) = e.send(&s2, &tcp(ACK, 2), 116 * S);
    assert_eq!(v, LbVerdict::Drop(LbDrop::NotTracked));
    assert_eq!(e.w.table().len(), 0);
    assert_eq!(e.load(&s2, 0, 0), (0, 0));
    assert_eq!(e.w.stats().expired.load(Relaxed), 2);
}

#[test]
fn established_ack_moves_only_the_timer() {
    // the established fast path: an ACK refreshes the timer and leaves
    // state, flags and counters as the state tables would
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
        b.timeouts(Timeouts {
            tcp: 30,
            tcpfin: 5,
            udp: 0,
        });
    });
    e.send(&s, &tcp(SYN, 1), 0);
    e.send(&s, &tcp(ACK, 1), 0);
    assert_eq!(e.states(0), [("ESTABLISHED", 30)]);
    assert_eq!(e.load(&s, 0, 0), (1, 0));
    // each ACK restarts the 30 s: alive at 75 s only because of them
    for t in [20, 40, 60] {
        let (v, _) = e.send(&s, &tcp(ACK, 1), t * S);
        assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
    }
    assert_eq!(e.states(70 * S), [("ESTABLISHED", 20)]);
    assert_eq!(e.w.expire(89 * S, 64), 0);
    assert_eq!(e.load(&s, 0, 0), (1, 0));
    // a FIN after them still takes the state tables' way
    e.send(&s, &tcp(FIN | ACK, 1), 80 * S);
    assert_eq!(e.states(80 * S), [("FIN_WAIT", 5)]);
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    assert_eq!(e.w.expire(85 * S, 64), 1);
}
