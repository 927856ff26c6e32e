//! dirigo-bench as built answers `--help` (building it here also puts it
//! beside `dirigo` in the target directory, where the root package's
//! `bench_smoke` test runs it).

use std::process::Command;

#[test]
fn dirigo_bench_answers_help() {
    let out = Command::new(env!("CARGO_BIN_EXE_dirigo-bench"))
        .arg("--help")
        .output()
        .expect("run dirigo-bench --help");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("--only"), "{text}");
}
