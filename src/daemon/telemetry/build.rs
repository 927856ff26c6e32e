//! The telemetry answers, built from the control protocol's views
//! (`dirigo_proto::view`) — pure functions, so their limits are unit-tested.
//!
//! Every answer is one page: `total` entries in all, `start` (the first
//! shown), the entries under one name, `shown`; when the 16 KiB answer
//! (or the 256-entry dict) cannot hold the rest, `next` is the command
//! that continues (`/dirigo/services,40`) and `truncated` says so in
//! words. An entry too big for a page on its own (a service with
//! hundreds of real servers) is shown with as many of its parts as fit
//! and a count of those left out (`real_servers_omitted`).

use crate::pmd::telemetry::{Dict, Value};
use dirigo_proto::adm::format::{dest_port, service_flags};
use dirigo_proto::view::{
    DestInfo, DropCount, HealthInfo, HealthReport, LcoreInfo, ServiceInfo, ServiceList, Stats,
};

/// Room kept for a page's trailer (`shown`, `next`, `truncated`).
const TRAILER: usize = 320;
/// Room kept in an entry for its own `..._omitted` count.
const OMITTED: usize = 40;

/// Where one page of a list is: the command that asks for it (`cmd`),
/// the list's name in the answer, its entries in all, the first one
/// shown and the answer's size in bytes.
struct Page<'a> {
    cmd: &'a str,
    list: &'a str,
    total: usize,
    start: usize,
    budget: usize,
}

/// One page of `items` under `at.list` in `out` from index `at.start`:
/// as many as fit `at.budget` and the dict's entry limit. `key` names an
/// item; `build` makes its value within the room left (`false` beside
/// it: parts of it were left out to fit).
fn page<T>(
    mut out: Dict,
    at: &Page,
    items: impl Iterator<Item = T>,
    key: impl Fn(&T) -> String,
    build: impl Fn(&T, usize) -> (Value, bool),
) -> Dict {
    let Page {
        cmd,
        list,
        total,
        start,
        budget,
    } = *at;
    let _ = out.insert("total", total as u64);
    let _ = out.insert("start", start as u64);
    let mut entries = Dict::new();
    let mut shown = 0usize;
    for item in items.skip(start) {
        if entries.is_full() {
            break;
        }
        let k = entries.key_for(&key(&item));
        // `,"list":{...,"k":` around the item
        let used = out.json_len() + list.len() + 4 + entries.json_len() + 1 + k.len() + 3;
        let room = budget.saturating_sub(TRAILER + used);
        let (v, whole) = build(&item, room);
        if v.json_len() > room || (!whole && shown > 0) {
            break; // the next page (an entry cut to fit gets a page of its own)
        }
        let _ = entries.insert(&k, v);
        shown += 1;
    }
    let _ = out.insert(list, entries);
    let _ = out.insert("shown", shown as u64);
    if start + shown < total {
        // an entry that fits no page at all is skipped, never looped on
        let next = start + shown.max(1);
        let _ = out.insert("next", format!("{cmd},{next}"));
        let what = if shown == 0 {
            format!("{list} entry {start} does not fit in one answer")
        } else {
            format!("{list} {start}..{} of {total} shown", start + shown - 1)
        };
        let _ = out.insert("truncated", format!("{what}; ask {cmd},{next} for more"));
    }
    out
}

fn stats(d: &mut Dict, s: &Stats) {
    for (k, v) in [
        ("conns", s.conns),
        ("inpkts", s.inpkts),
        ("outpkts", s.outpkts),
        ("inbytes", s.inbytes),
        ("outbytes", s.outbytes),
    ] {
        let _ = d.insert(k, v);
    }
}

fn dest(s: &ServiceInfo, d: &DestInfo) -> Dict {
    let mut out = Dict::new();
    let _ = out.insert(
        "address",
        std::net::SocketAddr::new(d.spec.key.addr, dest_port(s, d)).to_string(),
    );
    let _ = out.insert("forward", d.spec.method.ipvsadm_name());
    let _ = out.insert("weight", d.spec.weight);
    let _ = out.insert("active", d.active);
    let _ = out.insert("inactive", d.inactive);
    let _ = out.insert("persist", d.persist);
    stats(&mut out, &d.stats);
    out
}

/// One service (ipvsadm's `-L -n` line and its counters) with as many
/// of its real servers as fit `room`.
fn service(s: &ServiceInfo, room: usize) -> (Value, bool) {
    let k = &s.spec.key;
    let mut out = Dict::new();
    let _ = out.insert("protocol", k.proto.upper());
    let _ = out.insert(
        "address",
        std::net::SocketAddr::new(k.vip, k.port).to_string(),
    );
    let _ = out.insert("scheduler", s.spec.sched.name());
    let _ = out.insert("flags", service_flags(&s.spec));
    stats(&mut out, &s.stats);
    let _ = out.insert("real_servers_total", s.dests.len() as u64);
    let mut dests: Vec<&DestInfo> = s.dests.iter().collect();
    dests.sort_by_key(|d| d.spec.key);
    let mut rs = Dict::new();
    for d in &dests {
        let name =
            rs.key_for(&std::net::SocketAddr::new(d.spec.key.addr, dest_port(s, d)).to_string());
        let v = Value::from(dest(s, d));
        // `,"real_servers":{...,"name":v}`
        let with = out.json_len() + 16 + rs.json_len() + 1 + name.len() + 3 + v.json_len();
        if rs.is_full() || with + OMITTED > room {
            break;
        }
        let _ = rs.insert(&name, v);
    }
    let omitted = dests.len() - rs.len();
    let _ = out.insert("real_servers", rs);
    if omitted > 0 {
        let _ = out.insert("real_servers_omitted", omitted as u64);
    }
    (out.into(), omitted == 0)
}

/// `/dirigo/services`: what `dirigoadm -L -n --stats` lists — each
/// service (protocol, address, scheduler, flags, counters) with its real
/// servers (address, forward method, weight, active, inactive, counters),
/// sorted as dirigoadm sorts them.
pub fn services(list: &ServiceList, cmd: &str, start: usize, budget: usize) -> Dict {
    let mut svcs: Vec<&ServiceInfo> = list.services.iter().collect();
    svcs.sort_by_key(|s| s.spec.key);
    let mut out = Dict::new();
    let _ = out.insert("conn_tab_size", list.conn_tab_size);
    let at = Page {
        cmd,
        list: "services",
        total: svcs.len(),
        start,
        budget,
    };
    page(
        out,
        &at,
        svcs.into_iter(),
        |s| {
            let k = &s.spec.key;
            format!("{}_{}_{}", k.proto.upper(), k.vip, k.port)
        },
        |s, room| service(s, room),
    )
}

/// One worker with as many of its non-zero counters as fit `room`.
fn worker(w: &LcoreInfo, room: usize) -> (Value, bool) {
    let mut out = Dict::new();
    let _ = out.insert("lcore", w.lcore);
    let _ = out.insert("role", w.role.as_str());
    let _ = out.insert("queues", Value::strs(&w.queues));
    for (k, v) in [
        ("rx_packets", w.rx_packets),
        ("tx_packets", w.tx_packets),
        ("dropped", w.dropped),
        ("conns", w.conns),
        ("conns_created", w.conns_created),
    ] {
        let _ = out.insert(k, v);
    }
    let mut counters = Dict::new();
    for n in &w.extra {
        let with = out.json_len() + 12 + counters.len_with(&n.name, &n.value.into());
        if counters.is_full() || with + OMITTED > room {
            break;
        }
        let _ = counters.insert(&n.name, n.value);
    }
    let omitted = w.extra.len() - counters.len();
    let _ = out.insert("counters", counters);
    if omitted > 0 {
        let _ = out.insert("counters_omitted", omitted as u64);
    }
    (out.into(), omitted == 0)
}

/// `/dirigo/workers`: each worker lcore (`dirigoctl lcores`) by lcore id.
pub fn workers(lcores: &[LcoreInfo], cmd: &str, start: usize, budget: usize) -> Dict {
    let at = Page {
        cmd,
        list: "workers",
        total: lcores.len(),
        start,
        budget,
    };
    page(
        Dict::new(),
        &at,
        lcores.iter(),
        |w| w.lcore.to_string(),
        |w, room| worker(w, room),
    )
}

/// `/dirigo/drops`: every drop reason and its count (`dirigoctl drops`),
/// with their sum.
pub fn drops(drops: &[DropCount], cmd: &str, start: usize, budget: usize) -> Dict {
    let mut out = Dict::new();
    let _ = out.insert("dropped", drops.iter().map(|d| d.count).sum::<u64>());
    let at = Page {
        cmd,
        list: "drops",
        total: drops.len(),
        start,
        budget,
    };
    page(
        out,
        &at,
        drops.iter(),
        |d| d.reason.clone(),
        |d, _| (Value::from(d.count), true),
    )
}

/// Longest lists beside the health page's servers.
const HEALTH_LIST: usize = 16;

/// `/dirigo/health`: the transition counts, the services without quorum,
/// the withdrawn VIPs and the last transitions (at most 16 each), then
/// the checked servers (`dirigoctl health`).
pub fn health(r: &HealthReport, cmd: &str, start: usize, budget: usize) -> Dict {
    let at = Page {
        cmd,
        list: "servers",
        total: r.servers.len(),
        start,
        budget,
    };
    page(
        health_summary(r),
        &at,
        r.servers.iter(),
        |s| health_key(s),
        |s, _| (health_server(s).into(), true),
    )
}

/// The health page's head: the transition counts, the services without
/// quorum, the withdrawn VIPs and the last transitions.
fn health_summary(r: &HealthReport) -> Dict {
    let mut out = Dict::new();
    let [down, up, lost, restored] = r.counts;
    for (k, v) in [
        ("went_down", down),
        ("came_up", up),
        ("quorum_lost_times", lost),
        ("quorum_restored_times", restored),
    ] {
        let _ = out.insert(k, v);
    }
    let mut list = |name: &str, items: Vec<String>| {
        let _ = out.insert(name, Value::strs(items.iter().take(HEALTH_LIST)));
        if items.len() > HEALTH_LIST {
            let _ = out.insert(
                &format!("{name}_omitted"),
                (items.len() - HEALTH_LIST) as u64,
            );
        }
    };
    list("quorum_lost", r.quorum_lost.clone());
    list(
        "withdrawn",
        r.withdrawn.iter().map(|a| a.to_string()).collect(),
    );
    // the last transitions, newest first
    list(
        "events",
        r.events
            .iter()
            .rev()
            .map(|e| format!("{}s ago: {} ({})", e.secs_ago, e.what, e.why))
            .collect(),
    );
    out
}

/// A checked server's name on the health page.
fn health_key(s: &HealthInfo) -> String {
    format!(
        "{}_{}_{}/{}_{}",
        s.service.proto.upper(),
        s.service.vip,
        s.service.port,
        s.dest.addr,
        s.dest.port
    )
}

/// One checked server: its service, check, state, counters and weight.
fn health_server(s: &HealthInfo) -> Dict {
    let mut d = Dict::new();
    let k = &s.service;
    let _ = d.insert(
        "service",
        format!(
            "{} {}",
            k.proto.upper(),
            std::net::SocketAddr::new(k.vip, k.port)
        ),
    );
    let _ = d.insert("server", format!("{}:{}", s.dest.addr, s.dest.port));
    let _ = d.insert("check", s.check.as_str());
    let _ = d.insert("state", s.state.as_str());
    let _ = d.insert("since_secs", s.since_secs);
    let _ = d.insert("last", s.last.as_deref().unwrap_or("-"));
    if let Some(l) = s.latency_us {
        let _ = d.insert("latency_us", l);
    }
    let _ = d.insert("checks", s.checks);
    let _ = d.insert("failures", s.failures);
    let _ = d.insert("transitions", s.transitions);
    let _ = d.insert("weight", s.weight);
    match s.effective_weight {
        Some(w) => {
            let _ = d.insert("effective_weight", w);
        }
        None => {
            let _ = d.insert("removed", 1u64);
        }
    }
    d
}
