//! The loads a pick reads: a service without thresholds reads them when
//! the scheduler asks (after one pass that clears its overload marks), and
//! chooses as it would with every load computed first.

use super::*;

/// One server with thresholds `upper`/`lower` (0/0 = none).
fn thr(upper: u32, lower: u32) -> crate::lb::spec::DestSpec {
    let mut a = dest(RIP, 0, Method::Dr, 1);
    a.upper = upper;
    a.lower = lower;
    a
}

/// An overload mark set under thresholds is cleared by a pick under a
/// snapshot without thresholds (later picks there skip that pass), and a
/// snapshot with thresholds again applies them from its first pick.
#[test]
fn overload_mark_cleared_by_a_pick_without_thresholds() {
    let mut e = env(256);
    let s1 = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![thr(2, 1)]);
    });
    assert_eq!(e.send(&s1, &tcp(SYN, 1), 0).0, LbVerdict::Tx { port: 1 });
    assert_eq!(e.send(&s1, &tcp(SYN, 2), 0).0, LbVerdict::Tx { port: 1 });
    // total 2 = upper: marked
    assert_eq!(
        e.send(&s1, &tcp(SYN, 3), 0).0,
        LbVerdict::Drop(LbDrop::NoDest)
    );
    let s2 = e.snap(2, |b| {
        b.service(svc(Proto::Tcp, 80), vec![thr(0, 0)]);
    });
    for p in [4, 5] {
        assert_eq!(e.send(&s2, &tcp(SYN, p), 0).0, LbVerdict::Tx { port: 1 });
    }
    // total 4; marked, it would stay so (not below lower 4)
    let s3 = e.snap(3, |b| {
        b.service(svc(Proto::Tcp, 80), vec![thr(5, 4)]);
    });
    assert_eq!(e.send(&s3, &tcp(SYN, 6), 0).0, LbVerdict::Tx { port: 1 });
    // total 5 = upper: the thresholds apply again
    assert_eq!(
        e.send(&s3, &tcp(SYN, 7), 0).0,
        LbVerdict::Drop(LbDrop::NoDest)
    );
}

/// Without a pick under the snapshot without thresholds, the mark stays
/// (nothing evaluated it) and decides under the next snapshot.
#[test]
fn overload_mark_kept_without_a_pick() {
    let mut e = env(256);
    let s1 = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![thr(2, 1)]);
    });
    e.send(&s1, &tcp(SYN, 1), 0);
    e.send(&s1, &tcp(SYN, 2), 0);
    assert_eq!(
        e.send(&s1, &tcp(SYN, 3), 0).0,
        LbVerdict::Drop(LbDrop::NoDest)
    );
    let s2 = e.snap(2, |b| {
        b.service(svc(Proto::Tcp, 80), vec![thr(0, 0)]);
    });
    // a packet of a tracked connection only: no pick
    assert_eq!(e.send(&s2, &tcp(ACK, 1), 0).0, LbVerdict::Tx { port: 1 });
    // total 2, not below lower 2: still overloaded
    let s3 = e.snap(3, |b| {
        b.service(svc(Proto::Tcp, 80), vec![thr(4, 2)]);
    });
    assert_eq!(
        e.send(&s3, &tcp(SYN, 4), 0).0,
        LbVerdict::Drop(LbDrop::NoDest)
    );
}

/// Every scheduler picks the same servers through the worker's live view
/// as through the computed loads (weights, a quiesced server, rr/wrr
/// cursors, hashing by client).
#[test]
fn live_loads_pick_like_computed_loads() {
    for kind in SchedKind::ALL {
        let mut picks = [Vec::new(), Vec::new()];
        for (run, upper) in [(0, 0), (1, 1000)] {
            // upper 1000 is never reached: the computed (eager) loads
            // every time, beside the live view
            let mut e = env(4096);
            let mut dests = vec![
                dest(RIP, 0, Method::Dr, 3),
                dest(RIP2, 0, Method::Dr, 1),
                dest([10, 0, 0, 23], 0, Method::Dr, 0),
                dest([10, 0, 0, 24], 0, Method::Dr, 2),
            ];
            for d in &mut dests {
                d.upper = upper;
            }
            let mut spec = svc(Proto::Tcp, 80);
            spec.sched = kind;
            let s = e.snap(1, |b| {
                b.service(spec, dests);
            });
            for p in 1..200u16 {
                let mut client = CLIENT;
                client[3] = (p % 7) as u8 + 1;
                let f = tcp_frame(client, 1000 + p, VIP, 80, SYN, b"", 64, true);
                let (v, _) = e.send(&s, &f, 0);
                assert_eq!(v, LbVerdict::Tx { port: 1 }, "{kind:?}");
            }
            let mut got: Vec<(u16, u32)> = e.w.table().iter().map(|c| (c.cport, c.daddr)).collect();
            got.sort();
            assert_eq!(got.len(), 199, "{kind:?}");
            picks[run] = got;
        }
        assert_eq!(picks[0], picks[1], "{kind:?}");
    }
}
