//! The process's memory settings that the daemon makes before any thread
//! starts: one malloc arena, and a fixed mmap threshold. (The hot tables' hints, prefetch and
//! transparent huge pages, are the core's: `dirigo_core::hint`.)

/// Give every thread of the process glibc's one main malloc arena.
///
/// glibc gives a thread that finds the arenas busy an arena of its own
/// (up to eight per core), and an arena once made is never given back:
/// each keeps a megabyte or two of heap resident. dirigo's control plane
/// answers every client (dirigoadm, a metrics scrape, a health checker's
/// probe) on a thread of its own, so resident memory rose by such a step
/// whenever more clients than ever before overlapped — at any time in a
/// daemon's life, not only at start (the soak measured +9.7 MB in nine new
/// arenas with six concurrent `list` clients). The workers never allocate
/// per packet (their tables are allocated at start, DPDK's pools are its
/// own), so sharing one arena costs only the control threads a lock they
/// rarely contend. Call it first, before any thread starts; returns whether
/// glibc took the setting (false on a C library without `mallopt`).
pub fn one_malloc_arena() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes a parameter of glibc's allocator;
        // M_ARENA_MAX takes any positive count, and arenas that exist
        // already stay valid (new threads share them).
        unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// The size from which glibc serves an allocation with its own mapping
/// ([`fixed_mmap_threshold`]): glibc's initial value.
pub const MMAP_THRESHOLD: usize = 128 << 10;

/// Keep glibc's mmap threshold at [`MMAP_THRESHOLD`] for good.
///
/// glibc serves an allocation of 128 KiB or more with a mapping of its own,
/// unmapped when it is freed; but each such free raises the threshold to
/// that size (up to 32 MiB), and from then on allocations of that size come
/// from the heap, whose top a later long-lived allocation pins. The
/// control plane makes such allocations now and then (a snapshot's tables,
/// an `mh` service's being 256 KiB; a large listing's JSON). The 10-minute
/// soak saw the heap step up by 512 KiB at random moments, once or twice a
/// run, each step kept to the end. A fixed threshold (which also fixes the
/// trim threshold) keeps such allocations in mappings of their own that go
/// back to the kernel when freed. The
/// workers never allocate per packet, so only the control threads pay the
/// mmap/munmap. Call it first, before any thread starts; returns whether
/// glibc took the setting.
pub fn fixed_mmap_threshold() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes a parameter of glibc's allocator;
        // M_MMAP_THRESHOLD takes any size up to 32 MiB on 64-bit, and
        // memory allocated already stays valid whichever way it was
        // obtained.
        unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_takes_the_one_arena_setting() {
        // the soak (tests/soak.rs) checks what it is for: resident memory
        // flat while six control clients come and go at once
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        assert!(one_malloc_arena());
        let v: Vec<Vec<u8>> = (0..4)
            .map(|i| std::thread::spawn(move || vec![i as u8; 1 << 16]))
            .map(|h| h.join().unwrap())
            .collect();
        assert!(v
            .iter()
            .enumerate()
            .all(|(i, b)| b.iter().all(|&x| x == i as u8)));
    }

    #[test]
    fn glibc_takes_the_fixed_mmap_threshold() {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        assert!(fixed_mmap_threshold());
        // allocations on both sides of the threshold still work
        let big = vec![7u8; 2 * MMAP_THRESHOLD];
        let small = vec![9u8; MMAP_THRESHOLD / 2];
        assert!(big.iter().all(|&b| b == 7) && small.iter().all(|&b| b == 9));
    }
}
