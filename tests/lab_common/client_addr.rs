//! FullNAT's `client_address` in the FullNAT lab (issue 51), on the lab
//! `lab_fullnat` has built (its local address routed back to dirigo):
//! real programs from Debian log the client's address that dirigo's
//! PROXY header gave them — nginx (`listen ... proxy_protocol`,
//! `$proxy_protocol_addr` in its access log) behind a proxy-v1 and a
//! proxy-v2 service, HAProxy (`accept-proxy`, `%[src]`) behind both
//! too — for every request, several on one connection; a server that
//! speaks first (tests/support/banner_first.py) gets the header before
//! the client says anything, then 3000 lines echoed byte for byte
//! through the shifted stream; tshark, capturing on the real server,
//! decodes the version 2 header dirigo sent, and the TOA option of a
//! `toa` service is read byte for byte from the same capture; after a
//! restart (the state file keeps `--client-address`) nginx still gets
//! the client's address.

use super::Lab;
use crate::common::text;
use std::time::Duration;

const CLIENT: &str = super::CLIENT;
const VIP: &str = super::VIP;

/// The services (port, how, real server, its port).
const SERVICES: [(u16, &str, usize, u16); 6] = [
    (8081, "proxy-v1", 1, 8081), // nginx
    (8082, "proxy-v2", 1, 8082), // nginx
    (8083, "proxy-v2", 2, 8083), // haproxy
    (8084, "proxy-v1", 2, 8084), // haproxy
    (2526, "proxy-v2", 3, 2526), // banner first
    (8086, "toa", 1, 80),        // rs_server.py, no toa module: the capture reads it
];

fn sh(lab: &Lab, who: &str, script: &str) -> String {
    let o = lab.exec(who, &["sh", "-c", script]);
    assert!(o.status.success(), "{who}: {script}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn start_nginx(lab: &Lab, st: &str) {
    let rip = super::rip(1);
    let conf = format!(
        "pid {st}/nginx.pid;\nerror_log {st}/nginx-error.log;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n\
           log_format pp '$proxy_protocol_addr:$proxy_protocol_port $server_port \"$request\"';\n\
           access_log {st}/nginx-access.log pp;\n\
           server {{\n\
             listen {rip}:8081 proxy_protocol;\n\
             listen {rip}:8082 proxy_protocol;\n\
             location / {{ return 200 \"pp=$proxy_protocol_addr:$proxy_protocol_port\\n\"; }}\n\
           }}\n\
         }}\n"
    );
    std::fs::write(format!("{st}/nginx.conf"), conf).unwrap();
    sh(
        lab,
        "rs1",
        &format!("nginx -e {st}/nginx-error.log -c {st}/nginx.conf"),
    );
}

fn start_haproxy(lab: &Lab, st: &str) {
    let rip = super::rip(2);
    let conf = format!(
        "global\n  log stdout format raw local0\n\
         defaults\n  mode http\n  log global\n  timeout connect 2s\n  timeout client 5s\n  timeout server 5s\n\
         frontend pp\n  bind {rip}:8083 accept-proxy\n  bind {rip}:8084 accept-proxy\n\
         \x20 log-format \"src=%ci:%cp fe=%fp %r\"\n\
         \x20 http-request return status 200 content-type text/plain lf-string \"src=%[src]:%[src_port]\\n\"\n"
    );
    std::fs::write(format!("{st}/haproxy.cfg"), conf).unwrap();
    sh(
        lab,
        "rs2",
        &format!(
            "haproxy -c -q -f {st}/haproxy.cfg && \
             (setsid haproxy -db -f {st}/haproxy.cfg >{st}/haproxy.log 2>&1 </dev/null & \
              echo $! >{st}/haproxy.pid)"
        ),
    );
}

/// IPv6 FullNAT with `proxy-v2` (lab_ipv6_modes' `fullnat6`): a service
/// `[vip6]:2527` from `laddr6` to the banner-first server on real server
/// 3 (`rip6`); it gets the 52-byte TCP6 header naming `client6` before
/// the client speaks, then 300 lines echoed byte for byte.
pub fn proxy_v2_ipv6(lab: &Lab, vip6: &str, laddr6: &str, rip6: &str, client6: &str) {
    proxy_v2_from_ipv6(lab, vip6, 2527, laddr6, &format!("[{rip6}]"), "::", client6);
}

/// [`proxy_v2_ipv6`] on `vip6`'s `port`, its real server `rs` (as `-r`
/// takes it: `[IPv6]` or an IPv4 address, whose server binds `bind`).
pub fn proxy_v2_from_ipv6(
    lab: &Lab,
    vip6: &str,
    port: u16,
    laddr: &str,
    rs: &str,
    bind: &str,
    client6: &str,
) {
    let svc = format!("[{vip6}]:{port}");
    let rules = format!(
        "-A -t {svc} -s rr --client-address proxy-v2\n-P -t {svc} -z {laddr}\n\
         -a -t {svc} -r {rs}:{port} -b -w 1\n"
    );
    lab.adm_stdin(&["-R"], Some(&rules));
    lab.spawn_support(
        "rs3",
        &format!("rs3-banner-{port}"),
        "banner_first.py",
        &["--name", "rs3", "--bind", bind, "--port", &port.to_string()],
    );
    let py = format!(
        r#"
import socket
s = socket.create_connection(("{vip6}", {port}), timeout=10)
f = s.makefile("rb")
print(f.readline().decode().strip())
print(f.readline().decode().strip())
lines = [("line %d %s\n" % (i, "y" * (i % 89))).encode() for i in range(300)]
s.sendall(b"".join(lines))
for i, l in enumerate(lines):
    got = f.readline()
    assert got == b"250 " + l, (i, got, l)
print("echo ok", len(lines))
"#
    );
    let out = lab.client(&["python3", "-c", &py]);
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|h| h.starts_with(&format!("250 header v2 src={client6}:"))
                && h.ends_with(" extra=0")),
        "IPv6: the header did not come alone before the client spoke: {out}"
    );
    assert!(out.contains("echo ok 300"), "{out}");
}

/// Stop what [`client_address_checks`] started (by its pid files).
fn stop(lab: &Lab, st: &str) {
    let _ = lab.exec(
        "rs1",
        &["nginx", "-c", &format!("{st}/nginx.conf"), "-s", "stop"],
    );
    let _ = lab.exec(
        "rs2",
        &["sh", "-c", &format!("kill $(cat {st}/haproxy.pid)")],
    );
}

/// Every check of the module; `laddr` is the services' local address.
pub fn client_address_checks(lab: &mut Lab, laddr: &str) {
    let t0 = std::time::Instant::now();
    let st = lab.state_dir().display().to_string();
    let mut rules = String::new();
    for (port, how, rs, rport) in SERVICES {
        let svc = format!("{VIP}:{port}");
        rules += &format!(
            "-A -t {svc} -s rr --client-address {how}\n-P -t {svc} -z {laddr}\n\
             -a -t {svc} -r {}:{rport} -b -w 1\n",
            super::rip(rs)
        );
    }
    lab.adm_stdin(&["-R"], Some(&rules));
    let saved = lab.adm(&["-S", "-n"]);
    assert!(
        saved.contains(&format!(
            "-A -t {VIP}:8082 -s rr --client-address proxy-v2\n"
        )) && saved.contains(&format!("-A -t {VIP}:8086 -s rr --client-address toa\n")),
        "-S keeps client_address: {saved}"
    );
    start_nginx(lab, &st);
    start_haproxy(lab, &st);
    lab.spawn_support(
        "rs3",
        "rs3-banner",
        "banner_first.py",
        &["--name", "rs3", "--port", "2526"],
    );
    // tshark on rs1 sees what dirigo sent to nginx's v2 port and to the
    // TOA service's server
    let pcap = format!("{st}/client-address.pcap");
    let filter = format!("src host {laddr} and (tcp dst port 8082 or tcp dst port 80)");
    let mut cap = lab.spawn(
        "rs1",
        &[
            "tshark",
            "-i",
            "eth0",
            "-q",
            "-w",
            &pcap,
            "-a",
            "duration:5",
            "-f",
            &filter,
        ],
    );
    lab.wait_for("tshark capturing", 10, || {
        std::fs::metadata(&pcap).is_ok_and(|m| m.len() > 0)
    });

    // nginx and HAProxy: every request, three on one connection
    for (port, what) in [(8081, "pp="), (8082, "pp="), (8083, "src="), (8084, "src=")] {
        let url = format!("http://{VIP}:{port}/");
        let out = lab.client(&["curl", "-sS", "-m", "5", &url, &url, &url]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{port}: {out}");
        for l in &lines {
            assert!(
                l.starts_with(&format!("{what}{CLIENT}:")),
                "port {port}: the server saw {l:?}, not the client {CLIENT}"
            );
        }
        // one connection: one client port
        assert!(lines.iter().all(|l| *l == lines[0]), "{port}: {out}");
    }
    // TOA: one request to the plain HTTP server (no toa module: it sees
    // the local address and ignores the option; the capture reads it)
    let who = lab.client(&[
        "curl",
        "-sS",
        "-m",
        "5",
        &format!("http://{VIP}:8086/whoami"),
    ]);
    assert!(who.contains(&format!("peer={laddr}:")), "{who}");

    // the banner-first server got the header before the client spoke, then
    // 3000 lines came back byte for byte
    let py = format!(
        r#"
import socket
s = socket.create_connection(("{VIP}", 2526), timeout=10)
f = s.makefile("rb")
print(f.readline().decode().strip())
print(f.readline().decode().strip())
lines = [("line %d %s\n" % (i, "x" * (i % 97))).encode() for i in range(3000)]
s.sendall(b"".join(lines))
for i, l in enumerate(lines):
    got = f.readline()
    assert got == b"250 " + l, (i, got, l)
s.sendall(b"QUIT\n")
print(f.readline().decode().strip())
print("echo ok", len(lines))
"#
    );
    let out = lab.client(&["python3", "-c", &py]);
    let l: Vec<&str> = out.lines().collect();
    assert!(
        l.first().is_some_and(|b| b.starts_with("220 rs3 banner")),
        "{out}"
    );
    assert!(
        l.get(1)
            .is_some_and(|h| h.starts_with(&format!("250 header v2 src={CLIENT}:"))
                && h.ends_with(" extra=0")),
        "the header did not come alone before the client spoke: {out}"
    );
    assert!(out.contains("echo ok 3000"), "{out}");

    // nginx's and HAProxy's logs: every request from the client
    let log = std::fs::read_to_string(format!("{st}/nginx-access.log")).unwrap_or_default();
    let reqs: Vec<&str> = log.lines().collect();
    assert_eq!(reqs.len(), 6, "nginx access log:\n{log}");
    assert!(
        reqs.iter().all(|r| r.starts_with(&format!("{CLIENT}:"))),
        "nginx logged another address:\n{log}"
    );
    lab.wait_for("haproxy's log", 5, || {
        std::fs::read_to_string(format!("{st}/haproxy.log"))
            .is_ok_and(|l| l.matches(&format!("src={CLIENT}:")).count() >= 6)
    });

    // the capture: tshark decodes dirigo's v2 header; the TOA option byte
    // for byte (kind 254, length 8, the client's port, its address)
    let _ = cap.wait();
    let o = lab.exec(
        "rs1",
        &[
            "tshark",
            "-r",
            &pcap,
            "-o",
            "tcp.try_heuristic_first:TRUE",
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-e",
            "tcp.dstport",
            "-e",
            "tcp.options",
            "-e",
            "frame.protocols",
            "-e",
            "proxy.v2.version",
            "-e",
            "proxy.src.ipv4",
            "-e",
            "proxy.dst.ipv4",
        ],
    );
    assert!(o.status.success(), "tshark -r: {}", text(&o));
    let dump = String::from_utf8_lossy(&o.stdout).into_owned();
    let v2 = dump
        .lines()
        .filter(|l| l.starts_with("8082|") && l.contains(":proxy"))
        .collect::<Vec<_>>();
    assert!(!v2.is_empty(), "tshark decoded no PROXY header:\n{dump}");
    for l in &v2 {
        let c: Vec<&str> = l.split('|').collect();
        assert_eq!(
            (c[3], c[4], c[5]),
            ("2", CLIENT, VIP),
            "tshark's reading of the v2 header: {l}"
        );
    }
    let ip: std::net::Ipv4Addr = CLIENT.parse().unwrap();
    let want_tail: String = ip.octets().iter().map(|b| format!("{b:02x}")).collect();
    let toa: Vec<String> = dump
        .lines()
        .filter(|l| l.starts_with("80|"))
        .map(|l| l.split('|').nth(1).unwrap_or("").replace(':', ""))
        .filter(|o| o.starts_with("fe08"))
        .collect();
    assert!(!toa.is_empty(), "no TOA option in the capture:\n{dump}");
    for o in &toa {
        // fe 08 PORT(2) ADDR(4)
        assert!(o.len() >= 16, "{o}");
        assert_eq!(&o[8..16], want_tail, "the TOA option's address: {o}");
    }
    // a restart: the state file brings the services back with their
    // client_address, the workers reserve the state at start, and nginx
    // still gets the client's address
    lab.restart(|_| {});
    let url = format!("http://{VIP}:8082/");
    let out = lab.client(&["curl", "-sS", "-m", "5", "--retry", "3", &url]);
    assert!(
        out.starts_with(&format!("pp={CLIENT}:")),
        "after the restart nginx saw {out:?}"
    );
    stop(lab, &st);
    std::thread::sleep(Duration::from_millis(100));
    eprintln!(
        "client_address: nginx, haproxy, banner-first, tshark checks done in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}
