//! rr and wrr.

use super::*;

fn seq(prep: &Prepared, l: &[DestLoad], n: usize) -> Vec<usize> {
    let mut cur = Cursor::default();
    (0..n)
        .map(|_| pick(prep, &mut cur, l, &key(1, 1)).unwrap_or(usize::MAX))
        .collect()
}

fn max_run(s: &[usize]) -> usize {
    let (mut best, mut run) = (0, 0);
    for (i, x) in s.iter().enumerate() {
        run = if i > 0 && s[i - 1] == *x { run + 1 } else { 1 };
        best = best.max(run);
    }
    best
}

#[test]
fn rr_cycles_in_order_and_skips_unavailable() {
    let prep = Prepared::build(SchedKind::Rr, SchedFlags::default(), &[1, 5, 1]);
    assert_eq!(seq(&prep, &loads(&[1, 5, 1]), 7), [0, 1, 2, 0, 1, 2, 0]);
    let mut l = loads(&[1, 0, 1, 1]);
    l[3].overloaded = true;
    assert_eq!(seq(&prep, &l, 5), [0, 2, 0, 2, 0]);
}

#[test]
fn rr_servers_added_and_removed() {
    let prep = Prepared::build(SchedKind::Rr, SchedFlags::default(), &[1, 1, 1]);
    let mut cur = Cursor::default();
    let k = key(1, 1);
    assert_eq!(pick(&prep, &mut cur, &loads(&[1, 1, 1]), &k), Some(0));
    assert_eq!(pick(&prep, &mut cur, &loads(&[1, 1, 1]), &k), Some(1));
    // Grown to 5: carries on from where it was.
    let big = loads(&[1; 5]);
    let prep5 = Prepared::build(SchedKind::Rr, SchedFlags::default(), &[1; 5]);
    let got: Vec<_> = (0..5).map(|_| pick(&prep5, &mut cur, &big, &k)).collect();
    assert_eq!(got, [Some(2), Some(3), Some(4), Some(0), Some(1)]);
    // Shrunk to 2 with the cursor past the end: wraps, no panic.
    let mut cur = Cursor::starting_at(4);
    let prep2 = Prepared::build(SchedKind::Rr, SchedFlags::default(), &[1; 2]);
    assert_eq!(pick(&prep2, &mut cur, &loads(&[1, 1]), &k), Some(0));
}

#[test]
fn wrr_1_2_3_matches_ipvs_interleaving() {
    let w = [1, 2, 3];
    let prep = Prepared::build(SchedKind::Wrr, SchedFlags::default(), &w);
    // ip_vs_wrr.c from the list head: cw = 3: c; cw = 2: b c; cw = 1: a b c.
    assert_eq!(prep.wrr_sequence().unwrap(), [2, 1, 2, 0, 1, 2]);
    let s = seq(&prep, &loads(&w), 60_000);
    let mut t = [0usize; 3];
    for &x in &s {
        t[x] += 1;
    }
    // Exactly 1:2:3 (well within the 1% asked).
    assert_eq!(t, [10_000, 20_000, 30_000]);
    for (i, &c) in t.iter().enumerate() {
        let want = 60_000.0 * w[i] as f64 / 6.0;
        assert!((c as f64 - want).abs() / want < 0.01);
    }
    // Interleaved: the longest run is c's across a cycle boundary (c | c).
    assert_eq!(max_run(&s), 2);
}

#[test]
fn wrr_uses_gcd_stepping() {
    // Weights 2:4:6 behave like 1:2:3 (gcd 2, mw = 6 - 1 = 5).
    let prep = Prepared::build(SchedKind::Wrr, SchedFlags::default(), &[2, 4, 6]);
    assert_eq!(prep.wrr_sequence().unwrap(), [2, 1, 2, 0, 1, 2]);
    // 4:3:2 -> cw 4: a; 3: a b; 2: a b c; 1: a b c.
    let prep = Prepared::build(SchedKind::Wrr, SchedFlags::default(), &[4, 3, 2]);
    assert_eq!(prep.wrr_sequence().unwrap(), [0, 0, 1, 0, 1, 2, 0, 1, 2]);
    // Equal weights: plain round robin.
    let prep = Prepared::build(SchedKind::Wrr, SchedFlags::default(), &[7, 7, 7]);
    assert_eq!(prep.wrr_sequence().unwrap(), [0, 1, 2]);
}

#[test]
fn wrr_skips_unavailable_like_ipvs() {
    let prep = Prepared::build(SchedKind::Wrr, SchedFlags::default(), &[1, 2, 3]);
    let mut l = loads(&[1, 2, 3]);
    l[2].overloaded = true;
    // Sequence c b c a b c without c: b a b.
    assert_eq!(seq(&prep, &l, 6), [1, 0, 1, 1, 0, 1]);
    // Only a rare server available: the slow path finds it at once.
    let prep = Prepared::build(SchedKind::Wrr, SchedFlags::default(), &[1, 1000]);
    let mut l = loads(&[1, 1000]);
    l[1].overloaded = true;
    assert_eq!(seq(&prep, &l, 3), [0, 0, 0]);
}

#[test]
fn wrr_weight_change_and_zero_weight() {
    let prep = Prepared::build(SchedKind::Wrr, SchedFlags::default(), &[1, 0, 1]);
    assert_eq!(prep.wrr_sequence().unwrap(), [0, 2]);
    let prep = Prepared::build(SchedKind::Wrr, SchedFlags::default(), &[3, 1]);
    let t = tally(&prep, &loads(&[3, 1]), 4000);
    assert_eq!(t, [3000, 1000, 0]);
    let prep = Prepared::build(SchedKind::Wrr, SchedFlags::default(), &[1, 3]);
    let t = tally(&prep, &loads(&[1, 3]), 4000);
    assert_eq!(t, [1000, 3000, 0]);
}

#[test]
fn wrr_huge_weights_are_scaled() {
    let w = [1_000_000, 3_000_001, 65_535, 7];
    let prep = Prepared::build(SchedKind::Wrr, SchedFlags::default(), &w);
    let len = prep.wrr_sequence().unwrap().len();
    assert!(len as u64 <= crate::lb::sched::rr::WRR_MAX_SEQ + 4, "{len}");
    // Whole cycles only: a cycle front-loads the heaviest server.
    let picks = 6 * len;
    let t = tally(&prep, &loads(&w), picks);
    let total: u64 = w.iter().map(|&x| x as u64).sum();
    for i in 0..3 {
        let want = picks as f64 * w[i] as f64 / total as f64;
        assert!((t[i] as f64 - want).abs() / want < 0.01, "{t:?}");
    }
    assert!(t[3] > 0);
}
