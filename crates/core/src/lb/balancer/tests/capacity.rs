//! A full connection table: new flows refused, idle embryonic entries
//! evicted, and a handshake in progress surviving a SYN flood.

use super::*;

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
