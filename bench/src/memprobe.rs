//! What a random cache line costs on this machine, over a region the size
//! of the connection table: the floor under the 1M-flow scenarios, where
//! every packet reads its key's two candidate table lines from DRAM.
//!
//! Three access patterns over the same region (transparent huge pages
//! advised, as the table is):
//! - `prefetched`: batches of 32 random lines, all prefetched first, then
//!   read (how the burst path reads the table);
//! - `plain`: the same batches without the prefetch (the out-of-order core
//!   overlaps the independent loads on its own);
//! - `chase`: one dependent load after another (the full latency of one
//!   miss, nothing overlapped).

use dirigo_core::hint::{advise_hugepages, prefetch};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// One 64-byte line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// Nanoseconds per random line, by pattern.
#[derive(Clone, Copy, Debug)]
pub struct MemProbe {
    /// Bytes of the region.
    pub bytes: usize,
    /// Batches of 32, prefetched.
    pub prefetched: f64,
    /// Batches of 32, not prefetched.
    pub plain: f64,
    /// Dependent loads.
    pub chase: f64,
}

const BATCH: usize = 32;

/// xorshift64: cheap, and good enough to defeat the hardware prefetchers.
#[inline(always)]
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Measure over `bytes` (at least one line), spending about `time` on each
/// pattern.
pub fn run(bytes: usize, time: Duration) -> MemProbe {
    let n = (bytes / 64).max(2);
    let mut v: Vec<Line> = Vec::with_capacity(n);
    advise_hugepages(&v);
    v.resize(n, Line::default());
    // one random cycle through every line (Sattolo), for the chase
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut perm: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = (next(&mut x) % i as u64) as usize;
        perm.swap(i, j);
    }
    for i in 0..n {
        v[perm[i] as usize].0[0] = perm[(i + 1) % n] as u64;
    }
    drop(perm);
    let batched = |pf: bool, x: &mut u64| {
        let start = Instant::now();
        let (mut lines, mut sum) = (0u64, 0u64);
        while start.elapsed() < time {
            for _ in 0..256 {
                let mut idx = [0usize; BATCH];
                for i in &mut idx {
                    *i = (next(x) % n as u64) as usize;
                    if pf {
                        prefetch(&v[*i]);
                    }
                }
                for i in idx {
                    sum = sum.wrapping_add(v[i].0[1]);
                }
                lines += BATCH as u64;
            }
        }
        black_box(sum);
        start.elapsed().as_nanos() as f64 / lines as f64
    };
    let prefetched = batched(true, &mut x);
    let plain = batched(false, &mut x);
    let start = Instant::now();
    let (mut lines, mut at) = (0u64, 0usize);
    while start.elapsed() < time {
        for _ in 0..1024 {
            at = v[at].0[0] as usize;
        }
        lines += 1024;
    }
    black_box(at);
    let chase = start.elapsed().as_nanos() as f64 / lines as f64;
    MemProbe {
        bytes: n * 64,
        prefetched,
        plain,
        chase,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_measures_every_pattern() {
        let p = run(1 << 20, Duration::from_millis(20));
        assert_eq!(p.bytes, 1 << 20);
        for ns in [p.prefetched, p.plain, p.chase] {
            assert!(ns.is_finite() && ns > 0.0, "{p:?}");
        }
    }
}
