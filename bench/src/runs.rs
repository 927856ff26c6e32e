//! One run of the benchmark: testpmd on the pcaps, then the daemon's
//! scenarios (established per method and size, the table in cache, IPv6,
//! two workers, the exception path, metrics, new connections, the SYN
//! proxy), the micro-benchmark and the memory probe, recorded into an
//! [`Agg`].

use crate::agg::Agg;
use crate::micro_runs::run_micro;
use crate::plan::{v6_label, Plan};
use crate::{
    checkpoint_scenario, dut, exc_scenario, memprobe, metrics_scenario, mname, own_label, testpmd,
};
use dirigo_core::lb::conn::lines::LineTable;
use dirigo_core::lb::spec::Method;
use std::path::{Path, PathBuf};

/// A generated pcap: label, path, packets.
type Pcap = (String, PathBuf, u64);

/// What every scenario of one run works with: the plan, the run's number
/// (1-based), the scratch directory, the daemon binary, the pcaps.
#[derive(Clone, Copy)]
struct Run<'a> {
    plan: &'a Plan,
    run: usize,
    dir: &'a Path,
    bin: &'a Path,
    files: &'a [Pcap],
}

/// The pcap labelled `l`.
fn find<'a>(files: &'a [Pcap], l: &str) -> Result<&'a Pcap, String> {
    files
        .iter()
        .find(|f| f.0 == l)
        .ok_or(format!("no pcap {l}"))
}

/// Run `run` (1-based) of every scenario `plan` wants on the pcaps `files`,
/// the daemon `bin` working in `dir`.
pub fn one_run(
    plan: &Plan,
    run: usize,
    dir: &Path,
    bin: &Path,
    files: &[Pcap],
    agg: &mut Agg,
) -> Result<(), String> {
    let r = &Run {
        plan,
        run,
        dir,
        bin,
        files,
    };
    run_testpmd(plan, run, files, agg)?;
    run_established(r, agg)?;
    run_v6(r, agg)?;
    run_two_workers(r, agg)?;
    if plan.wants("newconn") || plan.wants("synproxy") {
        run_newconn(r, find(files, "newconn")?, agg)?;
    }
    run_marks(r, agg)?;
    if plan.wants("micro") {
        run_micro(plan, agg, None, None);
    }
    if plan.wants("memprobe") {
        run_memprobe(plan, agg);
    }
    Ok(())
}

/// testpmd: io on the smallest pcap, macswap on every pcap.
fn run_testpmd(plan: &Plan, run: usize, files: &[Pcap], agg: &mut Agg) -> Result<(), String> {
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
    Ok(())
}

/// The established scenarios per method and size (with the exception and
/// metrics ones after their plain DR run), then the table in cache.
fn run_established(r: &Run, agg: &mut Agg) -> Result<(), String> {
    let Run { plan, files, .. } = *r;
    for &m in &plan.methods {
        for &(label, _) in &plan.sizes {
            let (_, path, n) = find(files, label)?;
            if plan.wants(&format!("{} {label}", mname(m))) {
                run_plain(r, (label, path, *n), m, agg)?;
            }
            if m == Method::Dr && label == plan.exception_size.0 && plan.wants("exception") {
                run_exception(r, agg)?;
            }
            if m == Method::Dr
                && Some(&label) == plan.sizes.last().map(|s| &s.0)
                && plan.wants("metrics")
            {
                run_metrics(r, (label, path, *n), agg)?;
            }
            if m == Method::Dr
                && Some(&label) == plan.sizes.last().map(|s| &s.0)
                && plan.wants("checkpoint")
            {
                run_checkpoint(r, (label, path, *n), agg)?;
            }
            if m == Method::Dr
                && Some(&label) == plan.sizes.last().map(|s| &s.0)
                && plan.wants("handoff")
            {
                run_handoff(r, (label, path, *n), agg)?;
            }
        }
    }
    // FullNAT on the smallest and the largest pcap (its connections in
    // the IPv6 table, the requests' only: nothing answers from net_null)
    for label in plan.fnat_sizes() {
        let (_, path, n) = find(files, label)?;
        run_plain(r, (label, path, *n), Method::FullNat, agg)?;
    }
    // the table in cache on the largest pcap (see Plan::spread): DR 1M's
    // time less DR 1k@1M's is what the table's misses cost DR
    if let Some((label, _, _)) = plan.spread_wanted() {
        let (_, path, n) = find(files, &label)?;
        for (_, m) in plan.spread_scenarios() {
            run_plain(r, (&label, path, *n), m, agg)?;
        }
    }
    Ok(())
}

/// The IPv6 established scenarios, on the IPv6 pcaps.
fn run_v6(r: &Run, agg: &mut Agg) -> Result<(), String> {
    let Run {
        plan,
        run,
        dir,
        bin,
        files,
    } = *r;
    for (name, size, _, m) in plan.v6_scenarios() {
        let label = v6_label(size);
        let (_, path, n) = find(files, &label)?;
        let c = dut::DutCase {
            v6: true,
            ..dut_case(plan, bin, dir, path, *n, m)
        };
        let r = dut::run(&c, &format!("r{run}-{}", name.replace(' ', "-")))?;
        let k = format!("dirigo|{name}");
        let ratio = record_dut(agg, &k, &label, &r);
        eprintln!(
            "run {run}: dirigo {name}: {:.2} Mpps ({ratio:.2}x macswap on the IPv6 pcap), tracked {}",
            r.mpps, r.tracked
        );
    }
    Ok(())
}

/// DR with two workers (1k and 100k flows; 1M would need two preloaded
/// copies of a 2M-packet pcap): both wan queues replay the pcap and each
/// worker hands the flows the other owns over its steering ring.
fn run_two_workers(r: &Run, agg: &mut Agg) -> Result<(), String> {
    let Run {
        plan,
        run,
        dir,
        bin,
        files,
    } = *r;
    let two_w: Vec<&str> = plan.sizes.iter().take(2).map(|s| s.0).collect();
    for label in two_w {
        if !plan.wants(&format!("DR-2w {label}")) {
            continue;
        }
        let (_, path, n) = find(files, label)?;
        let c = dut::DutCase {
            workers: 2,
            ..dut_case(plan, bin, dir, path, *n, Method::Dr)
        };
        let r = dut::run(&c, &format!("r{run}-dr2w-{label}"))?;
        let ratio = record_dut(agg, &format!("dirigo|DR-2w {label}"), label, &r);
        eprintln!(
            "run {run}: dirigo DR 2 workers {label}: {:.2} Mpps ({ratio:.2}x macswap), tracked {}",
            r.mpps, r.tracked
        );
    }
    Ok(())
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
        checkpoint: false,
        handoff: false,
        v6: false,
        marks: 0,
        fwmark: false,
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

/// The new-connection scenario (DR, every packet a new SYN) and the same
/// SYNs to a SYN-proxy NAT service.
fn run_newconn(r: &Run, (_, path, n): &Pcap, agg: &mut Agg) -> Result<(), String> {
    let Run {
        plan,
        run,
        dir,
        bin,
        files,
    } = *r;
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

/// The mark rules' cost (issue 52), only when `--only` names them: on the
/// smallest pcap, `DR-marks` (16 rules that match nothing beside the
/// ordinary service: what rules cost the services they do not serve) and
/// `DR-fwm` (an fwmark service reached through a 17th rule); the
/// new-connection scenario with those rules beside the ordinary service
/// (`newconn-marks`) and to that fwmark service (`newconn-fwm`: every
/// packet a new flow that scans the rules).
fn run_marks(r: &Run, agg: &mut Agg) -> Result<(), String> {
    let Run {
        plan,
        run,
        dir,
        bin,
        files,
    } = *r;
    if plan.only.is_empty() {
        return Ok(());
    }
    let label = plan.sizes[0].0;
    for (name, fwmark) in [("DR-marks", false), ("DR-fwm", true)] {
        let name = format!("{name} {label}");
        if !plan.wants(&name) {
            continue;
        }
        let (_, path, n) = find(files, label)?;
        let c = dut::DutCase {
            marks: 16,
            fwmark,
            ..dut_case(plan, bin, dir, path, *n, Method::Dr)
        };
        let r = dut::run(&c, &format!("r{run}-{}", name.replace(' ', "-")))?;
        let ratio = record_dut(agg, &format!("dirigo|{name}"), label, &r);
        eprintln!(
            "run {run}: dirigo {name}: {:.2} Mpps ({ratio:.2}x macswap), tracked {}",
            r.mpps, r.tracked
        );
    }
    for (name, fwmark) in [("newconn-marks", false), ("newconn-fwm", true)] {
        if !plan.wants(name) {
            continue;
        }
        let (_, path, n) = find(files, "newconn")?;
        let c = dut::DutCase {
            capacity: plan.newconn_capacity,
            embryonic_grace_ms: 0,
            marks: 16,
            fwmark,
            ..dut_case(plan, bin, dir, path, *n, Method::Dr)
        };
        let r = dut::run(&c, &format!("r{run}-{name}"))?;
        agg.push(&format!("dirigo|{name}|mpps"), r.mpps);
        agg.push(&format!("dirigo|{name}|mconn"), r.mconn_s);
        eprintln!(
            "run {run}: dirigo {name}: {:.2} Mpps, {:.2} Mconn/s, tracked {}",
            r.mpps, r.mconn_s, r.tracked
        );
    }
    Ok(())
}

/// A plain established scenario: method `m` on the pcap `label`.
fn run_plain(
    r: &Run,
    (label, path, n): (&str, &Path, u64),
    m: Method,
    agg: &mut Agg,
) -> Result<(), String> {
    let Run {
        plan,
        run,
        dir,
        bin,
        ..
    } = *r;
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
fn run_exception(r: &Run, agg: &mut Agg) -> Result<(), String> {
    let Run {
        plan,
        run,
        dir,
        bin,
        files,
    } = *r;
    let label = plan.exception_size.0;
    let own = own_label(label);
    let (_, path, n) = find(files, &own)?;
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

/// DR on the largest established pcap, right after the plain DR run of
/// it, as `with` changes its case (tag `what`, scenario `k`): the run,
/// its ratio to macswap and its rate over the plain run's (recorded).
fn dr_beside_plain(
    r: &Run,
    (label, path, n): (&str, &Path, u64),
    (what, k): (&str, &str),
    with: impl FnOnce(&mut dut::DutCase),
    agg: &mut Agg,
) -> Result<(dut::DutResult, f64, f64), String> {
    let Run {
        plan,
        run,
        dir,
        bin,
        ..
    } = *r;
    let mut c = dut_case(plan, bin, dir, path, n, Method::Dr);
    with(&mut c);
    let res = dut::run(&c, &format!("r{run}-DR-{what}-{label}"))?;
    let ratio = record_dut(agg, k, label, &res);
    let plain = res.mpps / plain_dr(agg, label);
    agg.push(&format!("{k}|plain"), plain);
    Ok((res, ratio, plain))
}

/// The metrics scenario: the Prometheus endpoint on, the burst histogram
/// kept and a scrape every second; its rate over the plain run's.
fn run_metrics(r: &Run, pcap: (&str, &Path, u64), agg: &mut Agg) -> Result<(), String> {
    let label = pcap.0;
    let k = format!("dirigo|{}", metrics_scenario(label));
    let (res, ratio, plain) = dr_beside_plain(r, pcap, ("metrics", &k), |c| c.metrics = true, agg)?;
    agg.push(&format!("{k}|scrapes"), res.scrapes as f64);
    eprintln!(
        "run {}: dirigo DR {label} + metrics (burst histogram, {} scrapes): {:.2} Mpps ({plain:.3} x plain DR {label}, {ratio:.2}x macswap)",
        r.run, res.scrapes, res.mpps
    );
    Ok(())
}

/// The crash checkpoint every second: the workers sweep their (full)
/// tables into the checkpoint thread's buffers all along the run, and the
/// thread writes the file.
fn run_checkpoint(r: &Run, pcap: (&str, &Path, u64), agg: &mut Agg) -> Result<(), String> {
    let label = pcap.0;
    let k = format!("dirigo|{}", checkpoint_scenario(label));
    let (res, ratio, plain) =
        dr_beside_plain(r, pcap, ("checkpoint", &k), |c| c.checkpoint = true, agg)?;
    agg.push(&format!("{k}|written"), res.checkpoints as f64);
    agg.push(&format!("{k}|entries"), res.checkpoint_entries as f64);
    agg.push(&format!("{k}|ms"), res.checkpoint_ms as f64);
    eprintln!(
        "run {}: dirigo DR {label} + checkpoint every 1 s ({} written, last {} entries in {} ms): {:.2} Mpps ({plain:.3} x plain DR {label}, {ratio:.2}x macswap)",
        r.run, res.checkpoints, res.checkpoint_entries, res.checkpoint_ms, res.mpps
    );
    Ok(())
}

/// DR at `label` flows, the table full, restarted with SIGTERM: the gap
/// in forwarding with the connection handoff, and its parts.
fn run_handoff(r: &Run, (label, path, n): (&str, &Path, u64), agg: &mut Agg) -> Result<(), String> {
    let Run {
        plan,
        run,
        dir,
        bin,
        ..
    } = *r;
    let c = dut::DutCase {
        handoff: true,
        ..dut_case(plan, bin, dir, path, n, Method::Dr)
    };
    let g = dut::restart_gap(&c, &format!("r{run}-DR-handoff-{label}"))?;
    let k = format!("handoff {label}");
    agg.push(&format!("{k}|tracked"), g.tracked as f64);
    agg.push(&format!("{k}|installed"), g.installed as f64);
    agg.push(&format!("{k}|write_ms"), g.write_ms as f64);
    agg.push(&format!("{k}|install_ms"), g.install_ms as f64);
    agg.push(&format!("{k}|gap_ms"), g.gap_ms as f64);
    eprintln!(
        "run {run}: DR {label} restarted with SIGTERM: {} tracked, {} written in {} ms, {} installed in {} ms, gap {} ms",
        g.tracked, g.written, g.write_ms, g.installed, g.install_ms, g.gap_ms
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
pub fn run_memprobe(plan: &Plan, agg: &mut Agg) {
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
