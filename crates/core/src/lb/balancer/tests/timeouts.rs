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
    // a repeated SYN (and a SYN/ACK) of the established connection is no
    // new connection: it too only restarts the timer
    e.send(&s, &tcp(SYN, 1), 71 * S);
    assert_eq!(e.states(71 * S), [("ESTABLISHED", 30)]);
    e.send(&s, &tcp(SYN | ACK, 1), 72 * S);
    assert_eq!(e.states(72 * S), [("ESTABLISHED", 30)]);
    assert_eq!(e.load(&s, 0, 0), (1, 0));
    assert_eq!(e.w.expire(89 * S, 64), 0);
    assert_eq!(e.load(&s, 0, 0), (1, 0));
    // a FIN after them still takes the state tables' way
    e.send(&s, &tcp(FIN | ACK, 1), 80 * S);
    assert_eq!(e.states(80 * S), [("FIN_WAIT", 5)]);
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    assert_eq!(e.w.expire(85 * S, 64), 1);
}

#[test]
fn established_shortcut_agrees_with_the_state_tables() {
    // whenever the shortcut takes a segment, the state tables would have
    // kept the connection ESTABLISHED (so also counted active) in the
    // direction the segment is judged by, for every flags byte
    use crate::lb::conn::{F_ACTIVE, F_NOOUTPUT, F_SP_PENDING, F_SYNCED};
    use crate::lb::state::{tcp_next, Dir, TcpState};
    let mut c = crate::lb::conn::Conn {
        proto: crate::net::meta::PROTO_TCP,
        state: TcpState::Established as u8,
        ..Default::default()
    };
    let mut taken = 0;
    for flags in 0..=255u8 {
        for cf in 0..64u8 {
            c.flags = cf;
            for reply in [false, true] {
                let meta = PacketMeta {
                    tcp_flags: flags,
                    ..PacketMeta::default()
                };
                if !super::established_keeps(&c, &meta, reply) {
                    continue;
                }
                taken += 1;
                assert_eq!(cf & (F_SYNCED | F_SP_PENDING | F_ACTIVE), F_ACTIVE);
                let dir = if reply {
                    assert_eq!(cf & F_NOOUTPUT, 0, "a reply before any was seen");
                    Dir::Output
                } else if cf & F_NOOUTPUT != 0 {
                    Dir::InputOnly
                } else {
                    Dir::Input
                };
                assert_eq!(
                    tcp_next(TcpState::Established, dir, flags),
                    TcpState::Established,
                    "flags {flags:#04x} conn flags {cf:#04x} reply {reply}"
                );
            }
        }
    }
    // not vacuous: 48 flags bytes (SYN, ACK or both, with any of PSH,
    // URG, ECE, CWR) times the connection flags that qualify (F_USED,
    // F_NOOUTPUT, F_SYNPROXY free: 8 for a request, 4 for a reply)
    assert_eq!(taken, 48 * (8 + 4));
    // and it does not take what changes the state
    c.flags = F_ACTIVE;
    for f in [FIN, RST, FIN | ACK, RST | ACK, PSH, 0] {
        let meta = PacketMeta {
            tcp_flags: f,
            ..PacketMeta::default()
        };
        assert!(!super::established_keeps(&c, &meta, false), "{f:#04x}");
    }
}
