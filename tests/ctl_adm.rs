//! dirigoadm and dirigoctl, the real binaries, against the control server
//! with a mock handler.

mod common;
mod ctl_common;

use common::Out;
use ctl_common::start;
use std::path::Path;
use std::process::Command;

fn run(bin: &str, sock: Option<&Path>, args: &[&str], stdin: &str) -> Out {
    let mut c = Command::new(bin);
    c.args(args).env_remove("DIRIGO_SOCKET");
    if let Some(s) = sock {
        c.env("DIRIGO_SOCKET", s);
    }
    common::run_with_input(&mut c, stdin)
}

fn adm(sock: &Path, args: &str) -> Out {
    let a: Vec<&str> = args.split_whitespace().collect();
    run(crate::common::DIRIGOADM, Some(sock), &a, "")
}

fn ok(sock: &Path, args: &str) -> String {
    let o = adm(sock, args);
    assert_eq!(o.code, 0, "dirigoadm {args}: {}", o.stderr);
    assert_eq!(o.stderr, "");
    o.stdout
}

fn fails(sock: &Path, args: &str, code: i32, msg: &str) {
    let o = adm(sock, args);
    assert_eq!(o.code, code, "dirigoadm {args}: {} {}", o.stdout, o.stderr);
    assert_eq!(o.stderr.trim_end(), msg, "dirigoadm {args}");
    assert_eq!(o.stdout, "");
}

#[test]
fn ipvsadm_session() {
    let srv = start();
    let s = srv.path.as_path();
    assert_eq!(ok(s, "-A -t 10.0.0.100:80 -s wlc -p"), "");
    fails(s, "-A -t 10.0.0.100:80", 1, "Service already exists");
    ok(s, "-a -t 10.0.0.100:80 -r 172.16.0.11:80 -g");
    ok(
        s,
        "--add-server -t 10.0.0.100:80 -r 172.16.0.12 --ipip -w 3",
    );
    fails(
        s,
        "-a -t 10.0.0.100:80 -r 172.16.0.11",
        1,
        "Destination already exists",
    );
    fails(
        s,
        "-a -t 10.0.0.1:80 -r 172.16.0.11",
        1,
        "Service not defined",
    );
    fails(
        s,
        "-a -t 10.0.0.100:80 -r 172.16.0.13 -w 65536",
        2,
        "illegal weight specified",
    );
    ok(s, "-A -u 10.0.0.53:53 -s rr");
    ok(s, "-a -u 10.0.0.53:53 -r 192.168.1.2:5353 -m -w 0");

    let want = concat!(
        "IP Virtual Server version 1.2.1 (size=4096)\n",
        "Prot LocalAddress:Port Scheduler Flags\n",
        "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n",
        "TCP  10.0.0.100:80 wlc persistent 300\n",
        "  -> 172.16.0.11:80               Route   1      1          1         \n",
        "  -> 172.16.0.12:80               Tunnel  3      3          1         \n",
        "UDP  10.0.0.53:53 rr\n",
        "  -> 192.168.1.2:5353             Masq    0      0          1         \n",
    );
    assert_eq!(ok(s, "-L -n"), want);
    assert_eq!(ok(s, "-Ln"), want);
    assert_eq!(ok(s, ""), want);

    let one = ok(s, "-L -n -t 10.0.0.100:80");
    assert!(one.starts_with("Prot LocalAddress:Port Scheduler Flags\n"));
    assert_eq!(one.lines().count(), 5, "{one}");
    fails(s, "-L -n -t 10.9.9.9:80", 1, "No such service");

    let stats = ok(s, "-L -n --stats");
    assert!(
        stats.contains(
            "  -> 172.16.0.11:80                     10      200        0  300000K        0\n"
        ),
        "{stats}"
    );
    let exact = ok(s, "-L -n --stats --exact");
    assert!(
        exact.contains(
            "  -> 172.16.0.11:80                     10      200        0 300000000        0\n"
        ),
        "{exact}"
    );

    ok(s, "-e -t 10.0.0.100:80 -r 172.16.0.11 -w 7 -x 100");
    fails(
        s,
        "-e -t 10.0.0.100:80 -r 172.16.0.99 -w 7",
        1,
        "No such destination",
    );
    ok(
        s,
        "-E -t 10.0.0.100:80 -s sh -b sh-port -p 60 -M 255.255.255.0",
    );
    fails(s, "-E -t 10.0.0.200:80 -s rr", 1, "No such service");

    let saved = ok(s, "-S -n");
    assert_eq!(
        saved,
        concat!(
            "-A -t 10.0.0.100:80 -s sh -b sh-port -p 60 -M 255.255.255.0\n",
            "-a -t 10.0.0.100:80 -r 172.16.0.11:80 -g -w 7 -x 100\n",
            "-a -t 10.0.0.100:80 -r 172.16.0.12:80 -i -w 3 --tun-type ipip\n",
            "-A -u 10.0.0.53:53 -s rr\n",
            "-a -u 10.0.0.53:53 -r 192.168.1.2:5353 -m -w 0\n",
        )
    );

    let conns = ok(s, "-L -n -c");
    assert!(conns.starts_with("IPVS connection entries\npro expire state       source             virtual            destination\n"));
    assert!(
        conns.contains(
            "TCP 01:01  ESTABLISHED 192.0.2.1:40000    10.0.0.100:80      172.16.0.11:80\n"
        ),
        "{conns}"
    );

    ok(s, "--set 1000 0 30");
    assert_eq!(
        ok(s, "-L --timeout"),
        "Timeout (tcp tcpfin udp): 1000 120 30\n"
    );
    ok(s, "-Z");
    ok(s, "-Z -t 10.0.0.100:80");
    fails(s, "-Z -t 10.0.0.100:81", 1, "No such service");

    ok(s, "-d -t 10.0.0.100:80 -r 172.16.0.12");
    fails(
        s,
        "-d -t 10.0.0.100:80 -r 172.16.0.12",
        1,
        "No such destination",
    );
    ok(s, "-D -t 10.0.0.100:80");
    fails(s, "-D -t 10.0.0.100:80", 1, "No such service");
    ok(s, "-C");
    assert_eq!(ok(s, "-S -n"), "");

    // Restore the saved rules as one batch and get the same save back.
    let o = run(crate::common::DIRIGOADM, Some(s), &["-R"], &saved);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(ok(s, "-S -n"), saved);
    // A batch with a failing line changes nothing.
    let bad = "-C\n-A -t 10.1.1.1:80\n-a -t 10.1.1.2:80 -r 1.1.1.1\n";
    let o = run(crate::common::DIRIGOADM, Some(s), &["--restore"], bad);
    assert_eq!(o.code, 1);
    assert_eq!(o.stderr.trim_end(), "line 3: Service not defined");
    assert_eq!(ok(s, "-S -n"), saved);
    // A batch with a syntax error is refused before sending.
    let o = run(
        crate::common::DIRIGOADM,
        Some(s),
        &["-R"],
        "-C\n-A -t 10.1.1.1:80 -w 2\n",
    );
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.starts_with("line 2: Illegal 'weight' option"),
        "{}",
        o.stderr
    );
    assert_eq!(ok(s, "-S -n"), saved);

    srv.shutdown().unwrap();
}

#[test]
fn socket_discovery() {
    let srv = start();
    let sock = srv.path.to_str().unwrap();
    let bin = crate::common::DIRIGOADM;
    // --socket wins over the environment.
    let o = run(
        bin,
        Some(Path::new("/nonexistent/x.sock")),
        &["--socket", sock, "-A", "-t", "1.2.3.4:80"],
        "",
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(bin, None, &[&format!("--socket={sock}"), "-S", "-n"], "");
    assert_eq!(o.stdout, "-A -t 1.2.3.4:80 -s wlc\n");
    // Nothing listening: exit 2 and a clear message.
    let o = run(
        bin,
        Some(Path::new("/nonexistent/x.sock")),
        &["-L", "-n"],
        "",
    );
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("/nonexistent/x.sock"), "{}", o.stderr);
    assert!(o.stderr.contains("Are you sure that dirigo is running?"));
    // Help and version need no daemon.
    let o = run(bin, Some(Path::new("/nonexistent/x.sock")), &["-h"], "");
    assert_eq!(o.code, 0);
    assert!(o.stdout.starts_with("Usage:\n"));
    let o = run(bin, None, &["--bogus"], "");
    assert_eq!(
        (o.code, o.stderr.trim_end()),
        (2, "invalid option `--bogus'")
    );
    // an ipvsadm option dirigoadm does not have: its reason, one line
    let o = run(
        bin,
        None,
        &["-A", "-u", "1.2.3.4:5060", "-p", "--pe", "sip"],
        "",
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(
        o.stderr
            .starts_with("--pe: not supported by dirigoadm: dirigo has no persistence engines"),
        "{}",
        o.stderr
    );
}

fn ctl(sock: &Path, args: &[&str]) -> Out {
    run(crate::common::DIRIGOCTL, Some(sock), args, "")
}

#[test]
fn dirigoctl_commands() {
    let srv = start();
    let s = srv.path.as_path();
    let o = ctl(s, &["ports"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut lines = o.stdout.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("PORT NAME         MAC               LINK"));
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        &row[..8],
        &[
            "0",
            "net_tap0",
            "02:00:00:00:00:01",
            "up",
            "10G",
            "1500",
            "1234",
            "1200"
        ]
    );
    assert_eq!(
        lines.next().unwrap().trim(),
        "kernel wan (netns dirigo, tap): to-kernel 17 from-kernel 0 rate-limited 3 ring-full 0 write-failed 0 inject-full 0"
    );

    let o = ctl(s, &["--json", "ports", "--xstats"]);
    assert_eq!(o.code, 0);
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(v["ok"]["kind"], "ports");
    assert_eq!(v["ok"]["data"][0]["xstats"][0]["name"], "rx_good_packets");
    assert_eq!(v["ok"]["data"][0]["mac"], "02:00:00:00:00:01");
    assert_eq!(v["ok"]["data"][0]["kernel"]["rate_limited"], 3);

    assert_eq!(ctl(s, &["addr", "add", "10.0.0.1/24"]).code, 0);
    let o = ctl(s, &["addr", "add", "10.0.0.1/24"]);
    assert_eq!(
        (o.code, o.stderr.trim_end()),
        (1, "dirigoctl: 10.0.0.1 already configured")
    );
    let o = ctl(s, &["addr", "add", "10.0.0.2", "--port", "3"]);
    assert_eq!((o.code, o.stderr.trim_end()), (1, "dirigoctl: no port 3"));
    let o = ctl(s, &["addr", "add", "10.0.0.2/33"]);
    assert_eq!(o.code, 1);
    assert_eq!(
        ctl(s, &["addr", "list"]).stdout,
        "PORT ADDRESS\n0    10.0.0.1/24\n"
    );
    let o = ctl(s, &["addr", "list", "--json"]);
    assert_eq!(
        o.stdout.trim(),
        r#"{"v":1,"id":1,"ok":{"kind":"addresses","data":[{"port":0,"addr":"10.0.0.1","prefix_len":24}]}}"#
    );
    assert_eq!(ctl(s, &["addr", "del", "10.0.0.1"]).code, 0);
    assert_eq!(ctl(s, &["addr", "del", "10.0.0.1"]).code, 1);
    // IPv6: the same commands (a bare address is /128)
    assert_eq!(ctl(s, &["addr", "add", "2001:db8::1/64"]).code, 0);
    assert_eq!(ctl(s, &["addr", "add", "2001:db8::2"]).code, 0);
    let o = ctl(s, &["addr", "add", "2001:db8::3/129"]);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("bad address '2001:db8::3/129'"),
        "{}",
        o.stderr
    );
    assert_eq!(
        ctl(s, &["addr", "list"]).stdout,
        "PORT ADDRESS\n0    2001:db8::1/64\n0    2001:db8::2/128\n"
    );
    let o = ctl(s, &["addr", "list", "--json"]);
    assert!(
        o.stdout
            .contains(r#"{"port":0,"addr":"2001:db8::1","prefix_len":64}"#),
        "{}",
        o.stdout
    );
    assert_eq!(ctl(s, &["addr", "del", "2001:db8::1"]).code, 0);
    assert_eq!(ctl(s, &["addr", "del", "2001:db8::2/128"]).code, 0);
    assert_eq!(ctl(s, &["addr", "del", "2001:db8::2"]).code, 1);

    assert_eq!(
        ctl(s, &["neigh", "add", "10.0.0.7", "02:aa:bb:cc:dd:ee"]).code,
        0
    );
    let o = ctl(s, &["neigh", "list"]);
    assert!(
        o.stdout
            .contains("10.0.0.7        02:aa:bb:cc:dd:ee 0    static     -\n"),
        "{}",
        o.stdout
    );
    assert_eq!(ctl(s, &["neigh", "add", "10.0.0.7", "zz:aa"]).code, 2);
    assert_eq!(ctl(s, &["neigh", "flush"]).code, 0);
    assert_eq!(ctl(s, &["neigh", "list"]).stdout.lines().count(), 1);

    let o = ctl(s, &["route", "list"]);
    assert!(
        o.stdout
            .contains("0.0.0.0/0          10.0.0.254      0    -\n"),
        "{}",
        o.stdout
    );
    let o = ctl(s, &["lcores"]);
    assert!(
        o.stdout
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("1     worker  0:0"),
        "{}",
        o.stdout
    );
    let o = ctl(s, &["drops"]);
    assert!(o.stdout.contains("no_service"));
    assert!(o.stdout.contains("42"));
    let o = ctl(s, &["snat", "list"]);
    assert_eq!(
        o.stdout,
        "10.1.0.0/24 -> 203.0.113.10 max 100  conns 7 live 3\nsnat connections 3 of 4096\n",
        "{}",
        o.stderr
    );
    assert_eq!(ctl(s, &["reload"]).code, 0);
    let o = ctl(s, &["version"]);
    assert!(
        o.stdout
            .contains("dirigo 0.1.0-mock (control protocol v1, commit 0123456789ab, DPDK 22.11)"),
        "{}",
        o.stdout
    );
    let o = ctl(s, &["--json", "version"]);
    assert!(o.stdout.contains(r#""kind":"version""#));
    // The handler panicking is an error answer, not a dead server.
    let o = ctl(s, &["addr", "add", "10.0.0.9", "--port", "999"]);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("internal error while handling addr_add"),
        "{}",
        o.stderr
    );
    assert_eq!(ctl(s, &["drops"]).code, 0);
    srv.shutdown().unwrap();
}

#[test]
fn dirigoctl_health() {
    let srv = start();
    let s = srv.path.as_path();
    let o = ctl(s, &["health"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert!(lines[0].starts_with("SERVICE"), "{}", o.stdout);
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        &row[..8],
        &[
            "TCP",
            "10.0.0.100:80",
            "172.16.0.11:80",
            "http",
            "down",
            "12s",
            "3/0",
            "40"
        ],
        "{}",
        o.stdout
    );
    assert!(lines[1].ends_with("1.5ms status 503"), "{}", lines[1]);
    assert_eq!(
        lines[2],
        "transitions: 1 down, 0 up; quorum lost 0, restored 0"
    );
    assert!(
        lines[3].contains("12s ago  TCP 10.0.0.100:80 real server 172.16.0.11:80 down: 2 failures")
    );
    let o = ctl(s, &["--json", "health"]);
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(v["ok"]["data"]["servers"][0]["effective_weight"], 0);
    // maintenance: the service's protocol defaults to TCP, the port to the service's
    assert_eq!(
        ctl(s, &["health", "disable", "10.0.0.100:80", "172.16.0.11"]).code,
        0
    );
    assert_eq!(
        ctl(
            s,
            &["health", "enable", "tcp:10.0.0.100:80", "172.16.0.11:80"]
        )
        .code,
        0
    );
    let o = ctl(s, &["health", "disable", "10.0.0.100:80", "172.16.0.99"]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("has no health check"), "{}", o.stderr);
    let o = ctl(
        s,
        &["health", "disable", "sctp:10.0.0.100:80", "172.16.0.11"],
    );
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("bad service 'sctp:10.0.0.100:80'"),
        "{}",
        o.stderr
    );
}

#[test]
fn dirigoctl_census_fails_on_a_mismatch() {
    let srv = start();
    let s = srv.path.as_path();
    assert_eq!(adm(s, "-A -t 10.0.0.100:80 -s rr").code, 0);
    assert_eq!(adm(s, "-a -t 10.0.0.100:80 -r 172.16.0.11 -g").code, 0);
    let o = ctl(s, &["census"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert!(lines[0].starts_with("LCORE "), "{}", o.stdout);
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(row, ["1", "1", "1", "1", "1", "0", "1", "ok"]);
    assert_eq!(lines.len(), 3, "{}", o.stdout);
    // a worker whose counts disagree: printed, and the exit status says so
    assert_eq!(adm(s, "-A -t 10.0.0.100:4444 -s rr").code, 0);
    let o = ctl(s, &["census"]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stdout.lines().nth(2).unwrap().ends_with("MISMATCH"),
        "{}",
        o.stdout
    );
    assert!(o.stderr.contains("counts disagree"), "{}", o.stderr);
    let o = ctl(s, &["--json", "census"]);
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(v["ok"]["kind"], "census");
    assert_eq!(v["ok"]["data"][1]["consistent"], false);
    srv.shutdown().unwrap();
}

#[test]
fn dirigoctl_vips() {
    let srv = start();
    let s = srv.path.as_path();
    let o = ctl(s, &["vips"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "announce: routes through kfront, table 100, proto 201; 0 failure(s)"
    );
    assert!(lines[1].starts_with("VIP "), "{}", o.stdout);
    let row: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(&row[..4], &["10.0.0.100", "announced", "42s", "quorum:"]);
    assert!(
        lines[3].ends_with("no quorum: TCP 10.0.0.101:80 0/3 up"),
        "{}",
        lines[3]
    );
    let o = ctl(s, &["--json", "vips"]);
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(v["ok"]["kind"], "vips");
    assert_eq!(v["ok"]["data"]["vips"][1]["state"], "withdrawn");
    assert_eq!(v["ok"]["data"]["table"], 100);
    srv.shutdown().unwrap();
}

#[test]
fn dirigoctl_handoff() {
    let srv = start();
    let s = srv.path.as_path();
    let o = ctl(s, &["handoff"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("handoff is off"), "{}", o.stdout);
    let o = ctl(s, &["--json", "handoff"]);
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(v["ok"]["kind"], "handoff");
    assert_eq!(v["ok"]["data"]["outcome"], "none");
    srv.shutdown().unwrap();
}
