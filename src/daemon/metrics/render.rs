//! The exposition: a [`Scrape`] written in Prometheus' text format
//! (version 0.0.4, what node_exporter serves) with `prometheus-client`.
//!
//! Every scrape builds a fresh registry of constant metrics from the
//! scrape's values: nothing here is updated in place, so nothing here is
//! shared with the data path. Counters are registered without their
//! `_total` suffix (the encoder adds it).

use super::collect::{Scrape, WorkerSample};
pub use super::family::Labels;
use super::family::{ConstHistogram, Family, Out};
use crate::dataplane::stats::BURST_BUCKETS;
use dirigo_proto::view::{DestInfo, PortInfo, ServiceInfo, Stats};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

/// The `Content-Type` of the exposition.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Smallest burst-histogram bucket shown: 2^6 ns = 64 ns (the smaller ones
/// are folded into it; no iteration that carries packets is that short).
pub const FIRST_BUCKET: usize = 6;

/// A service's labels, as node_exporter names them.
fn service_labels(s: &ServiceInfo) -> Labels {
    let k = s.spec.key;
    vec![
        ("local_address", k.vip.to_string()),
        ("local_port", k.port.to_string()),
        ("proto", k.proto.upper().to_string()),
    ]
}

/// node_exporter's backend labels, in its order: `local_address`,
/// `local_port`, `remote_address`, `remote_port`, `proto`, `local_mark`
/// (empty: dirigo has no firewall-mark services).
pub fn backend_labels(s: &ServiceInfo, d: &DestInfo) -> Labels {
    let k = s.spec.key;
    vec![
        ("local_address", k.vip.to_string()),
        ("local_port", k.port.to_string()),
        ("remote_address", d.spec.key.addr.to_string()),
        ("remote_port", d.spec.key.port.to_string()),
        ("proto", k.proto.upper().to_string()),
        ("local_mark", String::new()),
    ]
}

/// A real server's labels for dirigo's own series (node_exporter's,
/// without `local_mark`).
fn real_server_labels(s: &ServiceInfo, d: &DestInfo) -> Labels {
    let mut l = backend_labels(s, d);
    l.pop();
    l
}

fn worker_labels(i: usize, w: &WorkerSample) -> Labels {
    vec![
        ("worker", i.to_string()),
        ("lcore", w.info.lcore.to_string()),
    ]
}

/// The five IPVS counters of `st` as (suffix, help, value).
fn traffic(st: &Stats) -> [(&'static str, &'static str, u64); 5] {
    [
        ("connections", "connections", st.conns),
        ("incoming_packets", "packets client to server", st.inpkts),
        (
            "outgoing_packets",
            "packets server to client (NAT only)",
            st.outpkts,
        ),
        (
            "incoming_bytes",
            "bytes client to server (IP length)",
            st.inbytes,
        ),
        (
            "outgoing_bytes",
            "bytes server to client (NAT only)",
            st.outbytes,
        ),
    ]
}

/// The exposition of `s`.
pub fn render(s: &Scrape) -> String {
    let mut reg = Registry::default();
    let mut o = Out(&mut reg);
    ipvs(&mut o, s);
    o.gauges(
        "dirigo_build_info",
        "dirigo's version (always 1)",
        vec![(vec![("version", s.version.clone())], 1i64)],
    );
    services(&mut o, s);
    ports(&mut o, s);
    o.counters(
        "dirigo_drops",
        "Packets dropped, by reason (as dirigoctl drops lists them)",
        s.drops
            .iter()
            .map(|d| (vec![("reason", d.reason.clone())], d.count))
            .collect(),
    );
    workers(&mut o, s);
    super::health::health(&mut o, s);
    super::health::announce(&mut o, s);
    super::health::handoff(&mut o, s);
    o.counter(
        "dirigo_control_requests",
        "Requests the control socket answered",
        s.control.0,
    );
    o.counter(
        "dirigo_control_errors",
        "Control requests answered with an error",
        s.control.1,
    );
    o.counter(
        "dirigo_metrics_requests",
        "HTTP requests the metrics endpoint answered",
        s.endpoint.0,
    );
    o.counter(
        "dirigo_metrics_connections_refused",
        "Metrics connections closed at once because too many were open",
        s.endpoint.1,
    );
    o.counter(
        "dirigo_metrics_connections_timed_out",
        "Metrics connections closed at their deadline",
        s.endpoint.2,
    );
    let mut text = String::new();
    // writing to a String cannot fail
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut text, &reg);
    text
}

/// node_exporter's IPVS collector: the same names, types, help and labels.
fn ipvs(o: &mut Out, s: &Scrape) {
    let t = &s.totals;
    o.counter(
        "node_ipvs_connections",
        "The total number of connections made",
        t.conns,
    );
    o.counter(
        "node_ipvs_incoming_packets",
        "The total number of incoming packets",
        t.inpkts,
    );
    o.counter(
        "node_ipvs_outgoing_packets",
        "The total number of outgoing packets",
        t.outpkts,
    );
    o.counter(
        "node_ipvs_incoming_bytes",
        "The total amount of incoming data",
        t.inbytes,
    );
    o.counter(
        "node_ipvs_outgoing_bytes",
        "The total amount of outgoing data",
        t.outbytes,
    );
    let backends = |f: &dyn Fn(&DestInfo) -> i64| -> Vec<(Labels, i64)> {
        s.services
            .iter()
            .flat_map(|sv| sv.dests.iter().map(move |d| (backend_labels(sv, d), f(d))))
            .collect()
    };
    o.gauges(
        "node_ipvs_backend_connections_active",
        "The current active connections by local and remote address",
        backends(&|d| d.active as i64),
    );
    o.gauges(
        "node_ipvs_backend_connections_inactive",
        "The current inactive connections by local and remote address",
        backends(&|d| d.inactive as i64),
    );
    o.gauges(
        "node_ipvs_backend_weight",
        "The current backend weight by local and remote address",
        backends(&|d| d.spec.weight as i64),
    );
}

/// Per service and real server: IPVS's five counters.
fn services(o: &mut Out, s: &Scrape) {
    for i in 0..5 {
        let (what, help, _) = traffic(&Stats::default())[i];
        o.counters(
            &format!("dirigo_service_{what}"),
            &format!("Per service: {help}"),
            s.services
                .iter()
                .map(|sv| (service_labels(sv), traffic(&sv.stats)[i].2))
                .collect(),
        );
        o.counters(
            &format!("dirigo_real_server_{what}"),
            &format!("Per real server: {help}"),
            s.services
                .iter()
                .flat_map(|sv| {
                    sv.dests
                        .iter()
                        .map(move |d| (real_server_labels(sv, d), traffic(&d.stats)[i].2))
                })
                .collect(),
        );
    }
}

fn ports(o: &mut Out, s: &Scrape) {
    type Get = fn(&PortInfo) -> u64;
    let per = |f: Get| -> Vec<(Labels, u64)> {
        s.ports
            .iter()
            .map(|p| (vec![("port", p.name.clone())], f(p)))
            .collect()
    };
    let list: [(&str, &str, Get); 10] = [
        ("rx_packets", "Packets the port received", |p| {
            p.counters.ipackets
        }),
        ("tx_packets", "Packets the port sent", |p| {
            p.counters.opackets
        }),
        ("rx_bytes", "Bytes the port received", |p| p.counters.ibytes),
        ("tx_bytes", "Bytes the port sent", |p| p.counters.obytes),
        (
            "rx_missed",
            "Packets the port dropped: RX queue full (imissed)",
            |p| p.counters.imissed,
        ),
        ("rx_errors", "Erroneous received packets (ierrors)", |p| {
            p.counters.ierrors
        }),
        ("tx_errors", "Failed transmitted packets (oerrors)", |p| {
            p.counters.oerrors
        }),
        (
            "rx_nombuf",
            "Receive mbuf allocation failures (rx_nombuf)",
            |p| p.counters.rx_nombuf,
        ),
        (
            "to_kernel_packets",
            "Packets the workers handed to the port's kernel interface",
            |p| p.kernel.as_ref().map_or(0, |k| k.to_kernel),
        ),
        (
            "from_kernel_packets",
            "Packets the port's kernel interface sent out of the port",
            |p| p.kernel.as_ref().map_or(0, |k| k.from_kernel),
        ),
    ];
    for (name, help, f) in list {
        o.counters(&format!("dirigo_port_{name}"), help, per(f));
    }
    o.gauges(
        "dirigo_port_link_up",
        "Whether the port's link is up",
        s.ports
            .iter()
            .map(|p| (vec![("port", p.name.clone())], i64::from(p.link_up)))
            .collect(),
    );
    o.counters(
        "dirigo_port_xstat",
        "The port's extended statistics (DPDK xstats), by name",
        s.ports
            .iter()
            .flat_map(|p| {
                p.xstats.iter().map(move |x| {
                    (
                        vec![("port", p.name.clone()), ("xstat", x.name.clone())],
                        x.value,
                    )
                })
            })
            .collect(),
    );
}

/// A worker's counter from `dirigoctl lcores`' extras (0 when absent:
/// it lists only the non-zero ones).
fn extra(w: &WorkerSample, name: &str) -> u64 {
    w.info
        .extra
        .iter()
        .find(|c| c.name == name)
        .map_or(0, |c| c.value)
}

/// Each worker's `f`, labelled.
fn per_worker<T>(s: &Scrape, f: impl Fn(&WorkerSample) -> T) -> Vec<(Labels, T)> {
    s.workers
        .iter()
        .enumerate()
        .map(|(i, w)| (worker_labels(i, w), f(w)))
        .collect()
}

/// The workers' packets, connections and loop times.
fn workers(o: &mut Out, s: &Scrape) {
    worker_traffic(o, s);
    worker_time(o, s);
}

/// The workers' packet and connection counters.
fn worker_traffic(o: &mut Out, s: &Scrape) {
    o.counters(
        "dirigo_worker_rx_packets",
        "Packets the worker received",
        per_worker(s, |w| w.info.rx_packets),
    );
    o.counters(
        "dirigo_worker_tx_packets",
        "Packets the worker transmitted",
        per_worker(s, |w| w.info.tx_packets),
    );
    o.counters(
        "dirigo_worker_dropped_packets",
        "Packets the worker dropped (every reason)",
        per_worker(s, |w| w.info.dropped),
    );
    o.gauges(
        "dirigo_worker_connections",
        "Connections in the worker's table",
        per_worker(s, |w| w.info.conns as i64),
    );
    o.counters(
        "dirigo_worker_connections_created",
        "Connections the worker created",
        per_worker(s, |w| w.info.conns_created),
    );
    for (name, help) in [
        (
            "conns_evicted",
            "Embryonic connections evicted to make room (full table)",
        ),
        ("conns_expired", "Connections expired"),
        ("steered_out", "Packets handed to the worker that owns them"),
        ("steered_in", "Packets other workers handed over"),
    ] {
        let metric = match name {
            "conns_evicted" => "dirigo_worker_connections_evicted",
            "conns_expired" => "dirigo_worker_connections_expired",
            "steered_out" => "dirigo_worker_steered_out_packets",
            _ => "dirigo_worker_steered_in_packets",
        };
        o.counters(metric, help, per_worker(s, |w| extra(w, name)));
    }
    o.counters(
        "dirigo_worker_steer_lost_packets",
        "Packets lost because the owner's steering ring was full",
        per_worker(s, |w| w.loops.steer_lost),
    );
}

/// The workers' loop times and, when kept, their bursts' durations.
fn worker_time(o: &mut Out, s: &Scrape) {
    let secs = |ns: u64| ns as f64 / 1e9;
    o.counters(
        "dirigo_worker_busy_seconds",
        "Time of the worker's loop iterations that carried packets",
        per_worker(s, |w| secs(w.loops.busy_ns)),
    );
    o.counters(
        "dirigo_worker_loop_seconds",
        "Time in the worker's loop",
        per_worker(s, |w| secs(w.loops.loop_ns)),
    );
    o.gauges(
        "dirigo_worker_busy_ratio",
        "Busy time over loop time since the previous scrape",
        per_worker(s, |w| w.busy_ratio),
    );
    if s.burst_histogram {
        let rows = per_worker(s, |w| {
            burst_histogram(&w.loops.bursts, w.loops.burst_sum_ns)
        });
        o.0.register(
            "dirigo_worker_burst_duration_seconds",
            "Duration of the worker loop's iterations that carried packets (receive to transmit of a burst)",
            Family {
                kind: MetricType::Histogram,
                rows,
            },
        );
    }
}

/// The log2 buckets as a Prometheus histogram in seconds: bucket `i`'s
/// upper bound is 2^i ns; those below [`FIRST_BUCKET`] are counted in it,
/// the last one only in +Inf.
fn burst_histogram(b: &[u64; BURST_BUCKETS], sum_ns: u64) -> ConstHistogram {
    let below: u64 = b[..FIRST_BUCKET].iter().sum();
    let buckets = (FIRST_BUCKET..BURST_BUCKETS - 1)
        .map(|i| {
            let n = if i == FIRST_BUCKET {
                below + b[i]
            } else {
                b[i]
            };
            ((1u64 << i) as f64 / 1e9, n)
        })
        .collect();
    ConstHistogram {
        sum: sum_ns as f64 / 1e9,
        count: b.iter().sum(),
        buckets,
    }
}
