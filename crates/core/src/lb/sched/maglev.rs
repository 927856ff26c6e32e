//! Maglev hashing (`ip_vs_mh.c`; Eisenbud et al., NSDI 2016).
//!
//! The lookup table has a prime number `M` of slots (default 65537). Each
//! weighted server gets a permutation of the slots from two seeded hashes
//! of its stable identity (`offset = h1(id) % M`,
//! `skip = h2(id) % (M - 1) + 1`), and the servers, ordered by identity,
//! take turns claiming the next free slot of their permutation until the
//! table is full.
//!
//! Weights, as in IPVS: a server claims `turns = (weight / gcd) >> shift`
//! slots per round (at least 1), `shift` keeping the largest turn within
//! `ceil(log2(M)) / 2` bits (IPVS's `mh_shift`). In addition each server stops
//! claiming once it holds its exact share `round(M * weight / total)`
//! (largest-remainder apportionment), so every server's slot count is
//! within one slot of its weighted share whatever the weights (IPVS can be
//! off by up to a full turn, several percent with 100 servers).
//!
//! Because permutations and the population order depend only on the ids,
//! removing a server frees only the slots it owned, plus the small amount
//! of reshuffling Maglev does; positions in the service's list do not
//! matter.
//!
//! Lookup: slot = `h1(saddr + sport?) % M`. With the `fallback` flag an
//! unavailable server is skipped by rehashing with an offset, as
//! `ip_vs_mh_get_fallback` does, but only [`MH_FALLBACK_PROBES`] times; if
//! all of those land on unavailable servers the flow goes to the
//! `(hash % available)`-th available server in stable-identity order:
//! O(n), bounded, and the same on every director with the same set of
//! available servers, whatever their list order.

use super::dest::{available, Loads, NO_DEST};
use super::flags::SchedFlags;
use super::hash::hash_seeded;
use crate::net::meta::FlowKey;

/// Default lookup table size (prime).
pub const MH_DEFAULT_TABLE_SIZE: usize = 65537;

/// Largest table size accepted (requests above are clamped, then rounded up
/// to a prime).
pub const MH_MAX_TABLE_SIZE: usize = 1 << 24;

/// Rehash probes tried by the fallback before the O(n) last resort.
pub const MH_FALLBACK_PROBES: u32 = 64;

const SEED_OFFSET: u64 = 2_654_435_761;
const SEED_SKIP: u64 = 2_654_435_801;
const SEED_KEY: u64 = 0x6d68_5f6b_6579;

/// Whether `n` is a prime (Maglev table sizes must be).
pub fn is_prime(n: usize) -> bool {
    if n < 2 {
        return false;
    }
    if n % 2 == 0 {
        return n == 2;
    }
    let mut d = 3;
    while d * d <= n {
        if n % d == 0 {
            return false;
        }
        d += 2;
    }
    true
}

/// The smallest prime `>= n`.
pub fn next_prime(n: usize) -> usize {
    let mut p = n.max(2);
    while !is_prime(p) {
        p += 1;
    }
    p
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Exact shares of `m` slots by weight (sum = `m`; each weighted server at
/// least 1, given `m >= weights.len()`).
fn apportion(m: usize, weights: &[u64]) -> Vec<usize> {
    let total: u128 = weights.iter().map(|&w| w as u128).sum();
    if total == 0 {
        return vec![0; weights.len()];
    }
    let mut quota: Vec<usize> = Vec::with_capacity(weights.len());
    let mut rem: Vec<(u128, usize)> = Vec::with_capacity(weights.len());
    for (i, &w) in weights.iter().enumerate() {
        let x = m as u128 * w as u128;
        quota.push((x / total) as usize);
        rem.push((x % total, i));
    }
    let given: usize = quota.iter().sum();
    rem.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in rem.iter().take(m - given) {
        quota[i] += 1;
    }
    // Every weighted server gets at least one slot, taken from the largest.
    for i in 0..quota.len() {
        if quota[i] == 0 && weights[i] > 0 {
            if let Some(j) = (0..quota.len()).max_by_key(|&j| (quota[j], usize::MAX - j)) {
                if quota[j] > 1 {
                    quota[j] -= 1;
                    quota[i] = 1;
                }
            }
        }
    }
    quota
}

/// A Maglev lookup table: slot -> server index ([`NO_DEST`] = none).
#[derive(Clone, Debug)]
pub struct Maglev {
    tab: Box<[u32]>,
    /// Every server index, in stable-identity order (the last resort's).
    by_id: Box<[u32]>,
}

impl Maglev {
    /// Populate for `dests` = `(stable id, weight)` in list order;
    /// `size` is rounded up to a prime (0 = [`MH_DEFAULT_TABLE_SIZE`]).
    pub fn build(dests: &[(u64, u32)], size: usize) -> Maglev {
        // Servers that take part, ordered by identity (ties: list order).
        let mut by_id: Vec<u32> = (0..dests.len().min(NO_DEST as usize) as u32).collect();
        by_id.sort_by_key(|&i| (dests[i as usize].0, i));
        let order: Vec<usize> = by_id
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| dests[i].1 > 0)
            .collect();
        if order.is_empty() || dests.len() >= NO_DEST as usize {
            return Maglev {
                tab: Box::new([]),
                by_id: Box::new([]),
            };
        }
        let size = if size == 0 {
            MH_DEFAULT_TABLE_SIZE
        } else {
            size
        };
        let m = next_prime(size.min(MH_MAX_TABLE_SIZE).max(order.len()));
        let weights: Vec<u64> = order.iter().map(|&i| dests[i].1 as u64).collect();
        let g = weights.iter().fold(0, |g, &w| gcd(g, w));
        let max = weights.iter().copied().max().unwrap_or(1) / g;
        // IPVS: IP_VS_MH_TAB_BITS = CONFIG_IP_VS_MH_TAB_INDEX / 2, the index
        // being ceil(log2(size)) (12 for 4093, 16 for 65521).
        let bits = (usize::BITS - (m - 1).leading_zeros()) / 2;
        let fls = u64::BITS - max.leading_zeros();
        let shift = fls.saturating_sub(bits);
        let turns: Vec<usize> = weights
            .iter()
            .map(|&w| (((w / g) >> shift) as usize).max(1))
            .collect();
        let mut quota = apportion(m, &weights);
        let mut perm: Vec<usize> = Vec::with_capacity(order.len());
        let mut skip: Vec<usize> = Vec::with_capacity(order.len());
        for &i in &order {
            let id = dests[i].0;
            perm.push((hash_seeded(id, SEED_OFFSET) % m as u64) as usize);
            skip.push((hash_seeded(id, SEED_SKIP) % (m as u64 - 1)) as usize + 1);
        }
        let mut tab = vec![NO_DEST; m];
        let mut filled = 0;
        'fill: while filled < m {
            for k in 0..order.len() {
                let take = turns[k].min(quota[k]);
                for _ in 0..take {
                    let mut c = perm[k];
                    while tab[c] != NO_DEST {
                        c += skip[k];
                        if c >= m {
                            c -= m;
                        }
                    }
                    tab[c] = order[k] as u32;
                    perm[k] = c;
                    quota[k] -= 1;
                    filled += 1;
                    if filled == m {
                        break 'fill;
                    }
                }
            }
        }
        Maglev {
            tab: tab.into_boxed_slice(),
            by_id: by_id.into_boxed_slice(),
        }
    }

    /// Slot -> server index.
    pub fn table(&self) -> &[u32] {
        &self.tab
    }

    /// Maglev pick.
    #[inline]
    pub fn pick<L: Loads + ?Sized>(
        &self,
        flags: SchedFlags,
        loads: &L,
        key: &FlowKey,
    ) -> Option<usize> {
        let m = self.tab.len() as u64;
        if m == 0 {
            return None;
        }
        let port = if flags.port { key.sport as u32 } else { 0 };
        let v = port.wrapping_add(key.src);
        let slot = |offset: u32| -> u32 {
            let h = hash_seeded(v.wrapping_add(offset) as u64, SEED_KEY) % m;
            self.tab.get(h as usize).copied().unwrap_or(NO_DEST)
        };
        let ihash = (hash_seeded(v as u64, SEED_KEY) % m) as u32;
        let d = slot(0);
        if d == NO_DEST {
            return None;
        }
        if available(loads, d as usize) {
            return Some(d as usize);
        }
        if !flags.fallback {
            return None;
        }
        for offset in 0..MH_FALLBACK_PROBES {
            let roffset = ((offset as u64 + ihash as u64) % m) as u32;
            let d = slot(roffset);
            if available(loads, d as usize) {
                return Some(d as usize);
            }
        }
        // Last resort: the (hash % count)-th available server, counted in
        // identity order (list order would differ between directors).
        let count = self
            .by_id
            .iter()
            .filter(|&&i| available(loads, i as usize))
            .count();
        if count == 0 {
            return None;
        }
        let r = (hash_seeded(v as u64, SEED_SKIP) % count as u64) as usize;
        self.by_id
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| available(loads, i))
            .nth(r)
    }
}
