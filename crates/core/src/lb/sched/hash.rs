//! Source hashing (`ip_vs_sh.c`) and destination hashing (`ip_vs_dh.c`),
//! plus the hash helpers the hashing schedulers share.
//!
//! Both use IPVS's 256-bucket tables and hash functions, so for ordinary
//! weights a flow lands on the same bucket as under IPVS:
//! * sh: bucket = `hash_32(sport + saddr, 8)` (`sport` only with the `port`
//!   flag), buckets dealt out in turn, each server taking
//!   `weight / gcd` consecutive buckets per round. IPVS deals raw weights
//!   (so weights summing past 256 starve the last servers); here they are
//!   divided by their gcd first and, if their sum still exceeds 256, scaled
//!   to 256 (each weighted server keeps at least one bucket, as long as
//!   there are at most 256 of them: past that the last ones get none, a
//!   limit of the 256-bucket design that IPVS shares);
//! * dh: bucket = `(daddr * 2654435761) & 255`, one bucket per server in
//!   turn (weights only decide availability, as in IPVS).
//!
//! IPVS deals in list order, so two directors whose servers were added in
//! different orders send a flow to different servers. Here the servers
//! take their turns in the order of their stable identities
//! ([`stable_id`], ties in list order): the table (bucket -> list index)
//! then maps every bucket to the same *server* whatever the list order, so
//! directors behind one ECMP group agree. With ids equal to the list
//! positions ([`super::Prepared::build`]) this is IPVS's list order.
//!
//! Servers built with weight 0 get no bucket (IPVS gives them one; see the
//! module docs of [`super`] for keeping a quiesced server's buckets).
//! With the `fallback` flag an unavailable server is skipped by probing
//! further buckets exactly as IPVS's `ip_vs_sh_get_fallback` does (at most
//! 256 probes); dh accepts the same flag (IPVS's dh has none) and ignores
//! `port`.

use super::dest::{available, Loads, NO_DEST};
use super::flags::SchedFlags;
use crate::net::meta::FlowKey;

/// Buckets in an sh/dh table (IPVS's `IP_VS_SH_TAB_SIZE`).
pub const TAB_SIZE: usize = 256;

/// splitmix64's finaliser: a fast, well-mixed 64-bit permutation.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// `x` hashed under `seed` (two seeds give two independent hashes).
#[inline]
pub fn hash_seeded(x: u64, seed: u64) -> u64 {
    mix64(x ^ mix64(seed ^ 0x9e37_79b9_7f4a_7c15))
}

/// A stable identity for a real server `addr:port` (host order), to give
/// [`super::Prepared::build_ids`]: the same server always gets the same id,
/// whatever its position in the service's list.
pub fn stable_id(addr: u32, port: u16) -> u64 {
    hash_seeded(((addr as u64) << 16) | port as u64, 0x6469_7269_676f)
}

/// Linux's `hash_32(val, bits)`.
#[inline]
fn hash_32(val: u32, bits: u32) -> u32 {
    val.wrapping_mul(0x61C8_8647) >> (32 - bits)
}

/// `ip_vs_sh_hashkey`: `v` = source port (or 0) + source address.
#[inline]
fn sh_hashkey(v: u32, offset: u32) -> usize {
    (offset.wrapping_add(hash_32(v, 8)) as usize) & (TAB_SIZE - 1)
}

/// `ip_vs_dh_hashkey`, with the same probing offset as sh for fallback.
#[inline]
fn dh_hashkey(daddr: u32, offset: u32) -> usize {
    (offset.wrapping_add(daddr.wrapping_mul(2_654_435_761)) as usize) & (TAB_SIZE - 1)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A 256-bucket sh/dh table: bucket -> server index ([`NO_DEST`] = none).
#[derive(Clone, Debug)]
pub struct Buckets {
    tab: Box<[u32]>,
}

impl Buckets {
    /// Deal buckets in stable-identity order (`ids[i]`, ties in list
    /// order), `turns[i]` consecutive buckets per server per round (servers
    /// with 0 turns are skipped), as `ip_vs_sh_reassign` does in list order.
    fn deal(ids: &[u64], turns: &[u64]) -> Buckets {
        let mut tab = vec![NO_DEST; TAB_SIZE];
        let mut dealt: Vec<usize> = (0..turns.len()).filter(|&i| turns[i] > 0).collect();
        dealt.sort_by_key(|&i| (ids.get(i).copied().unwrap_or(u64::MAX), i));
        if !dealt.is_empty() {
            let (mut k, mut count) = (0, 0);
            for b in tab.iter_mut() {
                let s = dealt[k];
                *b = s as u32;
                count += 1;
                if count >= turns[s] {
                    count = 0;
                    k = (k + 1) % dealt.len();
                }
            }
        }
        Buckets {
            tab: tab.into_boxed_slice(),
        }
    }

    /// The sh table for `dests` = `(stable id, weight)` in list order.
    pub fn build_sh(dests: &[(u64, u32)]) -> Buckets {
        let (ids, weights): (Vec<u64>, Vec<u32>) = dests.iter().copied().unzip();
        let g = weights
            .iter()
            .filter(|&&w| w > 0)
            .fold(0, |g, &w| gcd(g, w as u64));
        let mut turns: Vec<u64> = weights
            .iter()
            .map(|&w| (w as u64).checked_div(g).unwrap_or(0))
            .collect();
        let sum: u64 = turns.iter().sum();
        if sum > TAB_SIZE as u64 {
            for t in turns.iter_mut().filter(|t| **t > 0) {
                *t = (*t * TAB_SIZE as u64 / sum).max(1);
            }
        }
        Buckets::deal(&ids, &turns)
    }

    /// The dh table for `dests` = `(stable id, weight)` in list order (one
    /// bucket per weighted server in turn).
    pub fn build_dh(dests: &[(u64, u32)]) -> Buckets {
        let ids: Vec<u64> = dests.iter().map(|d| d.0).collect();
        let turns: Vec<u64> = dests.iter().map(|d| u64::from(d.1 > 0)).collect();
        Buckets::deal(&ids, &turns)
    }

    /// Bucket -> server index.
    pub fn table(&self) -> &[u32] {
        &self.tab
    }

    #[inline]
    fn at(&self, b: usize) -> u32 {
        self.tab.get(b).copied().unwrap_or(NO_DEST)
    }

    /// Look up with probing function `h(offset)`, IPVS style.
    #[inline]
    fn lookup<L: Loads + ?Sized>(
        &self,
        fallback: bool,
        loads: &L,
        h: impl Fn(u32) -> usize,
    ) -> Option<usize> {
        let ihash = h(0);
        let d = self.at(ihash);
        if d == NO_DEST {
            return None;
        }
        if available(loads, d as usize) {
            return Some(d as usize);
        }
        if !fallback {
            return None;
        }
        for offset in 0..TAB_SIZE {
            let roffset = (offset + ihash) % TAB_SIZE;
            let d = self.at(h(roffset as u32));
            if d == NO_DEST {
                break;
            }
            if available(loads, d as usize) {
                return Some(d as usize);
            }
        }
        None
    }

    /// Source hashing pick.
    #[inline]
    pub fn pick_sh<L: Loads + ?Sized>(
        &self,
        flags: SchedFlags,
        loads: &L,
        key: &FlowKey,
    ) -> Option<usize> {
        let port = if flags.port { key.sport as u32 } else { 0 };
        let v = port.wrapping_add(key.src);
        self.lookup(flags.fallback, loads, |off| sh_hashkey(v, off))
    }

    /// Destination hashing pick.
    #[inline]
    pub fn pick_dh<L: Loads + ?Sized>(
        &self,
        flags: SchedFlags,
        loads: &L,
        key: &FlowKey,
    ) -> Option<usize> {
        let dst = key.dst;
        self.lookup(flags.fallback, loads, |off| dh_hashkey(dst, off))
    }
}
