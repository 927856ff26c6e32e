//! Memory hints for the hot tables: software prefetch and transparent huge
//! pages. Both are hints: they never change what a program computes, only
//! how fast memory answers. This is the core's one audited place of
//! `unsafe` (the prefetch instruction and `madvise`); nothing here needs
//! DPDK.

/// Prefetch the cache line holding `r` into all cache levels.
///
/// Unlike a plain load, a prefetch retires at once: a burst can issue one
/// per packet and let all the misses overlap without filling the reorder
/// buffer with stalled loads.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_ptr(r as *const T);
}

/// Prefetch the cache line of `s[i]`, without a bounds check: an index
/// out of range prefetches some other address, which a prefetch may do
/// (it is only a hint). For the hot tables, whose line index comes from a
/// multiply-shift that keeps it in range but that the compiler cannot see.
#[inline(always)]
pub fn prefetch_at<T>(s: &[T], i: usize) {
    prefetch_ptr(s.as_ptr().wrapping_add(i));
}

/// The prefetch itself, of any address.
#[inline(always)]
fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint that never faults, whatever the address
    // (a wrapped pointer outside any allocation included), and has no
    // effect on program state; SSE is part of the x86_64 baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Size of a transparent huge page on x86_64.
pub const HUGE_PAGE: usize = 2 << 20;

/// Ask the kernel to back the (still untouched) allocation of `v` with
/// transparent huge pages (`madvise(MADV_HUGEPAGE)` over the 2 MiB-aligned
/// part of its capacity). Call it right after `Vec::with_capacity`, before
/// writing the elements: pages already faulted in stay 4 KiB.
///
/// A connection table of 1M entries spans 64 MiB: on 4 KiB pages every
/// lookup is also a TLB miss and a page walk; on 2 MiB pages the whole table
/// needs 32 TLB entries. Returns the bytes advised (0 when the allocation is
/// smaller than a huge page or the kernel refused: THP `never`).
pub fn advise_hugepages<T>(v: &Vec<T>) -> usize {
    let start = v.as_ptr() as usize;
    let end = start + v.capacity() * std::mem::size_of::<T>();
    let lo = start.next_multiple_of(HUGE_PAGE);
    let hi = end & !(HUGE_PAGE - 1);
    if hi <= lo {
        return 0;
    }
    // SAFETY: [lo, hi) lies inside the allocation `v` owns (page-aligned
    // because 2 MiB-aligned); MADV_HUGEPAGE only changes how the kernel
    // backs those pages, never their contents or validity.
    let rc = unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE) };
    if rc == 0 {
        hi - lo
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_at_any_index_never_faults_nor_changes_anything() {
        let v: Vec<[u8; 64]> = (0..8u8).map(|i| [i; 64]).collect();
        // in range, one past the end, far outside, and wrapping around
        for i in [0, 7, 8, 1 << 20, usize::MAX / 64, usize::MAX] {
            prefetch_at(&v, i);
        }
        prefetch_at::<u32>(&[], 3);
        assert!(v
            .iter()
            .enumerate()
            .all(|(i, l)| l.iter().all(|&b| b == i as u8)));
    }

    #[test]
    fn advise_covers_the_aligned_interior_and_keeps_contents() {
        let mut v: Vec<u64> = Vec::with_capacity(3 * HUGE_PAGE / 8);
        let n = advise_hugepages(&v);
        // THP may be `never` on some machine: then nothing is advised, but
        // the vector must still work.
        assert!(n == 0 || n >= HUGE_PAGE, "{n}");
        assert!(n <= 3 * HUGE_PAGE);
        v.extend((0..3 * HUGE_PAGE as u64 / 8).map(|i| i * 3));
        assert!(v.iter().enumerate().all(|(i, x)| *x == i as u64 * 3));
        prefetch(&v[12345]);
        let small: Vec<u8> = Vec::with_capacity(4096);
        assert_eq!(advise_hugepages(&small), 0);
    }
}
