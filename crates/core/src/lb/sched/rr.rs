//! Round robin (`ip_vs_rr.c`) and weighted round robin (`ip_vs_wrr.c`).
//!
//! IPVS's wrr keeps `(current server, current weight cw)` and, on each pick,
//! scans forward for the next server with `weight >= cw`; at the end of the
//! list `cw` drops by the gcd of the weights, and when it reaches 0 it
//! restarts at `max weight - (gcd - 1)`. Without overloaded servers that
//! produces one fixed cycle of `sum(weights) / gcd` picks, interleaved (for
//! 1:2:3: `c b c a b c`). [`WrrTable`] stores that cycle, so a pick is one
//! array read; an overloaded or quiesced server is skipped exactly as IPVS
//! skips it (its entries are passed over). After [`WRR_PROBES`] unavailable
//! entries in a row the pick jumps straight to the next entry of an
//! available server, found by binary search in per-server position lists:
//! O(n log L), never a walk over the whole cycle.

use super::dest::{available, Loads, NO_DEST};

/// Longest wrr cycle stored. Weights whose cycle would be longer are scaled
/// down proportionally (each weighted server keeps at least 1), which keeps
/// their ratios within about `n / WRR_MAX_SEQ`.
pub const WRR_MAX_SEQ: u64 = 1 << 16;

/// Entries tried one by one before the exact slow path.
pub const WRR_PROBES: usize = 8;

/// Round robin: the next available server after the last one picked.
/// `pos` is the index to try first. O(1) when it is available, at most one
/// pass over `loads` otherwise.
#[inline]
pub fn pick_rr<L: Loads + ?Sized>(pos: &mut u32, loads: &L) -> Option<usize> {
    let n = loads.count();
    if n == 0 {
        return None;
    }
    let mut i = *pos as usize % n;
    for _ in 0..n {
        let next = if i + 1 == n { 0 } else { i + 1 };
        if available(loads, i) {
            *pos = next as u32;
            return Some(i);
        }
        i = next;
    }
    None
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The prepared wrr cycle.
#[derive(Clone, Debug, Default)]
pub struct WrrTable {
    /// One cycle of server indexes.
    seq: Box<[u32]>,
    /// `occ[occ_start[s]..occ_start[s + 1]]`: ascending positions of server
    /// `s` in `seq`.
    occ_start: Box<[u32]>,
    occ: Box<[u32]>,
}

impl WrrTable {
    /// Build the IPVS cycle for `weights` (list order).
    pub fn build(weights: &[u32]) -> WrrTable {
        let n = weights.len();
        let mut w: Vec<u64> = weights.iter().map(|&x| x as u64).collect();
        let g = w.iter().filter(|&&x| x > 0).fold(0, |g, &x| gcd(g, x));
        if g == 0 {
            return WrrTable {
                seq: Box::new([]),
                occ_start: vec![0; n + 1].into_boxed_slice(),
                occ: Box::new([]),
            };
        }
        let sum: u64 = w.iter().sum();
        if sum / g > WRR_MAX_SEQ {
            for x in w.iter_mut().filter(|x| **x > 0) {
                *x = ((*x as u128 * WRR_MAX_SEQ as u128 / sum as u128) as u64).max(1);
            }
        }
        let g = w.iter().filter(|&&x| x > 0).fold(0, |g, &x| gcd(g, x));
        let max = w.iter().copied().max().unwrap_or(0);
        // Servers by descending weight join the active set as cw falls; the
        // active set is kept in list order, as IPVS scans it.
        let mut by_weight: Vec<usize> = (0..n).filter(|&i| w[i] > 0).collect();
        by_weight.sort_by(|&a, &b| w[b].cmp(&w[a]).then(a.cmp(&b)));
        let mut joined = 0;
        let mut active: Vec<u32> = Vec::with_capacity(by_weight.len());
        let mut seq: Vec<u32> = Vec::new();
        // IPVS: mw = max - (gcd - 1); cw = mw, mw - g, ... while cw > 0.
        let mut cw = max - (g - 1);
        loop {
            while joined < by_weight.len() && w[by_weight[joined]] >= cw {
                let s = by_weight[joined] as u32;
                let at = active.partition_point(|&x| x < s);
                active.insert(at, s);
                joined += 1;
            }
            seq.extend_from_slice(&active);
            if cw <= g {
                break;
            }
            cw -= g;
        }
        let mut counts = vec![0u32; n + 1];
        for &s in &seq {
            counts[s as usize + 1] += 1;
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut occ = vec![0u32; seq.len()];
        for (p, &s) in seq.iter().enumerate() {
            occ[fill[s as usize] as usize] = p as u32;
            fill[s as usize] += 1;
        }
        WrrTable {
            seq: seq.into_boxed_slice(),
            occ_start: counts.into_boxed_slice(),
            occ: occ.into_boxed_slice(),
        }
    }

    /// One cycle of server indexes.
    pub fn sequence(&self) -> &[u32] {
        &self.seq
    }

    /// The next available server at or after sequence position `pos`.
    #[inline]
    pub fn pick<L: Loads + ?Sized>(&self, pos: &mut u32, loads: &L) -> Option<usize> {
        let len = self.seq.len();
        if len == 0 {
            return None;
        }
        let mut p = *pos as usize % len;
        for _ in 0..WRR_PROBES.min(len) {
            let s = self.seq.get(p).copied().unwrap_or(NO_DEST) as usize;
            p = if p + 1 == len { 0 } else { p + 1 };
            if available(loads, s) {
                *pos = p as u32;
                return Some(s);
            }
        }
        self.pick_slow(pos, p, loads)
    }

    /// Exact IPVS skip: the nearest position at or after `p` (cyclically)
    /// that belongs to an available server.
    #[cold]
    fn pick_slow<L: Loads + ?Sized>(&self, pos: &mut u32, p: usize, loads: &L) -> Option<usize> {
        let len = self.seq.len();
        let mut best: Option<(usize, usize, usize)> = None; // (distance, position, server)
        for (s, bounds) in self.occ_start.windows(2).enumerate() {
            if !available(loads, s) {
                continue;
            }
            let (lo, hi) = (bounds[0] as usize, bounds[1] as usize);
            let Some(occ) = self.occ.get(lo..hi) else {
                continue;
            };
            let Some(&first) = occ.first() else {
                continue;
            };
            let k = occ.partition_point(|&x| (x as usize) < p);
            let at = occ.get(k).copied().unwrap_or(first) as usize;
            let dist = (at + len - p) % len;
            if best.is_none_or(|b| dist < b.0) {
                best = Some((dist, at, s));
            }
        }
        let (_, at, s) = best?;
        *pos = if at + 1 == len { 0 } else { at as u32 + 1 };
        Some(s)
    }
}
