//! The benchmark harness keeps working: `dirigo-bench --quick` (testpmd and
//! the real daemon on net_pcap -> net_null, tiny sizes, a few seconds each)
//! prints a results table with non-zero Mpps for testpmd and dirigo DR,
//! and the exception scenario (10% of the packets for dirigo's own address)
//! in the table and in the markdown.

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
    let out = Command::new(concat!(env!("CARGO_BIN_EXE_dirigo"), "-bench"))
        .arg("--quick")
        .arg("--workdir")
        .arg(&dir)
        .arg("--dirigo")
        .arg(env!("CARGO_BIN_EXE_dirigo"))
        .arg("--markdown")
        .arg(dir.join("BENCHMARKS.md"))
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
        "dirigo DR+own 1k",
        "dirigo DR+metrics 1k",
        "testpmd macswap v6-1k",
        "dirigo DR6 1k",
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
    // the exception scenario: one flow in ten is for dirigo's own address
    // (never tracked); some of it reached the kernel interface, within the
    // default rate limit, the rest was rate-limited
    let dr6 = stdout
        .lines()
        .find(|l| l.starts_with("dirigo DR6 1k"))
        .unwrap();
    assert_eq!(dr6.split_whitespace().nth(7), Some("1000"), "{dr6}");
    let own = stdout
        .lines()
        .find(|l| l.starts_with("dirigo DR+own 1k"))
        .unwrap();
    assert_eq!(own.split_whitespace().nth(7), Some("900"), "{own}");
    let exc = stdout
        .lines()
        .find(|l| l.starts_with("exception:"))
        .unwrap_or_else(|| panic!("no exception line:\n{stdout}"));
    let per_s = |what: &str| -> f64 {
        let w: Vec<&str> = exc.split_whitespace().collect();
        let i = (0..w.len())
            .find(|&i| w[i..].starts_with(&["/s", what]))
            .unwrap_or_else(|| panic!("no '/s {what}' in {exc}"));
        w[i - 1].parse().unwrap_or(f64::NAN)
    };
    let (own_in, to_kernel, limited) = (per_s("in,"), per_s("to"), per_s("rate-limited,"));
    assert!(own_in > 0.0, "{exc}");
    assert!(to_kernel > 0.0 && to_kernel <= 25_000.0, "{exc}");
    assert!(limited > 0.0, "{exc}");
    // the metrics scenario: the endpoint answered scrapes with the burst
    // histogram while the worker forwarded
    let met = stdout
        .lines()
        .find(|l| l.starts_with("metrics:"))
        .unwrap_or_else(|| panic!("no metrics line:\n{stdout}"));
    let scrapes: f64 = met
        .split_whitespace()
        .zip(met.split_whitespace().skip(1))
        .find(|(_, w)| w.starts_with("scrapes"))
        .and_then(|(v, _)| v.parse().ok())
        .unwrap_or_else(|| panic!("no scrape count in {met}"));
    assert!(scrapes >= 1.0, "{met}");
    let md = std::fs::read_to_string(dir.join("BENCHMARKS.md")).expect("the markdown");
    assert!(md.contains("\n## Exception traffic\n"), "{md}");
    assert!(md.contains("\n## Metrics\n"), "{md}");
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

/// `dirigo-bench micro --tables` (no root, no EAL) compares the two
/// connection tables and says so in one line with every figure filled.
#[test]
fn table_comparison_prints_both_tables() {
    let out = Command::new(concat!(env!("CARGO_BIN_EXE_dirigo"), "-bench"))
        .args(["micro", "--tables", "--flows", "20000", "--seconds", "0.1"])
        .output()
        .expect("run dirigo-bench micro --tables");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("tables, 20000 flows"));
    let line = line.unwrap_or_else(|| panic!("no tables line:\n{stdout}"));
    // each figure is the word before an " ns" (the text after the last
    // one holds none)
    let parts: Vec<&str> = line.split(" ns").collect();
    let ns: Vec<f64> = parts[..parts.len() - 1]
        .iter()
        .filter_map(|p| p.rsplit(' ').next()?.parse().ok())
        .collect();
    assert_eq!(ns.len(), 7, "{line}");
    assert!(ns.iter().all(|v| *v > 0.0), "{line}");
    let placed: u32 = line
        .split("placed by the one-line table: ")
        .nth(1)
        .and_then(|r| r.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert_eq!(placed, 20000, "far from full, every NAT connection: {line}");
}

#[test]
fn table_parser() {
    let t = "dirigo DR 1k   12.50   3.0\n";
    assert_eq!(mpps(t, "dirigo DR 1k"), Some(12.5));
    assert_eq!(mpps(t, "dirigo NAT 1k"), None);
}
