//! Load-based schedulers: lc, wlc, sed, nq (`ip_vs_lc.c`, `ip_vs_wlc.c`,
//! `ip_vs_sed.c`, `ip_vs_nq.c`) and weighted failover (`ip_vs_fo.c`).
//!
//! Each is one scan over the live loads in list order. Ties go to the first
//! server in list order (a later server replaces the current best only when
//! strictly better). Weighted comparisons cross-multiply in 128-bit
//! integers, as IPVS does in 64 bits, never dividing.

use super::dest::{DestLoad, Loads};

/// IPVS's `ip_vs_dest_conn_overhead`: `active * 256 + inactive`.
#[inline]
pub fn conn_overhead(l: &DestLoad) -> u64 {
    ((l.active as u64) << 8) + l.inactive as u64
}

/// sed/nq expected delay numerator: `active + 1`.
#[inline]
fn sed_overhead(l: &DestLoad) -> u64 {
    l.active as u64 + 1
}

/// `a_oh / a_w > b_oh / b_w`, cross-multiplied: in 64 bits when both
/// overheads fit in 32 (so neither product can overflow; the common case),
/// else in 128.
#[inline]
fn worse(a_oh: u64, a_w: u32, b_oh: u64, b_w: u32) -> bool {
    if (a_oh | b_oh) >> 32 == 0 {
        a_oh * b_w as u64 > b_oh * a_w as u64
    } else {
        (a_oh as u128) * (b_w as u128) > (b_oh as u128) * (a_w as u128)
    }
}

/// Least connection: the available server with the smallest
/// [`conn_overhead`] (weights only matter for availability).
#[inline]
pub fn pick_lc<L: Loads + ?Sized>(loads: &L) -> Option<usize> {
    let mut best: Option<(usize, u64)> = None;
    loads.each(|i, l| {
        if l.available() {
            let oh = conn_overhead(&l);
            if best.is_none_or(|(_, b)| oh < b) {
                best = Some((i, oh));
            }
        }
        true
    });
    best.map(|b| b.0)
}

/// Weighted least connection: smallest `overhead / weight`.
#[inline]
pub fn pick_weighted<L: Loads + ?Sized>(
    loads: &L,
    overhead: fn(&DestLoad) -> u64,
) -> Option<usize> {
    min_weighted(loads, overhead, |_| false)
}

/// The available server with the smallest `overhead / weight`, unless an
/// available server `take` accepts comes first in list order: then that one
/// at once (nq's idle server).
#[inline(always)]
fn min_weighted<L: Loads + ?Sized>(
    loads: &L,
    overhead: fn(&DestLoad) -> u64,
    take: impl Fn(&DestLoad) -> bool,
) -> Option<usize> {
    let mut best: Option<(usize, u64, u32)> = None;
    let mut taken = None;
    loads.each(|i, l| {
        if !l.available() {
            return true;
        }
        if take(&l) {
            taken = Some(i);
            return false;
        }
        let oh = overhead(&l);
        if best.is_none_or(|(_, boh, bw)| worse(boh, bw, oh, l.weight)) {
            best = Some((i, oh, l.weight));
        }
        true
    });
    taken.or(best.map(|b| b.0))
}

/// Weighted least connection: smallest `(active * 256 + inactive) / weight`.
#[inline]
pub fn pick_wlc<L: Loads + ?Sized>(loads: &L) -> Option<usize> {
    pick_weighted(loads, conn_overhead)
}

/// Shortest expected delay: smallest `(active + 1) / weight`.
#[inline]
pub fn pick_sed<L: Loads + ?Sized>(loads: &L) -> Option<usize> {
    pick_weighted(loads, sed_overhead)
}

/// Never queue: the first idle available server (no active connection),
/// otherwise as sed.
#[inline]
pub fn pick_nq<L: Loads + ?Sized>(loads: &L) -> Option<usize> {
    min_weighted(loads, sed_overhead, |l| l.active == 0)
}

/// Weighted failover: the available server with the highest weight (first
/// in list order among equals).
#[inline]
pub fn pick_fo<L: Loads + ?Sized>(loads: &L) -> Option<usize> {
    let mut best: Option<(usize, u32)> = None;
    loads.each(|i, l| {
        if l.available() && best.is_none_or(|(_, w)| l.weight > w) {
            best = Some((i, l.weight));
        }
        true
    });
    best.map(|b| b.0)
}
