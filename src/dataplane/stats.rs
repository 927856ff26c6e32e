//! Per-worker counters: plain integers on the fast path, published to
//! atomics (Relaxed stores, single writer) at burst boundaries so the
//! control thread can read and sum them without locking a worker.

use std::sync::atomic::{AtomicU64, Ordering};

/// Maximum number of counters one worker publishes.
pub const MAX_COUNTERS: usize = 128;

/// Counters of one worker, as seen by readers.
#[derive(Debug)]
pub struct PublishedCounters {
    slots: Vec<AtomicU64>,
}

impl PublishedCounters {
    /// `n` counters, all zero.
    pub fn new(n: usize) -> Self {
        PublishedCounters {
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Publish a worker's local values (single writer: the owning worker).
    #[inline]
    pub fn publish(&self, local: &[u64]) {
        for (s, v) in self.slots.iter().zip(local) {
            s.store(*v, Ordering::Relaxed);
        }
    }

    /// Read one counter.
    pub fn get(&self, i: usize) -> u64 {
        self.slots.get(i).map_or(0, |s| s.load(Ordering::Relaxed))
    }

    /// Copy all counters.
    pub fn snapshot(&self) -> Vec<u64> {
        self.slots
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_and_read() {
        let p = PublishedCounters::new(4);
        p.publish(&[1, 2, 3, 4]);
        assert_eq!(p.snapshot(), vec![1, 2, 3, 4]);
        assert_eq!(p.get(2), 3);
        assert_eq!(p.get(99), 0);
    }
}
