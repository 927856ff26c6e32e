use super::*;
use crate::lb::conn::tests::conn;
use crate::lb::spec::Method;
use crate::lb::state::TcpState;
use std::collections::HashMap;

#[test]
fn layout_is_one_line_per_two_records() {
    assert_eq!(std::mem::size_of::<Line>(), 64);
    assert_eq!(std::mem::align_of::<Line>(), 64);
    let t = LineTable::new(1 << 12, 1);
    assert_eq!(t.memory_bytes(), (1 << 12) * 64);
}

#[test]
fn nat_is_found_by_both_tuples_and_its_stub_stays_hidden() {
    let mut t = LineTable::new(64, 7);
    let c = conn(1, Method::Nat, TcpState::SynRecv, 1000);
    let idx = t.insert(c, 0).result.unwrap();
    assert_eq!(t.lookup(&c.in_key()), Some(Hit { idx, reply: false }));
    assert_eq!(t.lookup(&c.out_key()), Some(Hit { idx, reply: true }));
    let (_, r) = t.lookup_rec(&c.out_key(), t.hash(&c.out_key())).unwrap();
    assert_eq!(r.caddr, c.caddr, "a reply answers the forward record");
    let d = conn(2, Method::Dr, TcpState::SynRecv, 1000);
    let di = t.insert(d, 0).result.unwrap();
    assert_eq!(t.lookup(&d.out_key()), None, "DR has no reply tuple");
    assert_eq!(t.len(), 2);
    assert_eq!(t.iter().count(), 2, "stubs are not connections");
    assert_eq!(t.remove(idx).map(|x| x.caddr), Some(c.caddr));
    assert_eq!(t.lookup(&c.in_key()), None);
    assert_eq!(
        t.lookup(&c.out_key()),
        None,
        "the stub goes with its record"
    );
    assert_eq!(t.lookup(&d.in_key()).map(|h| h.idx), Some(di));
    assert_eq!(t.remove(idx), None);
    assert_eq!(t.len(), 1);
}

/// A model of the table: every connection's tuple -> its record index,
/// kept up to date through the moves the table reports. Random inserts
/// (one in three NAT) and removals at up to the full capacity; after every
/// step each tracked tuple (and each NAT reply tuple) must be found at the
/// model's index, and removed ones not at all.
#[test]
fn moves_keep_every_connection_findable_under_churn() {
    for (cap, seed) in [(256u32, 1u32), (4096, 2), (4096, 3)] {
        let mut t = LineTable::new(cap, seed);
        let mut model: HashMap<u32, u32> = HashMap::new(); // conn id -> idx
        let mut gone: Vec<u32> = Vec::new();
        let mut rng = 0x1234_5678u64 ^ seed as u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut id = 0u32;
        let mut moved = 0;
        for step in 0..(cap * 12) {
            let r = next();
            let fill = model.len() as u32;
            if fill < cap && (r % 3 != 0 || fill < cap / 2) {
                id += 1;
                let m = if next() % 3 == 0 {
                    Method::Nat
                } else {
                    Method::Dr
                };
                let c = conn(id, m, TcpState::Established, u32::MAX / 2);
                let ins = t.insert(c, 0);
                assert_eq!(ins.evicted, None);
                // the new record itself may move to make room for its
                // stub: a move from a slot no tracked record holds is its
                let mut new_at: Option<u32> = None;
                for &(f, to) in &ins.moves[..ins.n] {
                    match model.iter().find(|(_, v)| **v == f).map(|(k, _)| *k) {
                        Some(k) => {
                            model.insert(k, to);
                        }
                        None => {
                            assert!(new_at.is_none_or(|a| a == f), "move from {f}: whose?");
                            new_at = Some(to);
                        }
                    }
                    moved += 1;
                }
                match ins.result {
                    Ok(idx) => {
                        assert!(new_at.is_none_or(|a| a == idx), "{new_at:?} {idx}");
                        model.insert(id, idx);
                    }
                    // a NAT connection needs two slots: near full, one
                    // may not find room within the moves allowed
                    Err(InsertError::Full) => gone.push(id),
                }
            } else if let Some((&k, &idx)) = model.iter().nth((r % fill.max(1) as u64) as usize) {
                assert!(t.remove(idx).is_some(), "step {step}");
                model.remove(&k);
                gone.push(k);
            }
            if step % 97 == 0 || step + 1 == cap * 12 {
                for (&k, &idx) in &model {
                    let probe = conn(k, Method::Nat, TcpState::None, 0);
                    let hit = t.lookup(&probe.in_key());
                    assert_eq!(
                        hit,
                        Some(Hit { idx, reply: false }),
                        "conn {k}, step {step}"
                    );
                    let c = *t.get(idx).unwrap();
                    if c.method == Method::Nat {
                        assert_eq!(t.lookup(&c.out_key()), Some(Hit { idx, reply: true }));
                    }
                }
                for &k in gone.iter().rev().take(64) {
                    let probe = conn(k, Method::Nat, TcpState::None, 0);
                    assert_eq!(t.lookup(&probe.in_key()), None, "removed conn {k}");
                    assert_eq!(t.lookup(&probe.out_key()), None, "removed conn {k}'s stub");
                }
                assert_eq!(t.len() as usize, model.len());
                assert_eq!(t.iter().count(), model.len());
            }
        }
        assert!(moved > 0, "cap {cap}: the test never moved a record");
    }
}

/// At the benchmark's load (one DR connection per two slots), nearly every
/// record is in its primary line and every insert succeeds.
#[test]
fn half_full_of_dr_needs_one_line_for_nearly_every_lookup() {
    let cap = 1 << 14;
    let mut t = LineTable::new(cap, 9);
    for i in 0..cap {
        let ins = t.insert(conn(i, Method::Dr, TcpState::Established, 1 << 30), 0);
        assert!(ins.result.is_ok(), "insert {i}");
    }
    let p = t.in_primary() as f64 / cap as f64;
    assert!(p > 0.85, "{p}");
}

#[test]
fn full_table_evicts_only_embryonic() {
    let mut t = LineTable::new(8, 3);
    for i in 0..8 {
        t.insert(conn(i, Method::Dr, TcpState::Established, 100_000), 0)
            .result
            .unwrap();
    }
    for i in 100..200 {
        let ins = t.insert(conn(i, Method::Dr, TcpState::None, 2000), 10);
        assert_eq!((ins.result, ins.evicted), (Err(InsertError::Full), None));
    }
    assert_eq!(t.len(), 8);
    let victim = t
        .lookup(&conn(3, Method::Dr, TcpState::None, 0).in_key())
        .unwrap();
    t.remove(victim.idx);
    t.insert(conn(300, Method::Dr, TcpState::SynRecv, 60_000), 0)
        .result
        .unwrap();
    // an idle embryonic connection goes for a new one; established stay
    let ins = t.insert(conn(301, Method::Dr, TcpState::SynRecv, 60_000), 10_000);
    assert_eq!(
        ins.evicted.map(|c| c.caddr),
        Some(conn(300, Method::Dr, TcpState::None, 0).caddr)
    );
    assert!(ins.result.is_ok());
    for i in (0..8).filter(|&i| i != 3) {
        assert!(t
            .lookup(&conn(i, Method::Dr, TcpState::None, 0).in_key())
            .is_some());
    }
}

#[test]
fn sweep_removes_expired_connections_and_their_stubs() {
    let mut t = LineTable::new(64, 5);
    let a = conn(1, Method::Nat, TcpState::Established, 100);
    let b = conn(2, Method::Dr, TcpState::Established, 10_000);
    t.insert(a, 0).result.unwrap();
    t.insert(b, 0).result.unwrap();
    let mut seen = Vec::new();
    assert_eq!(t.sweep(200, 1 << 10, |_, c| seen.push(c.caddr)), 1);
    assert_eq!(seen, vec![a.caddr]);
    assert_eq!(t.lookup(&a.out_key()), None);
    assert_eq!(t.len(), 1);
}
