//! The process's memory settings that the daemon makes before any thread
//! starts: one malloc arena. (The hot tables' hints, prefetch and
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
}
