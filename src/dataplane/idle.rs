//! `[dataplane] idle = "sleep"`: how long a worker with nothing to do
//! sleeps, decided sans-IO so it is tested without EAL.
//!
//! A round that carried a packet resets the back-off. After
//! [`SPIN_ROUNDS`] empty rounds in a row the worker naps [`FIRST_NAP_NS`],
//! each further empty round twice as long as the one before, up to
//! [`MAX_NAP_NS`]; a nap never reaches past the next housekeeping tick, so
//! timers, hold-area releases and counter publishing keep their 1 ms
//! period. A packet that arrives during a quiet spell therefore waits at
//! most one nap (plus the kernel's timer slack, 50 µs by default) before it
//! is polled, and a steady flow never sleeps at all: each busy round starts
//! the spin again.
//!
//! The worker waits with [`crate::clock::nap`], a deadline wait, rather
//! than `std::thread::sleep`: both cost one system call per nap and both
//! are stretched by the timer slack alike, but a relative `nanosleep` that
//! signals interrupt is restarted with the time the kernel says remains,
//! which on the test machines grew instead of shrinking (see
//! docs/ARCHITECTURE.md on `clock::nap`); a worker asleep past its
//! housekeeping deadline would hold its packets and stop publishing its
//! counters.

/// Empty rounds a worker keeps polling before its first nap.
pub const SPIN_ROUNDS: u32 = 128;
/// The first nap after the spin, nanoseconds.
pub const FIRST_NAP_NS: u64 = 20_000;
/// The longest nap, nanoseconds: the extra latency a packet arriving in
/// a quiet spell can see (plus the timer slack).
pub const MAX_NAP_NS: u64 = 200_000;

/// The back-off state of one worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backoff {
    /// Empty rounds in a row.
    empty: u32,
    /// The next nap, nanoseconds (0: none yet).
    next_ns: u64,
}

impl Backoff {
    /// A worker that has just been busy.
    pub const fn new() -> Backoff {
        Backoff {
            empty: 0,
            next_ns: 0,
        }
    }

    /// After a round: whether it carried packets (`busy`) and how long
    /// until the next housekeeping tick (`until_tick_ns`). Returns how long
    /// to nap before the next round, nanoseconds (0: poll again at once).
    pub fn after_round(&mut self, busy: bool, until_tick_ns: u64) -> u64 {
        if busy {
            *self = Backoff::new();
            return 0;
        }
        if self.empty < SPIN_ROUNDS {
            self.empty += 1;
            return 0;
        }
        let nap = if self.next_ns == 0 {
            FIRST_NAP_NS
        } else {
            self.next_ns
        };
        self.next_ns = (nap * 2).min(MAX_NAP_NS);
        nap.min(until_tick_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naps of `n` empty rounds with plenty of time to the tick.
    fn naps(b: &mut Backoff, n: usize) -> Vec<u64> {
        (0..n).map(|_| b.after_round(false, 1_000_000)).collect()
    }

    #[test]
    fn spins_then_naps_growing_to_the_cap() {
        let mut b = Backoff::new();
        let v = naps(&mut b, SPIN_ROUNDS as usize);
        assert!(v.iter().all(|&n| n == 0), "spin first: {v:?}");
        let v = naps(&mut b, 8);
        assert_eq!(
            v,
            [20_000, 40_000, 80_000, 160_000, 200_000, 200_000, 200_000, 200_000]
        );
        assert!(v.iter().all(|&n| n < 1_000_000), "well under a millisecond");
    }

    #[test]
    fn a_busy_round_resets_it() {
        let mut b = Backoff::new();
        naps(&mut b, SPIN_ROUNDS as usize + 5);
        assert_eq!(b.after_round(true, 1_000_000), 0);
        assert_eq!(b, Backoff::new());
        // spins again before napping, and starts from the first nap
        let v = naps(&mut b, SPIN_ROUNDS as usize + 1);
        assert_eq!(v[..SPIN_ROUNDS as usize], [0; SPIN_ROUNDS as usize]);
        assert_eq!(v[SPIN_ROUNDS as usize], FIRST_NAP_NS);
    }

    #[test]
    fn never_naps_past_the_housekeeping_tick() {
        let mut b = Backoff::new();
        naps(&mut b, SPIN_ROUNDS as usize + 10);
        assert_eq!(b.after_round(false, 30_000), 30_000);
        assert_eq!(b.after_round(false, 0), 0, "tick due: poll now");
        // the cap stays where it was
        assert_eq!(b.after_round(false, 1_000_000), MAX_NAP_NS);
    }

    #[test]
    fn a_steady_flow_never_naps() {
        let mut b = Backoff::new();
        for i in 0..10_000u32 {
            // one busy round in every SPIN_ROUNDS
            let busy = i % SPIN_ROUNDS == 0;
            assert_eq!(b.after_round(busy, 1_000_000), 0, "round {i}");
        }
    }
}
