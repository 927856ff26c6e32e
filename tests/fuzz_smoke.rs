//! Every fuzz target for a short fixed time on its checked-in seed corpus
//! (`scripts/fuzz.sh FUZZ_SMOKE_SECS TARGET`, 3 s each unless set, built
//! with the cheaper `smoke` profile (`FUZZ_PROFILE=smoke`), from
//! an empty work corpus): the seeds, `crash-*` inputs that once crashed
//! included, still run clean and a few seconds of mutation find nothing. Long
//! runs are `scripts/fuzz.sh` by hand (fuzz/README.md).
//!
//! The targets need a nightly toolchain (libFuzzer's instrumentation). In
//! CI (`CI=true`) its absence is a failure; elsewhere the tests print why
//! they skip. The fuzz crate builds once (the first test to get the lock
//! builds every target, in fuzz/target), then the targets run one at a
//! time: two processes would only share the same cores.

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// One target at a time.
static RUN: Mutex<()> = Mutex::new(());

fn smoke(target: &str) {
    let _one = RUN.lock().unwrap_or_else(|e| e.into_inner());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let secs = std::env::var("FUZZ_SMOKE_SECS").unwrap_or_else(|_| "3".into());
    // the build covers every target (so each later test finds it done)
    let out = Command::new("bash")
        .arg(root.join("scripts/fuzz.sh"))
        .arg("--build")
        .env("FUZZ_PROFILE", "smoke")
        .output()
        .expect("scripts/fuzz.sh");
    let text = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    if out.status.code() == Some(77) {
        let why = text(&out);
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("fuzz {target}: cannot run in CI: {why}");
        }
        eprintln!("SKIP fuzz {target}: {}", why.trim());
        return;
    }
    assert!(
        out.status.success(),
        "building the fuzz targets:\n{}",
        text(&out)
    );
    // from the checked-in seeds alone, not what earlier runs found
    let work = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(root.join("scripts/fuzz.sh"))
        .args([secs.as_str(), target])
        .env("FUZZ_PROFILE", "smoke")
        .env("FUZZ_WORK", work.path())
        .output()
        .expect("scripts/fuzz.sh");
    let log = text(&out);
    eprintln!("{log}");
    assert!(out.status.success(), "fuzz {target} found a crash:\n{log}");
    // the table's row: the target ran and executed inputs
    let row = log
        .lines()
        .find(|l| l.split_whitespace().next() == Some(target))
        .unwrap_or_else(|| panic!("no result row for {target}:\n{log}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    let execs: u64 = cols[2].parse().unwrap();
    assert!(execs > 100, "{target}: only {execs} executions:\n{log}");
    assert_eq!(cols[5], "0", "{target}: crashes:\n{log}");
}

#[test]
fn fuzz_classify() {
    smoke("classify");
}

#[test]
fn fuzz_pipeline() {
    smoke("pipeline");
}

#[test]
fn fuzz_ctl_proto() {
    smoke("ctl_proto");
}

#[test]
fn fuzz_config() {
    smoke("config");
}

#[test]
fn fuzz_adm_args() {
    smoke("adm_args");
}

#[test]
fn fuzz_keepalived() {
    smoke("keepalived");
}

#[test]
fn fuzz_ipvs_sync() {
    smoke("ipvs_sync");
}

#[test]
fn fuzz_ipv6_wire() {
    smoke("ipv6_wire");
}
