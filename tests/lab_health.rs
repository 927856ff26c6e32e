//! Health checks in the netns lab (issue 16): dirigo checks its real
//! servers from its exception namespace, through its own ports, with
//! keepalived's semantics. One DR lab (rs1..rs3 in the service, rs4 the
//! sorry server), an HTTP check on /health every 0.5 s (rise 2, fall 3):
//!
//! * a server answering 503, or 200 with the wrong body, goes down (weight
//!   0 in `dirigoadm -L -n`) and new connections avoid it; 200 "ok" brings
//!   its configured weight back;
//! * a killed server goes down within fall x interval + timeout, and comes
//!   back after rise x interval once restarted;
//! * `via_vip`: a server whose VIP is removed from `lo` fails a check sent
//!   through the VIP (dirigo's own DR rewrite) while a plain RIP check of
//!   another server in the same state passes; the same for an IPv6 DR
//!   service (TCP checks from dirigo's lan IPv6 address, the kernel's
//!   solicitation for the IPv6 VIP answered by the exception thread);
//! * a service group (keepalived's `virtual_server_group`): the checked
//!   service is also reached at a range of two more VIPs; traffic to
//!   every member reaches the group's servers, and a failed check takes
//!   the server out of every member at once (one `dirigoadm -L -n`);
//! * quorum: all servers down — dirigo stops answering ping (and ARP) for
//!   the VIP and the sorry server takes new connections; one back — the
//!   VIP answers again;
//! * a flapping server is held by rise/fall (no transition), a reload
//!   keeps the state of unchanged checks, `on_failure = "remove"` takes a
//!   server out of the listing, `dirigoctl health disable` takes one out
//!   for maintenance, and a bad config is refused by reload with nothing
//!   changed.
//!
//! Needs root and hugepages (skips outside CI, fails in CI).

mod common;
mod lab_common;

use lab_common::{rip, Lab, LabSpec, SERIAL, VIP};
use std::process::Command;
use std::time::{Duration, Instant};

const P: &str = "dgh";
/// fall x interval + timeout, and slack for a loaded machine.
const DOWN_WITHIN: u64 = 8;

fn health_config(extra_rs1: &str) -> impl FnOnce(common::DaemonConfig) -> common::DaemonConfig {
    let extra = extra_rs1.to_string();
    move |c| {
        c.port_keys("wan", &format!("kernel_interface = \"{P}-kwan\""))
            .port_keys("lan", &format!("kernel_interface = \"{P}-klan\""))
            .raw(&format!(
                "[exception]\nbackend = \"tap\"\nnetns = \"{P}-dir\"\n"
            ))
            .edit(
                &format!("address = \"{VIP}:80\"\nscheduler = \"rr\"\n"),
                &format!(
                    "address = \"{VIP}:80\"\nscheduler = \"rr\"\nmembers = [\"{}-{}:80\"]\n\
                     quorum = 1\nsorry_server = \"{}:80\"\n\
                     [service.check]\ntype = \"http\"\npath = \"/health\"\nexpect = \"ok\"\n\
                     interval = 0.5\ntimeout = 0.45\nrise = 2\nfall = 3\n",
                    MEMBERS[0],
                    MEMBERS[1].rsplit('.').next().unwrap(),
                    rip(4)
                ),
            )
            .edit(
                &format!("address = \"{}\"\nmethod = \"dr\"\n", rip(1)),
                &format!("address = \"{}\"\nmethod = \"dr\"\n{extra}\n", rip(1)),
            )
    }
}

/// The other keys of the checked service's group: a range of two VIPs.
const MEMBERS: [&str; 2] = ["10.99.0.101", "10.99.0.102"];

/// The real servers that answer `n` new connections to `vip`:80.
fn served_via(lab: &Lab, vip: &str, n: usize) -> Vec<String> {
    let support = common::support("lab_client.py");
    let out = lab.client(&["python3", &support, "conns", vip, "80", &n.to_string()]);
    let names: Vec<String> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["ok"], true, "{vip}: {l}");
            v["name"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(names.len(), n, "{vip}: {out}");
    names
}

/// Every key of the checked group in one `dirigoadm -L -n`: the service
/// line's address, and its real servers' weights (rsN -> weight).
fn group_weights(lab: &Lab) -> Vec<(String, Vec<(usize, u32)>)> {
    let l = lab.adm(&["-L", "-n"]);
    let mut out: Vec<(String, Vec<(usize, u32)>)> = Vec::new();
    for line in l.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.first() {
            Some(&"TCP") if f[1].starts_with("10.99.0.") && f[1].ends_with(":80") => {
                out.push((f[1].to_string(), Vec::new()))
            }
            Some(&"TCP") | Some(&"UDP") | Some(&"FWM") => out.push((String::new(), Vec::new())),
            Some(&"->") if f.len() >= 4 => {
                let Some(n) = (1..=4).find(|&n| f[1] == format!("{}:80", rip(n))) else {
                    continue;
                };
                if let Some(last) = out.last_mut() {
                    last.1.push((n, f[3].parse().unwrap()));
                }
            }
            _ => {}
        }
    }
    out.retain(|(k, _)| !k.is_empty());
    out
}

/// The group: each member a service line with the group's servers, and
/// traffic to each member reaching them (round robin: all three).
fn group_serves(lab: &Lab) {
    for m in MEMBERS {
        for n in 1..=4 {
            ok(lab.exec(
                &format!("rs{n}"),
                &["ip", "addr", "add", &format!("{m}/32"), "dev", "lo"],
            ));
        }
    }
    let g = group_weights(lab);
    let keys: Vec<&str> = g.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        ["10.99.0.100:80", "10.99.0.101:80", "10.99.0.102:80"],
        "{g:?}"
    );
    for (k, w) in &g {
        assert_eq!(w, &vec![(1, 1), (2, 1), (3, 1)], "{k}");
    }
    for m in MEMBERS {
        let names = served_via(lab, m, 6);
        let seen = lab_common::checks::count(names.clone());
        assert_eq!(seen.len(), 3, "{m}: {names:?}");
    }
}

/// rs3 down: out of every member at once (one listing), and no member's
/// traffic reaches it.
fn group_lost_rs3(lab: &Lab) {
    let g = group_weights(lab);
    assert_eq!(g.len(), 3, "{g:?}");
    for (k, w) in &g {
        assert_eq!(w, &vec![(1, 1), (2, 1), (3, 0)], "{k}");
    }
    for m in MEMBERS {
        let names = served_via(lab, m, 6);
        assert!(!names.iter().any(|n| n == "rs3"), "{m}: {names:?}");
    }
}

/// `dirigoctl --json health`'s data.
fn health(lab: &Lab) -> serde_json::Value {
    lab.ctl_json(&["health"])
}

/// Real server `n`'s entry for the TCP service.
fn server(lab: &Lab, n: usize) -> serde_json::Value {
    let h = health(lab);
    h["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["dest"]["addr"] == rip(n) && s["service"]["port"] == 80)
        .cloned()
        .unwrap_or_else(|| panic!("rs{n} not checked: {h}"))
}

fn wait_state(lab: &Lab, n: usize, want: &str, secs: u64) {
    let t = Instant::now();
    lab.wait_for(&format!("rs{n} {want}"), secs, || {
        server(lab, n)["state"] == want
    });
    eprintln!("rs{n} {want} after {:.1} s", t.elapsed().as_secs_f64());
}

/// Weights of the TCP service's real servers in `dirigoadm -L -n`
/// (rsN -> weight; absent when not listed).
fn weights(lab: &Lab) -> Vec<(usize, u32)> {
    let l = lab.adm(&["-L", "-n", "-t", &format!("{VIP}:80")]);
    let mut v = Vec::new();
    for line in l.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.first() != Some(&"->") || f.len() < 4 {
            continue;
        }
        let Some(n) = (1..=4).find(|&n| f[1] == format!("{}:80", rip(n))) else {
            continue;
        };
        v.push((n, f[3].parse().unwrap()));
    }
    v
}

fn set_health_file(n: usize, text: Option<&str>) {
    let f = format!("/run/dirigo-lab/{P}/rs{n}.health");
    match text {
        Some(t) => std::fs::write(&f, t).unwrap(),
        None => {
            let _ = std::fs::remove_file(&f);
        }
    }
}

/// The real servers that answer `n` new connections to the VIP.
fn served_by(lab: &Lab, n: usize) -> Vec<String> {
    lab_common::checks::conns(lab, n, None)
        .into_iter()
        .map(|c| c.name)
        .collect()
}

fn ctl(lab: &Lab, args: &[&str]) -> (bool, String) {
    let o = Command::new(crate::common::DIRIGOCTL)
        .arg("--socket")
        .arg(&lab.sock)
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

fn ping_vip(lab: &Lab) -> bool {
    lab.exec("client", &["ping", "-c", "2", "-i", "0.3", "-W", "1", VIP])
        .status
        .success()
}

/// The IPv6 via-VIP case: an IPv6 VIP on the client's side of dirigo,
/// dirigo's lan address, the real servers' IPv6 addresses.
const VIP6: &str = "2001:db8:99::100";
const DIRIGO_LAN6: &str = "2001:db8:98::1";

fn rip6(n: usize) -> String {
    format!("2001:db8:98::{}", 10 + n)
}

/// An IPv6 DR service with a TCP check: rs1 probed through the VIP, rs2
/// at its own address.
fn service6_toml() -> String {
    format!(
        "[[service]]\nprotocol = \"tcp\"\naddress = \"[{VIP6}]:80\"\nscheduler = \"rr\"\n\
         [service.check]\ntype = \"tcp\"\ninterval = 0.5\ntimeout = 0.45\nrise = 2\nfall = 3\n\
         [[service.real_server]]\naddress = \"[{}]:80\"\nmethod = \"dr\"\ncheck = {{ via_vip = true }}\n\
         [[service.real_server]]\naddress = \"[{}]:80\"\nmethod = \"dr\"\n",
        rip6(1),
        rip6(2)
    )
}

/// Real server `n`'s entry for the IPv6 service.
fn server6(lab: &Lab, n: usize) -> serde_json::Value {
    let h = health(lab);
    h["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["dest"]["addr"] == rip6(n))
        .cloned()
        .unwrap_or_else(|| panic!("[{}] not checked: {h}", rip6(n)))
}

fn wait_state6(lab: &Lab, n: usize, want: &str, secs: u64) {
    lab.wait_for(&format!("[{}] {want}", rip6(n)), secs, || {
        server6(lab, n)["state"] == want
    });
}

fn ok(o: std::process::Output) {
    assert!(o.status.success(), "{}", common::text(&o));
}

/// via_vip over IPv6: the probe leaves the exception namespace from
/// dirigo's lan IPv6 address toward the VIP (the exception thread answers
/// the kernel's solicitation for the VIP and hands the SYN to the
/// pipeline, which sends it to the pinned server by DR); the server's
/// answer comes back to dirigo's own address and reaches the kernel. A
/// server whose VIP is gone from lo fails it; a server checked at its own
/// address does not notice.
fn via_vip6(lab: &Lab) {
    lab.enable_ipv6("srv", "br0", "2001:db8:98::fe/64");
    for n in [1, 2] {
        let rs = format!("rs{n}");
        lab.enable_ipv6(&rs, "eth0", &format!("{}/64", rip6(n)));
        lab.exec(&rs, &["sysctl", "-qw", "net.ipv6.conf.lo.disable_ipv6=0"]);
        ok(lab.exec(
            &rs,
            &[
                "ip",
                "-6",
                "addr",
                "add",
                &format!("{VIP6}/128"),
                "dev",
                "lo",
            ],
        ));
        lab.spawn_support(
            &rs,
            &format!("{rs}-http6"),
            "rs_server.py",
            &["--name", &rs, "--bind", "::", "--port", "80"],
        );
    }
    for n in [1, 2] {
        wait_state6(lab, n, "up", 15);
    }
    let s1 = server6(lab, 1);
    assert!(
        s1["check"].as_str().unwrap_or("").contains("via VIP"),
        "{s1}"
    );
    for n in [1, 2] {
        ok(lab.exec(
            &format!("rs{n}"),
            &[
                "ip",
                "-6",
                "addr",
                "del",
                &format!("{VIP6}/128"),
                "dev",
                "lo",
            ],
        ));
    }
    wait_state6(lab, 1, "down", DOWN_WITHIN);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(server6(lab, 2)["state"], "up", "a RIP check cannot see it");
    for n in [1, 2] {
        ok(lab.exec(
            &format!("rs{n}"),
            &[
                "ip",
                "-6",
                "addr",
                "add",
                &format!("{VIP6}/128"),
                "dev",
                "lo",
            ],
        ));
    }
    wait_state6(lab, 1, "up", DOWN_WITHIN);
}

#[test]
fn lab_health_checks() {
    if !common::privileged("lab health checks") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let spec = LabSpec {
        name: "lab_health",
        prefix: P,
        mode: "dr",
        method: "dr",
        cores: &["-l", "0-1"],
        nrs: 4,
        env: &[],
    };
    // rs1 is probed through the VIP, the others at their own address
    let lab = Lab::start_with_config(&spec, 65536, |c| {
        health_config("check = { via_vip = true }")(c)
            .edit(
                "addresses = [\"10.99.0.1/24\"]",
                "addresses = [\"10.99.0.1/24\", \"2001:db8:99::1/64\"]",
            )
            .edit(
                "addresses = [\"10.98.0.1/24\"]",
                &format!("addresses = [\"10.98.0.1/24\", \"{DIRIGO_LAN6}/64\"]"),
            )
            .raw(&service6_toml())
    });
    // the VIP's only service is the checked one (an unchecked service on
    // a VIP keeps it announced when the checked one loses its quorum)
    lab.adm(&["-D", "-u", &format!("{VIP}:5353")]);
    for n in 1..=3 {
        wait_state(&lab, n, "up", 10);
    }
    lab.wait_for("a few checks", 10, || {
        server(&lab, 2)["checks"].as_u64().unwrap_or(0) >= 3
    });
    assert_eq!(server(&lab, 1)["check"], "http via VIP");
    assert_eq!(weights(&lab), vec![(1, 1), (2, 1), (3, 1)]);
    group_serves(&lab);

    // HTTP: 503, then 200 with the wrong body: down; 200 "ok": up
    set_health_file(3, Some("503 down"));
    wait_state(&lab, 3, "down", DOWN_WITHIN);
    assert_eq!(weights(&lab), vec![(1, 1), (2, 1), (3, 0)]);
    group_lost_rs3(&lab);
    let names = served_by(&lab, 20);
    assert!(!names.iter().any(|n| n == "rs3"), "{names:?}");
    assert_eq!(server(&lab, 3)["last"], "status 503");
    set_health_file(3, Some("200 bad"));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(server(&lab, 3)["state"], "down", "200 with the wrong body");
    set_health_file(3, None);
    wait_state(&lab, 3, "up", DOWN_WITHIN);
    assert_eq!(weights(&lab), vec![(1, 1), (2, 1), (3, 1)]);

    // a dead server: inhibited within fall x interval + timeout
    let t = Instant::now();
    lab.lab_ok(&["http-stop", "2"]);
    wait_state(&lab, 2, "down", DOWN_WITHIN);
    let took = t.elapsed().as_secs_f64();
    eprintln!("rs2 inhibited {took:.1} s after its process died");
    // a dead server refuses at once: fall x interval = 1.5 s (at most
    // fall x interval + timeout = 1.95 s), and this test's polling
    assert!(took < 3.5, "inhibited {took:.1} s after it died");
    assert_eq!(weights(&lab), vec![(1, 1), (2, 0), (3, 1)]);
    let names = served_by(&lab, 20);
    assert_eq!(names.len(), 20);
    assert!(!names.iter().any(|n| n == "rs2"), "{names:?}");
    lab.lab_ok(&["http-start", "2"]);
    wait_state(&lab, 2, "up", DOWN_WITHIN);
    assert_eq!(weights(&lab), vec![(1, 1), (2, 1), (3, 1)]);

    // via_vip: the VIP gone from rs1's and rs2's lo; rs1's check through
    // the VIP fails, rs2's at its address passes
    for n in [1, 2] {
        lab.exec(
            &format!("rs{n}"),
            &["ip", "addr", "del", &format!("{VIP}/32"), "dev", "lo"],
        );
    }
    wait_state(&lab, 1, "down", DOWN_WITHIN);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(server(&lab, 2)["state"], "up", "a RIP check cannot see it");
    for n in [1, 2] {
        lab.exec(
            &format!("rs{n}"),
            &["ip", "addr", "add", &format!("{VIP}/32"), "dev", "lo"],
        );
    }
    wait_state(&lab, 1, "up", DOWN_WITHIN);
    via_vip6(&lab);

    // quorum: all down -> the VIP withdrawn, the sorry server serves
    assert!(ping_vip(&lab), "the VIP answers ping");
    for n in 1..=3 {
        lab.lab_ok(&["http-stop", &n.to_string()]);
    }
    for n in 1..=3 {
        wait_state(&lab, n, "down", DOWN_WITHIN);
    }
    lab.wait_for("VIP withdrawn", 5, || {
        health(&lab)["withdrawn"]
            .as_array()
            .is_some_and(|w| !w.is_empty())
    });
    assert!(!ping_vip(&lab), "a withdrawn VIP answers no ping");
    let names = served_by(&lab, 4);
    assert_eq!(
        names,
        vec!["rs4"; 4],
        "the sorry server takes new connections"
    );
    lab.lab_ok(&["http-start", "1"]);
    wait_state(&lab, 1, "up", DOWN_WITHIN);
    lab.wait_for("VIP back", 5, || {
        health(&lab)["withdrawn"]
            .as_array()
            .is_some_and(|w| w.is_empty())
    });
    assert!(ping_vip(&lab), "the VIP answers again");
    let h = health(&lab);
    assert!(
        h["counts"][2].as_u64() >= Some(1) && h["counts"][3].as_u64() >= Some(1),
        "{h}"
    );
    for n in 2..=3 {
        lab.lab_ok(&["http-start", &n.to_string()]);
        wait_state(&lab, n, "up", DOWN_WITHIN);
    }

    // maintenance
    let svc = format!("{VIP}:80");
    let (ok, out) = ctl(&lab, &["health", "disable", &svc, &rip(3)]);
    assert!(ok, "{out}");
    assert_eq!(server(&lab, 3)["state"], "disabled");
    assert_eq!(weights(&lab), vec![(1, 1), (2, 1), (3, 0)]);
    let (ok, out) = ctl(&lab, &["health", "enable", &svc, &rip(3)]);
    assert!(ok, "{out}");
    assert_eq!(weights(&lab), vec![(1, 1), (2, 1), (3, 1)]);
    let (ok, out) = ctl(&lab, &["health", "disable", &svc, "10.98.0.99"]);
    assert!(!ok && out.contains("has no health check"), "{out}");

    // reload: rs3 flaps at every check (an exec check that alternates),
    // rs2 is removed on failure; rs1's check is unchanged and keeps its
    // state and counts
    let flap = lab.dir.join("flap");
    let script = format!(
        "if [ -e {f} ]; then rm {f}; exit 1; fi; touch {f}",
        f = flap.display()
    );
    let before = server(&lab, 1)["checks"].as_u64().unwrap();
    let cfg_path = lab.dir.join("dirigo.toml");
    let cfg = std::fs::read_to_string(&cfg_path).unwrap();
    let edited = cfg
        .replacen(
            &format!("address = \"{}\"\nmethod = \"dr\"\n", rip(2)),
            &format!(
                "address = \"{}\"\nmethod = \"dr\"\ncheck = {{ on_failure = \"remove\" }}\n",
                rip(2)
            ),
            1,
        )
        .replacen(
            &format!("address = \"{}\"\nmethod = \"dr\"\n", rip(3)),
            &format!(
                "address = \"{}\"\nmethod = \"dr\"\ncheck = {{ type = \"exec\", command = [\"/bin/sh\", \"-c\", {script:?}] }}\n",
                rip(3)
            ),
            1,
        );
    assert_ne!(edited, cfg);
    std::fs::write(&cfg_path, &edited).unwrap();
    let (ok, out) = ctl(&lab, &["reload"]);
    assert!(ok, "{out}");
    assert!(
        server(&lab, 1)["checks"].as_u64().unwrap() >= before,
        "an unchanged check keeps its state"
    );
    assert_eq!(server(&lab, 3)["check"], "exec");
    lab.wait_for("rs3 flapping a while", 15, || {
        server(&lab, 3)["checks"].as_u64().unwrap_or(0) >= 10
    });
    let s3 = server(&lab, 3);
    assert_eq!(s3["state"], "up", "{s3}");
    assert_eq!(s3["transitions"], 0, "held by rise/fall: {s3}");
    assert!(s3["failures"].as_u64().unwrap() >= 4, "{s3}");
    lab.lab_ok(&["http-stop", "2"]);
    wait_state(&lab, 2, "down", DOWN_WITHIN);
    assert_eq!(
        weights(&lab),
        vec![(1, 1), (3, 1)],
        "removed, not inhibited"
    );
    lab.lab_ok(&["http-start", "2"]);
    wait_state(&lab, 2, "up", DOWN_WITHIN);
    assert_eq!(weights(&lab), vec![(1, 1), (2, 1), (3, 1)]);

    // a bad config changes nothing
    std::fs::write(
        &cfg_path,
        edited.replacen("type = \"http\"", "type = \"bfd\"", 1),
    )
    .unwrap();
    let (ok, out) = ctl(&lab, &["reload"]);
    assert!(!ok && out.contains("unknown check type 'bfd'"), "{out}");
    assert_eq!(weights(&lab), vec![(1, 1), (2, 1), (3, 1)]);
    assert_eq!(server(&lab, 1)["check"], "http via VIP");

    let (_, table) = ctl(&lab, &["health"]);
    eprintln!("{table}");
    assert!(table.contains("transitions:"), "{table}");
    let log = lab.daemon_log();
    assert!(
        log.contains("dirigo: health: TCP 10.99.0.100:80 real server 10.98.0.12:80 down"),
        "{log}"
    );
    lab.finish();
}
