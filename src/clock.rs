//! Waiting without being stretched by signals.
//!
//! `std::thread::sleep` is a relative `nanosleep` that the kernel restarts
//! with the time it says remains after each signal. Where a process gets
//! signals often (a profiler, a supervisor's probes) that remainder can
//! grow instead of shrink — measured on the test machines: a 5 ms sleep
//! of the control loop still had 13 s to go after a burst of real-time
//! signals, so dirigo did not stop on SIGTERM. [`nap`] waits for a
//! deadline on the monotonic clock instead (a futex wait with an absolute
//! timeout, restarted with the same deadline), so it ends on time.

use std::time::{Duration, Instant};

/// Sleep for `d` (at least; never much longer than the scheduler makes it).
pub fn nap(d: Duration) {
    let end = Instant::now() + d;
    loop {
        let now = Instant::now();
        if now >= end {
            return;
        }
        // a spurious wake-up or an unpark just loops
        std::thread::park_timeout(end - now);
    }
}

/// Monotonic nanoseconds for the control thread (neighbor aging).
pub fn now_ns() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naps_last_their_time() {
        let t = Instant::now();
        nap(Duration::from_millis(20));
        let e = t.elapsed();
        assert!(e >= Duration::from_millis(20), "{e:?}");
        assert!(e < Duration::from_secs(2), "{e:?}");
        // an unpark does not cut it short
        let me = std::thread::current();
        let h = std::thread::spawn(move || {
            for _ in 0..5 {
                me.unpark();
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        let t = Instant::now();
        nap(Duration::from_millis(30));
        assert!(t.elapsed() >= Duration::from_millis(30));
        h.join().unwrap();
    }
}
