//! lc, wlc, sed, nq, fo.

use super::*;

fn ld(weight: u32, active: u32, inactive: u32) -> DestLoad {
    DestLoad {
        weight,
        active,
        inactive,
        overloaded: false,
    }
}

fn one(kind: SchedKind, l: &[DestLoad]) -> Option<usize> {
    let prep = Prepared::build(kind, SchedFlags::default(), &[]);
    pick(&prep, &mut Cursor::default(), l, &key(1, 1))
}

#[test]
fn lc_uses_ipvs_overhead_and_first_minimum() {
    // 1*256 + 0 = 256 against 0*256 + 255 = 255.
    assert_eq!(one(SchedKind::Lc, &[ld(1, 1, 0), ld(1, 0, 255)]), Some(1));
    // 256 against 256: the first wins.
    assert_eq!(one(SchedKind::Lc, &[ld(1, 1, 0), ld(1, 0, 256)]), Some(0));
    // Weights do not matter beyond availability.
    assert_eq!(one(SchedKind::Lc, &[ld(100, 2, 0), ld(1, 1, 0)]), Some(1));
    assert_eq!(one(SchedKind::Lc, &[ld(0, 0, 0), ld(1, 9, 9)]), Some(1));
    // All equal: the first.
    assert_eq!(one(SchedKind::Lc, &[ld(1, 3, 3); 4]), Some(0));
}

#[test]
fn wlc_compares_by_cross_multiplication() {
    // 768/3 == 512/2: tie, the first wins.
    assert_eq!(one(SchedKind::Wlc, &[ld(3, 3, 0), ld(2, 2, 0)]), Some(0));
    assert_eq!(one(SchedKind::Wlc, &[ld(2, 2, 0), ld(3, 3, 0)]), Some(0));
    // 769/3 > 512/2.
    assert_eq!(one(SchedKind::Wlc, &[ld(3, 3, 1), ld(2, 2, 0)]), Some(1));
    // A quiesced server with no load is still never picked.
    assert_eq!(one(SchedKind::Wlc, &[ld(5, 9, 0), ld(0, 0, 0)]), Some(0));
    // Large values do not overflow.
    let big = u32::MAX;
    assert_eq!(
        one(SchedKind::Wlc, &[ld(1, big, big), ld(big, big, big)]),
        Some(1)
    );
    // Idle servers: all overheads 0, the first.
    assert_eq!(one(SchedKind::Wlc, &[ld(1, 0, 0), ld(9, 0, 0)]), Some(0));
}

#[test]
fn sed_uses_active_plus_one() {
    // (0+1)/1 = 1 against (1+1)/3 = 0.67.
    assert_eq!(one(SchedKind::Sed, &[ld(1, 0, 0), ld(3, 1, 0)]), Some(1));
    // Inactive connections do not count.
    assert_eq!(one(SchedKind::Sed, &[ld(1, 0, 1000), ld(1, 1, 0)]), Some(0));
    // (2+1)/3 == (0+1)/1: tie, the first.
    assert_eq!(one(SchedKind::Sed, &[ld(3, 2, 0), ld(1, 0, 0)]), Some(0));
}

#[test]
fn nq_prefers_an_idle_server() {
    // sed would pick 1; nq takes the idle one.
    assert_eq!(one(SchedKind::Nq, &[ld(3, 1, 0), ld(1, 0, 5)]), Some(1));
    assert_eq!(one(SchedKind::Nq, &[ld(1, 0, 0), ld(3, 1, 0)]), Some(0));
    // No idle one: as sed.
    assert_eq!(one(SchedKind::Nq, &[ld(1, 1, 0), ld(3, 2, 0)]), Some(1));
    // A quiesced idle server is not taken.
    assert_eq!(one(SchedKind::Nq, &[ld(0, 0, 0), ld(3, 2, 0)]), Some(1));
}

#[test]
fn fo_takes_highest_weight_available() {
    assert_eq!(
        one(SchedKind::Fo, &[ld(1, 0, 0), ld(5, 9, 9), ld(3, 0, 0)]),
        Some(1)
    );
    assert_eq!(one(SchedKind::Fo, &[ld(5, 0, 0), ld(5, 0, 0)]), Some(0));
    let mut l = [ld(1, 0, 0), ld(5, 0, 0), ld(3, 0, 0)];
    l[1].overloaded = true;
    assert_eq!(one(SchedKind::Fo, &l), Some(2));
    l[1].overloaded = false;
    l[1].weight = 0;
    assert_eq!(one(SchedKind::Fo, &l), Some(2));
}

#[test]
fn least_kinds_follow_weight_changes_and_membership() {
    // Weight change: the same loads, different answer.
    let l = [ld(1, 2, 0), ld(1, 3, 0)];
    assert_eq!(one(SchedKind::Wlc, &l), Some(0));
    let l = [ld(1, 2, 0), ld(2, 3, 0)];
    assert_eq!(one(SchedKind::Wlc, &l), Some(1));
    // A new idle server takes the next connection.
    let l = [ld(1, 2, 0), ld(2, 3, 0), ld(1, 0, 0)];
    for kind in [SchedKind::Lc, SchedKind::Wlc, SchedKind::Sed, SchedKind::Nq] {
        assert_eq!(one(kind, &l), Some(2), "{kind:?}");
    }
}

/// Simulated long/short connection mix under `kind`: returns the time-average
/// of active connections per server.
fn simulate(kind: SchedKind, weights: &[u32], seed: u64) -> Vec<f64> {
    let prep = Prepared::build(kind, SchedFlags::default(), weights);
    let mut l = loads(weights);
    let mut rng = Rng::new(seed);
    let mut cur = Cursor::default();
    // Connections ending at each tick (a calendar ring; durations < 1600).
    let mut ending: Vec<Vec<usize>> = vec![Vec::new(); 1600];
    let mut sum = vec![0f64; weights.len()];
    let (ticks, warmup, per_tick) = (20_000u64, 2_000u64, 10);
    for now in 0..ticks {
        let slot = (now % 1600) as usize;
        for s in std::mem::take(&mut ending[slot]) {
            l[s].active -= 1;
        }
        for _ in 0..per_tick {
            let s = pick(&prep, &mut cur, &l, &key(1, 1)).expect("a server");
            l[s].active += 1;
            // 20% long (500..1500 ticks), 80% short (1..20 ticks).
            let dur = if rng.below(5) == 0 {
                500 + rng.below(1000)
            } else {
                1 + rng.below(20)
            };
            ending[((now + dur) % 1600) as usize].push(s);
        }
        if now >= warmup {
            for (i, x) in l.iter().enumerate() {
                sum[i] += x.active as f64;
            }
        }
    }
    sum.iter().map(|s| s / (ticks - warmup) as f64).collect()
}

#[test]
fn wlc_keeps_active_connections_proportional_to_weights() {
    for weights in [&[1u32, 2, 3][..], &[5, 1, 1, 3][..], &[1, 1, 1][..]] {
        let avg = simulate(SchedKind::Wlc, weights, 42);
        let total: f64 = avg.iter().sum();
        let wsum: u32 = weights.iter().sum();
        for (i, &a) in avg.iter().enumerate() {
            let want = total * weights[i] as f64 / wsum as f64;
            let err = (a - want).abs() / want;
            assert!(
                err < 0.05,
                "{weights:?}: {avg:?} server {i} off by {err:.3}"
            );
        }
    }
    // The measure has teeth: lc ignores weights and fails it badly.
    let avg = simulate(SchedKind::Lc, &[1, 2, 3], 42);
    let total: f64 = avg.iter().sum();
    assert!((avg[0] / total - 1.0 / 6.0).abs() > 0.1, "{avg:?}");
}

#[test]
fn sed_also_tracks_weights_under_load() {
    let weights = [1u32, 2, 3];
    let avg = simulate(SchedKind::Sed, &weights, 7);
    let total: f64 = avg.iter().sum();
    for (i, &a) in avg.iter().enumerate() {
        let want = total * weights[i] as f64 / 6.0;
        assert!((a - want).abs() / want < 0.05, "{avg:?}");
    }
}

mod model {
    use super::*;
    use proptest::prelude::*;

    /// A [`Loads`] with `count` and `load` only: the trait's own `each`.
    struct ByIndex<'a>(&'a [DestLoad]);

    impl Loads for ByIndex<'_> {
        fn count(&self) -> usize {
            self.0.len()
        }
        fn load(&self, i: usize) -> Option<DestLoad> {
            self.0.get(i).copied()
        }
    }

    /// The least-connection family written plainly: the first available
    /// server with the smallest overhead / weight, compared exactly in 128
    /// bits (lc: overhead alone; fo: the first highest weight; nq: the
    /// first idle server, else as sed).
    fn reference(kind: SchedKind, l: &[DestLoad]) -> Option<usize> {
        let oh = |d: &DestLoad| match kind {
            SchedKind::Sed | SchedKind::Nq => d.active as u128 + 1,
            _ => ((d.active as u128) << 8) + d.inactive as u128,
        };
        let avail: Vec<usize> = (0..l.len()).filter(|&i| l[i].available()).collect();
        if kind == SchedKind::Nq {
            if let Some(&i) = avail.iter().find(|&&i| l[i].active == 0) {
                return Some(i);
            }
        }
        let mut best: Option<usize> = None;
        for &i in &avail {
            let better = match best {
                None => true,
                Some(b) => match kind {
                    SchedKind::Lc => oh(&l[i]) < oh(&l[b]),
                    SchedKind::Fo => l[i].weight > l[b].weight,
                    _ => oh(&l[i]) * (l[b].weight as u128) < oh(&l[b]) * (l[i].weight as u128),
                },
            };
            if better {
                best = Some(i);
            }
        }
        best
    }

    /// Counts on both sides of 2^32 for the overhead (active * 256 +
    /// inactive crosses it at active = 2^24), weights small and huge; or
    /// small ones that tie.
    fn arb_load() -> impl Strategy<Value = DestLoad> {
        prop_oneof![big_load(), tie_load()]
    }

    /// Few values, so that equal ratios (ties: the first wins) are common.
    fn tie_load() -> impl Strategy<Value = DestLoad> {
        (0u32..3, 0u32..2, 0u32..3).prop_map(|(weight, active, inactive)| DestLoad {
            weight,
            active,
            inactive,
            overloaded: false,
        })
    }

    fn big_load() -> impl Strategy<Value = DestLoad> {
        (
            prop_oneof![Just(0u32), 1u32..8, any::<u32>()],
            prop_oneof![0u32..4, (1u32 << 24) - 2..(1u32 << 24) + 2, any::<u32>()],
            prop_oneof![0u32..4, u32::MAX - 300..=u32::MAX, any::<u32>()],
            prop::bool::weighted(0.1),
        )
            .prop_map(|(weight, active, inactive, overloaded)| DestLoad {
                weight,
                active,
                inactive,
                overloaded,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// lc, wlc, sed, nq and fo pick what the plain model picks, over a
        /// slice (its own walk) and over a [`Loads`] read by index (the
        /// trait's walk).
        #[test]
        fn least_family_picks_what_the_model_picks(
            kind in prop::sample::select(vec![
                SchedKind::Lc, SchedKind::Wlc, SchedKind::Sed, SchedKind::Nq, SchedKind::Fo,
            ]),
            l in prop::collection::vec(arb_load(), 0..10),
        ) {
            let prep = Prepared::build(kind, SchedFlags::default(), &[]);
            let want = reference(kind, &l);
            let k = key(1, 1);
            prop_assert_eq!(pick(&prep, &mut Cursor::default(), &l, &k), want);
            prop_assert_eq!(pick_with(&prep, &mut Cursor::default(), &ByIndex(&l), &k), want);
        }
    }
}
