//! The announcer against a fake kernel: routes follow the wants, stale
//! ones go, failures are counted, shown and retried, draining withdraws all.

use super::*;
use std::time::Duration;

/// A kernel whose routes are a set; `fail` makes the next calls fail.
#[derive(Default)]
struct Fake {
    routes: BTreeSet<Ipv4Addr>,
    fail_add: bool,
    fail_list: bool,
}

impl Routes for &mut Fake {
    fn list(&mut self) -> Result<BTreeSet<Ipv4Addr>, String> {
        if self.fail_list {
            return Err("Operation not permitted".into());
        }
        Ok(self.routes.clone())
    }
    fn add(&mut self, vip: Ipv4Addr) -> Result<(), String> {
        if self.fail_add {
            return Err("No such device".into());
        }
        self.routes.insert(vip);
        Ok(())
    }
    fn del(&mut self, vip: Ipv4Addr) -> Result<(), String> {
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
    }
}

fn vip(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, n)
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
