//! Rise and fall: how check results become a server's state (sans-IO).

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Whether the server passed.
    pub ok: bool,
    /// How long the check took, in microseconds.
    pub latency_us: u64,
    /// What was seen ("connected", "status 503", "timeout", ...).
    pub detail: String,
    /// The change to the server's configured weight the check asks for
    /// (a file check's value times its factor); `None`: none.
    pub weight: Option<i64>,
}

/// A checked server's state, changed only by [`Tracker::record`] after
/// `fall` failures in a row (up -> down) or `rise` successes in a row
/// (down -> up). A new server starts up, as keepalived's do (its first
/// failures take it down within `fall` checks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracker {
    up: bool,
    run: u32,
    since_ns: u64,
    transitions: u64,
    checks: u64,
    failures: u64,
    last: Option<(u64, Outcome)>,
}

impl Tracker {
    /// A server that is up since `now_ns`.
    pub fn new(now_ns: u64) -> Tracker {
        Tracker {
            up: true,
            run: 0,
            since_ns: now_ns,
            transitions: 0,
            checks: 0,
            failures: 0,
            last: None,
        }
    }

    /// Record a check's outcome at `now_ns`; `Some(new state)` when it
    /// changes the server's state.
    pub fn record(&mut self, o: Outcome, now_ns: u64, rise: u32, fall: u32) -> Option<bool> {
        self.checks += 1;
        if !o.ok {
            self.failures += 1;
        }
        // `run` counts the results that disagree with the current state
        let against = o.ok != self.up;
        self.last = Some((now_ns, o));
        if !against {
            self.run = 0;
            return None;
        }
        self.run += 1;
        let need = if self.up { fall } else { rise }.max(1);
        if self.run < need {
            return None;
        }
        self.up = !self.up;
        self.run = 0;
        self.since_ns = now_ns;
        self.transitions += 1;
        Some(self.up)
    }

    /// Whether the server is up.
    pub fn up(&self) -> bool {
        self.up
    }

    /// Since when it is in its state.
    pub fn since_ns(&self) -> u64 {
        self.since_ns
    }

    /// State changes so far.
    pub fn transitions(&self) -> u64 {
        self.transitions
    }

    /// Checks run and how many failed.
    pub fn checks(&self) -> (u64, u64) {
        (self.checks, self.failures)
    }

    /// The last outcome and when it came.
    pub fn last(&self) -> Option<&(u64, Outcome)> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(ok: bool) -> Outcome {
        Outcome {
            ok,
            latency_us: 10,
            detail: String::new(),
            weight: None,
        }
    }

    #[test]
    fn falls_after_fall_failures_and_rises_after_rise_successes() {
        let mut t = Tracker::new(0);
        assert!(t.up());
        assert_eq!(t.record(o(false), 1, 2, 3), None);
        assert_eq!(t.record(o(false), 2, 2, 3), None);
        assert_eq!(t.record(o(false), 3, 2, 3), Some(false));
        assert!(!t.up());
        assert_eq!(t.since_ns(), 3);
        assert_eq!(t.record(o(true), 4, 2, 3), None);
        assert_eq!(t.record(o(true), 5, 2, 3), Some(true));
        assert_eq!(t.transitions(), 2);
        assert_eq!(t.checks(), (5, 3));
        assert_eq!(t.last().map(|l| l.0), Some(5));
    }

    #[test]
    fn a_flapping_server_is_held_by_rise_and_fall() {
        let mut t = Tracker::new(0);
        // fail, pass, ..., ending on a pass (so the two failures below are
        // the only ones in a row)
        for i in 0..100 {
            assert_eq!(t.record(o(i % 2 == 1), i, 2, 2), None, "check {i}");
        }
        assert!(t.up());
        assert_eq!(t.transitions(), 0);
        // down, then flapping keeps it down
        t.record(o(false), 100, 2, 2);
        assert_eq!(t.record(o(false), 101, 2, 2), Some(false));
        for i in 0..100 {
            assert_eq!(t.record(o(i % 2 == 0), 102 + i, 2, 2), None);
        }
        assert!(!t.up());
    }

    #[test]
    fn rise_and_fall_of_one_act_at_once() {
        let mut t = Tracker::new(0);
        assert_eq!(t.record(o(false), 1, 1, 1), Some(false));
        assert_eq!(t.record(o(true), 2, 1, 1), Some(true));
        // zero is taken as one
        assert_eq!(t.record(o(false), 3, 0, 0), Some(false));
    }
}
