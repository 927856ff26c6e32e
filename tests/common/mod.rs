//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// Whether the test may run privileged/EAL work here. In CI (`CI=true`) a
/// missing prerequisite is a failure, never a skip; elsewhere the skip is
/// printed with its reason.
pub fn privileged(what: &str) -> bool {
    let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
    let mut why = Vec::new();
    // SAFETY-free check: /proc/self/status Uid line.
    let uid0 = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false);
    if !uid0 {
        why.push("not running as root");
    }
    let huge = std::fs::read_to_string("/proc/sys/vm/nr_hugepages")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(0);
    if huge < 256 {
        why.push("fewer than 256 hugepages reserved (run scripts/setup-hugepages.sh)");
    }
    if why.is_empty() {
        return true;
    }
    if ci {
        panic!("{what}: cannot run in CI: {}", why.join("; "));
    }
    eprintln!("SKIP {what}: {}", why.join("; "));
    false
}

/// A scratch directory under target/ for a test.
pub fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}
