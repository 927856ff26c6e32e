//! Worker lcores and the TSC clock.

use super::error::{DpdkError, Result};
use std::os::raw::{c_int, c_void};

/// The worker lcores EAL was given (every lcore but the main one).
pub fn worker_lcores() -> Vec<u32> {
    let mut v = Vec::new();
    let mut i: u32 = u32::MAX; // -1: start from the beginning
    loop {
        // SAFETY: plain EAL query; skip_main = 1, wrap = 0.
        i = unsafe { dpdk_sys::rte_get_next_lcore(i, 1, 0) };
        if i >= dpdk_sys::RTE_MAX_LCORE {
            break;
        }
        v.push(i);
    }
    v
}

/// The lcore id of the calling thread (u32::MAX on a non-EAL thread).
#[inline]
pub fn current() -> u32 {
    // SAFETY: reads a per-thread variable.
    unsafe { dpdk_sys::dg_lcore_id() }
}

struct Job<'a> {
    f: &'a (dyn Fn(usize, u32) + Sync),
    index: usize,
    lcore: u32,
}

unsafe extern "C" fn trampoline(arg: *mut c_void) -> c_int {
    // SAFETY: arg points to a Job that outlives the lcore's run, because
    // run_workers waits for every launched lcore before returning.
    let job = unsafe { &*(arg as *const Job<'_>) };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        (job.f)(job.index, job.lcore)
    }));
    if r.is_err() {
        -1
    } else {
        0
    }
}

/// Waits for launched lcores even when the main closure unwinds.
struct WaitGuard<'a> {
    lcores: &'a [u32],
    launched: usize,
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        for &l in &self.lcores[..self.launched] {
            // SAFETY: l was launched by us; waiting is always allowed.
            unsafe { dpdk_sys::rte_eal_wait_lcore(l) };
        }
    }
}

/// Run `worker(index, lcore_id)` on each lcore of `lcores` (worker lcores,
/// not the main one) while `main()` runs on the calling thread; returns
/// main's result after every worker has returned. Errors if a launch fails
/// or a worker panicked.
pub fn run_workers<R>(
    lcores: &[u32],
    worker: &(dyn Fn(usize, u32) + Sync),
    main: impl FnOnce() -> R,
) -> Result<R> {
    let jobs: Vec<Job<'_>> = lcores
        .iter()
        .enumerate()
        .map(|(index, &lcore)| Job {
            f: worker,
            index,
            lcore,
        })
        .collect();
    let mut guard = WaitGuard {
        lcores,
        launched: 0,
    };
    for job in &jobs {
        // SAFETY: trampoline matches lcore_function_t; the Job lives in
        // `jobs`, which outlives `guard`, whose drop waits for every launched
        // lcore before `jobs` is freed.
        let rc = unsafe {
            dpdk_sys::rte_eal_remote_launch(
                Some(trampoline),
                job as *const Job<'_> as *mut c_void,
                job.lcore,
            )
        };
        if rc != 0 {
            drop(guard);
            return Err(DpdkError::from_code(
                format!("launch on lcore {}", job.lcore),
                rc,
            ));
        }
        guard.launched += 1;
    }
    let r = main();
    let mut failed = Vec::new();
    for &l in &lcores[..guard.launched] {
        // SAFETY: l was launched above; waiting returns the worker's code.
        if unsafe { dpdk_sys::rte_eal_wait_lcore(l) } != 0 {
            failed.push(l);
        }
    }
    guard.launched = 0;
    if !failed.is_empty() {
        return Err(DpdkError {
            what: format!("worker lcore(s) {failed:?}"),
            reason: "panicked".into(),
        });
    }
    Ok(r)
}

/// TSC ticks per second.
pub fn tsc_hz() -> u64 {
    // SAFETY: plain EAL query.
    unsafe { dpdk_sys::dg_tsc_hz() }
}

/// Current TSC value.
#[inline]
pub fn rdtsc() -> u64 {
    // SAFETY: reads the time-stamp counter.
    unsafe { dpdk_sys::dg_rdtsc() }
}

/// A nanosecond clock from the TSC, cheap enough for the fast path.
#[derive(Debug, Clone, Copy)]
pub struct TscClock {
    start: u64,
    // nanoseconds per tick in 32.32 fixed point
    mult: u64,
}

impl TscClock {
    /// Calibrate from EAL's TSC frequency.
    pub fn new() -> TscClock {
        let hz = tsc_hz().max(1);
        TscClock {
            start: rdtsc(),
            mult: ((1_000_000_000u128 << 32) / hz as u128) as u64,
        }
    }

    /// Nanoseconds since the clock was created.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        let d = rdtsc().wrapping_sub(self.start);
        ((d as u128 * self.mult as u128) >> 32) as u64
    }
}

impl Default for TscClock {
    fn default() -> Self {
        Self::new()
    }
}
