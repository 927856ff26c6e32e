//! The results: a plain-text table on stdout, BENCHMARKS.md, chart CSV.

use crate::agg::Agg;
use crate::{exc_scenario, metrics_scenario, mname, v6_label, Plan};
use std::fmt::Write;

/// The plain-text results table (stdout; the smoke test parses it).
pub fn summary(plan: &Plan, a: &Agg, info: &Info) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "== dirigo-bench results: median of {} run(s), {:.0} s ==",
        info.runs, info.elapsed_s
    );
    let _ = writeln!(
        s,
        "{:<26} {:>8} {:>8} {:>8} {:>10} {:>9} {:>8}",
        "scenario", "Mpps", "spread%", "ns/pkt", "x macswap", "tracked", "Mconn/s"
    );
    testpmd_rows(&mut s, plan, a);
    let exc = exc_scenario(plan.exception_size.0);
    let largest = plan.sizes.last().map_or("", |s| s.0);
    let met = metrics_scenario(largest);
    dirigo_rows(&mut s, plan, a, &exc, &met);
    extra_lines(&mut s, a, &exc, &met);
    let _ = writeln!(
        s,
        "conn table: {:.0} bytes for {} connections = {:.1} B/conn",
        info.table_bytes,
        info.capacity,
        info.table_bytes / info.capacity as f64
    );
    let _ = writeln!(
        s,
        "memory: random 64-B line over {:.2} MiB: {} ns prefetched (batches of 32), {} ns plain, {} ns dependent",
        info.table_bytes / 1048576.0,
        f2(a.med("mem|prefetched|ns")),
        f2(a.med("mem|plain|ns")),
        f2(a.med("mem|chase|ns"))
    );
    s += &micro_table(plan, a);
    s
}

/// The summary's testpmd lines: io on the smallest pcap, macswap on each.
fn testpmd_rows(s: &mut String, plan: &Plan, a: &Agg) {
    let mut tp: Vec<String> = vec![format!("io {}", plan.sizes[0].0)];
    for &(l, _) in &plan.sizes {
        tp.push(format!("macswap {l}"));
    }
    if let Some((l, _, _)) = plan.spread_wanted() {
        tp.push(format!("macswap {l}"));
    }
    tp.push("macswap newconn".into());
    for l in v6_sizes(plan) {
        tp.push(format!("macswap {}", v6_label(l)));
    }
    for t in tp {
        let k = format!("testpmd|{t}|mpps");
        let m = a.med(&k);
        let _ = writeln!(
            s,
            "{:<26} {:>8} {:>8.1} {:>8}",
            format!("testpmd {t}"),
            f2(m),
            a.spread_pct(&k),
            f2(1e3 / m)
        );
    }
}

/// The summary's dirigo lines: the established scenarios, the table in
/// cache, new connections, exception (`exc`), metrics (`met`), IPv6.
fn dirigo_rows(s: &mut String, plan: &Plan, a: &Agg, exc: &str, met: &str) {
    let spread = plan.spread_scenarios().into_iter().map(|s| s.0);
    for sc in scenarios(plan)
        .into_iter()
        .chain(spread)
        .chain(["newconn".to_string(), exc.to_string(), met.to_string()])
        .chain(plan.v6_scenarios().into_iter().map(|s| s.0))
    {
        let k = format!("dirigo|{sc}");
        let m = a.med(&format!("{k}|mpps"));
        let _ = writeln!(
            s,
            "{:<26} {:>8} {:>8.1} {:>8} {:>10} {:>9} {:>8}",
            format!("dirigo {sc}"),
            f2(m),
            a.spread_pct(&format!("{k}|mpps")),
            f2(1e3 / m),
            f2(a.med(&format!("{k}|ratio"))),
            f0(a.med(&format!("{k}|tracked"))),
            f2(a.med(&format!("{k}|mconn"))),
        );
    }
}

/// The summary's exception (`exc`) and metrics (`met`) scenario lines.
fn extra_lines(s: &mut String, a: &Agg, exc: &str, met: &str) {
    let k = format!("dirigo|{exc}");
    let _ = writeln!(
        s,
        "exception: {exc} (10% of packets to {}:{}): VIP {} Mpps = {} x plain DR; own-address {} /s in, {} /s to kernel, {} /s rate-limited, {} /s lost",
        std::net::Ipv4Addr::from(crate::gen::OWN_ADDR),
        crate::gen::OWN_PORT,
        f2(a.med(&format!("{k}|mpps"))),
        f2(a.med(&format!("{k}|plain"))),
        f0(a.med(&format!("{k}|own_in"))),
        f0(a.med(&format!("{k}|to_kernel"))),
        f0(a.med(&format!("{k}|limited"))),
        f0(a.med(&format!("{k}|lost"))),
    );
    let k = format!("dirigo|{met}");
    let _ = writeln!(
        s,
        "metrics: {met} (endpoint on, burst histogram, a scrape every second, {} scrapes): {} Mpps = {} x plain DR",
        f0(a.med(&format!("{k}|scrapes"))),
        f2(a.med(&format!("{k}|mpps"))),
        f2(a.med(&format!("{k}|plain"))),
    );
}

/// The micro-benchmark table (text).
pub fn micro_table(plan: &Plan, a: &Agg) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "-- sans-IO micro-benchmark (classify + Balancer, bursts of 32; pkt = process() per packet, burst = process_burst(), the staged path the daemon uses) --");
    let _ = writeln!(
        s,
        "{:<26} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}",
        "case", "Mpps", "ns/pkt", "p50", "p99", "p99.9", "Mconn/s", "tracked"
    );
    for sc in micro_keys(plan) {
        for api in ["pkt", "burst"] {
            let k = format!("micro|{sc}|{api}");
            if a.values(&format!("{k}|mpps")).is_empty() {
                continue;
            }
            let _ = writeln!(
                s,
                "{:<26} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}",
                format!("micro {sc} ({api})"),
                f2(a.med(&format!("{k}|mpps"))),
                format!("{:.1}", a.med(&format!("{k}|ns"))),
                f0(a.med(&format!("{k}|p50"))),
                f0(a.med(&format!("{k}|p99"))),
                f0(a.med(&format!("{k}|p999"))),
                f2(a.med(&format!("{k}|mconn"))),
                f0(a.med(&format!("{k}|tracked"))),
            );
        }
    }
    if !a.values("micro|synproxy|est").is_empty() {
        let _ = writeln!(
            s,
            "micro synproxy (burst, timestamps on every frame): SYNs answered {} Mpps \
             (per packet: IPv4 {}, IPv6 {} Mpps), connections opened {} Mconn/s, \
             proxied established NAT {} Mpps beside plain NAT {} Mpps ({:.2}x)",
            f2(a.med("micro|synproxy|syn")),
            f2(a.med("micro|synproxy|synpkt")),
            f2(a.med("micro|synproxy|syn6")),
            f2(a.med("micro|synproxy|open")),
            f2(a.med("micro|synproxy|est")),
            f2(a.med("micro|synproxy|nat")),
            a.med("micro|synproxy|est") / a.med("micro|synproxy|nat"),
        );
    }
    if let Some(&(label, _)) = plan.sizes.last() {
        let (on, off) = (
            format!("micro|sync {label}|on"),
            format!("micro|sync {label}|off"),
        );
        if !a.values(&format!("{on}|mpps")).is_empty() {
            let _ = writeln!(
                s,
                "micro connection sync (DR {label}, burst): with [sync] {} Mpps ({} ns/pkt) beside \
                 without {} Mpps ({} ns/pkt) ({:.2}x)",
                f2(a.med(&format!("{on}|mpps"))),
                f0(a.med(&format!("{on}|ns"))),
                f2(a.med(&format!("{off}|mpps"))),
                f0(a.med(&format!("{off}|ns"))),
                a.med(&format!("{on}|mpps")) / a.med(&format!("{off}|mpps")),
            );
        }
    }
    s
}

/// Chart data: scenario, testpmd macswap Mpps (same pcap), dirigo Mpps,
/// min and max of dirigo over runs.
pub fn csv(plan: &Plan, a: &Agg) -> String {
    let mut s = String::from("scenario,testpmd_macswap,dirigo,dirigo_min,dirigo_max,micro_pkt\n");
    // the daemon's scenarios (the many-server case is micro only)
    for sc in micro_keys(plan).into_iter().filter(|k| k != NEWCONN_MANY) {
        let label = sc.split(' ').nth(1).unwrap_or("newconn");
        let base = a.med(&format!("testpmd|macswap {label}|mpps"));
        let k = format!("dirigo|{sc}|mpps");
        let (lo, hi) = a.range(&k);
        let _ = writeln!(
            s,
            "{sc},{base:.3},{:.3},{lo:.3},{hi:.3},{:.3}",
            a.med(&k),
            a.med(&format!("micro|{sc}|burst|mpps"))
        );
    }
    // the exception scenario beside testpmd on the plain pcap (no micro)
    let label = plan.exception_size.0;
    let sc = exc_scenario(label);
    let k = format!("dirigo|{sc}|mpps");
    if !a.values(&k).is_empty() {
        let (lo, hi) = a.range(&k);
        let _ = writeln!(
            s,
            "{sc},{:.3},{:.3},{lo:.3},{hi:.3},NaN",
            a.med(&format!("testpmd|macswap {label}|mpps")),
            a.med(&k)
        );
    }
    s
}

/// BENCHMARKS.md (the generated part; scripts/bench.sh appends the profile).
pub fn markdown(plan: &Plan, a: &Agg, info: &Info) -> String {
    let mut s = String::new();
    setup_section(&mut s, plan, info);
    targets_section(&mut s, plan, a, info);
    testpmd_section(&mut s, plan, a);
    established_section(&mut s, plan, a);
    ipv6_section(&mut s, plan, a);
    workers_section(&mut s, plan, a);
    newconn_section(&mut s, plan, a);
    synproxy_section(&mut s, a);
    sync_section(&mut s, plan, a);
    exception_section(&mut s, plan, a);
    metrics_section(&mut s, plan, a);
    checkpoint_section(&mut s, plan, a);
    handoff_section(&mut s, plan, a);
    micro_section(&mut s, plan, a, info);
    memory_section(&mut s, plan, a, info);
    table_share_section(&mut s, plan, a);
    run_section(&mut s, plan);
    s
}

mod closing;
mod common;
mod daemon;
mod intro;
mod sections;

use closing::{memory_section, micro_section, run_section};
use common::{f0, f2, micro_keys, scenarios, v6_sizes};
pub use common::{Info, NEWCONN_MANY};
use daemon::{established_section, newconn_section, testpmd_section, workers_section};
use intro::{setup_section, targets_section};
use sections::{
    checkpoint_section, exception_section, handoff_section, ipv6_section, metrics_section,
    sync_section, synproxy_section, table_share_section,
};
