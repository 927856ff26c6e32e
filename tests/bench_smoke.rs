//! The benchmark harness keeps working: `dirigo-bench --quick` (testpmd and
//! the real daemon on net_pcap -> net_null, tiny sizes, a few seconds each)
//! prints a results table with non-zero Mpps for testpmd and dirigo DR.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

/// The Mpps column (second) of the table line starting with `name`.
fn mpps(table: &str, name: &str) -> Option<f64> {
    let line = table.lines().find(|l| l.starts_with(name))?;
    let rest = line.strip_prefix(name)?;
    rest.split_whitespace().next()?.parse().ok()
}

#[test]
fn quick_benchmark_prints_nonzero_mpps() {
    if !common::privileged("dirigo-bench --quick") {
        return;
    }
    let dir = common::scratch("bench_smoke");
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_dirigo-bench"))
        .arg("--quick")
        .arg("--workdir")
        .arg(&dir)
        .arg("--dirigo")
        .arg(env!("CARGO_BIN_EXE_dirigo"))
        .output()
        .expect("run dirigo-bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "dirigo-bench failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("== dirigo-bench results"), "{stdout}");
    for name in [
        "testpmd io 1k",
        "testpmd macswap 1k",
        "dirigo DR 1k",
        "dirigo NAT 1k",
    ] {
        let v = mpps(&stdout, name).unwrap_or_else(|| panic!("no '{name}' row:\n{stdout}"));
        assert!(v > 0.0, "{name}: {v} Mpps\n{stdout}\n{stderr}");
    }
    // every established flow tracked: the tracked column of the DR row
    let dr = stdout
        .lines()
        .find(|l| l.starts_with("dirigo DR 1k"))
        .unwrap();
    assert_eq!(dr.split_whitespace().nth(7), Some("1000"), "{dr}");
    // the memory probe ran: three positive figures (no ordering between
    // them: in a debug build the batched loops are instruction-bound)
    let mem = stdout
        .lines()
        .find(|l| l.starts_with("memory:"))
        .unwrap_or_else(|| panic!("no memory line:\n{stdout}"));
    let ns: Vec<f64> = mem
        .split_whitespace()
        .zip(mem.split_whitespace().skip(1))
        .filter(|(_, unit)| *unit == "ns")
        .filter_map(|(v, _)| v.parse().ok())
        .collect();
    assert_eq!(ns.len(), 3, "{mem}");
    assert!(ns.iter().all(|&v| v > 0.0 && v.is_finite()), "{mem}");
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "took {:?}",
        t.elapsed()
    );
}

#[test]
fn table_parser() {
    let t = "dirigo DR 1k   12.50   3.0\n";
    assert_eq!(mpps(t, "dirigo DR 1k"), Some(12.5));
    assert_eq!(mpps(t, "dirigo NAT 1k"), None);
}
