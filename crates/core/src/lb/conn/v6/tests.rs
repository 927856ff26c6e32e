//! The IPv6 table: its layout (96-byte records, 128 bytes per connection),
//! both NAT tuples, eviction and expiry as for IPv4, and a model check
//! against a map on random operations.

use super::*;
use crate::lb::conn::{ConnTable, Hit, InsertError, EMBRYONIC_GRACE_MS};
use crate::lb::spec::Method;
use crate::lb::state::TcpState;
use crate::net::meta::{PROTO_TCP, PROTO_UDP};
use std::collections::HashMap;

const CLIENT: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0000;
const VIP: u128 = 0x2001_0db8_0000_0000_0000_0000_0000_0010;
const RIP: u128 = 0x2001_0db8_0002_0000_0000_0000_0000_0011;

fn conn6(i: u32, method: Method, state: TcpState, expires: u32) -> Conn6 {
    Conn6 {
        // clients that differ in the upper half too
        caddr: CLIENT + ((i as u128) << 70) + i as u128,
        vaddr: VIP,
        daddr: RIP,
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
        ext: Default::default(),
    }
}

#[test]
fn layout_is_96_bytes_and_128_per_connection() {
    assert_eq!(std::mem::size_of::<Conn6>(), 96);
    assert_eq!(std::mem::align_of::<Conn6>(), 32);
    // `proto` is 64 bytes in: the second line a record spans
    let c = Conn6::default();
    let off = (&c.proto as *const u8 as usize) - (&c as *const Conn6 as usize);
    assert_eq!(off, 64);
    let t: ConnTable<Conn6> = ConnTable::new(1 << 12, 1);
    assert_eq!(t.memory_bytes(), (1 << 12) * 128);
    // IPv4's is unchanged
    let t4: ConnTable = ConnTable::new(1 << 12, 1);
    assert_eq!(t4.memory_bytes(), (1 << 12) * 64);
}

#[test]
fn nat_is_found_by_both_tuples_dr_by_one() {
    let mut t: ConnTable<Conn6> = ConnTable::new(64, 7);
    let c = conn6(1, Method::Nat, TcpState::SynRecv, 1000);
    let idx = t.insert(c, 0).result.unwrap();
    assert_eq!(t.lookup(&c.in_key()), Some(Hit { idx, reply: false }));
    assert_eq!(t.lookup(&c.out_key()), Some(Hit { idx, reply: true }));
    assert_eq!(c.out_key().reversed().src, c.caddr);
    let d = conn6(2, Method::Dr, TcpState::SynRecv, 1000);
    let di = t.insert(d, 0).result.unwrap();
    assert_eq!(t.lookup(&d.out_key()), None, "DR has no reply key");
    // a key differing only in an address's upper half is another flow
    let mut other = d.in_key();
    other.src ^= 1 << 100;
    assert_eq!(t.lookup(&other), None);
    let mut udp = d.in_key();
    udp.proto = PROTO_UDP;
    assert_eq!(t.lookup(&udp), None);
    assert_eq!(t.remove(idx).map(|x| x.caddr), Some(c.caddr));
    assert_eq!(t.lookup(&c.in_key()), None);
    assert_eq!(t.lookup(&c.out_key()), None);
    assert!(t.lookup(&d.in_key()).is_some_and(|h| h.idx == di));
    assert_eq!(t.len(), 1);
}

#[test]
fn a_full_table_evicts_only_embryonic_and_sweeps_expired() {
    let mut t: ConnTable<Conn6> = ConnTable::new(8, 3);
    for i in 0..8 {
        t.insert(conn6(i, Method::Dr, TcpState::Established, 100_000), 0)
            .result
            .unwrap();
    }
    let r = t.insert(conn6(100, Method::Dr, TcpState::None, 2000), 10);
    assert_eq!((r.result, r.evicted), (Err(InsertError::Full), None));
    let mut t: ConnTable<Conn6> = ConnTable::new(1, 3);
    t.insert(conn6(1, Method::Dr, TcpState::SynRecv, 60_000), 0)
        .result
        .unwrap();
    let r = t.insert(
        conn6(2, Method::Dr, TcpState::None, 2000),
        EMBRYONIC_GRACE_MS,
    );
    assert!(r.result.is_ok());
    assert_eq!(
        r.evicted.map(|c| c.caddr),
        Some(conn6(1, Method::Dr, TcpState::None, 0).caddr)
    );
    // expiry: the sweep removes what expired, and only that
    let mut t: ConnTable<Conn6> = ConnTable::new(16, 9);
    for i in 0..16 {
        t.insert(conn6(i, Method::Nat, TcpState::Established, 100 + i), 0)
            .result
            .unwrap();
    }
    let mut gone = Vec::new();
    assert_eq!(t.sweep(107, 16, |_, c| gone.push(c.expires)), 8);
    gone.sort_unstable();
    assert_eq!(gone, (100..108).collect::<Vec<_>>());
    assert_eq!(t.len(), 8);
    assert_eq!(t.iter().count(), 8);
    for i in 0..16 {
        let c = conn6(i, Method::Nat, TcpState::Established, 0);
        assert_eq!(t.lookup(&c.in_key()).is_some(), i >= 8, "{i}");
        assert_eq!(t.lookup(&c.out_key()).is_some(), i >= 8, "{i}");
    }
}

#[test]
fn the_hash_uses_every_word() {
    let k = conn6(1, Method::Dr, TcpState::None, 0).in_key();
    let h = k.hash(5);
    let mut seen = vec![h];
    for flip in [
        |k: &mut FlowKey6| k.src ^= 1 << 127,
        |k: &mut FlowKey6| k.src ^= 1,
        |k: &mut FlowKey6| k.dst ^= 1 << 64,
        |k: &mut FlowKey6| k.dst ^= 1 << 3,
        |k: &mut FlowKey6| k.sport ^= 1,
        |k: &mut FlowKey6| k.dport ^= 1,
        |k: &mut FlowKey6| k.proto ^= 1,
    ] {
        let mut x = k;
        flip(&mut x);
        seen.push(x.hash(5));
    }
    seen.push(k.hash(6));
    let n = seen.len();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), n, "each change moves the hash");
}

/// The hash spreads the tuples a director sees (clients counting up
/// through one /64, or through their interface identifiers' high bits,
/// one client's source ports counting up, real servers counting up)
/// evenly over the table's buckets (its low bits) and signatures (its
/// high bits): no bucket of 4096 gets more than twice its share of 256k
/// keys, under two seeds (as the IPv4 key's test).
#[test]
fn the_hash_spreads_sequential_tuples() {
    const KEYS: u32 = 1 << 18;
    const BUCKETS: usize = 1 << 12;
    const NET: u128 = 0x2001_0db8_0000_0001 << 64;
    const VIP: u128 = 0x2001_0db8_0000_0064_u128 << 64 | 0x80;
    let key = |src: u128, dst: u128, sport: u16| FlowKey6 {
        src,
        dst,
        sport,
        dport: 80,
        proto: crate::net::meta::PROTO_TCP,
    };
    let clients = |i: u32| key(NET | i as u128, VIP, 40000);
    let ids = |i: u32| key(NET | (i as u128) << 40, VIP, 40000);
    let nets = |i: u32| key((0x2001_0db8_u128 << 32 | i as u128) << 64 | 1, VIP, 40000);
    let ports = |i: u32| key(NET | (i >> 16) as u128, VIP, i as u16);
    let dests = |i: u32| key(NET | 1, VIP + i as u128, 40000);
    for seed in [0, 0x5eed_1234] {
        for (name, f) in [
            ("clients", &clients as &dyn Fn(u32) -> FlowKey6),
            ("ids", &ids),
            ("nets", &nets),
            ("ports", &ports),
            ("dests", &dests),
        ] {
            for (bits, shift) in [("low", 0), ("high", 20)] {
                let mut n = vec![0u32; BUCKETS];
                for i in 0..KEYS {
                    n[(f(i).hash(seed) >> shift) as usize % BUCKETS] += 1;
                }
                let share = KEYS / BUCKETS as u32;
                let max = *n.iter().max().unwrap();
                let min = *n.iter().min().unwrap();
                assert!(
                    max < 2 * share && min > share / 2,
                    "{name}, {bits} bits, seed {seed:#x}: {min}..{max} per bucket, share {share}"
                );
            }
        }
    }
}

proptest::proptest! {
    /// Random inserts (DR and NAT), removals and lookups on a small table
    /// agree with a map: every inserted connection is found by its tuples
    /// until removed, never after.
    #[test]
    fn agrees_with_a_map(ops in proptest::collection::vec((0u8..3, 0u32..48, proptest::bool::ANY), 1..300)) {
        let mut t: ConnTable<Conn6> = ConnTable::new(32, 11);
        let mut model: HashMap<u32, u32> = HashMap::new(); // flow -> record
        for (op, i, nat) in ops {
            let m = if nat { Method::Nat } else { Method::Dr };
            let c = conn6(i, m, TcpState::Established, u32::MAX / 2);
            match op {
                0 => {
                    if model.contains_key(&i) || t.lookup(&c.in_key()).is_some() {
                        continue;
                    }
                    if let Ok(idx) = t.insert(c, 0).result {
                        model.insert(i, idx);
                    } else {
                        proptest::prop_assert_eq!(t.len(), 32, "refused only when full");
                    }
                }
                1 => {
                    if let Some(idx) = model.remove(&i) {
                        proptest::prop_assert!(t.remove(idx).is_some());
                    }
                }
                _ => {}
            }
            proptest::prop_assert_eq!(t.len() as usize, model.len());
        }
        for i in 0..48 {
            let found = t
                .lookup(&conn6(i, Method::Dr, TcpState::None, 0).in_key())
                .map(|h| h.idx);
            proptest::prop_assert_eq!(found, model.get(&i).copied());
            if let Some(idx) = found {
                let c = *t.get(idx).unwrap();
                if c.method == Method::Nat {
                    proptest::prop_assert_eq!(t.lookup(&c.out_key()), Some(Hit { idx, reply: true }));
                }
            }
        }
    }
}
