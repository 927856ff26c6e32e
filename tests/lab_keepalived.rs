//! keepalived.conf in the netns lab (issues 16 and 52): a keepalived
//! configuration of the lab's services, converted by `dirigoctl
//! keepalived-convert`, loads and works:
//!
//! * a DR service with TCP_CHECK and a NAT service with HTTP_GET: both
//!   answer, and a dead server leaves the NAT service;
//! * SMTP_CHECK against a tiny SMTP responder (tests/support/
//!   smtp_responder.py) on rs1: a 554 greeting takes the server down
//!   (weight 0), 220 brings it back;
//! * DNS_CHECK against Debian's dnsmasq on rs2: stopped, the server goes
//!   down; started again, it comes back;
//! * FILE_CHECK of two `track_file`s the test writes: a drain file (weight
//!   0) takes rs1 down and back, a weight file (weight 2) changes rs3's
//!   weight in `dirigoadm -L -n`;
//! * `retry 1` and `delay_before_retry` converted (a server goes down
//!   after a failed check and one failed retry).
//!
//! Needs root and hugepages (skips outside CI, fails in CI).

mod common;
mod lab_common;

use lab_common::{rip, Lab, LabSpec, SERIAL, VIP};
use std::process::Command;
use std::time::Instant;

/// `dirigoctl --json health`'s data.
fn health(lab: &Lab) -> serde_json::Value {
    lab.ctl_json(&["health"])
}

/// A keepalived.conf for the lab: a DR service with TCP_CHECK and a NAT
/// service with HTTP_GET on the same VIP; an SMTP service (SMTP_CHECK of
/// rs1's responder on 2525), a DNS one (DNS_CHECK of dnsmasq on rs2, port
/// 5354) and a web one whose servers follow files in `dir` (FILE_CHECK: a
/// drain file of weight 0 for rs1, a weight file of factor 2 for rs3), all
/// with `retry 1` and `delay_before_retry`.
fn keepalived_conf(dir: &std::path::Path) -> String {
    let rs = |n: usize, check: &str| {
        format!(
            "    real_server {} 80 {{\n        weight 1\n{check}    }}\n",
            rip(n)
        )
    };
    let tcp = "        inhibit_on_failure\n        TCP_CHECK {\n            connect_timeout 1\n            retry 1\n        }\n";
    let http = "        HTTP_GET {\n            url {\n                path /health\n                status_code 200\n            }\n            connect_timeout 1\n        }\n";
    let d = dir.display();
    format!(
        "! the lab's services as keepalived would run them\nglobal_defs {{\n    router_id LAB\n}}\n\
         virtual_server {VIP} 80 {{\n    delay_loop 2\n    lb_algo rr\n    lb_kind DR\n    protocol TCP\n{}{}}}\n\
         virtual_server {VIP} 8080 {{\n    delay_loop 2\n    lb_algo wrr\n    lb_kind NAT\n    protocol TCP\n{}{}}}\n\
         track_file drain {{\n    file \"{d}/drain\"\n    weight 0\n}}\n\
         track_file boost {{\n    file \"{d}/boost\"\n    weight 2\n}}\n\
         virtual_server {VIP} 25 {{\n    delay_loop 1\n    lb_kind DR\n    protocol TCP\n    retry 1\n    delay_before_retry 0.2\n\
         \x20   real_server {} 25 {{\n        inhibit_on_failure\n        SMTP_CHECK {{\n            connect_port 2525\n            connect_timeout 0.5\n            helo_name lab.test\n        }}\n    }}\n}}\n\
         virtual_server {VIP} 53 {{\n    delay_loop 1\n    lb_kind DR\n    protocol UDP\n\
         \x20   real_server {} 53 {{\n        inhibit_on_failure\n        DNS_CHECK {{\n            connect_port 5354\n            connect_timeout 0.5\n            retry 1\n            delay_before_retry 0.2\n            type A\n            name up.lab\n        }}\n    }}\n}}\n\
         virtual_server {VIP} 81 {{\n    delay_loop 1\n    lb_algo wrr\n    lb_kind DR\n    protocol TCP\n\
         \x20   real_server {} 81 {{\n        inhibit_on_failure\n        FILE_CHECK {{\n            track_file drain\n        }}\n    }}\n\
         \x20   real_server {} 81 {{\n        weight 3\n        inhibit_on_failure\n        FILE_CHECK {{\n            track_file boost\n        }}\n    }}\n}}\n",
        rs(1, tcp),
        rs(2, tcp),
        rs(1, http),
        rs(3, http),
        rip(1),
        rip(2),
        rip(1),
        rip(3),
    )
}

/// Real server `n`'s health entry in the service on `port`.
fn server_at(lab: &Lab, n: usize, port: u64) -> serde_json::Value {
    let h = health(lab);
    h["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["dest"]["addr"] == rip(n) && s["service"]["port"] == port)
        .cloned()
        .unwrap_or_else(|| panic!("rs{n} of port {port} not checked: {h}"))
}

/// Wait until real server `n` of the service on `port` is `want`; its
/// last check's detail.
fn wait_state_at(lab: &Lab, n: usize, port: u64, want: &str, secs: u64) -> String {
    let t = Instant::now();
    lab.wait_for(&format!("rs{n} of port {port} {want}"), secs, || {
        server_at(lab, n, port)["state"] == want
    });
    let last = server_at(lab, n, port)["last"]
        .as_str()
        .unwrap_or("")
        .to_string();
    eprintln!(
        "rs{n} of port {port} {want} after {:.1} s ({last})",
        t.elapsed().as_secs_f64()
    );
    last
}

/// Weight of real server `n` in `dirigoadm -L -n` for service `svc`
/// ("-t"/"-u", "VIP:PORT"); `None` when it is not listed.
fn listed_weight(lab: &Lab, proto: &str, port: u16, n: usize) -> Option<u32> {
    let l = lab.adm(&["-L", "-n", proto, &format!("{VIP}:{port}")]);
    l.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (f.first() == Some(&"->") && f.len() >= 4 && f[1] == format!("{}:{port}", rip(n)))
            .then(|| f[3].parse().unwrap())
    })
}

/// dnsmasq on rs2, port 5354, answering up.lab A (daemonized, its pid
/// file in the lab's state directory so that `lab.sh down` stops it).
fn start_dnsmasq(lab: &Lab) -> std::path::PathBuf {
    let pid = lab.state_dir().join("rs2-dnsmasq.pid");
    let o = lab.exec(
        "rs2",
        &[
            "dnsmasq",
            "--conf-file=/dev/null",
            &format!("--pid-file={}", pid.display()),
            "--port=5354",
            "--no-resolv",
            "--no-hosts",
            "--local=/lab/",
            "--address=/up.lab/192.0.2.53",
        ],
    );
    assert!(o.status.success(), "dnsmasq: {o:?}");
    pid
}

/// Stop the program whose pid is in `pid_file`.
fn stop_pid(pid_file: &std::path::Path) {
    let pid = std::fs::read_to_string(pid_file).unwrap();
    let o = Command::new("kill").arg(pid.trim()).output().unwrap();
    assert!(o.status.success(), "kill {pid}: {o:?}");
}

/// SMTP_CHECK, DNS_CHECK and FILE_CHECK, converted, against real servers:
/// each takes a server down and brings it back, and a file changes a
/// weight.
fn other_checkers(lab: &Lab, dir: &std::path::Path) {
    let code = dir.join("smtp-code");
    std::fs::write(&code, "220").unwrap();
    lab.spawn_support(
        "rs1",
        "rs1-smtp",
        "smtp_responder.py",
        &[
            "--name",
            "rs1",
            "--port",
            "2525",
            "--code-file",
            &code.display().to_string(),
        ],
    );
    let dns_pid = start_dnsmasq(lab);
    for (n, port) in [(1, 25), (2, 53), (1, 81), (3, 81)] {
        wait_state_at(lab, n, port, "up", 10);
    }
    assert_eq!(listed_weight(lab, "-t", 81, 3), Some(3));

    // SMTP: a 554 greeting takes rs1 down (weight 0), 220 brings it back
    std::fs::write(&code, "554").unwrap();
    let why = wait_state_at(lab, 1, 25, "down", 10);
    assert!(why.contains("greeting 554"), "{why}");
    assert_eq!(listed_weight(lab, "-t", 25, 1), Some(0));
    std::fs::write(&code, "220").unwrap();
    let why = wait_state_at(lab, 1, 25, "up", 10);
    assert_eq!(why, "HELO answered 250");
    assert_eq!(listed_weight(lab, "-t", 25, 1), Some(1));

    // DNS: dnsmasq stopped takes rs2 down, started again brings it back
    stop_pid(&dns_pid);
    let why = wait_state_at(lab, 2, 53, "down", 10);
    assert!(why.contains("refused") || why.contains("timeout"), "{why}");
    assert_eq!(listed_weight(lab, "-u", 53, 2), Some(0));
    start_dnsmasq(lab);
    let why = wait_state_at(lab, 2, 53, "up", 10);
    assert!(why.starts_with("NOERROR"), "{why}");

    // FILE: the drain file takes rs1 down and back; the weight file
    // changes rs3's weight (3 + 2 x value, at least 0)
    std::fs::write(dir.join("drain"), "1\n").unwrap();
    wait_state_at(lab, 1, 81, "down", 10);
    assert_eq!(listed_weight(lab, "-t", 81, 1), Some(0));
    std::fs::write(dir.join("drain"), "0\n").unwrap();
    wait_state_at(lab, 1, 81, "up", 10);
    std::fs::write(dir.join("boost"), "2\n").unwrap();
    lab.wait_for("rs3 weight 7", 10, || {
        listed_weight(lab, "-t", 81, 3) == Some(7)
    });
    std::fs::write(dir.join("boost"), "-5\n").unwrap();
    lab.wait_for("rs3 weight 0", 10, || {
        listed_weight(lab, "-t", 81, 3) == Some(0)
    });
    std::fs::write(dir.join("boost"), "0\n").unwrap();
    lab.wait_for("rs3 weight 3", 10, || {
        listed_weight(lab, "-t", 81, 3) == Some(3)
    });
    assert_eq!(server_at(lab, 3, 81)["state"], "up");
}

#[test]
fn lab_keepalived_conf_converted_loads_and_works() {
    if !common::privileged("lab keepalived conversion") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch("lab_keepalived_conf");
    let ka = dir.join("keepalived.conf");
    std::fs::write(&ka, keepalived_conf(&dir)).unwrap();
    for f in ["drain", "boost"] {
        std::fs::write(dir.join(f), "0\n").unwrap();
    }
    let o = Command::new(crate::common::DIRIGOCTL)
        .args(["keepalived-convert", &ka.display().to_string()])
        .output()
        .unwrap();
    let services = String::from_utf8_lossy(&o.stdout).into_owned();
    let warnings = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{warnings}");
    assert!(
        warnings.contains("keepalived.conf:2: warning"),
        "global_defs is warned about: {warnings}"
    );
    eprintln!("converted:\n{services}");
    let spec = LabSpec {
        name: "lab_keepalived",
        prefix: "dgk",
        mode: "all",
        method: "dr",
        cores: &["-l", "0-1"],
        nrs: 3,
        env: &[],
    };
    let rsd: Vec<(String, &str)> = (1..=3).map(|n| (rip(n), "dr")).collect();
    let rsd: Vec<(&str, &str)> = rsd.iter().map(|(a, m)| (a.as_str(), *m)).collect();
    let lab = Lab::start_with_config(&spec, 65536, |c| {
        // the lab's own services out, the converted ones in
        c.edit(
            &common::service_toml("tcp", &format!("{VIP}:80"), "rr", &rsd),
            "",
        )
        .edit(
            &common::service_toml("udp", &format!("{VIP}:5353"), "rr", &rsd),
            "",
        )
        .port_keys("wan", "kernel_interface = \"dgk-kwan\"")
        .port_keys("lan", "kernel_interface = \"dgk-klan\"")
        .raw("[exception]\nbackend = \"tap\"\nnetns = \"dgk-dir\"\n")
        .raw(&services)
    });
    let l = lab.adm(&["-L", "-n"]);
    assert!(
        l.contains(&format!("TCP  {VIP}:80 rr")) && l.contains(&format!("TCP  {VIP}:8080 wrr")),
        "{l}"
    );
    assert_eq!(l.matches("Route").count(), 6, "{l}");
    assert_eq!(l.matches("Masq").count(), 2, "{l}");
    // both services answer, DR and NAT
    for port in ["80", "8080"] {
        let url = format!("http://{VIP}:{port}/");
        let out = lab.client(&["curl", "-sS", "-m", "5", &url]);
        assert!(out.starts_with("rs"), "{url}: {out}");
    }
    let h = health(&lab);
    let servers = h["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 8, "{h}");
    other_checkers(&lab, &dir);
    lab.wait_for("a check of each", 10, || {
        health(&lab)["servers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["checks"].as_u64().unwrap_or(0) >= 1 && s["state"] == "up")
    });
    // rs3 dies: the NAT service (no inhibit_on_failure) removes it
    lab.lab_ok(&["http-stop", "3"]);
    lab.wait_for("rs3 removed", 15, || {
        !lab.adm(&["-L", "-n", "-t", &format!("{VIP}:8080")])
            .contains(&rip(3))
    });
    for _ in 0..4 {
        let out = lab.client(&["curl", "-sS", "-m", "5", &format!("http://{VIP}:8080/")]);
        assert_eq!(out.trim(), "rs1");
    }
    lab.finish();
}
