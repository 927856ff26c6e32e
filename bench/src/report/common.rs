//! What the report's parts share: the invocation's facts, number
//! formats and the scenario lists.

use crate::{mname, Plan};

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

/// Two decimals, `n/a` for no value.
pub(super) fn f2(v: f64) -> String {
    if v.is_nan() {
        "n/a".into()
    } else {
        format!("{v:.2}")
    }
}

/// No decimals, `n/a` for no value.
pub(super) fn f0(v: f64) -> String {
    if v.is_nan() {
        "n/a".into()
    } else {
        format!("{v:.0}")
    }
}

/// A target's verdict.
pub(super) fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "**missed**"
    }
}

/// Labels of the established scenarios, in order.
pub(super) fn scenarios(plan: &Plan) -> Vec<String> {
    let mut v = Vec::new();
    for &m in &plan.methods {
        for &(l, _) in &plan.sizes {
            v.push(format!("{} {l}", mname(m)));
        }
    }
    v
}

/// The sizes of the IPv6 scenarios that run, in order, once each.
pub(super) fn v6_sizes(plan: &Plan) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = plan.v6_scenarios().iter().map(|s| s.1).collect();
    v.sort_by_key(|l| plan.sizes6.iter().position(|s| s.0 == *l));
    v.dedup();
    v
}

/// The micro-benchmark's new-connection case over [`crate::micro::MAX_SERVERS`]
/// real servers (a wlc pick over many: the winner tree).
pub const NEWCONN_MANY: &str = "newconn-244";

/// The micro-benchmark's cases, in order.
pub(super) fn micro_keys(plan: &Plan) -> Vec<String> {
    scenarios(plan)
        .into_iter()
        .chain(["newconn".to_string(), NEWCONN_MANY.to_string()])
        .collect()
}

pub(super) fn lscpu() -> String {
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
