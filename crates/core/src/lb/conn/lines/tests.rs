use super::*;
use crate::lb::conn::tests::conn;
use crate::lb::spec::Method;
use crate::lb::state::TcpState;
use std::collections::HashMap;

#[test]
fn layout_is_one_line_per_two_records_and_64_bytes_per_connection() {
    assert_eq!(std::mem::size_of::<Line>(), 64);
    assert_eq!(std::mem::align_of::<Line>(), 64);
    assert_eq!(std::mem::size_of::<Replies>(), 64);
    assert_eq!(std::mem::align_of::<Replies>(), 64);
    for cap in [1u32 << 12, 1 << 20] {
        let t = LineTable::new(cap, 1);
        assert_eq!(t.memory_bytes(), cap as usize * 64, "cap {cap}");
        assert_eq!(t.slots(), cap / 2 * 3);
    }
}

#[test]
fn nat_is_found_by_both_tuples_from_either_side_first() {
    let mut t = LineTable::new(64, 7);
    let c = conn(1, Method::Nat, TcpState::SynRecv, 1000);
    let idx = t.insert(c, 0).result.unwrap();
    assert_eq!(t.lookup(&c.in_key()), Some(Hit { idx, reply: false }));
    assert_eq!(t.lookup(&c.out_key()), Some(Hit { idx, reply: true }));
    let (_, r) = t.lookup_rec(&c.out_key(), t.hash(&c.out_key())).unwrap();
    assert_eq!(r.caddr, c.caddr, "a reply answers the forward record");
    for first in [false, true] {
        let (hi, ho) = (t.hash(&c.in_key()), t.hash(&c.out_key()));
        assert_eq!(
            t.lookup_rec_from(&c.in_key(), hi, first).map(|x| x.0),
            Some(Hit { idx, reply: false })
        );
        assert_eq!(
            t.lookup_rec_from(&c.out_key(), ho, first).map(|x| x.0),
            Some(Hit { idx, reply: true })
        );
    }
    assert!(t.has_replies());
    let d = conn(2, Method::Dr, TcpState::SynRecv, 1000);
    let di = t.insert(d, 0).result.unwrap();
    assert_eq!(t.lookup(&d.out_key()), None, "DR has no reply tuple");
    assert_eq!(t.len(), 2);
    assert_eq!(t.iter().count(), 2);
    assert_eq!(t.remove(idx).map(|x| x.caddr), Some(c.caddr));
    assert_eq!(t.lookup(&c.in_key()), None);
    assert_eq!(
        t.lookup(&c.out_key()),
        None,
        "the reply entry goes with its record"
    );
    assert!(!t.has_replies());
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
                // a move from a slot no tracked record holds is the new
                // record's (the insert never moves it: none expected)
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
                    // near full, a record may not find room within the
                    // moves allowed
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
                    assert_eq!(t.lookup(&probe.out_key()), None, "removed conn {k}'s reply");
                }
                assert_eq!(t.len() as usize, model.len());
                assert_eq!(t.iter().count(), model.len());
            }
        }
        assert!(moved > 0, "cap {cap}: the test never moved a record");
    }
}

/// At full capacity (two slots in three used), every insert succeeds, NAT
/// or not, and most records sit in their primary line.
#[test]
fn full_capacity_places_every_connection_nat_or_not() {
    let cap = 1 << 16;
    for m in [Method::Dr, Method::Nat] {
        let mut t = LineTable::new(cap, 9);
        for i in 0..cap {
            let ins = t.insert(conn(i, m, TcpState::Established, 1 << 30), 0);
            assert!(ins.result.is_ok(), "{m:?} insert {i}");
        }
        assert_eq!(t.len(), cap);
        let p = t.in_primary() as f64 / cap as f64;
        eprintln!("{m:?}: {p:.3} in their primary line, {} moved", t.moved());
        assert!(p > 0.75, "{m:?}: {p}");
        if m == Method::Nat {
            for i in (0..cap).step_by(97) {
                let c = conn(i, m, TcpState::None, 0);
                let idx = t.lookup(&c.in_key()).unwrap().idx;
                assert_eq!(t.lookup(&c.out_key()), Some(Hit { idx, reply: true }));
            }
        }
    }
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
fn sweep_removes_expired_connections_and_their_reply_entries() {
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

/// A full table of idle embryonic connections (a SYN flood's): a new
/// connection takes the slot of one in its own lines, with no search, and
/// the cursor's victim only when its lines hold none.
#[test]
fn full_table_evicts_in_the_new_keys_own_lines_first() {
    let cap = 1 << 10;
    let mut t = LineTable::new(cap, 4);
    t.set_embryonic_grace(0);
    for i in 0..cap {
        t.insert(conn(i, Method::Nat, TcpState::SynRecv, 1000), 0)
            .result
            .unwrap();
    }
    let mut local = 0;
    for i in cap..cap * 3 {
        let c = conn(i, Method::Nat, TcpState::SynRecv, 5000);
        let ins = t.insert(c, 2000);
        let idx = ins.result.unwrap();
        let gone = ins.evicted.expect("a full table evicts");
        assert_eq!(t.lookup(&gone.in_key()), None);
        assert_eq!(t.lookup(&gone.out_key()), None);
        assert_eq!(t.lookup(&c.out_key()), Some(Hit { idx, reply: true }));
        if ins.n == 0 && t.pair(t.placed_by(&gone)).contains(&(idx >> 1)) {
            local += 1;
        }
        assert_eq!(t.len(), cap);
    }
    // the first `cap` inserts all find an old record in their lines
    assert!(local >= cap, "{local}");
}
