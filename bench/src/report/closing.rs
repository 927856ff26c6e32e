//! The end of BENCHMARKS.md: the sans-IO micro-benchmark, the memory
//! floor, how to run and the machine.

use super::common::{f0, f2, lscpu, micro_keys, Info};
use crate::agg::Agg;
use crate::Plan;
use std::fmt::Write;

/// The sans-IO micro-benchmark table.
pub(super) fn micro_section(s: &mut String, plan: &Plan, a: &Agg, info: &Info) {
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
}

/// What a random line costs: the memory floor at 1M flows.
pub(super) fn memory_section(s: &mut String, plan: &Plan, a: &Agg, info: &Info) {
    let has1m = plan.sizes.iter().any(|s| s.0 == "1M");
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
}

/// The chart, how to run, testpmd's command line and the machine.
pub(super) fn run_section(s: &mut String, plan: &Plan) {
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
}
