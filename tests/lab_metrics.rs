//! The metrics endpoint (issue 17) on a running dirigo in the netns lab
//! (DR, rs1..rs3, a TCP check on each, an exception path):
//!
//! * node_exporter's backend gauges per real server with its labels, equal
//!   to `dirigoadm -L -n` (held connections: one active each; weights
//!   1, 1, 3);
//! * after traffic stops, the per-service and per-real-server counters
//!   and the IPVS totals equal `dirigoadm -L -n --stats --exact`;
//! * garbage frames into the WAN tap show as `dirigo_drops_total` by
//!   reason, equal to `dirigoctl drops`;
//! * the workers' busy time and burst histogram, health, control counts;
//! * the text is the Prometheus format (a strict reader and
//!   prometheus-parse both read it);
//! * every metric the Grafana dashboard (contrib/grafana/dirigo.json)
//!   queries is in the scrape;
//! * hostile scrapers — 1,000 idle connections, a 10 MB request head, a
//!   10 MB body, a client that never reads — while a download through
//!   the VIP stays byte-exact, `dirigoadm -L -n` answers within a second
//!   and a normal scrape still works.
//!
//! Needs root and hugepages (skips outside CI, fails in CI). The last test
//! (a port in use) needs neither.

mod common;
mod lab_common;
mod metrics_common;

use lab_common::checks::{transfer, Held};
use lab_common::{rip, Lab, LabSpec, SERIAL, VIP};
use metrics_common::{parse, scrape, Exposition};
use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::process::Command;
use std::time::{Duration, Instant};

const P: &str = "dgm";

/// A port nobody listens on now (the kernel's choice).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn config(port: u16) -> impl FnOnce(common::DaemonConfig) -> common::DaemonConfig {
    move |c| {
        c.port_keys("wan", &format!("kernel_interface = \"{P}-kwan\""))
            .port_keys("lan", &format!("kernel_interface = \"{P}-klan\""))
            .raw(&format!("[exception]\nbackend = \"tap\"\nnetns = \"{P}-dir\"\n"))
            .edit(
                &format!("address = \"{VIP}:80\"\nscheduler = \"rr\"\n"),
                &format!(
                    "address = \"{VIP}:80\"\nscheduler = \"rr\"\n\
                     [service.check]\ntype = \"tcp\"\ninterval = 1\ntimeout = 0.5\nrise = 1\nfall = 2\n"
                ),
            )
            .raw(&format!("[metrics]\nlisten = \"127.0.0.1:{port}\"\n"))
    }
}

/// `dirigoadm -L -n ...` rows: (address, the numeric columns) for the
/// service lines (`TCP`/`UDP`, address `VIP:port`) and real-server lines
/// (`->`, address `RIP:port`, keyed `VIP:port>RIP:port`).
fn listing(lab: &Lab, args: &[&str], numbers_from: usize) -> BTreeMap<String, Vec<u64>> {
    let mut a = vec!["-L", "-n"];
    a.extend_from_slice(args);
    let text = lab.adm(&a);
    let mut out = BTreeMap::new();
    let mut svc = String::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 2 {
            continue;
        }
        let nums = || -> Vec<u64> {
            f[numbers_from..]
                .iter()
                .filter_map(|x| x.parse().ok())
                .collect()
        };
        match f[0] {
            "TCP" | "UDP" => {
                svc = format!("{} {}", f[0], f[1]);
                out.insert(
                    svc.clone(),
                    f[2..].iter().filter_map(|x| x.parse().ok()).collect(),
                );
            }
            "->" if f[1] != "RemoteAddress:Port" => {
                out.insert(format!("{svc}>{}", f[1]), nums());
            }
            _ => {}
        }
    }
    out
}

/// The scrape's labels of real server `n` of the TCP service, as
/// node_exporter's.
fn backend(n: usize) -> [(&'static str, String); 6] {
    [
        ("local_address", VIP.to_string()),
        ("local_port", "80".into()),
        ("remote_address", rip(n)),
        ("remote_port", "80".into()),
        ("proto", "TCP".into()),
        ("local_mark", String::new()),
    ]
}

fn refs<'a>(l: &'a [(&'static str, String)]) -> Vec<(&'a str, &'a str)> {
    l.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// Wait for the workers' next publication and the render cache's expiry.
fn settle() {
    std::thread::sleep(Duration::from_millis(1200));
}

fn dirigoctl_json(lab: &Lab, args: &[&str]) -> serde_json::Value {
    lab.ctl_json(args)
}

/// Send `n` frames of an unknown EtherType (0x88b5) from the client's WAN
/// interface to dirigo's WAN port.
fn garbage(lab: &Lab, n: usize) {
    let ports = dirigoctl_json(lab, &["ports"]);
    let mac = ports[0]["mac"].as_str().expect("wan mac").to_string();
    let py = "import socket,sys\n\
              s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n\
              s.bind((sys.argv[1],0))\n\
              dst=bytes.fromhex(sys.argv[2].replace(':',''))\n\
              src=s.getsockname()[4][:6]\n\
              for i in range(int(sys.argv[3])):\n    s.send(dst+src+b'\\x88\\xb5'+b'garbage'.ljust(46,b'\\0'))\n";
    lab.client(&[
        "python3",
        "-c",
        py,
        &format!("{P}-wan"),
        &mac,
        &n.to_string(),
    ]);
}

#[test]
fn lab_metrics() {
    if !common::privileged("lab metrics") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let port = free_port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let spec = LabSpec {
        name: "lab_metrics",
        prefix: P,
        mode: "dr",
        method: "dr",
        cores: &["-l", "0-1"],
        nrs: 3,
        env: &[],
    };
    let lab = Lab::start_with_config(&spec, 65536, config(port));
    assert!(
        lab.daemon_log()
            .contains(&format!("metrics at http://{addr}/metrics")),
        "{}",
        lab.daemon_log()
    );
    lab.wait_for("rs1..rs3 up", 15, || {
        let h = dirigoctl_json(&lab, &["health"]);
        h["servers"]
            .as_array()
            .is_some_and(|s| s.len() == 3 && s.iter().all(|x| x["state"] == "up"))
    });
    lab.adm(&[
        "-e",
        "-t",
        &format!("{VIP}:80"),
        "-r",
        &rip(3),
        "-g",
        "-w",
        "3",
    ]);

    backends_while_held(&lab, addr);
    counters_after_traffic(&lab, addr);
    drops_by_reason(&lab, addr);
    let (text, e) = scrape(addr);
    // kept for a look after a failure
    std::fs::write(lab.dir.join("scrape.txt"), &text).unwrap();
    workers_health_control(&lab, &e);
    third_party_parser(&text, &e);
    dashboard(&e);
    metrics_common::hostile::hostile_scrapers(&lab, addr);
    lab.finish();
}

/// Held connections, one per real server: node_exporter's gauges equal
/// `-L -n`'s columns (Weight, ActiveConn, InActConn).
fn backends_while_held(lab: &Lab, addr: SocketAddr) {
    let held = Held::start(lab, 3, "0.3", "metrics");
    let per: Vec<&str> = held.conns.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(per.len(), 3);
    settle();
    let (_, e) = scrape(addr);
    let l = listing(lab, &[], 3);
    for n in 1..=3 {
        let lb = backend(n);
        let lb = refs(&lb);
        let cols = &l[&format!("TCP {VIP}:80>{}:80", rip(n))];
        let (w, act, inact) = (
            e.one("node_ipvs_backend_weight", &lb),
            e.one("node_ipvs_backend_connections_active", &lb),
            e.one("node_ipvs_backend_connections_inactive", &lb),
        );
        eprintln!("rs{n}: weight {w} active {act} inactive {inact}; -L -n {cols:?}");
        assert_eq!(w, if n == 3 { 3.0 } else { 1.0 }, "rs{n} weight");
        assert_eq!(act, 1.0, "rs{n}: one held connection");
        assert_eq!([w as u64, act as u64, inact as u64], cols[..3], "rs{n}");
        // every label node_exporter has, and no other
        let s = e.all("node_ipvs_backend_weight", &lb)[0];
        let keys: Vec<&str> = s.labels.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "local_address",
                "local_port",
                "remote_address",
                "remote_port",
                "proto",
                "local_mark"
            ]
        );
    }
    // the UDP service's servers too
    assert_eq!(
        e.all("node_ipvs_backend_weight", &[("proto", "UDP")]).len(),
        3
    );
    for (_, name, _, fails, _) in held.stop() {
        assert_eq!(fails, 0, "held connection to {name}");
    }
}

/// After traffic (2 MiB each way, six more connections) has stopped:
/// the scrape's counters equal `-L -n --stats --exact`.
fn counters_after_traffic(lab: &Lab, addr: SocketAddr) {
    transfer(lab, "metrics");
    lab_common::checks::conns(lab, 6, None);
    settle();
    let (_, e) = scrape(addr);
    let l = listing(lab, &["--stats", "--exact"], 2);
    eprintln!("-L -n --stats --exact: {l:?}");
    let mut total = [0u64; 5];
    for (key, cols) in &l {
        assert_eq!(cols.len(), 5, "{key}: {cols:?}");
        let mut names = [
            "connections",
            "incoming_packets",
            "outgoing_packets",
            "incoming_bytes",
            "outgoing_bytes",
        ]
        .into_iter();
        let got: Vec<u64> = if let Some((svc, rs)) = key.split_once('>') {
            let (proto, vip) = svc.split_once(' ').unwrap();
            let (v, vp) = vip.split_once(':').unwrap();
            let (r, rp) = rs.split_once(':').unwrap();
            let with = [
                ("local_address", v),
                ("local_port", vp),
                ("remote_address", r),
                ("remote_port", rp),
                ("proto", proto),
            ];
            names
                .by_ref()
                .map(|n| e.one(&format!("dirigo_real_server_{n}_total"), &with) as u64)
                .collect()
        } else {
            let (proto, vip) = key.split_once(' ').unwrap();
            let (v, vp) = vip.split_once(':').unwrap();
            let with = [("local_address", v), ("local_port", vp), ("proto", proto)];
            let got: Vec<u64> = names
                .by_ref()
                .map(|n| e.one(&format!("dirigo_service_{n}_total"), &with) as u64)
                .collect();
            for (t, g) in total.iter_mut().zip(&got) {
                *t += g;
            }
            got
        };
        assert_eq!(&got, cols, "{key}: scrape vs -L -n --stats --exact");
    }
    let tcp = &l[&format!("TCP {VIP}:80")];
    assert!(
        tcp[0] >= 9 && tcp[1] > 1000,
        "little traffic counted: {tcp:?}"
    );
    let ipvs: Vec<u64> = [
        "node_ipvs_connections_total",
        "node_ipvs_incoming_packets_total",
        "node_ipvs_outgoing_packets_total",
        "node_ipvs_incoming_bytes_total",
        "node_ipvs_outgoing_bytes_total",
    ]
    .iter()
    .map(|n| e.one(n, &[]) as u64)
    .collect();
    assert_eq!(ipvs, total, "IPVS totals = the services' sums");
}

/// 20 frames of an unknown EtherType: counted under their reason, as
/// `dirigoctl drops` counts them.
fn drops_by_reason(lab: &Lab, addr: SocketAddr) {
    let reason = [("reason", "unknown_ethertype")];
    let (_, before) = scrape(addr);
    let b = before.one("dirigo_drops_total", &reason);
    garbage(lab, 20);
    settle();
    let (_, after) = scrape(addr);
    let a = after.one("dirigo_drops_total", &reason);
    let drops = dirigoctl_json(lab, &["drops"]);
    let ctl = drops
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["reason"] == "unknown_ethertype")
        .and_then(|d| d["count"].as_u64())
        .expect("dirigoctl drops: unknown_ethertype");
    eprintln!("unknown_ethertype: {b} -> {a} (dirigoctl drops {ctl})");
    assert!(a - b >= 20.0, "{b} -> {a}");
    assert_eq!(a as u64, ctl);
    // one family, the reason a label: as many series as dirigoctl lists
    assert_eq!(
        after.all("dirigo_drops_total", &[]).len(),
        drops.as_array().unwrap().len()
    );
}

fn workers_health_control(lab: &Lab, e: &Exposition) {
    let w = [("worker", "0")];
    assert!(e.one("dirigo_worker_rx_packets_total", &w) > 1000.0);
    assert!(e.one("dirigo_worker_connections_created_total", &w) >= 11.0);
    let busy = e.one("dirigo_worker_busy_seconds_total", &w);
    let all = e.one("dirigo_worker_loop_seconds_total", &w);
    assert!(busy > 0.0 && busy < all, "busy {busy} of {all}");
    let ratio = e.one("dirigo_worker_busy_ratio", &w);
    assert!((0.0..=1.0).contains(&ratio), "{ratio}");
    assert_eq!(e.types["dirigo_worker_burst_duration_seconds"], "histogram");
    let count = e.one("dirigo_worker_burst_duration_seconds_count", &w);
    let inf = e.one(
        "dirigo_worker_burst_duration_seconds_bucket",
        &[("worker", "0"), ("le", "+Inf")],
    );
    let sum = e.one("dirigo_worker_burst_duration_seconds_sum", &w);
    assert!(count > 100.0 && inf == count, "count {count} +Inf {inf}");
    assert!(sum > 0.0 && sum <= busy + 1e-9, "sum {sum} busy {busy}");
    for n in 1..=3 {
        let r = rip(n);
        let with = [("remote_address", r.as_str()), ("local_port", "80")];
        assert_eq!(e.one("dirigo_health_up", &with), 1.0, "rs{n}");
        let lat = e.one("dirigo_health_check_latency_seconds", &with);
        assert!(lat > 0.0 && lat < 0.5, "rs{n} latency {lat}");
        assert!(e.one("dirigo_health_checks_total", &with) >= 1.0);
    }
    assert!(e.one("dirigo_control_requests_total", &[]) >= 5.0);
    assert!(e.one("dirigo_port_rx_packets_total", &[("port", "wan")]) > 1000.0);
    // the link as dirigoctl ports shows it (a net_tap moved into another
    // namespace may say down)
    let ports = dirigoctl_json(lab, &["ports"]);
    for p in ports.as_array().unwrap() {
        let name = p["name"].as_str().unwrap();
        let up = p["link_up"].as_bool().unwrap();
        assert_eq!(
            e.one("dirigo_port_link_up", &[("port", name)]),
            f64::from(u8::from(up)),
            "{name}"
        );
    }
    assert!(!e
        .all("dirigo_port_xstat_total", &[("port", "wan")])
        .is_empty());
    for (name, t) in [
        ("node_ipvs_connections_total", "counter"),
        ("node_ipvs_backend_connections_active", "gauge"),
        ("node_ipvs_backend_connections_inactive", "gauge"),
        ("node_ipvs_backend_weight", "gauge"),
        ("dirigo_drops_total", "counter"),
        ("dirigo_health_up", "gauge"),
    ] {
        assert_eq!(e.types.get(name).map(String::as_str), Some(t), "{name}");
    }
}

/// prometheus-parse reads the same text to the same values.
fn third_party_parser(text: &str, e: &Exposition) {
    let p = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap();
    for l in text.lines() {
        assert!(
            !matches!(
                prometheus_parse::LineInfo::parse(l),
                prometheus_parse::LineInfo::Ignored
            ),
            "prometheus-parse: unread line {l:?}"
        );
    }
    for n in 1..=3 {
        let r = rip(n);
        let theirs = p
            .samples
            .iter()
            .find(|s| {
                s.metric == "node_ipvs_backend_weight"
                    && s.labels.get("remote_address") == Some(r.as_str())
                    && s.labels.get("proto") == Some("TCP")
            })
            .expect("prometheus-parse: backend weight");
        let ours = e.one(
            "node_ipvs_backend_weight",
            &[("remote_address", r.as_str()), ("proto", "TCP")],
        );
        assert_eq!(theirs.value, prometheus_parse::Value::Gauge(ours));
    }
    let h = p
        .samples
        .iter()
        .find(|s| s.metric == "dirigo_worker_burst_duration_seconds")
        .expect("prometheus-parse: the histogram");
    assert!(matches!(&h.value, prometheus_parse::Value::Histogram(b) if b.len() > 10));
}

/// Every metric contrib/grafana/dirigo.json queries is in the scrape.
fn dashboard(e: &Exposition) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/grafana/dirigo.json");
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).expect("dashboard JSON");
    let wanted = metrics_common::dashboard_metrics(&dash);
    assert!(
        wanted.len() >= 10,
        "the dashboard queries little: {wanted:?}"
    );
    let have = e.names();
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|n| !have.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "the dashboard queries metrics the scrape lacks: {missing:?}"
    );
    eprintln!("dashboard: {} metrics, all in the scrape", wanted.len());
}

/// A metrics port already in use: dirigo refuses to start, saying so, and
/// before it touches EAL (so this needs no privileges).
#[test]
fn metrics_port_in_use_stops_dirigo() {
    let dir = common::scratch("metrics_port_in_use");
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let cfg = common::DaemonConfig::new("dg-metrics-port", dir.join("ctl.sock").display())
        .vdev("net_null0")
        .port("wan", "net_null0", "10.0.0.1/24")
        .raw(&format!("[metrics]\nlisten = \"127.0.0.1:{port}\"\n"))
        .toml();
    let path = dir.join("dirigo.toml");
    std::fs::write(&path, cfg).unwrap();
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_dirigo"))
        .arg("--config")
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("[metrics] listen 127.0.0.1:{port}")) && err.contains("in use"),
        "{err}"
    );
    assert!(!err.contains("EAL"), "EAL started first: {err}");
    assert!(t.elapsed() < Duration::from_secs(5));
    drop(taken);
}

/// The strict reader refuses what Prometheus would (so the lab's checks
/// can fail).
#[test]
fn the_strict_reader_can_fail() {
    let ok = "# HELP a_total x\n# TYPE a_total counter\na_total{l=\"v\\\"q\\\\\\n\"} 1\n";
    let e = parse(ok).unwrap();
    assert_eq!(e.samples[0].labels[0].1, "v\"q\\\n");
    for bad in [
        "a_total 1\n",                                              // no TYPE
        "# TYPE a counter\na 1\n",                                  // counter without _total
        "# TYPE a gauge\na{l=v} 1\n",                               // unquoted
        "# TYPE a gauge\na{l=\"v\\x\"} 1\n",                        // bad escape
        "# TYPE a gauge\na{l=\"v\"} one\n",                         // bad value
        "# TYPE a gauge\na{l=\"v\"}1\n",                            // no space
        "# TYPE a gauge\n# TYPE a gauge\na 1\n",                    // TYPE twice
        "# TYPE a gauge\n\na 1\n",                                  // empty line
        "# TYPE a gauge\na{1l=\"v\"} 1\n",                          // bad label name
        "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_total 1\n", // not the family's
    ] {
        assert!(parse(bad).is_err(), "accepted {bad:?}");
    }
}
