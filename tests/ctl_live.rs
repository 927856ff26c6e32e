//! The control plane against a running dirigo: every dirigoadm and
//! dirigoctl command on the real daemon, errors that change nothing, a
//! save -> clear -> restore round trip, and abuse of the socket.

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::Duration;

struct Live {
    d: Option<common::Daemon>,
    sock: String,
}

impl Live {
    fn start(name: &str) -> Live {
        let dir = common::scratch(name);
        let sock = dir.join("ctl.sock").display().to_string();
        let cfg = common::DaemonConfig::new(&format!("dg-{name}"), &sock)
            .vdev("net_null0,no-rx=1")
            .vdev("net_null1,no-rx=1")
            .tables(65536, 4095)
            .wan_lan("net_null0", "net_null1");
        let d = common::Daemon::start(&dir, &cfg.toml());
        Live { d: Some(d), sock }
    }

    /// `dirigoadm ARGS` (whitespace-separated) with `input` on stdin.
    fn adm_input(&self, args: &str, input: &str) -> common::Out {
        let mut c = Command::new(crate::common::DIRIGOADM);
        c.arg("--socket")
            .arg(&self.sock)
            .args(args.split_whitespace());
        common::run_with_input(&mut c, input)
    }

    fn adm(&self, args: &str) -> common::Out {
        self.adm_input(args, "")
    }

    fn adm_ok(&self, args: &str) -> String {
        let o = self.adm(args);
        assert_eq!(
            o.code, 0,
            "dirigoadm {args} failed: {}{}",
            o.stdout, o.stderr
        );
        o.stdout
    }

    fn adm_err(&self, args: &str, want: &str) {
        let before = self.adm_ok("-S -n");
        let o = self.adm(args);
        assert_ne!(o.code, 0, "dirigoadm {args} should fail");
        assert!(
            o.stderr.contains(want),
            "dirigoadm {args}: want '{want}' in '{}'",
            o.stderr
        );
        assert_eq!(self.adm_ok("-S -n"), before, "{args} changed the table");
    }

    fn ctl(&self, args: &str) -> String {
        let mut c = Command::new(crate::common::DIRIGOCTL);
        c.arg("--socket")
            .arg(&self.sock)
            .args(args.split_whitespace());
        let o = common::run_with_input(&mut c, "");
        assert_eq!(o.code, 0, "dirigoctl {args}: {}", o.stderr);
        o.stdout
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(d) = self.d.take() {
            if !std::thread::panicking() {
                d.stop();
            }
        }
    }
}

#[test]
fn dirigoadm_drives_the_real_daemon() {
    if !common::privileged("ctl_live") {
        return;
    }
    let l = Live::start("ctl-live");
    l.adm_ok("-A -t 10.0.0.100:80 -s wrr");
    l.adm_ok("-a -t 10.0.0.100:80 -r 172.16.0.11 -g -w 1");
    l.adm_ok("-a -t 10.0.0.100:80 -r 172.16.0.12 -g -w 2");
    l.adm_ok("-a -t 10.0.0.100:80 -r 172.16.0.13:8080 -m -w 3");
    l.adm_ok("-A -u 10.0.0.100:53 -s sh -b sh-port");
    l.adm_ok("-a -u 10.0.0.100:53 -r 192.0.2.7 -i");
    l.adm_ok("-A -t 10.0.0.101:443 -p 600 -M 255.255.255.0");
    let list = l.adm_ok("-L -n");
    let want = "\
IP Virtual Server version 1.2.1 (size=65536)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.0.0.100:80 wrr
  -> 172.16.0.11:80               Route   1      0          0         
  -> 172.16.0.12:80               Route   2      0          0         
  -> 172.16.0.13:8080             Masq    3      0          0         
TCP  10.0.0.101:443 wlc persistent 600 mask 255.255.255.0
UDP  10.0.0.100:53 sh (sh-port)
  -> 192.0.2.7:53                 Tunnel  1      0          0         
";
    assert_eq!(list, want);

    // Errors, each changing nothing.
    for (args, want) in [
        ("-A -t 10.0.0.100:80", "exists"),
        ("-a -t 10.0.0.199:80 -r 172.16.0.11", "Service not defined"),
        (
            "-a -t 10.0.0.100:80 -r 172.16.0.11",
            "Destination already exists",
        ),
        ("-a -t 10.0.0.100:80 -r 172.16.0.14 -w 70000", "weight"),
        ("-a -t 10.0.0.100:80 -r 172.16.0.300", ""),
        ("-A -t 10.0.0.102:80 -s bogus", "Scheduler not found"),
        (
            "-a -t 10.0.0.100:80 -r 198.51.100.5 -g",
            "connected network",
        ),
        ("-d -t 10.0.0.100:80 -r 172.16.0.99", "No such destination"),
        ("-D -t 10.0.0.199:80", "No such service"),
    ] {
        l.adm_err(args, want);
    }

    // Edit, quiesce, delete.
    l.adm_ok("-e -t 10.0.0.100:80 -r 172.16.0.11 -g -w 0");
    l.adm_ok("-E -t 10.0.0.100:80 -s rr");
    l.adm_ok("-d -t 10.0.0.100:80 -r 172.16.0.12");
    let list = l.adm_ok("-L -n -t 10.0.0.100:80");
    assert!(list.contains("TCP  10.0.0.100:80 rr"), "{list}");
    assert!(
        list.contains("172.16.0.11:80               Route   0"),
        "{list}"
    );
    assert!(!list.contains("172.16.0.12"), "{list}");

    // Timeouts.
    l.adm_ok("--set 1000 100 200");
    assert_eq!(
        l.adm_ok("-L --timeout").trim(),
        "Timeout (tcp tcpfin udp): 1000 100 200"
    );
    l.adm_ok("--set 0 0 250");
    assert_eq!(
        l.adm_ok("-L --timeout").trim(),
        "Timeout (tcp tcpfin udp): 1000 100 250"
    );

    // Listings with stats and rates, connections, zero.
    let st = l.adm_ok("-L -n --stats");
    assert!(
        st.contains("Conns   InPkts  OutPkts  InBytes OutBytes"),
        "{st}"
    );
    let rt = l.adm_ok("-L -n --rate");
    assert!(
        rt.contains("CPS    InPPS   OutPPS    InBPS   OutBPS"),
        "{rt}"
    );
    let c = l.adm_ok("-L -n -c");
    assert!(c.starts_with("IPVS connection entries"), "{c}");
    l.adm_ok("-Z");
    l.adm_ok("-Z -t 10.0.0.100:80");

    // Save -> clear -> restore reproduces the same table.
    let saved = l.adm_ok("-S -n");
    assert!(saved.contains("-A -t 10.0.0.100:80 -s rr"), "{saved}");
    l.adm_ok("-C");
    assert_eq!(l.adm_ok("-S -n"), "");
    assert_eq!(l.adm_input("-R", &saved).code, 0);
    assert_eq!(l.adm_ok("-S -n"), saved);
    // A restore with one bad line applies nothing.
    let bad = "-A -t 10.0.0.150:80 -s rr\n-a -t 10.0.0.151:80 -r 172.16.0.5 -g\n";
    assert_ne!(l.adm_input("-R", bad).code, 0);
    assert_eq!(l.adm_ok("-S -n"), saved);
}

#[test]
fn dirigoctl_drives_the_real_daemon() {
    if !common::privileged("ctl_live dirigoctl") {
        return;
    }
    let l = Live::start("ctl-live2");
    let ports = l.ctl("ports");
    assert!(ports.contains("wan") && ports.contains("lan"), "{ports}");
    let pj: serde_json::Value = serde_json::from_str(&l.ctl("ports --json")).unwrap();
    assert!(pj.to_string().contains("\"name\":\"lan\""), "{pj}");
    let routes = l.ctl("route list");
    assert!(
        routes.contains("0.0.0.0") && routes.contains("10.0.0.254"),
        "{routes}"
    );
    assert!(routes.contains("172.16.0.0"), "{routes}");
    l.ctl("addr add --port 1 172.16.1.1/24");
    let a = l.ctl("addr list");
    assert!(a.contains("172.16.1.1"), "{a}");
    assert!(l.ctl("route list").contains("172.16.1.0"));
    l.ctl("addr del --port 1 172.16.1.1");
    assert!(!l.ctl("addr list").contains("172.16.1.1"));
    // IPv6: every port lists its link-local address; a global one comes
    // and goes with its connected route
    l.ctl("addr add --port 1 2001:db8:1::1/64");
    let a = l.ctl("addr list");
    assert!(
        a.contains("1    2001:db8:1::1/64") && a.contains("fe80::"),
        "{a}"
    );
    assert!(l.ctl("route list").contains("2001:db8:1::/64"));
    let refused = |args: &str, want: &str| {
        let mut c = Command::new(crate::common::DIRIGOCTL);
        c.arg("--socket").arg(&l.sock).args(args.split_whitespace());
        let o = common::run_with_input(&mut c, "");
        assert_eq!(o.code, 1, "dirigoctl {args}: {}", o.stdout);
        assert!(o.stderr.contains(want), "dirigoctl {args}: {}", o.stderr);
    };
    refused("addr add --port 0 2001:db8:1::1/64", "already configured");
    refused("addr add --port 0 fe80::1/64", "link-local");
    refused("addr add --port 0 ff02::1/64", "multicast");
    let ll = a
        .lines()
        .find_map(|r| {
            r.split_whitespace()
                .nth(1)
                .filter(|x| x.starts_with("fe80::"))
        })
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let port = a.lines().find(|r| r.contains(&ll)).unwrap()[..1].to_string();
    refused(
        &format!("addr del --port {port} {ll}"),
        "link-local address",
    );
    l.ctl("addr del --port 1 2001:db8:1::1");
    assert!(!l.ctl("addr list").contains("2001:db8:1::1"));
    refused("addr del --port 1 2001:db8:1::1", "not on port 1");
    l.ctl("neigh add --port 1 172.16.0.50 02:00:00:00:00:50");
    let n = l.ctl("neigh list");
    assert!(
        n.contains("172.16.0.50") && n.contains("02:00:00:00:00:50"),
        "{n}"
    );
    assert!(n.contains("static"), "{n}");
    l.ctl("neigh flush");
    assert!(
        l.ctl("neigh list").contains("172.16.0.50"),
        "static entries survive a flush"
    );
    let lc = l.ctl("lcores --json");
    assert!(lc.contains("\"role\":\"worker\""), "{lc}");
    let dr = l.ctl("drops --json");
    assert!(
        dr.contains("lb_not_a_service") || dr.contains("bad_ip_checksum"),
        "{dr}"
    );
    let v = l.ctl("version");
    assert!(v.contains(env!("CARGO_PKG_VERSION")), "{v}");
    fingerprints(&l);
    // Reload applies the config file's (empty) service list.
    l.adm_ok("-A -t 10.0.0.100:80");
    l.ctl("reload");
    assert_eq!(l.adm_ok("-S -n"), "");
}

/// `dirigoctl fingerprint`: the same servers added in another order give
/// the same fingerprint (what two directors compare), a new weight or a
/// new server another, for an IPv6 service (printed `[VIP]:PORT`) as for
/// an IPv4 one.
fn fingerprints(l: &Live) {
    let add = |order: &[(u8, u8)]| {
        l.adm_ok("-C");
        l.adm_ok("-A -t 10.0.0.100:80 -s mh");
        l.adm_ok("-A -u 10.0.0.100:53 -s sh -b sh-port");
        l.adm_ok("-A -t 10.0.0.100:81 -s rr");
        l.adm_ok("-A -t [2001:db8::10]:80 -s mh");
        for &(o, w) in order {
            l.adm_ok(&format!("-a -t 10.0.0.100:80 -r 172.16.0.{o} -g -w {w}"));
            l.adm_ok(&format!("-a -u 10.0.0.100:53 -r 172.16.0.{o} -m -w {w}"));
            l.adm_ok(&format!(
                "-a -t [2001:db8::10]:80 -r [2001:db8:2::{o}]:8080 -m -w {w}"
            ));
        }
        l.ctl("fingerprint")
    };
    let a = add(&[(11, 1), (12, 2), (13, 3)]);
    let lines: Vec<Vec<&str>> = a.lines().map(|x| x.split_whitespace().collect()).collect();
    assert_eq!(
        lines[0],
        ["SERVICE", "SCHED", "ENTRIES", "SERVERS", "FINGERPRINT"],
        "{a}"
    );
    // in key order: TCP :80, TCP :81, TCP [IPv6]:80, UDP :53
    assert_eq!(
        lines[1][..5],
        ["TCP", "10.0.0.100:80", "mh", "65537", "3"],
        "{a}"
    );
    assert!(
        lines[1][5].starts_with("0x") && lines[1][5].len() == 18,
        "{a}"
    );
    assert_eq!(lines[2][1..], ["10.0.0.100:81", "rr", "-", "-", "-"], "{a}");
    assert_eq!(
        lines[3][..5],
        ["TCP", "[2001:db8::10]:80", "mh", "65537", "3"],
        "{a}"
    );
    assert_eq!(
        lines[4][..5],
        ["UDP", "10.0.0.100:53", "sh", "256", "3"],
        "{a}"
    );
    let b = add(&[(13, 3), (11, 1), (12, 2)]);
    assert_eq!(a, b, "the order servers were added in does not matter");
    l.adm_ok("-e -t 10.0.0.100:80 -r 172.16.0.12 -g -w 5");
    let c = l.ctl("fingerprint tcp:10.0.0.100:80");
    assert_eq!(c.lines().count(), 2, "one service: {c}");
    let fp = |t: &str| {
        t.lines()
            .nth(1)
            .unwrap()
            .split_whitespace()
            .last()
            .unwrap()
            .to_string()
    };
    assert_ne!(fp(&c), fp(&a), "a new weight, a new table: {a}{c}");
    // the IPv6 service: its servers enter as they do for IPv4 (they once
    // all hashed as 0.0.0.0, so nothing changed the fingerprint)
    let v6 = || l.ctl("fingerprint tcp:[2001:db8::10]:80");
    let before = v6();
    assert_eq!(before.lines().count(), 2, "one service: {before}");
    assert_eq!(fp(&before), lines[3][5], "{a}{before}");
    l.adm_ok("-a -t [2001:db8::10]:80 -r [2001:db8:2::14]:8080 -m -w 3");
    let added = v6();
    assert!(added.contains("[2001:db8::10]:80"), "{added}");
    assert_eq!(
        added.lines().nth(1).unwrap().split_whitespace().nth(4),
        Some("4")
    );
    assert_ne!(fp(&added), fp(&before), "a new server: {before}{added}");
    l.adm_ok("-e -t [2001:db8::10]:80 -r [2001:db8:2::14]:8080 -m -w 5");
    let edited = v6();
    assert_ne!(fp(&edited), fp(&added), "a new weight: {added}{edited}");
    let j: serde_json::Value =
        serde_json::from_str(&l.ctl("fingerprint --json udp:10.0.0.100:53")).unwrap();
    let d = &j["ok"]["data"][0];
    assert_eq!(d["sched"], "sh", "{j}");
    assert_eq!(d["fingerprint"].as_str(), Some(lines[4][5]), "{j}");
    let o = common::run_with_input(
        Command::new(crate::common::DIRIGOCTL).args([
            "--socket",
            &l.sock,
            "fingerprint",
            "10.0.0.199:80",
        ]),
        "",
    );
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("No such service"), "{}", o.stderr);
    l.adm_ok("-C");
}

#[test]
fn socket_abuse_leaves_the_daemon_answering() {
    if !common::privileged("ctl_live abuse") {
        return;
    }
    let l = Live::start("ctl-live3");
    let mut handles = Vec::new();
    for i in 0..24 {
        let sock = l.sock.clone();
        handles.push(std::thread::spawn(move || {
            let Ok(mut s) = UnixStream::connect(&sock) else {
                return;
            };
            s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
            let junk: Vec<u8> = match i % 6 {
                0 => b"{\"v\":1,\"id\":1,\"req\":{\"op\":\"add_ser".to_vec(),
                1 => (0..5000).map(|k| (k * 7 + i) as u8).collect(),
                2 => vec![b'x'; 2 << 20],
                3 => b"{\"v\":99,\"id\":1,\"req\":{\"op\":\"version\"}}\n".to_vec(),
                4 => b"not json at all\n\n\n".to_vec(),
                _ => Vec::new(), // half-open: connect and say nothing
            };
            let _ = s.write_all(&junk);
            let mut buf = [0u8; 256];
            let _ = s.read(&mut buf);
        }));
    }
    for h in handles {
        let _ = h.join();
    }
    // Still answering, and correctly.
    l.adm_ok("-A -t 10.0.0.100:80 -s rr");
    assert!(l.adm_ok("-L -n").contains("TCP  10.0.0.100:80 rr"));
}
