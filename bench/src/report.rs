//! The results: a plain-text table on stdout, BENCHMARKS.md, chart CSV.

use crate::agg::Agg;
use crate::{exc_scenario, metrics_scenario, mname, v6_label, Plan};
use std::fmt::Write;

/// Facts about the invocation, for the report.
pub struct Info {
    /// Runs aggregated.
    pub runs: usize,
    /// Wall time of all runs.
    pub elapsed_s: f64,
    /// `LineTable::memory_bytes()` at the established capacity.
    pub table_bytes: f64,
    /// That capacity.
    pub capacity: u32,
}

fn f2(v: f64) -> String {
    if v.is_nan() {
        "n/a".into()
    } else {
        format!("{v:.2}")
    }
}

fn f0(v: f64) -> String {
    if v.is_nan() {
        "n/a".into()
    } else {
        format!("{v:.0}")
    }
}

/// Labels of the established scenarios, in order.
fn scenarios(plan: &Plan) -> Vec<String> {
    let mut v = Vec::new();
    for &m in &plan.methods {
        for &(l, _) in &plan.sizes {
            v.push(format!("{} {l}", mname(m)));
        }
    }
    v
}

/// The sizes of the IPv6 scenarios that run, in order, once each.
fn v6_sizes(plan: &Plan) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = plan.v6_scenarios().iter().map(|s| s.1).collect();
    v.sort_by_key(|l| plan.sizes6.iter().position(|s| s.0 == *l));
    v.dedup();
    v
}

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

/// The micro-benchmark's new-connection case over [`crate::micro::MAX_SERVERS`]
/// real servers (a wlc pick over many: the winner tree).
pub const NEWCONN_MANY: &str = "newconn-244";

fn micro_keys(plan: &Plan) -> Vec<String> {
    scenarios(plan)
        .into_iter()
        .chain(["newconn".to_string(), NEWCONN_MANY.to_string()])
        .collect()
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
            "micro synproxy (burst, timestamps on every frame): SYNs answered {} Mpps, \
             connections opened {} Mconn/s, proxied established NAT {} Mpps beside plain NAT {} Mpps ({:.2}x)",
            f2(a.med("micro|synproxy|syn")),
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

fn lscpu() -> String {
    let out = std::process::Command::new("lscpu")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let keep = [
        "Architecture",
        "CPU(s):",
        "Model name",
        "Thread(s) per core",
        "Core(s) per socket",
        "Socket(s)",
        "Hypervisor vendor",
        "L1d",
        "L2",
        "L3",
        "CPU max MHz",
        "BogoMIPS",
        "Flags",
    ];
    out.lines()
        .filter(|l| keep.iter().any(|k| l.trim_start().starts_with(k)))
        .map(|l| {
            if l.starts_with("Flags") {
                "Flags: (omitted)".to_string()
            } else {
                l.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "**missed**"
    }
}

/// BENCHMARKS.md (the generated part; scripts/bench.sh appends the profile).
pub fn markdown(plan: &Plan, a: &Agg, info: &Info) -> String {
    let mut s = String::new();
    let sizes: Vec<&str> = plan.sizes.iter().map(|s| s.0).collect();
    let _ = writeln!(s, "# dirigo benchmarks\n");
    let _ = writeln!(s, "Generated by `scripts/bench.sh` (`dirigo-bench --runs {}`); every number is the **median of {} runs** with the spread \
         ((max - min) / median) beside it. Total time of the runs: {:.0} s. The machine is a shared, noisy 2-core VM: compare \
         dirigo only with testpmd **from the same run**, never with other days.\n", info.runs, info.runs, info.elapsed_s);
    let _ = writeln!(s, "## Set-up\n");
    let _ = writeln!(s, "* I/O path (both programs): `net_pcap` (`rx_pcap=<generated pcap>,infinite_rx=1`) -> `net_null` (`no-rx=1`), one \
         forwarding lcore (`-l 0-1`: lcore 0 control/main, lcore 1 the worker), bursts of 32, 64-byte frames (60 + FCS), \
         mbuf data room 256 bytes in both (dirigo `[dataplane] mbuf_data_room = 256`, testpmd `--mbuf-size=256`). net_pcap \
         preloads the whole pcap into the pool and copies every packet into a fresh mbuf on rx, so the ceiling depends on the \
         pcap size: each dirigo scenario is compared with testpmd macswap on **the same pcap** in the same run.");
    let _ = writeln!(s, "* Traffic: TCP to VIP 192.168.100.100:80 from 10.0.0.0/8 clients. Established scenarios: the pcap holds one SYN \
         per flow, then one ACK per flow ({} flow counts: {}); it is replayed forever, so after the first pass every packet hits a \
         tracked connection (replayed SYNs on ESTABLISHED connections stay ESTABLISHED). New-connection scenario: {} distinct \
         SYNs with `connections_per_worker = {}`: every replayed SYN finds its old entry evicted and creates a new connection \
         (the table stays full of embryonic SYN_RECV entries, each insert evicting one).", sizes.len(), sizes.join(", "), plan.newconn_flows, plan.newconn_capacity);
    let _ = writeln!(s, "* dirigo: the release `dirigo` binary started as a child with a generated config: port 0 `wan` = net_pcap0, \
         port 1 `lan` = net_null0, service `tcp 192.168.100.100:80` (wlc) with 4 real servers 172.16.0.11-14 on the lan, \
         static `[[neighbor]]` entries for them and the gateway; `connections_per_worker = {}` in the established scenarios. \
         Mpps = the lan port's tx packets (`dirigoctl --json ports` counters) between two samples {:.0} s apart after {:.0} s \
         of warm-up, / seconds. ns/pkt = 1000 / Mpps (one core, I/O included). Flows tracked = `dirigoctl --json lcores` conns; \
         Mconn/s = the conns_created delta / seconds.", info.capacity, plan.measure.as_secs_f64(), plan.warmup.as_secs_f64());
    let _ = writeln!(s, "* Per-burst latency: the daemon's worker loop is not instrumented, so p50/p99/p99.9 come from the sans-IO \
         micro-benchmark: each burst of 32 frames (copy into a buffer + classify + `Balancer::process_burst`) is timed with `Instant::now()` and \
         its ns/packet recorded in an hdrhistogram. They are the core's per-burst processing latency, without the driver.\n");
    let _ = writeln!(s, "## Targets (issue 9)\n");
    let _ = writeln!(s, "| target | measured | |\n|---|---|---|");
    let has1m = plan.sizes.iter().any(|s| s.0 == "1M");
    if has1m {
        for (m, t) in [("DR", 0.6), ("TUN", 0.5), ("NAT", 0.5)] {
            let r = a.med(&format!("dirigo|{m} 1M|ratio"));
            let _ = writeln!(
                s,
                "| {m} established 1M flows >= {t} x macswap | {} x ({} vs {} Mpps) | {} |",
                f2(r),
                f2(a.med(&format!("dirigo|{m} 1M|mpps"))),
                f2(a.med("testpmd|macswap 1M|mpps")),
                verdict(r >= t)
            );
        }
    }
    let nc = a.med("dirigo|newconn|mconn");
    let _ = writeln!(
        s,
        "| >= 5 M new connections/s per worker | {} M/s (daemon); sans-IO core: {} M/s | {} |",
        f2(nc),
        f2(a.med("micro|newconn|burst|mconn")),
        verdict(nc >= 5.0)
    );
    let bpc = info.table_bytes / info.capacity as f64;
    let _ = writeln!(
        s,
        "| <= 64 B of table memory per connection | {bpc:.1} B | {} |",
        verdict(bpc <= 64.0)
    );
    if has1m {
        for m in &plan.methods {
            let n = mname(*m);
            let r = a.med(&format!("dirigo|{n} 1k|mpps")) / a.med(&format!("dirigo|{n} 1M|mpps"));
            let rm =
                a.med(&format!("micro|{n} 1M|burst|ns")) / a.med(&format!("micro|{n} 1k|burst|ns"));
            let _ = writeln!(s, "| {n}: per-packet cost at 1M flows <= 1.5 x 1k | {} x (daemon); {} x (sans-IO core) | {} |", f2(r), f2(rm), verdict(r <= 1.5));
        }
    }
    let ceilings: Vec<String> = plan
        .spread_scenarios()
        .into_iter()
        .filter_map(|(name, _)| {
            let k = format!("dirigo|{name}|ratio");
            (!a.values(&k).is_empty()).then(|| format!("`{name}` {} x", f2(a.med(&k))))
        })
        .collect();
    if let (false, Some(&(large, _))) = (ceilings.is_empty(), plan.sizes.last()) {
        let _ = writeln!(s, "\nThe ceilings of the {large}-flow ratios on this harness, each method with the table in cache on a pcap as \
            large as the {large} one (see [What the table costs](#what-the-table-costs-at-{}-flows)): {}.",
            large.to_ascii_lowercase(), ceilings.join(", "));
    }
    let lines = dirigo_core::lb::conn::lines::lines_for(info.capacity);
    let buckets = (info.capacity.next_power_of_two() / 4).max(2);
    let _ = writeln!(s, "\nTable memory counted: `LineTable::memory_bytes()` = the lines ({lines} x 64 B: three per four connections, \
        two 32-byte records each) and the NAT reply index ({buckets} buckets x 64 B: eight entries each, one bucket per four connections), \
        for a table of {} connections ({:.0} bytes). Not counted: per-real-server counters and persistence templates (not used here).\n", info.capacity, info.table_bytes);
    let _ = writeln!(s, "## testpmd (the ceiling of this I/O path)\n");
    let _ = writeln!(
        s,
        "| pcap | mode | Mpps | spread | ns/pkt |\n|---|---|---|---|---|"
    );
    let mut tp: Vec<(String, &str)> = vec![(plan.sizes[0].0.to_string(), "io")];
    for &(l, _) in &plan.sizes {
        tp.push((l.to_string(), "macswap"));
    }
    tp.push(("newconn".into(), "macswap"));
    for l in v6_sizes(plan) {
        tp.push((v6_label(l), "macswap"));
    }
    for (l, mode) in tp {
        let k = format!("testpmd|{mode} {l}|mpps");
        let m = a.med(&k);
        let _ = writeln!(
            s,
            "| {l} | {mode} | {} | {:.1}% | {} |",
            f2(m),
            a.spread_pct(&k),
            f2(1e3 / m)
        );
    }
    let _ = writeln!(s, "\n## dirigo, established connections (one worker)\n");
    for &m in &plan.methods {
        let n = mname(m);
        let _ = writeln!(s, "### {n}\n");
        let _ = writeln!(s, "| flows | Mpps | spread | ns/pkt | x macswap (same run) | flows tracked | core p50 / p99 / p99.9 ns/pkt |\n|---|---|---|---|---|---|---|");
        for &(l, _) in &plan.sizes {
            let k = format!("dirigo|{n} {l}");
            let mk = format!("micro|{n} {l}|burst");
            let mp = a.med(&format!("{k}|mpps"));
            let _ = writeln!(
                s,
                "| {l} | {} | {:.1}% | {} | {} | {} | {} / {} / {} |",
                f2(mp),
                a.spread_pct(&format!("{k}|mpps")),
                f2(1e3 / mp),
                f2(a.med(&format!("{k}|ratio"))),
                f0(a.med(&format!("{k}|tracked"))),
                f0(a.med(&format!("{mk}|p50"))),
                f0(a.med(&format!("{mk}|p99"))),
                f0(a.med(&format!("{mk}|p999")))
            );
        }
        let _ = writeln!(s);
    }
    ipv6_section(&mut s, plan, a);
    let _ = writeln!(s, "## dirigo by worker count (DR)\n");
    let _ = writeln!(
        s,
        "Two workers: the wan net_pcap gets two queues (two `rx_pcap` copies of the same pcap, each \
         replayed forever, and two `tx_pcap=/dev/null`), one per worker; a worker hands every flow \
         the other owns (owner = hash of the client address) over the owner's steering ring, so \
         about half of all packets take the software hand-over of issue 8. On this 2-core machine: \
         `--lcores 0@0,1@1,2@0` (worker 1 shares CPU 0 with the control thread, which sleeps 5 ms \
         between rounds). 1M flows are not run with two workers (two preloaded copies of a \
         2M-packet pcap do not fit the hugepages).\n"
    );
    let _ = writeln!(s, "| flows | 1 worker Mpps | 2 workers Mpps | spread | 2 / 1 | 2 workers x macswap | flows tracked (2 workers) |\n|---|---|---|---|---|---|---|");
    for (l, _) in &plan.sizes {
        let k2 = format!("dirigo|DR-2w {l}");
        if a.values(&format!("{k2}|mpps")).is_empty() {
            continue;
        }
        let one = a.med(&format!("dirigo|DR {l}|mpps"));
        let two = a.med(&format!("{k2}|mpps"));
        let _ = writeln!(
            s,
            "| {l} | {} | {} | {:.1}% | {} | {} | {} |",
            f2(one),
            f2(two),
            a.spread_pct(&format!("{k2}|mpps")),
            f2(two / one),
            f2(a.med(&format!("{k2}|ratio"))),
            f0(a.med(&format!("{k2}|tracked")))
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "## dirigo, new connections (every packet a new SYN, DR, one worker)\n"
    );
    let _ = writeln!(s, "| Mconn/s | spread | Mpps | x macswap (same pcap) | table (steady) | core Mconn/s (sans-IO) |\n|---|---|---|---|---|---|");
    let _ = writeln!(
        s,
        "| {} | {:.1}% | {} | {} | {} of {} | {} |\n",
        f2(nc),
        a.spread_pct("dirigo|newconn|mconn"),
        f2(a.med("dirigo|newconn|mpps")),
        f2(a.med("dirigo|newconn|ratio")),
        f0(a.med("dirigo|newconn|tracked")),
        plan.newconn_capacity,
        f2(a.med("micro|newconn|burst|mconn"))
    );
    let many = format!("micro|{NEWCONN_MANY}|burst|mconn");
    if !a.values(&many).is_empty() {
        let _ = writeln!(
            s,
            "The service has {} real servers (wlc). With {} (sans-IO core, `dirigo-bench micro --newconn --servers {}`), \
            wlc picks from the worker's winner tree instead of walking every server: {} Mconn/s ({:.1}% spread), against {} with {}.\n",
            crate::micro::N_RS,
            crate::micro::MAX_SERVERS,
            crate::micro::MAX_SERVERS,
            f2(a.med(&many)),
            a.spread_pct(&many),
            f2(a.med("micro|newconn|burst|mconn")),
            crate::micro::N_RS
        );
    }
    synproxy_section(&mut s, a);
    sync_section(&mut s, plan, a);
    exception_section(&mut s, plan, a);
    metrics_section(&mut s, plan, a);
    let _ = writeln!(s, "## Sans-IO micro-benchmark (no EAL)\n");
    let _ = writeln!(s, "Frames copied into a fixed buffer, `classify`, then `Balancer::process` per packet (`pkt`) or `Balancer::process_burst` \
        (`burst`, the staged path the daemon's pipeline uses: hash + prefetch every primary bucket, then records a few packets ahead), fake egress, \
        table of {} connections ({} for newconn). Latency columns: per-burst (32 packets) time / 32, hdrhistogram.\n", info.capacity, plan.newconn_capacity);
    let _ = writeln!(s, "| case | API | Mpps | ns/pkt | p50 | p99 | p99.9 | Mconn/s | tracked |\n|---|---|---|---|---|---|---|---|---|");
    for sc in micro_keys(plan) {
        for api in ["pkt", "burst"] {
            let k = format!("micro|{sc}|{api}");
            if a.values(&format!("{k}|mpps")).is_empty() {
                continue;
            }
            let _ = writeln!(
                s,
                "| {sc} | {api} | {} | {:.1} | {} | {} | {} | {} | {} |",
                f2(a.med(&format!("{k}|mpps"))),
                a.med(&format!("{k}|ns")),
                f0(a.med(&format!("{k}|p50"))),
                f0(a.med(&format!("{k}|p99"))),
                f0(a.med(&format!("{k}|p999"))),
                f2(a.med(&format!("{k}|mconn"))),
                f0(a.med(&format!("{k}|tracked")))
            );
        }
    }
    let _ = writeln!(s, "\n## The memory floor at 1M flows\n");
    let pf = a.med("mem|prefetched|ns");
    let _ = writeln!(s, "`dirigo-bench` also measures what one random 64-byte line costs on this machine over a region the size of the \
        connection table ({:.0} MiB, transparent huge pages advised as for the table): batches of 32 random lines all prefetched first \
        and then read (the way the burst path reads the table), the same without prefetch, and a chain of dependent loads (one whole miss).\n",
        info.table_bytes / 1048576.0);
    let _ = writeln!(
        s,
        "| prefetched, batches of 32 | plain, batches of 32 | dependent (latency) |\n|---|---|---|"
    );
    let _ = writeln!(
        s,
        "| {} ns | {} ns | {} ns |\n",
        f2(pf),
        f2(a.med("mem|plain|ns")),
        f2(a.med("mem|chase|ns"))
    );
    if has1m {
        let tp = 1e3 / a.med("testpmd|macswap 1M|mpps");
        let dr1k = 1e3 / a.med("dirigo|DR 1k|mpps");
        let _ = writeln!(s, "At 1M flows every packet reads the two candidate lines of its key in the table (both prefetched), which are in no cache. One core of \
            this machine completes at best one random line per {} ns, so the table alone occupies {} ns per packet of the memory \
            system, beside the misses of the I/O path itself (testpmd macswap takes {} ns per packet on the 1M pcap, against {} on \
            the 1k one). DR at 0.6 x macswap allows {} ns per packet for everything; dirigo's DR at 1k flows, where nothing \
            misses, takes {} ns.\n",
            f2(pf), f2(2.0 * pf), f2(tp), f2(1e3 / a.med("testpmd|macswap 1k|mpps")), f2(tp / 0.6), f2(dr1k));
    }
    table_share_section(&mut s, plan, a);
    let _ = writeln!(
        s,
        "\n![Mpps per scenario, dirigo beside testpmd macswap on the same pcap](docs/bench.png)\n"
    );
    let _ = writeln!(s, "## How to run\n");
    let _ = writeln!(s, "```sh\nscripts/bench.sh                 # as root: release build, 3 runs, rewrites BENCHMARKS.md + docs/bench.png (< 10 min)\n\
        target/release/dirigo-bench --runs 1           # one run, table on stdout\n\
        target/release/dirigo-bench --quick            # smoke mode (tests/bench_smoke.rs)\n\
        target/release/dirigo-bench --only 'DR 1M,NAT' # these daemon scenarios only (and testpmd on their pcaps): A/B in a minute\n\
        target/release/dirigo-bench micro --seconds 2  # sans-IO only, no root\n```\n");
    let _ = writeln!(
        s,
        "testpmd, as run (per pcap):\n\n```sh\n{}\n```\n",
        crate::testpmd::command(
            "macswap",
            "/tmp/dirigo-bench/bench-1M.pcap",
            plan.testpmd_s,
            2_032_768,
            "dg-bench-tp"
        )
    );
    let _ = writeln!(s, "## Machine\n\n```\n{}\n```\n", lscpu());
    s
}

mod sections;
use sections::{
    exception_section, ipv6_section, metrics_section, sync_section, synproxy_section,
    table_share_section,
};
