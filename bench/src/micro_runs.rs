//! The sans-IO micro-benchmark's cases for a plan: established traffic per
//! method and size, new connections (over the benchmark's servers and over
//! many), connection sync and the SYN proxy, recorded into an [`Agg`].

use crate::agg::Agg;
use crate::plan::Plan;
use crate::{micro, mname, report, synproxy};
use dirigo_core::lb::spec::{ClientAddress, Method};

/// Every micro-benchmark case of `plan` (only `only`'s method and
/// `only_flows`' size when given), recorded into `agg`.
pub fn run_micro(plan: &Plan, agg: &mut Agg, only: Option<Method>, only_flows: Option<u32>) {
    if only == Some(Method::FullNat) {
        client_address_cases(plan, agg, only_flows.unwrap_or(1000));
        return;
    }
    established(plan, agg, only, only_flows);
    if only_flows.is_none() && (only.is_none() || only == Some(Method::Dr)) {
        newconn(plan, agg);
        sync(plan, agg);
    }
    if only_flows.is_none() && (only.is_none() || only == Some(Method::Nat)) {
        synproxy_cases(plan, agg);
    }
}

/// Established traffic per method, size and API.
fn established(plan: &Plan, agg: &mut Agg, only: Option<Method>, only_flows: Option<u32>) {
    for &m in &plan.methods {
        if only.is_some_and(|o| o != m) {
            continue;
        }
        for &(label, flows) in &plan.sizes {
            if only_flows.is_some_and(|f| f != flows) {
                continue;
            }
            for &burst_api in &plan.apis {
                let case = micro::Case {
                    method: m,
                    flows,
                    workload: micro::Workload::Established,
                    capacity: plan.capacity,
                    burst_api,
                    sync: false,
                    servers: plan.micro_servers,
                    client_address: ClientAddress::None,
                };
                let r = micro::run(case, plan.micro);
                let k = format!(
                    "micro|{} {label}|{}",
                    mname(m),
                    if burst_api { "burst" } else { "pkt" }
                );
                record_micro(agg, &k, &r);
                eprintln!(
                    "micro {k}: {:.2} Mpps, {:.1} ns/pkt, p50/p99/p99.9 {}/{}/{} ns, tracked {}, {} packets",
                    r.mpps, r.ns_per_pkt, r.p50, r.p99, r.p999, r.tracked, r.packets
                );
            }
        }
    }
}

/// New connections (DR) per API, and over many servers.
fn newconn(plan: &Plan, agg: &mut Agg) {
    for &burst_api in &plan.apis {
        let case = micro::Case {
            method: Method::Dr,
            flows: plan.newconn_flows,
            workload: micro::Workload::NewConn,
            capacity: plan.newconn_capacity,
            burst_api,
            sync: false,
            servers: plan.micro_servers,
            client_address: ClientAddress::None,
        };
        let r = micro::run(case, plan.micro);
        let k = format!("micro|newconn|{}", if burst_api { "burst" } else { "pkt" });
        record_micro(agg, &k, &r);
        eprintln!(
            "micro {k}: {:.2} Mpps, {:.2} Mconn/s, tracked {}, {} packets",
            r.mpps, r.mconn_s, r.tracked, r.packets
        );
    }
    if plan.apis.contains(&true) && plan.micro_servers == micro::N_RS {
        // the same over many servers: what a wlc pick costs there
        let case = micro::Case {
            method: Method::Dr,
            flows: plan.newconn_flows,
            workload: micro::Workload::NewConn,
            capacity: plan.newconn_capacity,
            burst_api: true,
            sync: false,
            servers: micro::MAX_SERVERS,
            client_address: ClientAddress::None,
        };
        let r = micro::run(case, plan.micro);
        let k = format!("micro|{}|burst", report::NEWCONN_MANY);
        record_micro(agg, &k, &r);
        eprintln!(
            "micro {k}: {:.2} Mpps, {:.2} Mconn/s, tracked {}, {} packets",
            r.mpps, r.mconn_s, r.tracked, r.packets
        );
    }
}

/// FullNAT's established requests per `client_address` (`dirigo-bench
/// micro --method fnat`, not in the default plan): plain FullNAT beside a
/// PROXY v2 and a TOA service on the same frames (the per-packet API).
fn client_address_cases(plan: &Plan, agg: &mut Agg, flows: u32) {
    for how in [
        ClientAddress::None,
        ClientAddress::ProxyV2,
        ClientAddress::Toa,
    ] {
        let case = micro::Case {
            method: Method::FullNat,
            flows,
            workload: micro::Workload::Established,
            capacity: plan.capacity,
            burst_api: false,
            sync: false,
            servers: plan.micro_servers,
            client_address: how,
        };
        let r = micro::run(case, plan.micro);
        let k = format!("micro|FNAT {} {flows}|pkt", how.name());
        record_micro(agg, &k, &r);
        eprintln!(
            "micro {k}: {:.2} Mpps, {:.1} ns/pkt, p50/p99/p99.9 {}/{}/{} ns, forwarded {:.3}, {} timed packets",
            r.mpps, r.ns_per_pkt, r.p50, r.p99, r.p999, r.fwd_ratio, r.packets
        );
    }
}

/// Connection sync's cost on the established path: DR with [sync] beside
/// plain DR on the same flows (the burst API, the daemon's).
fn sync(plan: &Plan, agg: &mut Agg) {
    if let Some(&(label, flows)) = plan.sizes.last() {
        for sync in [false, true] {
            let case = micro::Case {
                method: Method::Dr,
                flows,
                workload: micro::Workload::Established,
                capacity: plan.capacity,
                burst_api: true,
                sync,
                servers: plan.micro_servers,
                client_address: ClientAddress::None,
            };
            let r = micro::run(case, plan.micro);
            let k = format!("micro|sync {label}|{}", if sync { "on" } else { "off" });
            record_micro(agg, &k, &r);
            eprintln!("micro {k}: {:.2} Mpps, {:.1} ns/pkt", r.mpps, r.ns_per_pkt);
        }
    }
}

/// The SYN proxy: a flood's SYNs, connections opened through it, and
/// proxied established NAT beside plain NAT on the same frames.
fn synproxy_cases(plan: &Plan, agg: &mut Agg) {
    let flows = plan
        .sizes
        .iter()
        .map(|s| s.1)
        .find(|&f| f >= 100_000)
        .unwrap_or(1000);
    let r = synproxy::run(flows, plan.capacity, plan.micro);
    agg.push("micro|synproxy|syn", r.syn_mpps);
    agg.push("micro|synproxy|open", r.open_mconn);
    agg.push("micro|synproxy|est", r.est_mpps);
    agg.push("micro|synproxy|nat", r.nat_mpps);
    agg.push("micro|synproxy|syn6", r.syn6_mpps);
    agg.push("micro|synproxy|synpkt", r.syn_pkt_mpps);
    eprintln!(
        "micro synproxy ({} flows): SYNs answered {:.2} Mpps (per packet: IPv4 {:.2}, IPv6 {:.2} Mpps), \
         opened {:.2} Mconn/s, proxied established {:.2} Mpps vs plain NAT {:.2} Mpps ({:.2}x)",
        r.flows,
        r.syn_mpps,
        r.syn_pkt_mpps,
        r.syn6_mpps,
        r.open_mconn,
        r.est_mpps,
        r.nat_mpps,
        r.est_mpps / r.nat_mpps
    );
}

pub fn record_micro(agg: &mut Agg, k: &str, r: &micro::MicroResult) {
    agg.push(&format!("{k}|mpps"), r.mpps);
    agg.push(&format!("{k}|ns"), r.ns_per_pkt);
    agg.push(&format!("{k}|p50"), r.p50);
    agg.push(&format!("{k}|p99"), r.p99);
    agg.push(&format!("{k}|p999"), r.p999);
    agg.push(&format!("{k}|tracked"), r.tracked as f64);
    agg.push(&format!("{k}|mconn"), r.mconn_s);
    agg.push(&format!("{k}|fwd"), r.fwd_ratio);
    agg.push(&format!("{k}|bytes"), r.table_bytes as f64);
}
