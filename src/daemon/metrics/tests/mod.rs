//! The exposition (names, types, labels, escaping, the histogram, the
//! IPVS totals) on hand-made scrapes; the HTTP endpoint's bounds are in
//! `server`.

mod server;

use super::collect::{busy_ratio, Collector, Scrape, WorkerSample};
use super::render::render;
use crate::dataplane::stats::{LoopCounters, BURST_BUCKETS};
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use dirigo_proto::view::{
    DestInfo, DropCount, HealthInfo, HealthReport, KernelIfInfo, LcoreInfo, MacAddr, NamedCounter,
    PortInfo, ServiceInfo, Stats,
};
use std::net::Ipv4Addr;

fn key(proto: Proto, vip: [u8; 4], port: u16) -> ServiceKey {
    ServiceKey {
        fwmark: 0,
        proto,
        vip: std::net::IpAddr::V4(Ipv4Addr::from(vip)),
        port,
    }
}

fn dest(addr: [u8; 4], port: u16, weight: u32, active: u32, inactive: u32, st: Stats) -> DestInfo {
    DestInfo {
        spec: DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V4(Ipv4Addr::from(addr)),
                port,
            },
            method: Method::Nat,
            weight,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        },
        active,
        inactive,
        persist: 0,
        stats: st,
        rate: Default::default(),
    }
}

fn stats(conns: u64, inpkts: u64, outpkts: u64, inbytes: u64, outbytes: u64) -> Stats {
    Stats {
        conns,
        inpkts,
        outpkts,
        inbytes,
        outbytes,
    }
}

fn service(k: ServiceKey, st: Stats, dests: Vec<DestInfo>) -> ServiceInfo {
    ServiceInfo {
        spec: ServiceSpec {
            members: Vec::new(),
            local_addresses: Vec::new(),
            key: k,
            sched: SchedKind::Rr,
            flags: SchedFlags::default(),
            persistent: None,
            netmask: Ipv4Addr::BROADCAST,
            prefix6: 128,
            synproxy: false,
            ops: false,
            client_address: Default::default(),
        },
        stats: st,
        rate: Default::default(),
        dests,
    }
}

fn sample_scrape() -> Scrape {
    let mut loops = LoopCounters {
        loop_ns: 4_000_000_000,
        busy_ns: 1_000_000_000,
        burst_sum_ns: 2_000_000_000,
        steer_lost: 7,
        ..LoopCounters::default()
    };
    loops.bursts[3] = 2; // folded into the first bucket shown
    loops.bursts[10] = 5; // 1024 ns
    loops.bursts[12] = 1; // 4096 ns
    loops.bursts[BURST_BUCKETS - 1] = 1; // beyond the last bound: +Inf only
    Scrape {
        version: "9.9.9".into(),
        services: vec![
            service(
                key(Proto::Tcp, [10, 0, 0, 100], 80),
                stats(10, 100, 90, 10_000, 90_000),
                vec![
                    dest([10, 0, 1, 1], 8080, 3, 2, 1, stats(6, 60, 50, 6000, 50_000)),
                    dest([10, 0, 1, 2], 8080, 0, 0, 4, stats(4, 40, 40, 4000, 40_000)),
                ],
            ),
            service(
                key(Proto::Udp, [10, 0, 0, 100], 53),
                stats(1, 2, 0, 200, 0),
                vec![dest([10, 0, 1, 3], 53, 1, 0, 1, stats(1, 2, 0, 200, 0))],
            ),
        ],
        totals: stats(11, 102, 90, 10_200, 90_000),
        ports: vec![PortInfo {
            id: 0,
            name: "wan".into(),
            mac: MacAddr([2, 0, 0, 0, 0, 1]),
            link_up: true,
            speed_mbps: 10_000,
            full_duplex: true,
            mtu: 1500,
            counters: dirigo_proto::view::PortCounters {
                ipackets: 1000,
                opackets: 900,
                ibytes: 64_000,
                obytes: 57_600,
                imissed: 3,
                ierrors: 2,
                oerrors: 1,
                rx_nombuf: 4,
            },
            xstats: vec![NamedCounter {
                name: "rx_q0_\"odd\\name\nx".into(),
                value: 5,
            }],
            kernel: Some(KernelIfInfo {
                to_kernel: 12,
                from_kernel: 13,
                ..Default::default()
            }),
        }],
        drops: vec![
            DropCount {
                reason: "bad_checksum".into(),
                count: 17,
            },
            DropCount {
                reason: "lb_no_service".into(),
                count: 0,
            },
        ],
        workers: vec![WorkerSample {
            info: LcoreInfo {
                lcore: 1,
                role: "worker".into(),
                queues: vec![],
                rx_packets: 1000,
                tx_packets: 900,
                dropped: 17,
                conns: 5,
                conns_created: 11,
                busy_ns: None,
                extra: vec![
                    NamedCounter {
                        name: "steered_out".into(),
                        value: 8,
                    },
                    NamedCounter {
                        name: "conns_evicted".into(),
                        value: 0,
                    },
                ],
            },
            loops,
            busy_ratio: 0.25,
        }],
        burst_histogram: true,
        health: Some(HealthReport {
            servers: vec![HealthInfo {
                service: key(Proto::Tcp, [10, 0, 0, 100], 80),
                dest: DestKey {
                    addr: std::net::IpAddr::V4(Ipv4Addr::new(10, 0, 1, 2)),
                    port: 8080,
                },
                check: "http".into(),
                state: "down".into(),
                since_secs: 3,
                last: Some("status 503".into()),
                last_ok: Some(false),
                latency_us: Some(1500),
                checks: 9,
                failures: 4,
                transitions: 1,
                weight: 2,
                effective_weight: Some(0),
            }],
            quorum_lost: vec![],
            withdrawn: vec![Ipv4Addr::new(10, 0, 0, 100).into()],
            counts: [1, 0, 0, 0],
            events: vec![],
        }),
        vips: Some(dirigo_proto::view::VipReport {
            enabled: true,
            interface: Some("kfront".into()),
            table: Some(100),
            protocol: Some(201),
            draining: false,
            failures: 2,
            vips: vec![dirigo_proto::view::VipInfo {
                vip: Ipv4Addr::new(10, 0, 0, 100).into(),
                state: "withdrawn".into(),
                why: "no quorum: TCP 10.0.0.100:80 0/2 up".into(),
                since_secs: Some(3),
            }],
        }),
        handoff: Some(dirigo_proto::view::HandoffInfo {
            file: Some("/var/lib/dirigo/handoff".into()),
            outcome: "installed, 1 refused".into(),
            gap_ms: Some(1234),
            counters: vec![
                NamedCounter {
                    name: "handoff_installed".into(),
                    value: 998,
                },
                NamedCounter {
                    name: "handoff_no_dest".into(),
                    value: 2,
                },
            ],
            checkpoint: Some(dirigo_proto::view::CheckpointInfo {
                period_s: 10,
                written: 7,
                failed: 1,
                stalls: 5,
                last_entries: 1000,
                last_bytes: 98_040,
                last_ms: 31,
                age_s: Some(4),
            }),
        }),
        control: (42, 3),
        endpoint: (5, 1, 0),
    }
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

fn has(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "no line {line:?} in:\n{text}"
    );
}

#[test]
fn node_exporter_names_types_and_labels() {
    let t = render(&sample_scrape());
    // the totals: counters without labels, as node_exporter's
    for (name, v) in [
        ("node_ipvs_connections_total", 11),
        ("node_ipvs_incoming_packets_total", 102),
        ("node_ipvs_outgoing_packets_total", 90),
        ("node_ipvs_incoming_bytes_total", 10_200),
        ("node_ipvs_outgoing_bytes_total", 90_000),
    ] {
        has(&t, &format!("# TYPE {name} counter"));
        has(&t, &format!("{name} {v}"));
    }
    has(
        &t,
        "# HELP node_ipvs_backend_weight The current backend weight by local and remote address.",
    );
    for name in [
        "node_ipvs_backend_connections_active",
        "node_ipvs_backend_connections_inactive",
        "node_ipvs_backend_weight",
    ] {
        has(&t, &format!("# TYPE {name} gauge"));
    }
    let l = |rip: &str, rport: u16, proto: &str, vport: u16| {
        format!(
            "{{local_address=\"10.0.0.100\",local_port=\"{vport}\",remote_address=\"{rip}\",\
             remote_port=\"{rport}\",proto=\"{proto}\",local_mark=\"\"}}"
        )
    };
    has(
        &t,
        &format!(
            "node_ipvs_backend_weight{} 3",
            l("10.0.1.1", 8080, "TCP", 80)
        ),
    );
    has(
        &t,
        &format!(
            "node_ipvs_backend_weight{} 0",
            l("10.0.1.2", 8080, "TCP", 80)
        ),
    );
    has(
        &t,
        &format!("node_ipvs_backend_weight{} 1", l("10.0.1.3", 53, "UDP", 53)),
    );
    has(
        &t,
        &format!(
            "node_ipvs_backend_connections_active{} 2",
            l("10.0.1.1", 8080, "TCP", 80)
        ),
    );
    has(
        &t,
        &format!(
            "node_ipvs_backend_connections_inactive{} 4",
            l("10.0.1.2", 8080, "TCP", 80)
        ),
    );
}

#[test]
fn dirigo_series() {
    let t = render(&sample_scrape());
    let svc = "{local_address=\"10.0.0.100\",local_port=\"80\",proto=\"TCP\"}";
    has(&t, "# TYPE dirigo_service_incoming_bytes_total counter");
    has(
        &t,
        &format!("dirigo_service_incoming_bytes_total{svc} 10000"),
    );
    has(
        &t,
        &format!("dirigo_service_outgoing_packets_total{svc} 90"),
    );
    let rs = "{local_address=\"10.0.0.100\",local_port=\"80\",remote_address=\"10.0.1.2\",\
              remote_port=\"8080\",proto=\"TCP\"}";
    has(&t, &format!("dirigo_real_server_connections_total{rs} 4"));
    has(
        &t,
        &format!("dirigo_real_server_outgoing_bytes_total{rs} 40000"),
    );
    has(&t, "dirigo_port_rx_packets_total{port=\"wan\"} 1000");
    has(&t, "dirigo_port_rx_missed_total{port=\"wan\"} 3");
    has(&t, "dirigo_port_rx_nombuf_total{port=\"wan\"} 4");
    has(&t, "dirigo_port_tx_errors_total{port=\"wan\"} 1");
    has(&t, "dirigo_port_to_kernel_packets_total{port=\"wan\"} 12");
    has(&t, "dirigo_port_link_up{port=\"wan\"} 1");
    has(&t, "# TYPE dirigo_drops_total counter");
    has(&t, "dirigo_drops_total{reason=\"bad_checksum\"} 17");
    has(&t, "dirigo_drops_total{reason=\"lb_no_service\"} 0");
    let w = "{worker=\"0\",lcore=\"1\"}";
    has(&t, &format!("dirigo_worker_connections{w} 5"));
    has(&t, "# TYPE dirigo_worker_connections gauge");
    has(
        &t,
        &format!("dirigo_worker_connections_created_total{w} 11"),
    );
    has(&t, &format!("dirigo_worker_steered_out_packets_total{w} 8"));
    has(&t, &format!("dirigo_worker_steered_in_packets_total{w} 0"));
    has(&t, &format!("dirigo_worker_steer_lost_packets_total{w} 7"));
    has(&t, &format!("dirigo_worker_busy_seconds_total{w} 1.0"));
    has(&t, &format!("dirigo_worker_loop_seconds_total{w} 4.0"));
    has(&t, &format!("dirigo_worker_busy_ratio{w} 0.25"));
    let h = "{local_address=\"10.0.0.100\",local_port=\"80\",remote_address=\"10.0.1.2\",\
             remote_port=\"8080\",proto=\"TCP\",check=\"http\"}";
    has(&t, &format!("dirigo_health_up{h} 0"));
    has(&t, &format!("dirigo_health_disabled{h} 0"));
    has(
        &t,
        &format!("dirigo_health_check_latency_seconds{h} 0.0015"),
    );
    has(&t, &format!("dirigo_health_check_failures_total{h} 4"));
    has(&t, "dirigo_health_vip_withdrawn{vip=\"10.0.0.100\"} 1");
    has(
        &t,
        "dirigo_announce_state{vip=\"10.0.0.100\",state=\"withdrawn\"} 1",
    );
    has(
        &t,
        "dirigo_announce_state{vip=\"10.0.0.100\",state=\"announced\"} 0",
    );
    has(&t, "dirigo_announce_failures_total 2");
    has(&t, "dirigo_handoff_entries_total{what=\"installed\"} 998");
    has(&t, "dirigo_handoff_entries_total{what=\"no_dest\"} 2");
    has(&t, "dirigo_handoff_gap_ms 1234");
    has(&t, "dirigo_checkpoints_total{result=\"written\"} 7");
    has(&t, "dirigo_checkpoints_total{result=\"failed\"} 1");
    has(&t, "dirigo_checkpoint_stalls_total 5");
    has(&t, "dirigo_checkpoint_entries 1000");
    has(&t, "dirigo_checkpoint_duration_ms 31");
    has(&t, "dirigo_checkpoint_age_seconds 4");
    has(&t, "dirigo_control_requests_total 42");
    has(&t, "dirigo_control_errors_total 3");
    has(&t, "dirigo_metrics_connections_refused_total 1");
    has(&t, "dirigo_build_info{version=\"9.9.9\"} 1");
    // a family with no series is left out, HELP and TYPE included
    assert!(!t.contains("dirigo_health_quorum_lost"), "{t}");
}

#[test]
fn label_values_are_escaped() {
    let t = render(&sample_scrape());
    // backslash, double quote and newline, as the text format wants them
    has(
        &t,
        r#"dirigo_port_xstat_total{port="wan",xstat="rx_q0_\"odd\\name\nx"} 5"#,
    );
    // and nothing else of the value leaks onto a line of its own
    assert!(!lines(&t).iter().any(|l| l.starts_with("x\"")), "{t}");
}

#[test]
fn burst_histogram_in_seconds() {
    let t = render(&sample_scrape());
    let w = "worker=\"0\",lcore=\"1\"";
    has(&t, "# TYPE dirigo_worker_burst_duration_seconds histogram");
    // the first bound is 2^6 ns and holds what is below it (2 bursts)
    has(
        &t,
        &format!("dirigo_worker_burst_duration_seconds_bucket{{{w},le=\"6.4e-08\"}} 2"),
    );
    has(
        &t,
        &format!("dirigo_worker_burst_duration_seconds_bucket{{{w},le=\"5.12e-07\"}} 2"),
    );
    has(
        &t,
        &format!("dirigo_worker_burst_duration_seconds_bucket{{{w},le=\"1.024e-06\"}} 7"),
    );
    has(
        &t,
        &format!("dirigo_worker_burst_duration_seconds_bucket{{{w},le=\"4.096e-06\"}} 8"),
    );
    has(
        &t,
        &format!("dirigo_worker_burst_duration_seconds_bucket{{{w},le=\"+Inf\"}} 9"),
    );
    has(
        &t,
        &format!("dirigo_worker_burst_duration_seconds_count{{{w}}} 9"),
    );
    has(
        &t,
        &format!("dirigo_worker_burst_duration_seconds_sum{{{w}}} 2.0"),
    );
    // cumulative: never decreasing, and the last finite bound is 2^26 ns
    let mut last = 0.0;
    let mut bounds = 0;
    for l in lines(&t)
        .into_iter()
        .filter(|l| l.starts_with("dirigo_worker_burst_duration_seconds_bucket"))
    {
        let v: f64 = l.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(v >= last, "{l}");
        last = v;
        bounds += 1;
    }
    assert_eq!(bounds, BURST_BUCKETS - 1 - super::render::FIRST_BUCKET + 1);
    has(
        &t,
        &format!("dirigo_worker_burst_duration_seconds_bucket{{{w},le=\"0.067108864\"}} 8"),
    );
    // off: no histogram at all
    let mut s = sample_scrape();
    s.burst_histogram = false;
    assert!(!render(&s).contains("burst_duration"));
}

#[test]
fn a_prometheus_parser_reads_it() {
    let t = render(&sample_scrape());
    let p = prometheus_parse::Scrape::parse(t.lines().map(|l| Ok(l.to_string()))).unwrap();
    let get = |name: &str, label: Option<(&str, &str)>| {
        p.samples
            .iter()
            .find(|s| s.metric == name && label.is_none_or(|(k, v)| s.labels.get(k) == Some(v)))
            .unwrap_or_else(|| panic!("no {name} {label:?}"))
            .value
            .clone()
    };
    assert_eq!(
        get("node_ipvs_incoming_packets_total", None),
        prometheus_parse::Value::Counter(102.0)
    );
    assert_eq!(
        get(
            "node_ipvs_backend_weight",
            Some(("remote_address", "10.0.1.1"))
        ),
        prometheus_parse::Value::Gauge(3.0)
    );
    match get("dirigo_worker_burst_duration_seconds", None) {
        prometheus_parse::Value::Histogram(b) => {
            assert_eq!(b.last().unwrap().count, 9.0);
            assert!(b.last().unwrap().less_than.is_infinite());
        }
        v => panic!("not a histogram: {v:?}"),
    }
    // every line is a comment or a sample the parser understood
    for l in t.lines() {
        assert!(
            !matches!(
                prometheus_parse::LineInfo::parse(l),
                prometheus_parse::LineInfo::Ignored
            ),
            "unparsed line {l:?}"
        );
    }
}

#[test]
fn empty_daemon_renders() {
    let t = render(&Scrape::default());
    has(&t, "node_ipvs_connections_total 0");
    assert!(!t.contains("node_ipvs_backend_weight"));
}

#[test]
fn ipvs_totals_keep_removed_services() {
    let mut c = Collector::default();
    let a = service(
        key(Proto::Tcp, [10, 0, 0, 1], 80),
        stats(5, 50, 0, 500, 0),
        vec![],
    );
    let b = service(
        key(Proto::Udp, [10, 0, 0, 1], 53),
        stats(1, 10, 0, 100, 0),
        vec![],
    );
    assert_eq!(c.totals(&[a.clone(), b.clone()]), stats(6, 60, 0, 600, 0));
    // b is deleted: the totals keep its traffic, as the kernel's do
    let mut a2 = a.clone();
    a2.stats = stats(7, 70, 0, 700, 0);
    assert_eq!(c.totals(&[a2.clone()]), stats(8, 80, 0, 800, 0));
    assert_eq!(c.totals(&[a2.clone()]), stats(8, 80, 0, 800, 0));
    // and again under the same key: a new service counting from zero
    let b2 = service(b.spec.key, stats(2, 3, 0, 30, 0), vec![]);
    assert_eq!(c.totals(&[a2, b2]), stats(10, 83, 0, 830, 0));
}

#[test]
fn busy_ratio_over_the_interval() {
    let mut a = LoopCounters::default();
    assert_eq!(busy_ratio(&a, &a), 0.0);
    a.loop_ns = 1000;
    a.busy_ns = 100;
    assert_eq!(busy_ratio(&LoopCounters::default(), &a), 0.1);
    let mut b = a;
    b.loop_ns = 2000;
    b.busy_ns = 900;
    assert_eq!(busy_ratio(&a, &b), 0.8);
    let mut c = Collector::default();
    assert_eq!(c.ratios(&[a]), vec![0.1]);
    assert_eq!(c.ratios(&[b]), vec![0.8]);
    assert_eq!(c.ratios(&[b, a]), vec![0.0, 0.1]);
}

#[test]
fn operations_md_lists_every_metric_with_its_type() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/OPERATIONS.md");
    let md = std::fs::read_to_string(p).unwrap();
    let start = md.find("\n## 7. Metrics").expect("a Metrics section");
    let sec = &md[start + 1..];
    let sec = &sec[..sec.find("\n## ").unwrap_or(sec.len())];
    let documented: std::collections::BTreeMap<String, String> = sec
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            (name.starts_with("node_ipvs_") || name.starts_with("dirigo_"))
                .then(|| (name.to_string(), cells.get(2).unwrap_or(&"").to_string()))
        })
        .collect();
    let mut s = sample_scrape();
    s.health.as_mut().unwrap().quorum_lost = vec!["TCP 10.0.0.100:80".into()];
    let rendered: std::collections::BTreeMap<String, String> = render(&s)
        .lines()
        .filter_map(|l| {
            let mut f = l.strip_prefix("# TYPE ")?.split(' ');
            Some((f.next()?.to_string(), f.next()?.to_string()))
        })
        .collect();
    assert_eq!(documented, rendered, "docs/OPERATIONS.md vs the exposition");
}
