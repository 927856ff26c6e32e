//! Scheduler tests: shared helpers.

use super::*;
use crate::net::meta::FlowKey;

mod hashing;
mod least;
mod maglev;
mod order;
mod rr;
mod tree;

/// xorshift64*: a small seeded generator for reproducible tests.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Loads with these weights, idle.
pub(super) fn loads(weights: &[u32]) -> Vec<DestLoad> {
    weights
        .iter()
        .map(|&weight| DestLoad {
            weight,
            ..DestLoad::default()
        })
        .collect()
}

/// A flow from `src:sport` to a fixed VIP.
pub(super) fn key(src: u32, sport: u16) -> FlowKey {
    FlowKey {
        src,
        dst: 0x0a00_0001,
        sport,
        dport: 80,
        proto: crate::net::meta::PROTO_TCP,
    }
}

/// `count` picks, tallied per server (None counted at index `n`).
pub(super) fn tally(prep: &Prepared, l: &[DestLoad], count: usize) -> Vec<usize> {
    let mut cur = Cursor::default();
    let mut t = vec![0; l.len() + 1];
    for i in 0..count {
        let k = key(0x0b00_0000 + i as u32, 1000 + (i % 5000) as u16);
        match pick(prep, &mut cur, l, &k) {
            Some(s) => t[s] += 1,
            None => t[l.len()] += 1,
        }
    }
    t
}

#[test]
fn every_kind_returns_none_without_servers_or_weights() {
    for kind in SchedKind::ALL {
        for weights in [&[][..], &[0, 0, 0][..]] {
            let prep = Prepared::build(kind, SchedFlags::default(), weights);
            let l = loads(weights);
            let t = tally(&prep, &l, 50);
            assert_eq!(t[l.len()], 50, "{kind:?} {weights:?}");
        }
        // Weighted in the build but all quiesced / overloaded live.
        let prep = Prepared::build(
            kind,
            SchedFlags {
                fallback: true,
                port: false,
            },
            &[1, 2, 3],
        );
        let mut l = loads(&[0, 2, 3]);
        l[1].overloaded = true;
        l[2].overloaded = true;
        assert_eq!(tally(&prep, &l, 50)[3], 50, "{kind:?}");
    }
}

#[test]
fn every_kind_with_one_server_picks_it() {
    for kind in SchedKind::ALL {
        let prep = Prepared::build(kind, SchedFlags::default(), &[5]);
        assert_eq!(tally(&prep, &loads(&[5]), 100), vec![100, 0], "{kind:?}");
    }
}

#[test]
fn every_kind_tolerates_short_loads() {
    // A loads slice shorter than the prepared list must not panic: the
    // missing servers are unavailable.
    for kind in SchedKind::ALL {
        let prep = Prepared::build(kind, SchedFlags::default(), &[1, 1, 1, 1]);
        let l = loads(&[1]);
        let mut cur = Cursor::starting_at(7);
        for i in 0..200 {
            let r = pick(&prep, &mut cur, &l, &key(i, 1));
            assert!(r.is_none() || r == Some(0), "{kind:?} {r:?}");
        }
    }
}

#[test]
fn every_kind_skips_quiesced_and_overloaded() {
    for kind in SchedKind::ALL {
        let flags = SchedFlags {
            fallback: true,
            port: true,
        };
        let prep = Prepared::build(kind, flags, &[3, 3, 3, 3]);
        let mut l = loads(&[3, 0, 3, 3]);
        l[2].overloaded = true;
        let t = tally(&prep, &l, 4000);
        assert_eq!((t[1], t[2]), (0, 0), "{kind:?} {t:?}");
        assert_eq!(t[0] + t[3], 4000, "{kind:?} {t:?}");
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn arb_load() -> impl Strategy<Value = DestLoad> {
        (
            prop_oneof![Just(0u32), 1u32..10, any::<u32>()],
            prop_oneof![Just(0u32), any::<u32>()],
            prop_oneof![Just(0u32), any::<u32>()],
            prop::bool::weighted(0.2),
        )
            .prop_map(|(weight, active, inactive, overloaded)| DestLoad {
                weight,
                active,
                inactive,
                overloaded,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the prepared weights, live loads (even of another
        /// length), cursor and flow: pick does not panic, and what it
        /// returns is an available server.
        #[test]
        fn pick_returns_only_available_servers(
            kind in prop::sample::select(SchedKind::ALL.to_vec()),
            fallback in any::<bool>(),
            port in any::<bool>(),
            weights in prop::collection::vec(
                prop_oneof![Just(0u32), 1u32..5, any::<u32>()], 0..12),
            l in prop::collection::vec(arb_load(), 0..14),
            start in any::<u32>(),
            keys in prop::collection::vec((any::<u32>(), any::<u32>(), any::<u16>()), 1..20),
            size in prop_oneof![Just(0usize), 1usize..100],
        ) {
            let prep = Prepared::build_with(kind, SchedFlags { fallback, port }, &weights, size);
            let mut cur = Cursor::starting_at(start);
            let any_available = l.iter().any(DestLoad::available);
            for (src, dst, sport) in keys {
                let k = FlowKey { src, dst, sport, dport: 80, proto: 6 };
                if let Some(i) = pick(&prep, &mut cur, &l, &k) {
                    prop_assert!(i < l.len());
                    prop_assert!(l[i].available());
                } else if matches!(kind, SchedKind::Rr | SchedKind::Lc | SchedKind::Wlc
                        | SchedKind::Sed | SchedKind::Nq | SchedKind::Fo) {
                    // Load-driven kinds find any available server.
                    prop_assert!(!any_available);
                }
            }
        }
    }
}
