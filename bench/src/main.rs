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
mod runs;
mod synproxy;
mod tables;
mod testpmd;

use agg::Agg;
use clap::{Parser, Subcommand};
use dirigo_core::lb::conn::lines::LineTable;
use dirigo_core::lb::spec::Method;
use micro_runs::run_micro;
pub use plan::{v6_label, Plan};
use runs::{one_run, run_memprobe};
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
    /// the 1M one: the table in cache), `exception`, `metrics`, `checkpoint`,
    /// `handoff`, `newconn`, `synproxy`, `micro`, `memprobe`; and only when
    /// named here, the mark rules' `DR-marks 1k` (16 rules beside the
    /// ordinary service), `DR-fwm 1k` (an fwmark service behind them),
    /// `newconn-marks` and `newconn-fwm` (new connections beside and
    /// through them).
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
        /// Only this method (dr, tun, nat; fnat: FullNAT's established
        /// requests without and with `client_address`, proxy-v2 and toa).
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
        Method::FullNat => "FNAT",
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

/// The scenario name of the checkpoint run at flow count `label`.
pub fn checkpoint_scenario(label: &str) -> String {
    format!("DR+checkpoint {label}")
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
    if let Some(cmd) = &cli.cmd {
        micro_only(plan, cmd, &mut agg);
        return;
    }
    let bin = cli.dirigo.clone().unwrap_or_else(default_dirigo);
    let started = Instant::now();
    if let Err(e) = run_all(&cli, &plan, &bin, &mut agg) {
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
        write_or_exit(p, &report::markdown(&plan, &agg, &info));
    }
    if let Some(p) = &cli.csv {
        write_or_exit(p, &report::csv(&plan, &agg));
    }
}

/// The pcaps, then every run.
fn run_all(cli: &Cli, plan: &Plan, bin: &Path, agg: &mut Agg) -> Result<(), String> {
    std::fs::create_dir_all(&cli.workdir).map_err(|e| format!("{}: {e}", cli.workdir.display()))?;
    let files = pcaps(plan, &cli.workdir)?;
    for run in 1..=cli.runs.max(1) {
        one_run(plan, run, &cli.workdir, bin, &files, agg)?;
    }
    Ok(())
}

/// Write `text` to `p`, or say why not and exit 1.
fn write_or_exit(p: &Path, text: &str) {
    if let Err(e) = std::fs::write(p, text) {
        eprintln!("dirigo-bench: {}: {e}", p.display());
        std::process::exit(1);
    }
}

/// `dirigo-bench micro`: the micro-benchmark (or the table comparison)
/// alone, its table printed.
fn micro_only(mut plan: Plan, cmd: &Cmd, agg: &mut Agg) {
    let Cmd::Micro {
        seconds,
        method,
        flows,
        newconn,
        api,
        memprobe,
        tables,
        servers,
    } = cmd;
    if *tables {
        print_tables(&plan, flows.unwrap_or(1_000_000), *seconds);
        return;
    }
    plan.micro_servers = *servers;
    plan.micro = Duration::from_secs_f64(*seconds);
    let only = method.as_deref().map(|m| match m {
        "tun" => Method::Tun,
        "nat" => Method::Nat,
        "fnat" => Method::FullNat,
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
    run_micro(&plan, agg, only, *flows);
    if *memprobe {
        run_memprobe(&plan, agg);
    }
    print!("{}", report::micro_table(&plan, agg));
}

/// `dirigo-bench micro --tables`: the table comparison at `flows` flows,
/// `seconds` per case.
fn print_tables(plan: &Plan, flows: u32, seconds: f64) {
    let p = tables::run(
        plan.capacity.max(flows),
        flows,
        Duration::from_secs_f64(seconds),
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
}
