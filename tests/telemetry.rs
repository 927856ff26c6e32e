//! DPDK telemetry from a running dirigo (issue 17): `dpdk-telemetry.py -f
//! PREFIX`, as an operator runs it, lists dirigo's four commands in `/`
//! beside DPDK's own, answers `/dirigo/services` with what `dirigoadm -L
//! -n` lists (services, real servers, methods, weights, connection
//! counts), `/dirigo/workers` and `/dirigo/drops` with the counters'
//! keys, and pages a table too big for one 16 KiB answer. dirigo runs on
//! net_null ports without `--no-telemetry`. Needs root and hugepages
//! (skips outside CI, fails in CI).

mod common;

use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

const PREFIX: &str = "dg-telemetry";

/// Ask `cmds` (one per line, as typed) through dpdk-telemetry.py; one
/// parsed answer per command.
fn telemetry(cmds: &[&str]) -> Vec<Value> {
    let input = cmds.join("\n") + "\n";
    let o = common::run_with_input(
        Command::new("dpdk-telemetry.py").args(["-f", PREFIX]),
        &input,
    );
    assert_eq!(o.code, 0, "dpdk-telemetry.py: {}{}", o.stdout, o.stderr);
    let answers: Vec<Value> = o
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert_eq!(
        answers.len(),
        cmds.len(),
        "one answer per command: {}",
        o.stdout
    );
    for (a, c) in answers.iter().zip(cmds) {
        let name = c.split(',').next().unwrap();
        assert!(
            a.get(name).is_some(),
            "answer to {c} is under its name: {a}"
        );
    }
    answers
        .into_iter()
        .zip(cmds)
        .map(|(a, c)| a[c.split(',').next().unwrap()].clone())
        .collect()
}

fn adm(sock: &str, args: &[&str], input: Option<&str>) -> String {
    let mut c = Command::new(crate::common::DIRIGOADM);
    c.arg("--socket").arg(sock).args(args);
    let o = common::run_with_input(&mut c, input.unwrap_or(""));
    assert_eq!(o.code, 0, "dirigoadm {args:?}: {}", o.stderr);
    o.stdout
}

/// `dirigoadm -L -n` as (service line, real-server lines) with single
/// spaces: `TCP 10.0.0.100:80 wlc`, `172.16.0.11:80 Route 3 0 0`.
fn adm_listing(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for l in text.lines() {
        let words = l.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(rs) = words.strip_prefix("-> ") {
            if !rs.starts_with("RemoteAddress") {
                out.last_mut().expect("a service first").1.push(rs.into());
            }
        } else if l.starts_with("TCP") || l.starts_with("UDP") {
            out.push((words, Vec::new()));
        }
    }
    out
}

/// The same lines from `/dirigo/services` pages (every page, in order).
fn telemetry_listing(pages: &[Value]) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for p in pages {
        // serde_json sorts keys; the entries carry their own order keys
        let mut svcs: Vec<&Value> = p["services"].as_object().unwrap().values().collect();
        svcs.sort_by_key(|s| sort_key(s));
        for s in svcs {
            let flags = s["flags"].as_str().unwrap();
            let head = format!(
                "{} {} {}{}{}",
                s["protocol"].as_str().unwrap(),
                s["address"].as_str().unwrap(),
                s["scheduler"].as_str().unwrap(),
                if flags.is_empty() { "" } else { " " },
                flags
            );
            let mut rs: Vec<&Value> = s["real_servers"].as_object().unwrap().values().collect();
            rs.sort_by_key(|r| addr_key(r["address"].as_str().unwrap()));
            assert_eq!(s["real_servers_total"], rs.len(), "{s}");
            let lines = rs
                .iter()
                .map(|r| {
                    format!(
                        "{} {} {} {} {}",
                        r["address"].as_str().unwrap(),
                        r["forward"].as_str().unwrap(),
                        r["weight"],
                        r["active"],
                        r["inactive"]
                    )
                })
                .collect();
            out.push((head, lines));
        }
    }
    out
}

fn addr_key(a: &str) -> (std::net::Ipv4Addr, u16) {
    let (ip, port) = a.rsplit_once(':').unwrap();
    (ip.parse().unwrap(), port.parse().unwrap())
}

fn sort_key(s: &Value) -> (String, (std::net::Ipv4Addr, u16)) {
    (
        s["protocol"].as_str().unwrap().to_string(),
        addr_key(s["address"].as_str().unwrap()),
    )
}

/// Every page of `/dirigo/services`, following `next`.
fn all_service_pages() -> Vec<Value> {
    let mut pages = Vec::new();
    let mut cmd = "/dirigo/services".to_string();
    loop {
        let p = telemetry(&[&cmd]).remove(0);
        assert!(p.get("error").is_none(), "{p}");
        let next = p.get("next").and_then(|n| n.as_str()).map(String::from);
        pages.push(p);
        match next {
            Some(n) => cmd = n,
            None => return pages,
        }
        assert!(pages.len() < 100, "paging does not end");
    }
}

#[test]
fn telemetry_answers_like_dirigoadm() {
    if !common::privileged("telemetry") {
        return;
    }
    let dir = common::scratch("telemetry");
    let sock = dir.join("ctl.sock").display().to_string();
    let run_dir = format!("/var/run/dpdk/{PREFIX}");
    let cfg = common::DaemonConfig::new(PREFIX, &sock)
        .eal_without("--no-telemetry")
        .vdev("net_null0")
        .vdev("net_null1")
        .wan_lan("net_null0", "net_null1")
        .raw(
            "[[service]]\nprotocol = \"tcp\"\naddress = \"10.0.0.100:80\"\nscheduler = \"wlc\"\n\
             [[service.real_server]]\naddress = \"172.16.0.11\"\nmethod = \"dr\"\nweight = 3\n\
             [[service.real_server]]\naddress = \"172.16.0.12\"\nmethod = \"tun\"\nweight = 1\n\
             [[service]]\nprotocol = \"udp\"\naddress = \"10.0.0.100:53\"\nscheduler = \"sh\"\n\
             flags = [\"sh-port\"]\npersistent = 300\nnetmask = \"255.255.255.0\"\n\
             [[service.real_server]]\naddress = \"172.16.0.13:5353\"\nmethod = \"nat\"\nweight = 5\n\
             [[service.real_server]]\naddress = \"172.16.0.14\"\nmethod = \"nat\"\nweight = 0\n",
        );
    let d = common::Daemon::start(&dir, &cfg.toml());
    let sock_path = format!("{run_dir}/dpdk_telemetry.v2");
    assert!(
        d.has_line(&format!("telemetry socket {sock_path}")),
        "{}",
        d.output()
    );
    assert!(std::path::Path::new(&sock_path).exists());

    let a = telemetry(&[
        "/",
        "/dirigo/services",
        "/dirigo/workers",
        "/dirigo/drops",
        "/dirigo/health",
        "/ethdev/list",
        "/dirigo/services,x",
    ]);
    // `/` lists ours beside DPDK's
    let cmds: BTreeSet<&str> = a[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for c in [
        "/dirigo/services",
        "/dirigo/workers",
        "/dirigo/drops",
        "/dirigo/health",
        "/ethdev/stats",
    ] {
        assert!(cmds.contains(c), "{c} not in /: {cmds:?}");
    }
    // services: what dirigoadm -L -n lists
    let adm_l = adm(&sock, &["-L", "-n"], None);
    let listed = adm_listing(&adm_l);
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(telemetry_listing(&[a[1].clone()]), listed);
    assert!(
        listed[1].0.contains("persistent 300 mask 255.255.255.0"),
        "{listed:?}"
    );
    assert_eq!(a[1]["total"], 2);
    let size = format!("(size={})", a[1]["conn_tab_size"]);
    assert!(adm_l.lines().next().unwrap().contains(&size), "{adm_l}");
    // workers: one worker (lcore 1) polling both ports, net_null's packets counted
    let w = &a[2]["workers"]["1"];
    assert_eq!(a[2]["total"], 1);
    assert_eq!(w["role"], "worker");
    assert_eq!(
        w["queues"],
        serde_json::json!(["wan:rx0/tx0", "lan:rx0/tx0"])
    );
    for k in [
        "rx_packets",
        "tx_packets",
        "dropped",
        "conns",
        "conns_created",
    ] {
        assert!(w[k].is_u64(), "{k} in {w}");
    }
    assert!(w["rx_packets"].as_u64().unwrap() > 0, "{w}");
    assert!(w["counters"].is_object(), "{w}");
    // drops: every reason dirigoctl lists, their sum
    let drops = a[3]["drops"].as_object().unwrap();
    for k in [
        "other_host",
        "lb_not_a_service",
        "tx_full_wan",
        "tx_full_lan",
    ] {
        assert!(drops.contains_key(k), "{k} not in {drops:?}");
    }
    assert_eq!(a[3]["total"], drops.len());
    assert!(a[3]["dropped"].as_u64().unwrap() > 0);
    let sum: u64 = drops.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(a[3]["dropped"], sum);
    // health: no checks configured
    assert_eq!(a[4]["total"], 0);
    assert!(a[4]["servers"].as_object().unwrap().is_empty());
    assert_eq!(a[5], serde_json::json!([0, 1]));
    assert!(
        a[6]["error"].as_str().unwrap().contains("a number"),
        "{}",
        a[6]
    );

    // 300 more services: more than one 16 KiB answer holds; paged, none lost
    let mut batch = String::new();
    for i in 0..300u32 {
        let vip = format!("10.1.{}.{}:80", i / 200, i % 200 + 1);
        batch += &format!("-A -t {vip} -s rr\n");
        for r in 1..=3 {
            batch += &format!("-a -t {vip} -r 172.16.0.{}:80 -g -w {r}\n", 20 + r);
        }
    }
    adm(&sock, &["-R"], Some(&batch));
    let pages = all_service_pages();
    assert!(pages.len() > 2, "{} pages", pages.len());
    let listed = adm_listing(&adm(&sock, &["-L", "-n"], None));
    assert_eq!(listed.len(), 302);
    assert_eq!(telemetry_listing(&pages), listed);

    let out = d.stop();
    assert!(!out.contains("panicked"), "{out}");
    assert!(
        !std::path::Path::new(&sock_path).exists(),
        "the telemetry socket outlived dirigo"
    );
    let _ = std::fs::remove_dir(&run_dir);
}
