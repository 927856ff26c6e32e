use super::*;

const S: u64 = 1_000_000_000;
const MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const MAC2: [u8; 6] = [2, 0, 0, 0, 0, 2];

fn table() -> NeighTable {
    NeighTable::new(NeighConfig::default())
}

#[test]
fn resolve_is_rate_limited_per_ip() {
    let mut t = table();
    assert_eq!(t.resolve(7, 1, 0), ResolveAction::SendRequest { port: 1 });
    assert_eq!(t.resolve(7, 1, S / 2), ResolveAction::Pending);
    assert_eq!(
        t.resolve(8, 1, S / 2),
        ResolveAction::SendRequest { port: 1 }
    );
    assert_eq!(t.resolve(7, 1, S), ResolveAction::SendRequest { port: 1 });
    assert_eq!(t.resolve(7, 1, S + 1), ResolveAction::Pending);
    assert_eq!(t.get(7).unwrap().state, NeighState::Incomplete);
    // incomplete entries are not published
    assert!(t.snapshot().lookup(7).is_none());
    assert!(!t.take_changed());
}

#[test]
fn learn_publishes() {
    let mut t = table();
    t.resolve(7, 1, 0);
    assert!(t.learn(7, MAC, 1, 5, false));
    assert!(t.take_changed());
    assert!(!t.take_changed());
    assert_eq!(t.resolve(7, 1, 6), ResolveAction::Known);
    assert_eq!(t.snapshot().lookup(7), Some((MAC, 1)));
    // same content again: no change
    assert!(!t.learn(7, MAC, 1, 10, false));
    assert!(t.learn(7, MAC2, 1, 11, false));
    assert_eq!(t.snapshot().lookup(7), Some((MAC2, 1)));
    // unknown IP is only created when asked to
    assert!(!t.learn(9, MAC, 0, 12, false));
    assert!(t.get(9).is_none());
    assert!(t.learn(9, MAC, 0, 12, true));
    assert_eq!(t.snapshot().len(), 2);
}

#[test]
fn incomplete_gives_up_after_max_tries() {
    let mut t = table();
    let mut p = Vec::new();
    t.resolve(7, 3, 0);
    t.tick(S / 2, &mut p);
    assert!(p.is_empty());
    t.tick(S, &mut p);
    assert_eq!(p, vec![Probe { ip: 7, port: 3 }]);
    p.clear();
    t.tick(2 * S, &mut p);
    assert_eq!(p.len(), 1);
    p.clear();
    t.tick(2 * S + S / 2, &mut p);
    assert!(p.is_empty() && t.get(7).is_some());
    t.tick(3 * S, &mut p);
    assert!(p.is_empty());
    assert!(t.get(7).is_none(), "dropped after 3 unanswered requests");
    // asking again starts over, still >= 1 s after the last request
    assert_eq!(
        t.resolve(7, 3, 3 * S),
        ResolveAction::SendRequest { port: 3 }
    );
}

#[test]
fn aging_reprobes_then_stale_then_gone() {
    let c = NeighConfig::default();
    let mut t = table();
    let mut p = Vec::new();
    t.learn(7, MAC, 0, 0, true);
    t.take_changed();
    t.tick(c.reachable_ns - c.probe_lead_ns - 1, &mut p);
    assert!(p.is_empty());
    t.tick(c.reachable_ns - c.probe_lead_ns, &mut p);
    assert_eq!(p, vec![Probe { ip: 7, port: 0 }]);
    // answered: back to a full reachable period
    assert!(!t.learn(7, MAC, 0, c.reachable_ns - c.probe_lead_ns + S, false));
    p.clear();
    t.tick(c.reachable_ns, &mut p);
    assert!(p.is_empty());
    assert_eq!(t.get(7).unwrap().state, NeighState::Reachable);
    // unanswered: stale (still published, not a change), then removed
    let t0 = 2 * c.reachable_ns;
    assert!(!t.tick(t0, &mut p));
    assert_eq!(t.get(7).unwrap().state, NeighState::Stale);
    assert_eq!(t.snapshot().lookup(7), Some((MAC, 0)));
    assert_eq!(t.resolve(7, 0, t0 + S / 2), ResolveAction::Known);
    assert!(t.tick(t0 + c.stale_ns, &mut p));
    assert!(t.get(7).is_none());
    assert!(t.take_changed());
}

#[test]
fn static_entries_never_age() {
    let mut t = table();
    let mut p = Vec::new();
    t.add_static(7, MAC, 2).unwrap();
    assert!(!t.learn(7, MAC2, 1, 0, true));
    t.tick(u64::MAX / 2, &mut p);
    assert!(p.is_empty());
    assert_eq!(t.snapshot().lookup(7), Some((MAC, 2)));
    assert_eq!(t.resolve(7, 2, 5), ResolveAction::Known);
    assert!(t.remove(7));
    assert!(t.snapshot().is_empty());
}

#[test]
fn bounded_with_eviction() {
    let mut t = NeighTable::<u32>::new(NeighConfig {
        max_entries: 2,
        ..NeighConfig::default()
    });
    t.learn(1, MAC, 0, 0, true);
    t.resolve(2, 0, 10);
    // full: the incomplete one is evicted for a new one
    assert_eq!(t.resolve(3, 0, 20), ResolveAction::SendRequest { port: 0 });
    assert!(t.get(2).is_none());
    t.learn(3, MAC, 0, 30, false);
    // both live now
    assert_eq!(t.resolve(4, 0, 40), ResolveAction::Full);
    assert!(!t.learn(4, MAC, 0, 40, true));
    assert_eq!(t.add_static(4, MAC, 0), Err(NeighError::Full));
    assert_eq!(t.len(), 2);
}

#[test]
fn snapshot_hasher_spreads() {
    let mut t = NeighTable::new(NeighConfig::default());
    for i in 0..1000u32 {
        t.learn(
            0x0a00_0000 + i,
            [2, 0, 0, 0, (i >> 8) as u8, i as u8],
            0,
            0,
            true,
        );
    }
    let s = t.snapshot();
    assert_eq!(s.len(), 1000);
    for i in 0..1000u32 {
        assert_eq!(s.lookup(0x0a00_0000 + i).unwrap().0[5], i as u8);
    }
    assert!(s.lookup(0x0b00_0000).is_none());
}
