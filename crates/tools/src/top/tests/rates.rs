//! The rate maths: deltas over the interval, resets, appearing and
//! disappearing services, real servers, workers and drop reasons.

use super::*;
use crate::top::rates::{grew, per_sec, Frame, Rates};
use proptest::prelude::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn rates_are_deltas_over_the_interval() {
    let (t0, t1) = instants(2);
    let f = Frame::between(Some(&lab(t0, 100)), &lab(t1, 300));
    assert_eq!(f.secs, Some(2.0));
    // services sorted by key: TCP before UDP
    let tcp = &f.services[0];
    assert_eq!(tcp.key, key(Proto::Tcp, [10, 99, 0, 100], 80));
    assert_eq!(tcp.sched, "rr");
    // rs1..rs3 grew 200, 400, 600 conns: 1200 in 2 s
    let r = tcp.rate.expect("tcp rate");
    assert!(close(r.cps, 600.0), "{r:?}");
    assert!(close(r.inpps, 6000.0), "{r:?}");
    assert!(close(r.outpps, 3000.0), "{r:?}");
    assert!(close(r.inbps, 600_000.0), "{r:?}");
    assert!(close(r.outbps, 300_000.0), "{r:?}");
    let rs2 = &tcp.dests[1];
    assert_eq!(rs2.addr.to_string(), "10.98.0.12:80");
    assert_eq!(rs2.method, "Route");
    let r2 = rs2.rate.expect("rs2 rate");
    assert!(close(r2.cps, 200.0) && close(r2.inpps, 2000.0), "{r2:?}");
    // active/inactive summed over the real servers
    assert_eq!((tcp.active, tcp.inactive), (1 + 2 + 3, 3));
    assert_eq!((f.totals.active, f.totals.inactive), (12, 6));
    let t = f.totals.rate.expect("totals");
    assert!(close(t.cps, 1200.0), "{t:?}");
    // the worker: rx 10000 -> 30000 in 2 s, busy 0.1 s -> 0.3 s
    let w = &f.workers[0];
    assert_eq!((w.lcore, w.conns, w.size), (1, 12, 65536));
    assert!(close(w.rx_pps.unwrap(), 10_000.0), "{w:?}");
    assert!(close(w.tx_pps.unwrap(), 5_000.0), "{w:?}");
    assert!(close(w.drop_pps.unwrap(), 100.0), "{w:?}");
    assert!(close(w.cps.unwrap(), 1_000.0), "{w:?}");
    assert!(close(w.busy.unwrap(), 0.1), "{w:?}");
    assert!(close(w.fill(), 12.0 / 65536.0));
    // drops: only the non-zero reason, 200 in 2 s
    assert_eq!(f.drops.len(), 1, "{:?}", f.drops);
    assert_eq!(f.drops[0].reason, "no_service");
    assert_eq!(f.drops[0].count, 300);
    assert!(close(f.drops[0].rate.unwrap(), 100.0));
    assert!(close(f.totals.drop_pps.unwrap(), 100.0));
}

#[test]
fn the_first_sample_has_counts_but_no_rates() {
    let (t0, _) = instants(0);
    let f = Frame::between(None, &lab(t0, 100));
    assert_eq!(f.secs, None);
    assert_eq!(f.services.len(), 2);
    assert!(f.services.iter().all(|s| s.rate.is_none()));
    assert!(f
        .services
        .iter()
        .flat_map(|s| &s.dests)
        .all(|d| d.rate.is_none()));
    assert_eq!(f.totals.rate, None);
    assert_eq!(f.totals.drop_pps, None);
    assert_eq!(f.workers[0].rx_pps, None);
    assert_eq!(f.workers[0].busy, None);
    assert_eq!(f.drops[0].rate, None);
    assert_eq!((f.totals.active, f.workers[0].conns), (12, 12));
}

#[test]
fn no_time_between_samples_gives_no_rates() {
    let (t0, _) = instants(0);
    let f = Frame::between(Some(&lab(t0, 100)), &lab(t0, 200));
    assert_eq!(f.secs, None);
    assert!(f.services.iter().all(|s| s.rate.is_none()));
}

#[test]
fn a_zeroed_counter_counts_from_zero_never_negative() {
    let (t0, t1) = instants(2);
    let prev = lab(t0, 1000);
    // `dirigoadm -Z` between the polls: the service's counters restarted
    // and counted 40 connections since; the drop counter too (a restarted
    // daemon)
    let mut cur = lab(t1, 1000);
    cur.list.services[1].stats = stats(40);
    cur.list.services[1].dests[0].stats = stats(4);
    cur.lcores[0].rx_packets = 10;
    cur.lcores[0].busy_ns = Some(1);
    cur.drops[0].count = 6;
    let f = Frame::between(Some(&prev), &cur);
    let tcp = f.services[0].rate.unwrap();
    assert!(close(tcp.cps, 20.0), "{tcp:?}");
    assert!(close(tcp.inpps, 200.0), "{tcp:?}");
    let rs1 = f.services[0].dests[0].rate.unwrap();
    assert!(close(rs1.cps, 2.0), "{rs1:?}");
    // an unchanged counter is 0, not negative
    let rs2 = f.services[0].dests[1].rate.unwrap();
    assert_eq!(rs2, Rates::default());
    let w = &f.workers[0];
    assert!(close(w.rx_pps.unwrap(), 5.0), "{w:?}");
    assert!(w.busy.unwrap() >= 0.0);
    assert!(close(f.drops[0].rate.unwrap(), 3.0));
    let all = f.services.iter().flat_map(|s| {
        s.rate
            .into_iter()
            .chain(s.dests.iter().filter_map(|d| d.rate))
    });
    for r in all {
        for v in [r.cps, r.inpps, r.outpps, r.inbps, r.outbps] {
            assert!(v >= 0.0, "{r:?}");
        }
    }
}

#[test]
fn services_and_real_servers_that_come_and_go() {
    let (t0, t1) = instants(1);
    let mut prev = lab(t0, 10);
    let mut cur = lab(t1, 20);
    // the UDP service is deleted; a new one appears
    cur.list.services.remove(0);
    let new = key(Proto::Tcp, [10, 99, 0, 101], 443);
    cur.list.services.push(service(
        new,
        SchedKind::Wlc,
        vec![dest([10, 98, 0, 21], 0, 7, 1, 0)],
    ));
    // rs3 of the TCP service leaves, rs4 joins
    let tcp = &mut cur.list.services[0];
    tcp.dests.pop();
    tcp.dests.push(dest([10, 98, 0, 14], 80, 5, 0, 0));
    // a worker that was not there before (a restart with more lcores)
    cur.lcores.push(worker(2, 50, 1, None));
    prev.drops.clear();
    let f = Frame::between(Some(&prev), &cur);
    let names: Vec<String> = f
        .services
        .iter()
        .map(|s| format!("{:?} {}:{}", s.key.proto, s.key.vip, s.key.port))
        .collect();
    assert_eq!(names, ["Tcp 10.99.0.100:80", "Tcp 10.99.0.101:443"]);
    assert!(f.services[0].rate.is_some());
    assert!(f.services[1].rate.is_none(), "new service: no rate yet");
    // the new service's real server on port 0 shows the service's port
    assert_eq!(f.services[1].dests[0].addr.to_string(), "10.98.0.21:443");
    assert_eq!(f.services[1].sched, "wlc");
    let dests: Vec<(String, bool)> = f.services[0]
        .dests
        .iter()
        .map(|d| (d.addr.to_string(), d.rate.is_some()))
        .collect();
    assert_eq!(
        dests,
        [
            ("10.98.0.11:80".to_string(), true),
            ("10.98.0.12:80".to_string(), true),
            ("10.98.0.14:80".to_string(), false),
        ]
    );
    // the totals add only the services with a rate
    let t = f.totals.rate.unwrap();
    assert!(close(t.cps, f.services[0].rate.unwrap().cps), "{t:?}");
    assert!(f.workers[0].rx_pps.is_some() && f.workers[1].rx_pps.is_none());
    // a drop reason new since the last poll: its count, no rate
    assert_eq!(f.drops[0].rate, None);
    assert_eq!(f.totals.drop_pps, Some(0.0));
}

#[test]
fn drops_fastest_first_and_busy_clamped() {
    let (t0, t1) = instants(1);
    let mut prev = lab(t0, 10);
    let mut cur = lab(t1, 10);
    prev.drops = vec![drop("a_slow", 100), drop("b_fast", 5), drop("c_still", 50)];
    cur.drops = vec![
        drop("a_slow", 101),
        drop("b_fast", 500),
        drop("c_still", 50),
    ];
    // more busy time than wall time (clock skew between the readings)
    prev.lcores[0].busy_ns = Some(0);
    cur.lcores[0].busy_ns = Some(3_000_000_000);
    let f = Frame::between(Some(&prev), &cur);
    let order: Vec<&str> = f.drops.iter().map(|d| d.reason.as_str()).collect();
    assert_eq!(order, ["b_fast", "a_slow", "c_still"]);
    assert_eq!(f.workers[0].busy, Some(1.0));
    // only workers are listed (the main lcore has no table)
    let mut cur2 = cur.clone();
    cur2.lcores[0].role = "main".into();
    assert!(Frame::between(Some(&prev), &cur2).workers.is_empty());
}

#[test]
fn a_table_of_size_zero_is_not_a_division_by_zero() {
    let (t0, _) = instants(0);
    let mut s = lab(t0, 1);
    s.list.conn_tab_size = 0;
    assert_eq!(Frame::between(None, &s).workers[0].fill(), 0.0);
}

proptest! {
    #[test]
    fn growth_is_never_negative_and_exact_when_counting_up(
        prev in any::<u64>(), cur in any::<u64>(), ms in 1u64..100_000
    ) {
        let g = grew(prev, cur);
        prop_assert!(g <= cur.max(cur.wrapping_sub(prev)));
        if cur >= prev {
            prop_assert_eq!(g, cur - prev);
        } else {
            prop_assert_eq!(g, cur);
        }
        let r = per_sec(prev, cur, Some(ms as f64 / 1000.0)).unwrap();
        prop_assert!(r >= 0.0 && r.is_finite());
    }
}
