use super::bucket::{Bucket, EMPTY, REPLY};
use super::*;
use crate::lb::spec::Method;
use crate::lb::state::TcpState;
use crate::net::meta::{PROTO_TCP, PROTO_UDP};

/// A connection of client `i` (a distinct tuple for every `i`).
pub(super) fn conn(i: u32, method: Method, state: TcpState, expires: u32) -> Conn {
    Conn {
        ext: (),
        caddr: 0xc633_6400u32.wrapping_add(i),
        vaddr: 0xc000_020a,
        daddr: 0x0a00_0015,
        dest: 0,
        expires,
        cport: 10000 + (i % 50000) as u16,
        vport: 80,
        dport: 8080,
        svc: 0,
        proto: PROTO_TCP,
        state: state as u8,
        flags: 0,
        method,
    }
}

#[test]
fn layout() {
    assert_eq!(std::mem::size_of::<Conn>(), 32);
    assert_eq!(std::mem::align_of::<Conn>(), 32);
    assert_eq!(std::mem::size_of::<Bucket>(), 64);
    let t: ConnTable = ConnTable::new(1 << 12, 1);
    // 32 B record + 32 B index per connection (the free list lives in the
    // free records)
    assert_eq!(t.memory_bytes(), (1 << 12) * 64);
}

#[test]
fn insert_lookup_remove_nat_both_keys() {
    let mut t = ConnTable::new(64, 7);
    let c = conn(1, Method::Nat, TcpState::SynRecv, 1000);
    let ins = t.insert(c, 0);
    assert_eq!(ins.evicted, None);
    let idx = ins.result.unwrap();
    assert_eq!(t.lookup(&c.in_key()), Some(Hit { idx, reply: false }));
    assert_eq!(t.lookup(&c.out_key()), Some(Hit { idx, reply: true }));
    let d = conn(2, Method::Dr, TcpState::SynRecv, 1000);
    let di = t.insert(d, 0).result.unwrap();
    assert_eq!(t.lookup(&d.out_key()), None, "DR has no reply key");
    assert_eq!(t.len(), 2);
    assert_eq!(t.remove(idx).map(|x| x.caddr), Some(c.caddr));
    assert_eq!(t.lookup(&c.in_key()), None);
    assert_eq!(t.lookup(&c.out_key()), None);
    assert!(t.lookup(&d.in_key()).is_some_and(|h| h.idx == di));
    assert_eq!(t.remove(idx), None);
    assert_eq!(t.len(), 1);
}

#[test]
fn full_table_evicts_only_embryonic() {
    let mut t = ConnTable::new(8, 3);
    for i in 0..8 {
        t.insert(conn(i, Method::Dr, TcpState::Established, 100_000), 0)
            .result
            .unwrap();
    }
    // a flood of new flows cannot push established ones out
    for i in 100..200 {
        assert_eq!(
            t.insert(conn(i, Method::Dr, TcpState::None, 2000), 10),
            Inserted {
                result: Err(InsertError::Full),
                evicted: None
            }
        );
    }
    assert_eq!(t.len(), 8);
    for i in 0..8 {
        assert!(t
            .lookup(&conn(i, Method::Dr, TcpState::None, 0).in_key())
            .is_some());
    }
    // with embryonic entries present, the new flow replaces one of them
    let mut t = ConnTable::new(1, 3);
    t.insert(conn(1, Method::Dr, TcpState::SynRecv, 60_000), 0)
        .result
        .unwrap();
    // not while its handshake may still complete
    assert_eq!(
        t.insert(
            conn(2, Method::Dr, TcpState::None, 2000),
            EMBRYONIC_GRACE_MS - 1
        ),
        Inserted {
            result: Err(InsertError::Full),
            evicted: None
        }
    );
    let ins = t.insert(
        conn(2, Method::Dr, TcpState::None, 2000),
        EMBRYONIC_GRACE_MS,
    );
    assert!(ins.result.is_ok());
    assert_eq!(
        ins.evicted.map(|c| c.caddr),
        Some(conn(1, Method::Dr, TcpState::None, 0).caddr)
    );
    assert_eq!(t.len(), 1);
    // without a grace, at once
    let mut t = ConnTable::new(1, 3);
    t.set_embryonic_grace(0);
    t.insert(conn(1, Method::Dr, TcpState::SynRecv, 60_000), 0)
        .result
        .unwrap();
    assert!(t
        .insert(conn(2, Method::Dr, TcpState::None, 2000), 1)
        .result
        .is_ok());
    // an expired entry of any state is evicted first
    let mut t = ConnTable::new(1, 3);
    t.insert(conn(1, Method::Dr, TcpState::Established, 5), 0)
        .result
        .unwrap();
    assert!(t
        .insert(conn(2, Method::Dr, TcpState::None, 2000), 10)
        .result
        .is_ok());
}

/// The eviction scan is bounded per insert but rotates: one embryonic
/// entry among many established ones is not found by the first inserts
/// (refused), is found once the cursor reaches it, and established entries
/// are never evicted on the way.
#[test]
fn eviction_scan_is_bounded_and_rotates() {
    let n = 4 * EVICT_SCAN;
    let mut t = ConnTable::new(n, 5);
    let mut embryonic_idx = 0;
    for i in 0..n {
        let state = if i == 3 * EVICT_SCAN + 7 {
            TcpState::SynRecv
        } else {
            TcpState::Established
        };
        // the embryonic entry's last packet was at 0 (SYN_RECV lasts 60 s)
        let expires = if state == TcpState::SynRecv {
            60_000
        } else {
            100_000
        };
        let idx = t
            .insert(conn(i, Method::Dr, state, expires), 0)
            .result
            .unwrap();
        if state == TcpState::SynRecv {
            embryonic_idx = idx;
        }
    }
    let mut refused = 0;
    let mut evicted = None;
    for i in 0..4 {
        let ins = t.insert(
            conn(1000 + i, Method::Dr, TcpState::None, 2000),
            EMBRYONIC_GRACE_MS,
        );
        match ins.result {
            Err(InsertError::Full) => refused += 1,
            Ok(_) => {
                evicted = ins.evicted;
                break;
            }
        }
    }
    assert_eq!(refused, 3, "three scans of {EVICT_SCAN} before reaching it");
    let e = evicted.expect("the embryonic entry is evicted");
    assert_eq!(e.state, TcpState::SynRecv as u8);
    assert!(t
        .get(embryonic_idx)
        .is_some_and(|c| c.caddr == conn(1000 + 3, Method::Dr, TcpState::None, 0).caddr));
    assert_eq!(t.len(), n);
    // every established entry is still there
    for i in (0..n).filter(|i| *i != 3 * EVICT_SCAN + 7) {
        assert!(t
            .lookup(&conn(i, Method::Dr, TcpState::None, 0).in_key())
            .is_some());
    }
}

#[test]
fn udp_is_never_embryonic() {
    let mut t = ConnTable::new(1, 3);
    let mut u = conn(1, Method::Dr, TcpState::None, 300_000);
    u.proto = PROTO_UDP;
    t.insert(u, 0).result.unwrap();
    assert_eq!(
        t.insert(conn(2, Method::Dr, TcpState::None, 2000), 10)
            .result,
        Err(InsertError::Full)
    );
}

#[test]
fn sweep_is_incremental_and_wraps_time() {
    let mut t = ConnTable::new(16, 9);
    let base = u32::MAX - 500; // the ms tick wraps during the test
    for i in 0..10 {
        t.insert(
            conn(i, Method::Nat, TcpState::Close, base.wrapping_add(1000)),
            base,
        )
        .result
        .unwrap();
    }
    let mut seen = 0;
    assert_eq!(t.sweep(base.wrapping_add(999), 16, |_, _| seen += 1), 0);
    let now = base.wrapping_add(1000);
    assert_eq!(
        t.sweep(now, 4, |_, _| seen += 1),
        4,
        "budget bounds the work"
    );
    assert_eq!(t.sweep(now, 4, |_, _| seen += 1), 4);
    assert_eq!(t.sweep(now, 100, |_, _| seen += 1), 2);
    assert_eq!(seen, 10);
    assert!(t.is_empty());
    assert_eq!(
        t.lookup(&conn(3, Method::Dr, TcpState::None, 0).out_key()),
        None
    );
}

#[test]
fn many_conns_fit() {
    let n = 1 << 14;
    let mut t = ConnTable::new(n, 11);
    for i in 0..n {
        let mut c = conn(i, Method::Nat, TcpState::Established, 1000);
        c.cport = (i & 0xffff) as u16;
        c.caddr = 0x0b00_0000 + (i >> 4);
        t.insert(c, 0).result.unwrap();
    }
    assert_eq!(t.len(), n);
    assert_eq!(
        t.insert(conn(1 << 30, Method::Nat, TcpState::Established, 1000), 0)
            .result,
        Err(InsertError::Full)
    );
}

/// Entries that went to their secondary bucket are found like those in
/// their primary one, by the lookup and after the burst stages (which read
/// the secondary bucket only when the primary has no match).
#[test]
fn lookups_find_entries_in_either_bucket() {
    let n = 1 << 12;
    let mut t = ConnTable::new(n, 3);
    let mut placed = Vec::new();
    for i in 0..n {
        let c = conn(i, Method::Nat, TcpState::Established, 1000);
        let idx = t.insert(c, 0).result.unwrap();
        placed.push((c, idx));
    }
    let mut secondary = 0;
    for (c, idx) in &placed {
        for (key, reply) in [(c.in_key(), false), (c.out_key(), true)] {
            let h = t.hash(&key);
            t.touch(h);
            t.touch_records(h);
            assert_eq!(t.lookup_hashed(&key, h), Some(Hit { idx: *idx, reply }));
            let r = if reply { idx | REPLY } else { *idx };
            if !t.buckets[(h & t.mask) as usize].idx.contains(&r) {
                secondary += 1;
            }
        }
    }
    // at 50% load with 8-slot buckets some primaries overflow: otherwise
    // this test would not cover the secondary path
    assert!(secondary > 0, "no entry in a secondary bucket");
}

proptest::proptest! {
    /// Inserting through a lookup's probe leaves the table exactly as a
    /// plain insert does (same slots, same evictions, same refusals) under
    /// random inserts and removes, in a table that is often full.
    #[test]
    fn insert_probed_matches_insert(ops in proptest::collection::vec((0u32..96, 0u8..4, 0u8..3, 0u8..2), 1..400)) {
        let mut a = ConnTable::new(32, 17);
        let mut b = ConnTable::new(32, 17);
        a.set_embryonic_grace(0);
        b.set_embryonic_grace(0);
        for (now, (id, op, m, est)) in ops.into_iter().enumerate() {
            let now = now as u32;
            let method = [Method::Dr, Method::Tun, Method::Nat][m as usize];
            let state = if est == 1 { TcpState::Established } else { TcpState::SynRecv };
            let c = conn(id, method, state, 60_000);
            if op == 0 {
                let idx = id % 32;
                proptest::prop_assert_eq!(a.remove(idx), b.remove(idx));
            } else {
                let key = c.in_key();
                let h = b.hash(&key);
                match b.lookup_probe(&key, h) {
                    Ok(hit) => {
                        proptest::prop_assert_eq!(a.lookup(&key), Some(hit));
                        continue;
                    }
                    Err(p) => {
                        let x = a.insert(c, now);
                        let y = b.insert_probed(c, p, now);
                        proptest::prop_assert_eq!(x, y);
                    }
                }
            }
            proptest::prop_assert!(same_state(&a, &b));
        }
    }

    /// The table agrees with a model map under random inserts/removes.
    #[test]
    fn matches_model(ops in proptest::collection::vec((0u32..40, proptest::prelude::any::<bool>(), 0u8..3), 1..300)) {
        let mut t = ConnTable::new(32, 5);
        let mut model: std::collections::HashMap<u32, (u32, Method)> = Default::default();
        for (id, ins, m) in ops {
            let method = [Method::Dr, Method::Tun, Method::Nat][m as usize];
            let c = conn(id, method, TcpState::Established, 1000);
            if ins {
                if model.contains_key(&id) { continue; }
                let r = t.insert(c, 0);
                proptest::prop_assert_eq!(r.evicted, None);
                match r.result {
                    Ok(idx) => { model.insert(id, (idx, method)); }
                    Err(_) => proptest::prop_assert_eq!(model.len(), 32),
                }
            } else if let Some((idx, _)) = model.remove(&id) {
                proptest::prop_assert!(t.remove(idx).is_some());
            }
            proptest::prop_assert_eq!(t.len() as usize, model.len());
        }
        for id in 0..40 {
            let c = conn(id, Method::Nat, TcpState::Established, 0);
            match model.get(&id) {
                Some((idx, m)) => {
                    proptest::prop_assert_eq!(t.lookup(&c.in_key()), Some(Hit { idx: *idx, reply: false }));
                    let want = if *m == Method::Nat { Some(Hit { idx: *idx, reply: true }) } else { None };
                    proptest::prop_assert_eq!(t.lookup(&c.out_key()), want);
                }
                None => {
                    proptest::prop_assert_eq!(t.lookup(&c.in_key()), None);
                    proptest::prop_assert_eq!(t.lookup(&c.out_key()), None);
                }
            }
        }
    }
}

/// Whether two tables are in the same state, slot for slot.
fn same_state(a: &ConnTable, b: &ConnTable) -> bool {
    a.len == b.len
        && a.free_head == b.free_head
        && a.evict_cursor == b.evict_cursor
        && a.recs == b.recs
        && a.buckets.len() == b.buckets.len()
        && a.buckets
            .iter()
            .zip(&b.buckets)
            .all(|(x, y)| x.sig == y.sig && x.idx == y.idx)
}

/// A lookup miss's probe lets the insert skip hashing and scanning, but
/// the entry lands in the same slot as with a plain insert, also when the
/// insert evicts (the victim may free a slot before the probe's).
#[test]
fn insert_probed_places_like_insert() {
    let mut a = ConnTable::new(64, 13);
    let mut b = ConnTable::new(64, 13);
    for t in [&mut a, &mut b] {
        t.set_embryonic_grace(0);
    }
    let mut evictions = 0;
    for i in 0..2000u32 {
        let method = if i % 3 == 0 { Method::Nat } else { Method::Dr };
        let c = conn(i, method, TcpState::SynRecv, 60_000 + i);
        let key = c.in_key();
        let h = b.hash(&key);
        let probe = b.lookup_probe(&key, h).expect_err("a new key misses");
        assert_eq!(probe.hash(), h);
        let x = a.insert(c, i);
        let y = b.insert_probed(c, probe, i);
        assert_eq!(x, y, "insert {i}");
        evictions += x.evicted.is_some() as u32;
        assert!(same_state(&a, &b), "insert {i}");
        assert_eq!(
            b.lookup(&key).map(|h| h.idx),
            Some(y.result.unwrap()),
            "insert {i}"
        );
        if i % 7 == 0 {
            // free a record now and then, so inserts also take free ones
            let idx = (i * 11) % 64;
            assert_eq!(a.remove(idx), b.remove(idx));
        }
    }
    assert!(evictions > 1000, "the table was full: {evictions}");
}

/// A probe whose slot was taken since (the table changed) is not trusted:
/// the insert finds another slot.
#[test]
fn stale_probe_still_inserts_findably() {
    let mut t = ConnTable::new(64, 13);
    let c1 = conn(1, Method::Dr, TcpState::SynRecv, 1000);
    let h = t.hash(&c1.in_key());
    let p = t.lookup_probe(&c1.in_key(), h).unwrap_err();
    // another insert takes the slot the probe noted (same primary bucket)
    let mut other = None;
    for i in 2..100_000 {
        let c = conn(i, Method::Dr, TcpState::SynRecv, 1000);
        if t.hash(&c.in_key()) & t.mask == h & t.mask {
            other = Some(t.insert(c, 0).result.unwrap());
            break;
        }
    }
    let other = other.expect("a key with the same primary bucket");
    let idx = t.insert_probed(c1, p, 0).result.unwrap();
    assert_ne!(idx, other);
    assert_eq!(t.lookup(&c1.in_key()).map(|h| h.idx), Some(idx));
    assert_eq!(t.len(), 2);
}

/// The eviction scan hashes its next candidate ahead (to prefetch its
/// buckets) and the eviction reuses that hash: a candidate removed and
/// replaced by another connection in between must not be unlinked with
/// the old hash.
#[test]
fn victim_hint_is_dropped_when_its_record_changes() {
    let n = 256;
    let mut t = ConnTable::new(n, 21);
    t.set_embryonic_grace(0);
    for i in 0..n {
        t.insert(conn(i, Method::Nat, TcpState::SynRecv, 60_000), 0)
            .result
            .unwrap();
    }
    // evicts record 0 and hashes record 1 ahead
    let e = t.insert(conn(100, Method::Nat, TcpState::SynRecv, 60_000), 1);
    assert!(e.evicted.is_some());
    assert_eq!(t.victim_hint.0, 1);
    // record 1 gets another connection, in other buckets
    let old = t.remove(1).unwrap();
    let old_pair = t.pair(t.hash(&old.in_key()));
    let c = (1000..)
        .map(|i| conn(i, Method::Nat, TcpState::SynRecv, 60_000))
        .find(|c| {
            let p = t.pair(t.hash(&c.in_key()));
            !p.iter().any(|b| old_pair.contains(b))
        })
        .unwrap();
    assert_eq!(t.insert(c, 1).result, Ok(1));
    // the next eviction takes record 1: the new connection leaves fully
    let e = t.insert(conn(300, Method::Nat, TcpState::SynRecv, 60_000), 2);
    assert_eq!(
        e.evicted,
        Some(Conn {
            flags: c.flags | F_USED,
            ..c
        })
    );
    assert_eq!(t.lookup(&c.in_key()), None);
    assert_eq!(t.lookup(&c.out_key()), None);
    assert_eq!(t.lookup(&old.in_key()), None);
    let live: Vec<u32> = t
        .buckets
        .iter()
        .flat_map(|b| b.idx)
        .filter(|r| *r != EMPTY)
        .collect();
    assert_eq!(live.len() as u32, 2 * t.len(), "no stale index slot");
}
