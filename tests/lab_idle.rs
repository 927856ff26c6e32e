//! `[dataplane] idle = "sleep"` (issue 20: directors and routing daemons
//! sharing a small machine): a dirigo whose worker naps when it has
//! nothing to do still answers ping and forwards TCP both ways through
//! the netns lab, uses a small fraction of a core while idle (with "poll"
//! its worker alone is a full core), counts its naps as idle time, and
//! answers a ping that arrives in a quiet spell within a millisecond.
//! Needs root and hugepages (skips outside CI, fails in CI).
//!
//! `DIRIGO_LAB_IDLE=poll` runs the same measurements with busy polling,
//! for contrast (then the idle dirigo must use more than 30% of a core, which
//! also shows that the CPU reading measures something).

mod common;
mod lab_common;

use lab_common::checks::{ping, transfer};
use lab_common::{Lab, LabSpec, SERIAL, VIP};
use std::time::{Duration, Instant};

/// utime + stime of process `pid` (all its threads), in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc/PID/stat");
    // the fields after the command name (which may hold spaces) in parentheses
    let rest = &stat[stat.rfind(')').expect("stat has (comm)") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // fields 14 and 15 of proc(5); `rest` starts at field 3
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // the kernel's clock tick rate, as ps(1) reads it
    let hz = common::sh("getconf CLK_TCK")
        .1
        .trim()
        .parse::<f64>()
        .unwrap();
    ticks as f64 / hz
}

/// The worker's cumulative busy time (ns) as `dirigoctl lcores` reports it.
fn busy_ns(lab: &Lab) -> u64 {
    let l = lab.ctl_json(&["lcores"]);
    l.as_array()
        .expect("lcores list")
        .iter()
        .filter(|w| w["role"] == "worker")
        .map(|w| w["busy_ns"].as_u64().expect("busy_ns measured"))
        .sum()
}

/// Round-trip times (ms) of `count` pings to the VIP, `interval` apart.
fn ping_rtts(lab: &Lab, count: u32, interval: &str) -> Vec<f64> {
    let out = lab.client(&[
        "ping",
        "-c",
        &count.to_string(),
        "-i",
        interval,
        "-W",
        "1",
        VIP,
    ]);
    let rtts: Vec<f64> = out
        .lines()
        .filter_map(|l| l.split("time=").nth(1))
        .filter_map(|t| t.split_whitespace().next()?.parse().ok())
        .collect();
    assert_eq!(rtts.len(), count as usize, "every ping answered: {out}");
    rtts
}

#[test]
fn lab_idle_sleep_forwards_and_rests() {
    if !common::privileged("lab idle sleep") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mode = std::env::var("DIRIGO_LAB_IDLE").unwrap_or_else(|_| "sleep".into());
    let lab = Lab::start_with_config(&LabSpec::dr("lab_idle", "dgid"), 65536, |c| {
        c.dataplane("idle", format!("\"{mode}\""))
    });
    // (a) it still answers and forwards
    ping(&lab);
    transfer(&lab, "dr");

    // (b) idle: a small part of one core, and the naps count as idle
    std::thread::sleep(Duration::from_millis(300));
    let pid = lab.daemon_pid();
    let (c0, b0, t0) = (cpu_seconds(pid), busy_ns(&lab), Instant::now());
    std::thread::sleep(Duration::from_secs(2));
    let (c1, b1, secs) = (cpu_seconds(pid), busy_ns(&lab), t0.elapsed().as_secs_f64());
    let cores = (c1 - c0) / secs;
    let busy = (b1 - b0) as f64 / 1e9 / secs;
    eprintln!(
        "idle = \"{mode}\": {:.1}% of one core over {secs:.1} s idle; worker busy ratio {:.2}%",
        cores * 100.0,
        busy * 100.0
    );
    if mode == "poll" {
        assert!(cores > 0.3, "polling uses {:.0}% of a core", cores * 100.0);
    } else {
        assert!(
            cores < 0.25,
            "idle dirigo uses {:.0}% of a core",
            cores * 100.0
        );
    }
    assert!(busy < 0.05, "naps are idle time: busy {:.1}%", busy * 100.0);

    // (c) a ping after a quiet spell (the worker asleep) is answered at once
    let mut rtts = ping_rtts(&lab, 20, "0.05");
    rtts.sort_by(|a, b| a.total_cmp(b));
    let median = rtts[rtts.len() / 2];
    eprintln!(
        "idle = \"{mode}\": ping {VIP} every 50 ms: min {:.3} median {median:.3} max {:.3} ms",
        rtts[0],
        rtts[rtts.len() - 1]
    );
    assert!(median < 1.0, "median RTT {median} ms: {rtts:?}");
    lab.finish();
}
