//! The announcer against a fake kernel: routes follow the wants, stale
//! ones go, failures are counted, shown and retried, draining withdraws all.

use super::*;
use std::time::Duration;

/// A kernel whose routes are a set; `fail` makes the next calls fail.
#[derive(Default)]
struct Fake {
    routes: BTreeSet<IpAddr>,
    fail_add: bool,
    fail_list: bool,
}

impl Routes for &mut Fake {
    fn list(&mut self) -> Result<BTreeSet<IpAddr>, String> {
        if self.fail_list {
            return Err("Operation not permitted".into());
        }
        Ok(self.routes.clone())
    }
    fn add(&mut self, vip: IpAddr) -> Result<(), String> {
        if self.fail_add {
            return Err("No such device".into());
        }
        self.routes.insert(vip);
        Ok(())
    }
    fn del(&mut self, vip: IpAddr) -> Result<(), String> {
        self.routes.remove(&vip);
        Ok(())
    }
}

fn cfg() -> Announce {
    Announce {
        port: 0,
        interface: "kfront".into(),
        table: 100,
        protocol: 201,
        drain: Duration::from_millis(2000),
        sync_wait: Duration::from_millis(3000),
    }
}

fn vip(n: u8) -> IpAddr {
    std::net::Ipv4Addr::new(10, 0, 0, n).into()
}

fn want(n: u8, announce: bool) -> Want {
    Want {
        vip: vip(n),
        announce,
        why: if announce {
            "quorum: x"
        } else {
            "no quorum: y"
        }
        .into(),
    }
}

fn state<R: Routes>(a: &Announcer<R>, n: u8) -> (State, String) {
    let s = &a.vips[&vip(n)];
    (s.state, s.why.clone())
}

#[test]
fn routes_follow_the_wants() {
    let mut k = Fake::default();
    k.routes.insert(vip(9)); // left by an earlier run
    let mut a = Announcer::new(cfg(), &mut k);
    assert!(a.due(1, 5));
    a.reconcile(&[want(1, true), want(2, false)], 1, 5);
    assert_eq!(state(&a, 1), (State::Announced, "quorum: x".into()));
    assert_eq!(state(&a, 2), (State::Withdrawn, "no quorum: y".into()));
    assert!(!a.vips.contains_key(&vip(9)), "a VIP without a service");
    assert_eq!((a.counts.added, a.counts.removed), (1, 1));
    assert!(!a.due(1, 6), "nothing changed");
    assert!(a.due(2, 6), "a new epoch");
    assert!(a.due(1, 5 + VERIFY_NS), "the periodic check");
    // quorum lost on 1, back on 2
    a.reconcile(&[want(1, false), want(2, true)], 2, 10);
    assert_eq!(state(&a, 1).0, State::Withdrawn);
    assert_eq!(state(&a, 2).0, State::Announced);
    drop(a);
    assert_eq!(k.routes, [vip(2)].into());
}

/// An IPv6 VIP beside the IPv4 ones: the same states, the same routes
/// (a host route each: /32, /128), a stale one removed, all drained.
#[test]
fn ipv6_vips_go_the_same_way() {
    let v6 = |n: u16| IpAddr::from(std::net::Ipv6Addr::new(0xfd00, 0x90, 0, 0, 0, 0, 0, n));
    let mut k = Fake::default();
    k.routes.insert(v6(9)); // left by an earlier run
    let mut a = Announcer::new(cfg(), &mut k);
    let w6 = |n, announce| Want {
        vip: v6(n),
        ..want(1, announce)
    };
    a.reconcile(&[want(1, true), w6(1, true), w6(2, false)], 1, 5);
    assert_eq!(a.vips[&v6(1)].state, State::Announced);
    assert_eq!(a.vips[&v6(2)].state, State::Withdrawn);
    assert!(!a.vips.contains_key(&v6(9)));
    assert_eq!((a.counts.added, a.counts.removed), (2, 1));
    a.reconcile(&[want(1, true), w6(1, false), w6(2, true)], 2, 10);
    assert_eq!(a.routes.routes, [vip(1), v6(2)].into());
    a.drain(&[want(1, true), w6(1, false), w6(2, true)], 20);
    assert_eq!(a.vips[&v6(2)].state, State::Draining);
    assert!(a.routes.routes.is_empty());
    assert_eq!((host_prefix(vip(1)), host_prefix(v6(1))), (32, 128));
}

#[test]
fn a_removed_route_comes_back_at_the_check() {
    let mut k = Fake::default();
    let mut a = Announcer::new(cfg(), &mut k);
    a.reconcile(&[want(1, true)], 1, 1);
    a.routes.routes.clear(); // someone ran `ip route del`
    a.reconcile(&[want(1, true)], 1, 1 + VERIFY_NS);
    assert_eq!(a.counts.added, 2);
    assert!(a.routes.routes.contains(&vip(1)));
}

#[test]
fn failures_are_counted_shown_and_retried() {
    let mut k = Fake {
        fail_add: true,
        ..Fake::default()
    };
    let mut a = Announcer::new(cfg(), &mut k);
    a.reconcile(&[want(1, true)], 1, 1);
    let (st, why) = state(&a, 1);
    assert_eq!(st, State::Error);
    assert_eq!(why, "cannot add the route: No such device");
    assert_eq!(a.counts.failures, 1);
    assert!(a.failed());
    assert!(!a.due(1, 2), "not before the retry time");
    assert!(a.due(1, 1 + RETRY_NS));
    a.routes.fail_add = false;
    a.reconcile(&[want(1, true)], 1, 1 + RETRY_NS);
    assert_eq!(state(&a, 1).0, State::Announced);
    assert!(!a.failed());
    a.routes.fail_list = true;
    a.reconcile(&[want(1, true)], 2, 2 + RETRY_NS);
    let (st, why) = state(&a, 1);
    assert_eq!(st, State::Error);
    assert!(why.starts_with("cannot list the routes: "), "{why}");
    assert_eq!(a.counts.failures, 2);
}

#[test]
fn draining_withdraws_everything() {
    let mut k = Fake::default();
    let mut a = Announcer::new(cfg(), &mut k);
    a.reconcile(&[want(1, true), want(2, true)], 1, 1);
    a.drain(&[want(1, true), want(2, true)], 2);
    assert!(a.draining);
    assert_eq!(state(&a, 1), (State::Draining, "draining (SIGTERM)".into()));
    let r = report(Some(&a), &[want(1, true), want(2, true)], 3_000_000_002);
    assert!(r.draining && r.enabled);
    assert_eq!(r.vips[0].state, "draining");
    assert_eq!(r.vips[0].since_secs, Some(3));
    drop(a);
    assert!(k.routes.is_empty());
}

#[test]
fn report_without_announce_is_off() {
    let r = report::<&mut Fake>(None, &[want(1, true)], 0);
    assert!(!r.enabled);
    assert_eq!(r.vips[0].state, "off");
    assert_eq!(r.vips[0].why, "quorum: x");
    assert_eq!(r.table, None);
}

const MS: u64 = 1_000_000;

#[test]
fn the_start_up_hold_ends_once_the_peers_connections_are_installed() {
    let mut h = SyncHold::new(0, 3000 * MS, 0);
    assert!(h.holding(0, true, 100 * MS), "nothing arrived yet");
    assert!(h.holding(40, false, 200 * MS), "arriving");
    assert!(h.holding(76, false, 300 * MS), "still arriving");
    assert!(h.holding(76, false, 700 * MS), "quiet, not installed yet");
    assert!(
        h.holding(76, true, 300 * MS + SYNC_QUIET_NS - 1),
        "installed, not quiet long enough"
    );
    assert!(!h.holding(76, true, 300 * MS + SYNC_QUIET_NS), "over");
}

#[test]
fn the_start_up_hold_ends_at_the_wait_without_peers() {
    // counts from before the hold (a reload's) are no arrival
    let mut h = SyncHold::new(0, 3000 * MS, 5);
    for t in (0..3000).step_by(100) {
        assert!(h.holding(5, true, t * MS), "at {t} ms");
    }
    assert!(!h.holding(5, true, 3000 * MS));
    // a peer whose connections never finish arriving holds no longer
    let mut h = SyncHold::new(0, 1000 * MS, 0);
    for t in 0..1000 {
        assert!(h.holding(t, false, t * MS));
    }
    assert!(!h.holding(1000, false, 1000 * MS));
}

#[test]
fn held_vips_are_withdrawn_until_the_hold_ends() {
    let mut k = Fake::default();
    let mut a = Announcer::new(cfg(), &mut k).with_hold(SyncHold::new(0, 3000 * MS, 0));
    a.hold_tick(0, true, MS);
    assert!(a.due(1, MS), "the first reconcile");
    a.reconcile(&[want(1, true), want(2, false)], 1, MS);
    let (st, why) = state(&a, 1);
    assert_eq!(st, State::Withdrawn);
    assert!(why.starts_with("holding: "), "{why}");
    assert_eq!(state(&a, 2), (State::Withdrawn, "no quorum: y".into()));
    assert!(a.routes.routes.is_empty());
    // the peers' table arrives, is installed, then quiet
    a.hold_tick(50, true, 100 * MS);
    assert!(a.hold.is_some());
    assert!(!a.due(1, 100 * MS));
    a.hold_tick(50, true, 100 * MS + SYNC_QUIET_NS);
    assert!(a.hold.is_none(), "over");
    assert!(a.due(1, 100 * MS + SYNC_QUIET_NS), "announce at once");
    a.reconcile(
        &[want(1, true), want(2, false)],
        1,
        100 * MS + SYNC_QUIET_NS,
    );
    assert_eq!(state(&a, 1), (State::Announced, "quorum: x".into()));
    assert_eq!(a.routes.routes, [vip(1)].into());
}
