//! SNAT in the NAT lab (issue 51): the real servers' default gateway is
//! dirigo, so their own connections to the outside go through it. Two
//! rules: rs1's network leaves from 10.99.0.50 (on the client's network:
//! dirigo answers ARP for it) and a port of 40000-49999, rs2's and rs3's from 10.95.0.11-12 (routed
//! to dirigo by the client) with at most 100 connections. The client's
//! namespace plays the outside (a web server and a UDP echo). rs1's `curl` works, byte-exact, the outside server sees the
//! pool address; UDP too; then a flood of 400 UDP flows from rs3 stays
//! within its rule's bound with the refusals counted, and rs1 still gets
//! out.

use super::{Lab, CLIENT};
use crate::common::{support, text};

/// The `[[snat]]` rules of the NAT lab.
pub const SNAT_RULES: &str = r#"
[[snat]]
source = "10.98.0.8/30"
pool = ["10.99.0.50"]
ports = "40000-49999"

[[snat]]
source = "10.98.0.12/30"
pool = "10.95.0.11-10.95.0.12"
max_conns = 100
"#;

/// rs1's HTTP GET of `path` from the outside server; the body.
fn get(lab: &Lab, path: &str) -> String {
    let url = format!("http://{CLIENT}:8088{path}");
    let o = lab.exec("rs1", &["curl", "-sS", "-m", "5", &url]);
    assert!(o.status.success(), "rs1 curl {url}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn snat_checks(lab: &Lab) {
    let t0 = std::time::Instant::now();
    let o = lab.exec(
        "client",
        &["ip", "route", "add", "10.95.0.0/24", "via", "10.99.0.1"],
    );
    assert!(o.status.success(), "route to the pool: {}", text(&o));
    lab.spawn_support(
        "client",
        "snat_web",
        "rs_server.py",
        &["--name", "outside", "--port", "8088"],
    );
    lab.spawn_support(
        "client",
        "snat_udp",
        "udp_echo.py",
        &["--name", "outside", "--port", "5454"],
    );
    // the outside server sees the pool address as its peer
    let who = get(lab, "/whoami");
    eprintln!("SNAT: the outside server answered rs1: {}", who.trim());
    assert!(
        who.starts_with("outside ") && who.contains("peer=10.99.0.50:"),
        "{who}"
    );
    let port: u16 = who
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no peer port in {who}"));
    assert!((40000..=49999).contains(&port), "the rule's ports: {who}");
    // 1 MiB down, byte-exact (the server's sha256 in X-Sha256)
    let dir = lab.dir.display().to_string();
    let script = format!(
        "curl -sS -m 10 -D {dir}/snat.h -o {dir}/snat.b \
         http://{CLIENT}:8088/blob?size=1048576 && sha256sum {dir}/snat.b && wc -c <{dir}/snat.b"
    );
    let o = lab.exec("rs1", &["sh", "-c", &script]);
    assert!(o.status.success(), "rs1 blob: {}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let headers = std::fs::read_to_string(lab.dir.join("snat.h")).unwrap_or_default();
    let want = headers
        .lines()
        .find_map(|l| l.strip_prefix("X-Sha256: "))
        .unwrap_or_else(|| panic!("no X-Sha256 in {headers}"))
        .trim()
        .to_string();
    assert!(out.starts_with(&want), "sha256 {out} vs {want}");
    assert!(out.trim_end().ends_with("1048576"), "{out}");
    // UDP out and back (from rs2: the second rule's first address)
    let o = lab.exec(
        "rs2",
        &[
            "python3",
            &support("udp_flow.py"),
            CLIENT,
            "5454",
            "--sport",
            "41000",
            "--payload",
            "snat",
        ],
    );
    assert!(o.status.success(), "rs2 UDP out: {}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "outside:snat");
    // a flood of new UDP flows from rs3: its rule keeps at most 100
    let flood = format!(
        "import socket\nk=[]\nfor i in range(400):\n    s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n    s.sendto(b'x',('{CLIENT}',5454))\n    k.append(s)\n"
    );
    let o = lab.exec("rs3", &["python3", "-c", &flood]);
    assert!(o.status.success(), "flood: {}", text(&o));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let s = lab.ctl_json(&["snat", "list"]);
    eprintln!("SNAT: after the flood: {s}");
    let rules = s["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), 2, "{s}");
    let live2 = rules[1]["live"].as_u64().unwrap();
    assert_eq!(live2, 100, "the second rule at its bound: {s}");
    assert!(rules[0]["conns"].as_u64().unwrap() >= 2, "{s}");
    assert!(s["live"].as_u64().unwrap() <= s["bound"].as_u64().unwrap());
    let d = lab.ctl_json(&["drops"]);
    let limit = d
        .as_array()
        .expect("drops")
        .iter()
        .find(|d| d["reason"] == "lb_snat_limit")
        .unwrap_or_else(|| panic!("no lb_snat_limit in {d}"))["count"]
        .as_u64()
        .unwrap();
    eprintln!("SNAT: refused at the bound: {limit}");
    assert!(
        limit >= 250,
        "the flood's flows past the bound are counted: {limit}"
    );
    // every count of the connections agrees, SNAT's included
    let c = lab.ctl_json(&["census"]);
    for w in c.as_array().expect("census") {
        assert_eq!(w["consistent"], true, "{c}");
    }
    // rs1's rule is not the flooded one: it still gets out
    assert!(get(lab, "/whoami").contains("peer=10.99.0.50:"));
    eprintln!("SNAT: checks took {:.1} s", t0.elapsed().as_secs_f64());
}
