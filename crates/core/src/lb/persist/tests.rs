//! Persistence template tests, with an injected clock (plain `now` values).

use super::*;

const S: u64 = 1_000_000_000; // one second in ns
const T: u64 = 300 * S; // ipvsadm's default -p 300

#[test]
fn client_key_applies_the_netmask() {
    let a = u32::from(std::net::Ipv4Addr::new(10, 0, 0, 5));
    let b = u32::from(std::net::Ipv4Addr::new(10, 0, 0, 77));
    let c = u32::from(std::net::Ipv4Addr::new(10, 0, 1, 5));
    let m24 = 0xffff_ff00;
    assert_eq!(client_key(a, m24), client_key(b, m24));
    assert_ne!(client_key(a, m24), client_key(c, m24));
    assert_eq!(client_key(a, m24), 0x0a00_0000);
    assert_ne!(client_key(a, u32::MAX), client_key(b, u32::MAX));
}

#[test]
fn template_sends_a_client_to_the_same_server() {
    let mut t = PersistTable::with_capacity(16);
    assert_eq!(t.lookup(1, 0x0a00_0000, 0), None);
    t.attach(1, 0x0a00_0000, 42, T, 0).unwrap();
    assert_eq!(t.lookup(1, 0x0a00_0000, 10 * S), Some(42));
    // Another service or another client network: separate.
    assert_eq!(t.lookup(2, 0x0a00_0000, 10 * S), None);
    assert_eq!(t.lookup(1, 0x0a00_0100, 10 * S), None);
    assert_eq!(t.len(), 1);
    let info = t.get(1, 0x0a00_0000).unwrap();
    assert_eq!(
        (info.dest, info.refs, info.expires, info.timeout),
        (42, 1, T, T)
    );
}

#[test]
fn template_never_expires_while_connections_are_attached() {
    let mut t = PersistTable::with_capacity(16);
    t.attach(1, 7, 42, T, 0).unwrap();
    // Far past the timeout, one connection still attached.
    assert_eq!(t.lookup(1, 7, 10 * T), Some(42));
    assert_eq!(t.expire(10 * T, 1000), 0);
    // Last connection ends at 10T: the template outlives it by T.
    assert!(t.detach(1, 7, 10 * T));
    assert_eq!(t.get(1, 7).unwrap().refs, 0);
    assert_eq!(t.lookup(1, 7, 11 * T - 1), Some(42));
    assert_eq!(t.lookup(1, 7, 11 * T), None);
    assert!(t.is_empty());
    assert_eq!(t.stats().expired, 1);
}

#[test]
fn each_new_connection_refreshes_the_template() {
    let mut t = PersistTable::with_capacity(16);
    t.attach(1, 7, 42, T, 0).unwrap();
    t.detach(1, 7, 10 * S); // expires at 10 s + T
    assert_eq!(t.get(1, 7).unwrap().expires, 10 * S + T);
    t.attach(1, 7, 42, T, 200 * S).unwrap();
    assert_eq!(t.get(1, 7).unwrap().expires, 200 * S + T);
    t.detach(1, 7, 250 * S);
    assert_eq!(t.get(1, 7).unwrap().expires, 250 * S + T);
    // Expiry never moves backwards.
    t.attach(1, 7, 42, T, 100 * S).unwrap();
    assert_eq!(t.get(1, 7).unwrap().expires, 250 * S + T);
    // touch refreshes without attaching.
    assert!(t.touch(1, 7, 400 * S));
    let info = t.get(1, 7).unwrap();
    assert_eq!((info.expires, info.refs), (400 * S + T, 1));
    assert!(!t.touch(1, 8, 400 * S));
}

#[test]
fn two_connections_keep_it_until_both_end() {
    let mut t = PersistTable::with_capacity(16);
    t.attach(3, 9, 5, 10 * S, 0).unwrap();
    t.attach(3, 9, 5, 10 * S, S).unwrap();
    assert_eq!(t.get(3, 9).unwrap().refs, 2);
    t.detach(3, 9, 2 * S);
    assert_eq!(t.lookup(3, 9, 100 * S), Some(5)); // one still attached
    t.detach(3, 9, 100 * S);
    assert_eq!(t.lookup(3, 9, 109 * S), Some(5));
    assert_eq!(t.lookup(3, 9, 110 * S), None);
    // Detaching an unknown template is harmless.
    assert!(!t.detach(3, 9, 111 * S));
}

#[test]
fn expired_template_is_recreated_for_the_new_server() {
    let mut t = PersistTable::with_capacity(16);
    t.attach(1, 7, 42, T, 0).unwrap();
    t.detach(1, 7, 0);
    // Expired but not reclaimed yet: attach starts afresh.
    t.attach(1, 7, 43, T, 2 * T).unwrap();
    let info = t.get(1, 7).unwrap();
    assert_eq!((info.dest, info.refs, info.expires), (43, 1, 3 * T));
    assert_eq!(t.stats().replaced, 1);
    assert_eq!(t.len(), 1);
}

#[test]
fn removed_server_loses_its_templates() {
    let mut t = PersistTable::with_capacity(64);
    for c in 0..30u32 {
        t.attach(1, c, u64::from(c % 3), T, 0).unwrap();
    }
    t.attach(2, 99, 1, T, 0).unwrap();
    assert_eq!(t.remove_dest(1), 11);
    assert_eq!(t.len(), 20);
    for c in 0..30u32 {
        let want = (c % 3 != 1).then_some(u64::from(c % 3));
        assert_eq!(t.lookup(1, c, S), want, "client {c}");
    }
    assert_eq!(t.lookup(2, 99, S), None);
    // A quiesced server: the caller does nothing, templates stay.
    assert_eq!(t.lookup(1, 0, S), Some(0));
    assert_eq!(t.remove_service(1), 20);
    assert!(t.is_empty());
    assert_eq!(t.stats().removed, 31);
    // Single key.
    t.attach(4, 4, 4, T, 0).unwrap();
    assert!(t.remove(4, 4));
    assert!(!t.remove(4, 4));
}

#[test]
fn expire_is_amortized_by_budget() {
    let mut t = PersistTable::with_capacity(1000);
    let cap = t.capacity();
    for c in 0..1000u32 {
        t.attach(1, c, 1, T, 0).unwrap();
        t.detach(1, c, 0);
    }
    // One attached template survives every sweep.
    t.attach(1, 5, 1, T, 0).unwrap();
    assert_eq!(t.expire(T - 1, cap), 0);
    let mut total = 0;
    let mut calls = 0;
    while calls * 64 < cap {
        let n = t.expire(T, 64);
        assert!(n <= 64);
        total += n;
        calls += 1;
    }
    assert_eq!(total, 999);
    assert_eq!(t.len(), 1);
    assert_eq!(t.stats().expired, 999);
    assert_eq!(t.expire(T, cap), 0);
}

#[test]
fn full_table_refuses_and_counts_then_reuses_expired_room() {
    let mut t = PersistTable::with_capacity(8);
    let cap = t.capacity();
    assert!(cap >= 10);
    let mut ok = 0;
    let mut refused = 0;
    for c in 0..(4 * cap) as u32 {
        match t.attach(1, c, 1, T, 0) {
            Ok(()) => ok += 1,
            Err(PersistFull) => refused += 1,
        }
    }
    assert!(ok <= cap && ok >= cap * 3 / 4, "{ok} of {cap}");
    assert_eq!(t.len(), ok);
    assert_eq!(t.stats().full, refused as u64);
    assert_eq!(t.stats().inserted, ok as u64);
    assert_eq!(t.capacity(), cap); // never grows
                                   // Detach all, let them expire: inserts reclaim the room on the way.
    let live: Vec<TemplateInfo> = t.iter().collect();
    assert_eq!(live.len(), ok);
    for x in &live {
        t.detach(x.svc, x.client, 0);
    }
    for c in 0..(4 * cap) as u32 {
        let _ = t.attach(2, c, 2, T, T);
    }
    assert!(t.iter().all(|x| x.svc == 2));
    assert_eq!(t.stats().expired, ok as u64);
}

#[test]
fn requested_capacity_fits() {
    // The 25% headroom lets the requested count in (seeded, deterministic).
    for n in [100usize, 1000, 10_000] {
        let mut t = PersistTable::with_capacity_seed(n, 12345);
        let refused = (0..n as u32)
            .filter(|&c| t.attach(1, c.wrapping_mul(2_654_435_761), 1, T, 0).is_err())
            .count();
        assert!(refused * 100 <= n, "n={n}: {refused} refused");
    }
}

mod model {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[derive(Clone, Debug)]
    enum Op {
        Attach(u32, u32, u64),
        Detach(u32, u32),
        Remove(u32, u32),
        RemoveDest(u64),
        Expire(usize),
        Lookup(u32, u32),
        Wait(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..3, 0u32..6, 0u64..4).prop_map(|(s, c, d)| Op::Attach(s, c, d)),
            (0u32..3, 0u32..6).prop_map(|(s, c)| Op::Detach(s, c)),
            (0u32..3, 0u32..6).prop_map(|(s, c)| Op::Remove(s, c)),
            (0u64..4).prop_map(Op::RemoveDest),
            (0usize..40).prop_map(Op::Expire),
            (0u32..3, 0u32..6).prop_map(|(s, c)| Op::Lookup(s, c)),
            (0u64..15).prop_map(Op::Wait),
        ]
    }

    proptest! {
        /// The table agrees with a plain map model on every lookup.
        #[test]
        fn table_matches_model(ops in prop::collection::vec(op(), 1..200)) {
            const TO: u64 = 10;
            let mut t = PersistTable::with_capacity(64);
            // key -> (dest, refs, expires)
            let mut m: HashMap<(u32, u32), (u64, u32, u64)> = HashMap::new();
            let mut now = 0u64;
            let dead = |e: &(u64, u32, u64), now: u64| e.1 == 0 && now >= e.2;
            for op in ops {
                match op {
                    Op::Attach(s, c, d) => {
                        prop_assert!(t.attach(s, c, d, TO, now).is_ok());
                        let e = m.entry((s, c)).or_insert((d, 0, 0));
                        if dead(e, now) {
                            *e = (d, 0, 0);
                        }
                        e.0 = d;
                        e.1 += 1;
                        e.2 = e.2.max(now + TO);
                    }
                    Op::Detach(s, c) => {
                        t.detach(s, c, now);
                        if m.get(&(s, c)).is_some_and(|e| dead(e, now)) {
                            m.remove(&(s, c));
                        }
                        if let Some(e) = m.get_mut(&(s, c)) {
                            e.1 = e.1.saturating_sub(1);
                            e.2 = e.2.max(now + TO);
                        }
                    }
                    Op::Remove(s, c) => {
                        t.remove(s, c);
                        m.remove(&(s, c));
                    }
                    Op::RemoveDest(d) => {
                        t.remove_dest(d);
                        m.retain(|_, e| e.0 != d);
                    }
                    Op::Expire(b) => {
                        t.expire(now, b);
                    }
                    Op::Lookup(s, c) => {
                        let want = m.get(&(s, c)).filter(|e| !dead(e, now)).map(|e| e.0);
                        prop_assert_eq!(t.lookup(s, c, now), want);
                    }
                    Op::Wait(d) => now += d,
                }
            }
            for s in 0..3 {
                for c in 0..6 {
                    let want = m.get(&(s, c)).filter(|e| !dead(e, now)).map(|e| e.0);
                    prop_assert_eq!(t.lookup(s, c, now), want);
                }
            }
        }
    }
}
