//! Health as an input to the table: trackers fed by reports, inhibit and
//! remove, maintenance, quorum, the sorry server and withdrawn VIPs.

use super::*;
use crate::health::engine::Report;
use crate::health::spec::Probe;
use crate::health::state::Outcome;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::spec::Proto;
use crate::lb::testutil::V4 as _;
use dirigo_config::ServiceHealth;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

fn svc(port: u16) -> ServiceSpec {
    ServiceSpec {
        members: Vec::new(),
        local_addresses: Vec::new(),
        key: ServiceKey {
            fwmark: 0,
            proto: Proto::Tcp,
            vip: std::net::IpAddr::V4(Ipv4Addr::new(10, 10, 10, 10)),
            port,
        },
        sched: SchedKind::Rr,
        flags: SchedFlags::default(),
        persistent: None,
        netmask: Ipv4Addr::BROADCAST,
        prefix6: 128,
        synproxy: false,
        ops: false,
        client_address: Default::default(),
    }
}

fn rs(last: u8, weight: u32) -> DestSpec {
    DestSpec {
        key: DestKey {
            addr: std::net::IpAddr::V4(Ipv4Addr::new(172, 16, 0, last)),
            port: 8080,
        },
        method: Method::Dr,
        weight,
        upper: 0,
        lower: 0,
        tun: Default::default(),
    }
}

fn check(on_failure: OnFailure) -> CheckSpec {
    CheckSpec {
        probe: Probe::Tcp,
        interval: Duration::from_secs(2),
        timeout: Duration::from_secs(1),
        rise: 2,
        fall: 2,
        retry_delay: None,
        on_failure,
        port: None,
        address: None,
        source: None,
        via_vip: false,
        notify_up: vec!["/bin/echo".into(), "up".into(), "{rip}:{rport}".into()],
        notify_down: vec![],
    }
}

type Table = Vec<(ServiceSpec, Vec<DestSpec>)>;

fn setup(on_failure: OnFailure, sorry: Option<&str>) -> (HealthState, Table) {
    let table = vec![(svc(8080), vec![rs(11, 1), rs(12, 3), rs(13, 1)])];
    let mut h = HealthState::default();
    h.services.insert(
        table[0].0.key,
        ServiceHealth {
            check: Some(check(on_failure)),
            checks: vec![],
            quorum: Some(1),
            sorry: sorry.map(|s| s.parse().unwrap()),
        },
    );
    let jobs = h.sync(&table, |_, _, _| None, 0);
    assert_eq!(jobs.len(), 3);
    (h, table)
}

fn report(h: &mut HealthState, t: &Table, last: u8, ok: bool, now: u64) -> Changed {
    let r = Report {
        key: JobKey {
            service: t[0].0.key,
            rs: rs(last, 0).key,
        },
        outcome: Outcome {
            ok,
            latency_us: 5,
            detail: if ok { "connected" } else { "refused" }.into(),
            weight: None,
        },
        at: Instant::now(),
    };
    h.report(r, t, now)
}

fn weights(h: &HealthState, t: &Table) -> Vec<(u8, u32)> {
    h.effective(t)[0]
        .1
        .iter()
        .map(|d| (d.key.addr.v4().octets()[3], d.weight))
        .collect()
}

#[test]
fn a_down_server_is_inhibited_and_its_weight_comes_back() {
    let (mut h, t) = setup(OnFailure::Inhibit, None);
    assert_eq!(
        report(&mut h, &t, 12, false, 1),
        Changed::default(),
        "one failure: fall 2"
    );
    let c = report(&mut h, &t, 12, false, 2);
    assert!(c.table);
    assert_eq!(weights(&h, &t), vec![(11, 1), (12, 0), (13, 1)]);
    assert!(!report(&mut h, &t, 12, true, 3).table);
    let c = report(&mut h, &t, 12, true, 4);
    assert!(c.table);
    assert_eq!(
        c.notify,
        vec![vec![
            "/bin/echo".to_string(),
            "up".into(),
            "172.16.0.12:8080".into()
        ]]
    );
    assert_eq!(
        weights(&h, &t),
        vec![(11, 1), (12, 3), (13, 1)],
        "configured weight back"
    );
    assert_eq!((h.counts.down, h.counts.up), (1, 1));
    assert_eq!(h.log.len(), 2);
    assert!(
        h.log[0].what.ends_with("172.16.0.12:8080 down"),
        "{:?}",
        h.log[0]
    );
    assert!(h.log[0].why.contains("refused") && h.log[0].why.contains("inhibit"));
}

#[test]
fn remove_leaves_the_server_out() {
    let (mut h, t) = setup(OnFailure::Remove, None);
    report(&mut h, &t, 11, false, 1);
    report(&mut h, &t, 11, false, 2);
    assert_eq!(weights(&h, &t), vec![(12, 3), (13, 1)]);
}

#[test]
fn quorum_sorry_server_and_withdrawn_vip() {
    let (mut h, t) = setup(OnFailure::Inhibit, Some("172.16.0.99:80"));
    for last in [11, 12, 13] {
        report(&mut h, &t, last, false, 1);
        report(&mut h, &t, last, false, 2);
    }
    assert!(h.quorum_lost.contains(&t[0].0.key));
    assert_eq!(
        h.withdrawn,
        HashSet::from([std::net::IpAddr::from(Ipv4Addr::new(10, 10, 10, 10))])
    );
    let eff = h.effective(&t);
    assert_eq!(eff[0].1.len(), 1);
    let sorry = &eff[0].1[0];
    assert_eq!(sorry.key.addr, Ipv4Addr::new(172, 16, 0, 99));
    assert_eq!(
        (sorry.key.port, sorry.method, sorry.weight),
        (80, Method::Nat, 1)
    );
    assert_eq!(h.counts.quorum_lost, 1);
    // one server back: quorum (1) reached again, the VIP is announced
    report(&mut h, &t, 13, true, 3);
    report(&mut h, &t, 13, true, 4);
    assert!(h.quorum_lost.is_empty() && h.withdrawn.is_empty());
    assert_eq!(weights(&h, &t), vec![(11, 0), (12, 0), (13, 1)]);
    assert_eq!(h.counts.quorum_restored, 1);
}

#[test]
fn a_vip_stays_while_one_of_its_services_has_quorum() {
    let (mut h, mut t) = setup(OnFailure::Inhibit, None);
    // an unchecked service on the same VIP never loses its quorum
    t.push((svc(443), vec![rs(11, 1)]));
    for last in [11, 12, 13] {
        report(&mut h, &t, last, false, 1);
        report(&mut h, &t, last, false, 2);
    }
    assert!(h.quorum_lost.contains(&t[0].0.key));
    assert!(h.withdrawn.is_empty());
    assert_eq!(
        h.effective(&t)[1].1[0].weight,
        1,
        "the unchecked service is untouched"
    );
}

#[test]
fn maintenance_and_sync_keep_state() {
    let (mut h, t) = setup(OnFailure::Inhibit, None);
    let key = JobKey {
        service: t[0].0.key,
        rs: rs(11, 0).key,
    };
    assert_eq!(h.set_enabled(&key, false, &t, 1), Ok(true));
    assert_eq!(h.set_enabled(&key, false, &t, 1), Ok(false));
    assert_eq!(weights(&h, &t)[0], (11, 0));
    // checks passing do not bring a disabled server back
    report(&mut h, &t, 11, true, 2);
    assert_eq!(weights(&h, &t)[0], (11, 0));
    // a re-sync (reload, another server added) keeps state
    report(&mut h, &t, 12, false, 3);
    report(&mut h, &t, 12, false, 4);
    let jobs = h.sync(&t, |_, _, _| None, 5);
    assert_eq!(jobs.len(), 3);
    assert_eq!(weights(&h, &t), vec![(11, 0), (12, 0), (13, 1)]);
    assert_eq!(h.set_enabled(&key, true, &t, 6), Ok(true));
    assert_eq!(weights(&h, &t)[0], (11, 1));
    // a server removed from the table is forgotten; an unknown one is an error
    let fewer = vec![(t[0].0.clone(), vec![rs(11, 1)])];
    assert_eq!(h.sync(&fewer, |_, _, _| None, 7).len(), 1);
    assert_eq!(h.servers.len(), 1);
    let gone = JobKey {
        service: t[0].0.key,
        rs: rs(12, 0).key,
    };
    assert!(h
        .set_enabled(&gone, false, &fewer, 8)
        .unwrap_err()
        .contains("no health check"));
    // a report of a job just removed changes nothing
    assert_eq!(report(&mut h, &t, 12, false, 9), Changed::default());
}

#[test]
fn jobs_target_the_check_port_or_the_vip() {
    let (mut h, t) = setup(OnFailure::Inhibit, None);
    let mut c = check(OnFailure::Inhibit);
    c.port = Some(9000);
    h.services.get_mut(&t[0].0.key).unwrap().checks = vec![(rs(12, 0).key, c)];
    let jobs = h.sync(&t, |_, _, _| None, 0);
    let by = |last: u8| {
        jobs.iter()
            .find(|j| j.rs.ip().v4().octets()[3] == last)
            .unwrap()
    };
    assert_eq!(by(11).target.to_string(), "172.16.0.11:8080");
    assert_eq!(by(12).target.to_string(), "172.16.0.12:9000");
    assert_eq!(by(13).vip.to_string(), "10.10.10.10:8080");
    let mut v = check(OnFailure::Inhibit);
    v.via_vip = true;
    let sh = h.services.get_mut(&t[0].0.key).unwrap();
    sh.check = Some(v);
    sh.checks.clear();
    let bind = |_: &CheckSpec, _: &ServiceSpec, _: &DestSpec| Some("172.16.0.1:0".parse().unwrap());
    let jobs = h.sync(&t, bind, 0);
    assert_eq!(jobs[0].target.to_string(), "10.10.10.10:8080");
    // each server its own client port, stable across syncs, pinned to it
    let mut ports: Vec<u16> = jobs.iter().map(|j| j.bind.unwrap().port()).collect();
    ports.sort();
    assert_eq!(ports, vec![61000, 61001, 61002]);
    assert!(jobs
        .iter()
        .all(|j| j.bind.unwrap().ip().to_string() == "172.16.0.1"));
    let again = h.sync(&t, bind, 1);
    assert_eq!(
        again
            .iter()
            .map(|j| (j.key.clone(), j.bind))
            .collect::<Vec<_>>(),
        jobs.iter()
            .map(|j| (j.key.clone(), j.bind))
            .collect::<Vec<_>>()
    );
    let mut pins: Vec<(u16, u8)> = h
        .pins()
        .map(|(_, c, d)| (c.port(), d.addr.v4().octets()[3]))
        .collect();
    pins.sort();
    assert_eq!(pins.len(), 3);
    // a removed via-VIP server stays at weight 0 (its probes must reach it)
    for j in &jobs {
        h.services
            .get_mut(&t[0].0.key)
            .unwrap()
            .check
            .as_mut()
            .unwrap()
            .on_failure = OnFailure::Remove;
        let _ = j;
    }
    let jobs = h.sync(&t, bind, 2);
    assert!(jobs.iter().all(|j| j.spec.on_failure == OnFailure::Remove));
    report(&mut h, &t, 11, false, 3);
    report(&mut h, &t, 11, false, 4);
    assert_eq!(weights(&h, &t)[0], (11, 0));
}

/// What `dirigoctl vips` says of the VIP: the live servers of its checked
/// service, and of an unchecked one beside it; withdrawn with its quorum.
#[test]
fn announce_reasons_follow_the_quorum() {
    use crate::daemon::announce::wants_of;
    let (mut h, mut t) = setup(OnFailure::Inhibit, None);
    let announced = |h: &HealthState, t: &Table| -> HashSet<std::net::IpAddr> {
        t.iter()
            .map(|(s, _)| s.key.vip)
            .filter(|v| !h.withdrawn.contains(v))
            .collect()
    };
    let w = wants_of(&t, &h, &announced(&h, &t));
    assert_eq!(w.len(), 1);
    assert!(w[0].announce);
    assert_eq!(w[0].why, "quorum: TCP 10.10.10.10:8080 3/3 up");
    for (last, now) in [(11, 1), (11, 2), (12, 3), (12, 4), (13, 5), (13, 6)] {
        report(&mut h, &t, last, false, now);
    }
    let w = wants_of(&t, &h, &announced(&h, &t));
    assert!(!w[0].announce);
    assert_eq!(w[0].why, "no quorum: TCP 10.10.10.10:8080 0/3 up");
    // an unchecked service on the VIP keeps it announced
    t.push((svc(9090), vec![rs(11, 1)]));
    h.update_quorum(&t, 7);
    let w = wants_of(&t, &h, &announced(&h, &t));
    assert!(w[0].announce);
    assert_eq!(
        w[0].why,
        "quorum: TCP 10.10.10.10:8080 0/3 up, TCP 10.10.10.10:9090 not checked"
    );
}

/// An IPv6 VIP is withdrawn with its services' quorum like an IPv4 one
/// (the set `[announce]` and neighbour discovery follow), and comes back.
#[test]
fn an_ipv6_vip_is_withdrawn_with_its_quorum() {
    use crate::daemon::announce::wants_of;
    let vip6: std::net::IpAddr = "2001:db8::10".parse().unwrap();
    let rs6 = |last: u16| std::net::IpAddr::from([0x2001, 0xdb8, 2, 0, 0, 0, 0, last]);
    let (_, t4) = setup(OnFailure::Inhibit, None);
    let mut s = t4[0].0.clone();
    s.key.vip = vip6;
    let dests: Vec<DestSpec> = t4[0]
        .1
        .iter()
        .map(|d| {
            let mut d = d.clone();
            d.key.addr = rs6(u16::from(d.key.addr.v4().octets()[3]));
            d
        })
        .collect();
    let t: Table = vec![(s.clone(), dests.clone())];
    let mut h = HealthState::default();
    h.services.insert(
        s.key,
        ServiceHealth {
            check: Some(check(OnFailure::Inhibit)),
            checks: vec![],
            quorum: Some(1),
            sorry: None,
        },
    );
    assert_eq!(h.sync(&t, |_, _, _| None, 0).len(), 3);
    let fail = |h: &mut HealthState, d: &DestSpec, ok: bool, now: u64| {
        let r = Report {
            key: JobKey {
                service: s.key,
                rs: d.key,
            },
            outcome: Outcome {
                ok,
                latency_us: 5,
                detail: "x".into(),
                weight: None,
            },
            at: Instant::now(),
        };
        h.report(r, &t, now);
    };
    let mut now = 1;
    for d in &dests {
        for _ in 0..2 {
            fail(&mut h, d, false, now);
            now += 1;
        }
    }
    assert_eq!(h.withdrawn, HashSet::from([vip6]));
    let announced: HashSet<std::net::IpAddr> = [vip6]
        .into_iter()
        .filter(|v| !h.withdrawn.contains(v))
        .collect();
    let w = wants_of(&t, &h, &announced);
    assert_eq!((w[0].vip, w[0].announce), (vip6, false));
    assert_eq!(w[0].why, "no quorum: TCP [2001:db8::10]:8080 0/3 up");
    for _ in 0..2 {
        fail(&mut h, &dests[0], true, now);
        now += 1;
    }
    assert!(h.withdrawn.is_empty());
}

/// A report with a weight change (a file check's).
fn reweigh(h: &mut HealthState, t: &Table, last: u8, change: Option<i64>, ok: bool) -> Changed {
    let r = Report {
        key: JobKey {
            service: t[0].0.key,
            rs: rs(last, 0).key,
        },
        outcome: Outcome {
            ok,
            latency_us: 5,
            detail: "value".into(),
            weight: change,
        },
        at: Instant::now(),
    };
    h.report(r, t, 10)
}

#[test]
fn a_weight_change_is_added_to_the_configured_weight_within_its_range() {
    let (mut h, t) = setup(OnFailure::Inhibit, None);
    assert_eq!(weights(&h, &t), vec![(11, 1), (12, 3), (13, 1)]);
    // +4 on rs11: 1 + 4, at once, and logged
    assert!(reweigh(&mut h, &t, 11, Some(4), true).table);
    assert_eq!(weights(&h, &t), vec![(11, 5), (12, 3), (13, 1)]);
    assert!(h
        .log
        .back()
        .unwrap()
        .what
        .contains("weight change +0 -> +4"));
    // the same change again changes nothing
    assert!(!reweigh(&mut h, &t, 11, Some(4), true).table);
    // below zero: 0; above 65535: 65535
    assert!(reweigh(&mut h, &t, 12, Some(-10), true).table);
    assert!(reweigh(&mut h, &t, 13, Some(1 << 20), true).table);
    assert_eq!(weights(&h, &t), vec![(11, 5), (12, 0), (13, 65535)]);
    // a failed check leaves the change; the server goes down after fall
    assert!(!reweigh(&mut h, &t, 11, None, false).table);
    assert!(reweigh(&mut h, &t, 11, None, false).table);
    assert_eq!(weights(&h, &t), vec![(11, 0), (12, 0), (13, 65535)]);
    // back up (rise 2): with its change
    reweigh(&mut h, &t, 11, Some(4), true);
    assert!(reweigh(&mut h, &t, 11, Some(4), true).table);
    assert_eq!(weights(&h, &t), vec![(11, 5), (12, 0), (13, 65535)]);
}

#[test]
fn the_quorum_counts_the_weights_with_their_changes() {
    let (mut h, t) = setup(OnFailure::Inhibit, None);
    h.services.get_mut(&t[0].0.key).unwrap().quorum = Some(5);
    h.update_quorum(&t, 0);
    assert!(h.quorum_lost.is_empty(), "1 + 3 + 1 = 5");
    reweigh(&mut h, &t, 12, Some(-1), true);
    assert_eq!(h.quorum_lost.len(), 1, "1 + 2 + 1 < 5");
    reweigh(&mut h, &t, 11, Some(1), true);
    assert!(h.quorum_lost.is_empty(), "2 + 2 + 1 = 5");
}
