//! The rate limit of generated ICMP errors ([`TokenBucket`]).

/// A token bucket (per lcore) limiting generated ICMP errors.
#[derive(Clone, Copy, Debug)]
pub struct TokenBucket {
    interval_ns: u64,
    max_credit_ns: u64,
    credit_ns: u64,
    last_ns: u64,
}

impl TokenBucket {
    /// `rate` tokens per second, at most `burst` at once (starts full).
    pub fn new(rate: u32, burst: u32) -> TokenBucket {
        let interval_ns = 1_000_000_000 / rate.max(1) as u64;
        let max_credit_ns = interval_ns * burst.max(1) as u64;
        TokenBucket {
            interval_ns,
            max_credit_ns,
            credit_ns: max_credit_ns,
            last_ns: 0,
        }
    }

    /// Take a token at `now_ns` if one is available.
    #[inline]
    pub fn allow(&mut self, now_ns: u64) -> bool {
        let dt = now_ns.saturating_sub(self.last_ns);
        self.last_ns = self.last_ns.max(now_ns);
        self.credit_ns = self.credit_ns.saturating_add(dt).min(self.max_credit_ns);
        if self.credit_ns >= self.interval_ns {
            self.credit_ns -= self.interval_ns;
            true
        } else {
            false
        }
    }
}
