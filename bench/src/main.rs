//! dirigo-bench: dirigo beside dpdk-testpmd on the same virtual devices.
//!
//! `dirigo-bench` runs, per run: testpmd (io, macswap) on net_pcap
//! (`infinite_rx=1`) -> net_null, the real `dirigo` daemon on the same
//! devices for DR/TUN/NAT established traffic, DR with 10% of the packets
//! for dirigo's own address (the exception path) and a new-connection
//! workload, and the sans-IO micro-benchmark; then prints the medians.
//! `--markdown` writes BENCHMARKS.md, `--csv` the chart data.
//! `dirigo-bench micro` runs only the micro-benchmark. See BENCHMARKS.md.

mod agg;
mod dut;
mod gen;
mod memprobe;
mod micro;
mod micro_runs;
mod plan;
mod report;
mod synproxy;
mod tables;
mod testpmd;

use agg::Agg;
use clap::{Parser, Subcommand};
use dirigo_core::lb::conn::lines::LineTable;
use dirigo_core::lb::spec::Method;
use micro_runs::run_micro;
pub use plan::{v6_label, Plan};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "dirigo-bench", about = "dirigo beside dpdk-testpmd")]
struct Cli {
    /// Smoke mode: tiny sizes, a few seconds per step.
    #[arg(long)]
    quick: bool,
    /// Runs of everything (median and spread are over runs).
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Scratch directory (pcaps, configs, sockets).
    #[arg(long, default_value = "/tmp/dirigo-bench")]
    workdir: PathBuf,
    /// The dirigo binary (default: next to this one).
    #[arg(long)]
    dirigo: Option<PathBuf>,
    /// Write BENCHMARKS.md (the numbers part) here.
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Write the chart data (scenario, testpmd macswap, dirigo Mpps) here.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Only these daemon scenarios (comma-separated, case-insensitive):
    /// `DR 1M`, `NAT 1k`, ... (a method alone: all its sizes), `DR-2w 1k`,
    /// `DR 1k@1M`, `TUN 1k@1M`, `NAT 1k@1M` (1k flows on a pcap as large as
    /// the 1M one: the table in cache), `exception`, `metrics`, `newconn`,
    /// `synproxy`, `micro`, `memprobe`.
    /// testpmd runs on the pcaps they use only. For A/B comparisons
    /// without a full run.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Only the sans-IO micro-benchmark (no EAL, no root needed).
    Micro {
        /// Seconds per case.
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        /// Only this method (dr, tun, nat).
        #[arg(long)]
        method: Option<String>,
        /// Only this many flows.
        #[arg(long)]
        flows: Option<u32>,
        /// Only the new-connection case.
        #[arg(long)]
        newconn: bool,
        /// Only this core API: `pkt` (Balancer::process) or `burst`.
        #[arg(long)]
        api: Option<String>,
        /// Also probe the memory floor (random lines over the table's size).
        #[arg(long)]
        memprobe: bool,
        /// Only the table comparison: the connection table beside the
        /// one-line table (`lb::conn::lines`), lookups at the established
        /// scenarios' size and new connections, same keys, same run.
        #[arg(long)]
        tables: bool,
        /// Real servers in the benchmark service (1-244; default 4): what
        /// a wlc pick for a new connection weighs.
        #[arg(long, default_value_t = micro::N_RS, value_parser = clap::value_parser!(u8).range(1..=micro::MAX_SERVERS as i64))]
        servers: u8,
    },
}

/// Short name of a method.
pub fn mname(m: Method) -> &'static str {
    match m {
        Method::Dr => "DR",
        Method::Tun => "TUN",
        Method::Nat => "NAT",
    }
}

fn pcap_path(dir: &Path, label: &str) -> PathBuf {
    dir.join(format!("bench-{label}.pcap"))
}

/// The label of the exception scenario's pcap for flow count `label`.
fn own_label(label: &str) -> String {
    format!("{label}-own")
}

/// The scenario name of the exception run at flow count `label`.
pub fn exc_scenario(label: &str) -> String {
    format!("DR+own {label}")
}

/// The scenario name of the metrics run at flow count `label`.
pub fn metrics_scenario(label: &str) -> String {
    format!("DR+metrics {label}")
}

/// Which pcap to write.
#[derive(Clone, Copy)]
enum PcapKind {
    /// One SYN then one ACK per flow.
    Established,
    /// One SYN per flow.
    SynOnly,
    /// Established, every 10th packet for dirigo's own address.
    OwnAddress,
    /// Established, IPv6.
    Established6,
    /// Established, few flows over this many packets.
    Spread(u64),
}

/// Generate (or reuse) the pcaps; returns (label, path, packets).
fn pcaps(plan: &Plan, dir: &Path) -> Result<Vec<(String, PathBuf, u64)>, String> {
    let mut v = Vec::new();
    let mut make = |label: String, flows: u32, kind: PcapKind| -> Result<(), String> {
        let p = pcap_path(dir, &label);
        let t = Instant::now();
        let n = match kind {
            PcapKind::Established => gen::write_pcap(&p, flows, false),
            PcapKind::SynOnly => gen::write_pcap(&p, flows, true),
            PcapKind::OwnAddress => gen::write_pcap_own(&p, flows),
            PcapKind::Established6 => gen::write_pcap6(&p, flows),
            PcapKind::Spread(packets) => gen::write_pcap_spread(&p, flows, packets),
        }
        .map_err(|e| format!("{}: {e}", p.display()))?;
        eprintln!(
            "dirigo-bench: wrote {} ({n} packets, {:.1} s)",
            p.display(),
            t.elapsed().as_secs_f64()
        );
        v.push((label, p, n));
        Ok(())
    };
    for &(label, flows) in &plan.sizes {
        make(label.to_string(), flows, PcapKind::Established)?;
    }
    if let Some((label, flows, packets)) = plan.spread_wanted() {
        make(label, flows, PcapKind::Spread(packets))?;
    }
    make("newconn".to_string(), plan.newconn_flows, PcapKind::SynOnly)?;
    let (label, flows) = plan.exception_size;
    make(own_label(label), flows, PcapKind::OwnAddress)?;
    // the IPv6 pcaps of the scenarios that run only (1M: 180 MB)
    let mut sizes6: Vec<(&str, u32)> = plan.v6_scenarios().iter().map(|s| (s.1, s.2)).collect();
    sizes6.dedup();
    for (size, flows) in sizes6 {
        make(v6_label(size), flows, PcapKind::Established6)?;
    }
    Ok(v)
}

/// A daemon run of `plan`'s established scenarios on `pcap` (`pkts`
/// packets): one worker, `method`, the plan's table and the default
/// embryonic grace, no exception path.
fn dut_case<'a>(
    plan: &Plan,
    bin: &'a Path,
    dir: &'a Path,
    pcap: &'a Path,
    pkts: u64,
    method: Method,
) -> dut::DutCase<'a> {
    dut::DutCase {
        bin,
        pcap,
        pcap_pkts: pkts,
        method,
        capacity: plan.capacity,
        embryonic_grace_ms: dirigo_core::lb::conn::EMBRYONIC_GRACE_MS,
        dir,
        warmup: plan.warmup,
        measure: plan.measure,
        workers: 1,
        exception: false,
        metrics: false,
        synproxy: false,
        v6: false,
    }
}

/// Record a daemon run under `k`: its rate, its ratio to testpmd macswap on
/// the same pcap (`label`; returned) and the connections it tracked.
fn record_dut(agg: &mut Agg, k: &str, label: &str, r: &dut::DutResult) -> f64 {
    let base = agg
        .values(&format!("testpmd|macswap {label}|mpps"))
        .last()
        .copied()
        .unwrap_or(f64::NAN);
    agg.push(&format!("{k}|mpps"), r.mpps);
    agg.push(&format!("{k}|ratio"), r.mpps / base);
    agg.push(&format!("{k}|tracked"), r.tracked as f64);
    r.mpps / base
}

fn one_run(
    plan: &Plan,
    run: usize,
    dir: &Path,
    bin: &Path,
    files: &[(String, PathBuf, u64)],
    agg: &mut Agg,
) -> Result<(), String> {
    let find = |l: &str| {
        files
            .iter()
            .find(|f| f.0 == l)
            .ok_or(format!("no pcap {l}"))
    };
    // testpmd: io on the smallest pcap, macswap on every pcap
    let first = &files[0];
    let mut tp = vec![("io", first)];
    // (quick: macswap on the smallest pcap only, where new connections
    // compare too, and on the IPv6 pcaps)
    let quick_ok = |l: &str| !plan.quick || l == first.0 || l.starts_with(&v6_label(""));
    for f in files
        .iter()
        .filter(|f| quick_ok(&f.0) && plan.macswap_on(&f.0))
    {
        tp.push(("macswap", f));
    }
    for (mode, (label, path, n)) in tp {
        let prefix = format!("dg-bench-tp-{}", std::process::id());
        let mpps = testpmd::run(
            mode,
            &path.display().to_string(),
            plan.testpmd_s,
            n + 32768,
            &prefix,
        )?;
        eprintln!("run {run}: testpmd {mode} {label}: {mpps:.2} Mpps");
        agg.push(&format!("testpmd|{mode} {label}|mpps"), mpps);
    }
    let tag = |s: &str| format!("r{run}-{s}");
    for &m in &plan.methods {
        for &(label, _) in &plan.sizes {
            let (_, path, n) = find(label)?;
            if plan.wants(&format!("{} {label}", mname(m))) {
                run_plain(plan, run, dir, bin, (label, path, *n), m, agg)?;
            }
            if m == Method::Dr && label == plan.exception_size.0 && plan.wants("exception") {
                run_exception(plan, run, dir, bin, files, agg)?;
            }
            if m == Method::Dr
                && Some(&label) == plan.sizes.last().map(|s| &s.0)
                && plan.wants("metrics")
            {
                run_metrics(plan, run, dir, bin, (label, path, *n), agg)?;
            }
        }
    }
    // the table in cache on the largest pcap (see Plan::spread): DR 1M's
    // time less DR 1k@1M's is what the table's misses cost DR
    if let Some((label, _, _)) = plan.spread_wanted() {
        let (_, path, n) = find(&label)?;
        for (_, m) in plan.spread_scenarios() {
            run_plain(plan, run, dir, bin, (&label, path, *n), m, agg)?;
        }
    }
    for (name, size, _, m) in plan.v6_scenarios() {
        let label = v6_label(size);
        let (_, path, n) = find(&label)?;
        let c = dut::DutCase {
            v6: true,
            ..dut_case(plan, bin, dir, path, *n, m)
        };
        let r = dut::run(&c, &tag(&name.replace(' ', "-")))?;
        let k = format!("dirigo|{name}");
        let ratio = record_dut(agg, &k, &label, &r);
        eprintln!(
            "run {run}: dirigo {name}: {:.2} Mpps ({ratio:.2}x macswap on the IPv6 pcap), tracked {}",
            r.mpps, r.tracked
        );
    }
    // DR with two workers (1k and 100k flows; 1M would need two preloaded
    // copies of a 2M-packet pcap): both wan queues replay the pcap and each
    // worker hands the flows the other owns over its steering ring.
    let two_w: Vec<&str> = plan.sizes.iter().take(2).map(|s| s.0).collect();
    for label in two_w {
        if !plan.wants(&format!("DR-2w {label}")) {
            continue;
        }
        let (_, path, n) = find(label)?;
        let c = dut::DutCase {
            workers: 2,
            ..dut_case(plan, bin, dir, path, *n, Method::Dr)
        };
        let r = dut::run(&c, &tag(&format!("dr2w-{label}")))?;
        let ratio = record_dut(agg, &format!("dirigo|DR-2w {label}"), label, &r);
        eprintln!(
            "run {run}: dirigo DR 2 workers {label}: {:.2} Mpps ({ratio:.2}x macswap), tracked {}",
            r.mpps, r.tracked
        );
    }
    if plan.wants("newconn") || plan.wants("synproxy") {
        run_newconn(plan, run, dir, bin, find("newconn")?, files, agg)?;
    }
    if plan.wants("micro") {
        run_micro(plan, agg, None, None);
    }
    if plan.wants("memprobe") {
        run_memprobe(plan, agg);
    }
    Ok(())
}

/// The new-connection scenario (DR, every packet a new SYN) and the same
/// SYNs to a SYN-proxy NAT service.
fn run_newconn(
    plan: &Plan,
    run: usize,
    dir: &Path,
    bin: &Path,
    (_, path, n): &(String, PathBuf, u64),
    files: &[(String, PathBuf, u64)],
    agg: &mut Agg,
) -> Result<(), String> {
    let tag = |s: &str| format!("r{run}-{s}");
    let nc_base = if plan.quick {
        format!("testpmd|macswap {}|mpps", files[0].0)
    } else {
        "testpmd|macswap newconn|mpps".to_string()
    };
    let base = agg.values(&nc_base).last().copied().unwrap_or(f64::NAN);
    if plan.wants("newconn") {
        let c = dut::DutCase {
            capacity: plan.newconn_capacity,
            embryonic_grace_ms: 0,
            ..dut_case(plan, bin, dir, path, *n, Method::Dr)
        };
        let r = dut::run(&c, &tag("newconn"))?;
        agg.push("dirigo|newconn|mpps", r.mpps);
        agg.push("dirigo|newconn|ratio", r.mpps / base);
        agg.push("dirigo|newconn|tracked", r.tracked as f64);
        agg.push("dirigo|newconn|mconn", r.mconn_s);
        eprintln!(
            "run {run}: dirigo newconn: {:.2} Mpps, {:.2} Mconn/s, tracked {}",
            r.mpps, r.mconn_s, r.tracked
        );
    }
    if !plan.wants("synproxy") {
        return Ok(());
    }
    // the same SYNs to a --synproxy NAT service: each answered on the wan
    // port with a cookie, nothing stored (the SYN flood the proxy absorbs)
    let c = dut::DutCase {
        synproxy: true,
        ..dut_case(plan, bin, dir, path, *n, Method::Nat)
    };
    let r = dut::run(&c, &tag("synproxy"))?;
    agg.push("dirigo|synproxy syn|mpps", r.wan_tx_mpps);
    agg.push("dirigo|synproxy syn|ratio", r.wan_tx_mpps / base);
    agg.push("dirigo|synproxy syn|tracked", r.tracked as f64);
    eprintln!(
        "run {run}: dirigo synproxy: {:.2} M SYNs answered/s ({:.2}x macswap on the same pcap), tracked {}",
        r.wan_tx_mpps,
        r.wan_tx_mpps / base,
        r.tracked
    );
    Ok(())
}

/// A plain established scenario: method `m` on the pcap `label`.
fn run_plain(
    plan: &Plan,
    run: usize,
    dir: &Path,
    bin: &Path,
    (label, path, n): (&str, &Path, u64),
    m: Method,
    agg: &mut Agg,
) -> Result<(), String> {
    let c = dut_case(plan, bin, dir, path, n, m);
    let r = dut::run(&c, &format!("r{run}-{}-{label}", mname(m)))?;
    let k = format!("dirigo|{} {label}", mname(m));
    let ratio = record_dut(agg, &k, label, &r);
    agg.push(&format!("{k}|rx"), r.rx_mpps);
    eprintln!(
        "run {run}: dirigo {} {label}: {:.2} Mpps ({ratio:.2}x macswap), tracked {}",
        mname(m),
        r.mpps,
        r.tracked
    );
    Ok(())
}

/// The exception scenario: DR on the pcap whose every 10th packet is a SYN
/// to dirigo's own address (192.168.100.1:22), the wan port's exception
/// path configured (net_tap in a namespace, the default rate limit). The
/// lan TX rate is the VIP forwarding rate; it is compared with the plain DR
/// run of the same size in this run and with testpmd macswap on the plain
/// pcap.
fn run_exception(
    plan: &Plan,
    run: usize,
    dir: &Path,
    bin: &Path,
    files: &[(String, PathBuf, u64)],
    agg: &mut Agg,
) -> Result<(), String> {
    let label = plan.exception_size.0;
    let own = own_label(label);
    let (_, path, n) = files
        .iter()
        .find(|f| f.0 == own)
        .ok_or(format!("no pcap {own}"))?;
    let c = dut::DutCase {
        exception: true,
        ..dut_case(plan, bin, dir, path, *n, Method::Dr)
    };
    let r = dut::run(&c, &format!("r{run}-DR-own-{label}"))?;
    let k = format!("dirigo|{}", exc_scenario(label));
    let ratio = record_dut(agg, &k, label, &r);
    let plain = plain_dr(agg, label);
    let kr = r.kernel.unwrap_or_default();
    agg.push(&format!("{k}|plain"), r.mpps / plain);
    agg.push(&format!("{k}|rx"), r.rx_mpps);
    agg.push(&format!("{k}|own_in"), kr.arrived());
    agg.push(&format!("{k}|to_kernel"), kr.to_kernel);
    agg.push(&format!("{k}|limited"), kr.rate_limited);
    agg.push(&format!("{k}|lost"), kr.ring_full + kr.write_failed);
    eprintln!(
        "run {run}: dirigo DR {label} + 10% own-address (exception path): {:.2} Mpps VIP forwarded \
         ({:.2} x plain DR {label}, {ratio:.2}x macswap), tracked {}; own-address {:.0}/s: \
         to kernel {:.0}/s, rate-limited {:.0}/s, ring full / not written {:.0}/s",
        r.mpps,
        r.mpps / plain,
        r.tracked,
        kr.arrived(),
        kr.to_kernel,
        kr.rate_limited,
        kr.ring_full + kr.write_failed
    );
    Ok(())
}

/// The metrics scenario: DR on the largest established pcap, right after
/// the plain DR run of it, with the Prometheus endpoint on, the burst
/// histogram kept and a scrape every second; its rate over the plain run's.
fn run_metrics(
    plan: &Plan,
    run: usize,
    dir: &Path,
    bin: &Path,
    (label, path, n): (&str, &Path, u64),
    agg: &mut Agg,
) -> Result<(), String> {
    let c = dut::DutCase {
        metrics: true,
        ..dut_case(plan, bin, dir, path, n, Method::Dr)
    };
    let r = dut::run(&c, &format!("r{run}-DR-metrics-{label}"))?;
    let k = format!("dirigo|{}", metrics_scenario(label));
    let ratio = record_dut(agg, &k, label, &r);
    let plain = plain_dr(agg, label);
    agg.push(&format!("{k}|plain"), r.mpps / plain);
    agg.push(&format!("{k}|scrapes"), r.scrapes as f64);
    eprintln!(
        "run {run}: dirigo DR {label} + metrics (burst histogram, {} scrapes): {:.2} Mpps ({:.3} x plain DR {label}, {ratio:.2}x macswap)",
        r.scrapes,
        r.mpps,
        r.mpps / plain
    );
    Ok(())
}

/// The plain DR rate at `label` flows in this run (what the exception and
/// metrics scenarios are compared with).
fn plain_dr(agg: &Agg, label: &str) -> f64 {
    agg.values(&format!("dirigo|DR {label}|mpps"))
        .last()
        .copied()
        .unwrap_or(f64::NAN)
}

/// The memory floor (see `memprobe`): random lines over a region the
/// size of the established scenarios' connection table.
fn run_memprobe(plan: &Plan, agg: &mut Agg) {
    let bytes = LineTable::new(plan.capacity, 1).memory_bytes();
    let p = memprobe::run(bytes, plan.micro / 2);
    agg.push("mem|prefetched|ns", p.prefetched);
    agg.push("mem|plain|ns", p.plain);
    agg.push("mem|chase|ns", p.chase);
    eprintln!(
        "memory ({} MiB): random line {:.1} ns prefetched in batches of 32, {:.1} ns plain, {:.1} ns dependent",
        p.bytes >> 20,
        p.prefetched,
        p.plain,
        p.chase
    );
}

fn default_dirigo() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("dirigo")))
        .unwrap_or_else(|| PathBuf::from("dirigo"))
}

fn main() {
    let cli = Cli::parse();
    let mut plan = Plan::new(cli.quick);
    plan.only = cli
        .only
        .iter()
        .map(|t| t.trim().to_ascii_lowercase())
        .collect();
    let mut agg = Agg::default();
    if let Some(Cmd::Micro {
        seconds,
        method,
        flows,
        newconn,
        api,
        memprobe,
        tables,
        servers,
    }) = &cli.cmd
    {
        if *tables {
            let flows = flows.unwrap_or(1_000_000);
            let p = tables::run(
                plan.capacity.max(flows),
                flows,
                Duration::from_secs_f64(*seconds),
            );
            println!(
                "tables, {flows} flows (capacity {}): established lookup {:.1} ns index+records, {:.1} ns one-line ({:.1}% in their first line), {:.1} ns one-line with a line per connection; NAT reply lookup {:.1} ns index+records, {:.1} ns one-line; new connection (table of {}, every insert evicts) {:.1} ns index+records, {:.1} ns one-line; NAT connections placed by the one-line table: {} of {flows}",
                plan.capacity.max(flows),
                p.index_lookup,
                p.line_lookup,
                100.0 * p.in_primary,
                p.wide_lookup,
                p.index_reply,
                p.line_reply,
                tables::NEWCONN_CAP,
                p.index_newconn,
                p.line_newconn,
                p.nat_placed
            );
            return;
        }
        let mut plan = plan;
        plan.micro_servers = *servers;
        plan.micro = Duration::from_secs_f64(*seconds);
        let only = method.as_deref().map(|m| match m {
            "tun" => Method::Tun,
            "nat" => Method::Nat,
            _ => Method::Dr,
        });
        match api.as_deref() {
            Some("pkt") => plan.apis = vec![false],
            Some("burst") => plan.apis = vec![true],
            Some(other) => {
                eprintln!("dirigo-bench: --api {other}: expected pkt or burst");
                std::process::exit(2);
            }
            None => {}
        }
        if *newconn {
            plan.methods = vec![Method::Dr];
            plan.sizes.clear();
        }
        run_micro(&plan, &mut agg, only, *flows);
        if *memprobe {
            run_memprobe(&plan, &mut agg);
        }
        print!("{}", report::micro_table(&plan, &agg));
        return;
    }
    let bin = cli.dirigo.clone().unwrap_or_else(default_dirigo);
    let started = Instant::now();
    let res = (|| -> Result<(), String> {
        std::fs::create_dir_all(&cli.workdir)
            .map_err(|e| format!("{}: {e}", cli.workdir.display()))?;
        let files = pcaps(&plan, &cli.workdir)?;
        for run in 1..=cli.runs.max(1) {
            one_run(&plan, run, &cli.workdir, &bin, &files, &mut agg)?;
        }
        Ok(())
    })();
    if let Err(e) = res {
        eprintln!("dirigo-bench: {e}");
        std::process::exit(1);
    }
    let conn_bytes = LineTable::new(plan.capacity, 1).memory_bytes() as f64;
    let info = report::Info {
        runs: cli.runs.max(1),
        elapsed_s: started.elapsed().as_secs_f64(),
        table_bytes: conn_bytes,
        capacity: plan.capacity,
    };
    print!("{}", report::summary(&plan, &agg, &info));
    if let Some(p) = &cli.markdown {
        if let Err(e) = std::fs::write(p, report::markdown(&plan, &agg, &info)) {
            eprintln!("dirigo-bench: {}: {e}", p.display());
            std::process::exit(1);
        }
    }
    if let Some(p) = &cli.csv {
        if let Err(e) = std::fs::write(p, report::csv(&plan, &agg)) {
            eprintln!("dirigo-bench: {}: {e}", p.display());
            std::process::exit(1);
        }
    }
}
