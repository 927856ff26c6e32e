//! IPv6 balancing in the netns lab (issue 18), dual stack: one dirigo
//! with the lab's IPv4 services and IPv6 services on the VIP
//! 2001:db8:99::100 (in the client's prefix, so the client resolves it by
//! Neighbour Discovery and dirigo answers), real kernel TCP/UDP peers.
//!
//! IPv6 plan (beside the lab's IPv4 one): client wan 2001:db8:99::2/64,
//! dirigo wan ::1; server LAN 2001:db8:98::/64 (dirigo ::1, the router's
//! br0 ::fe, real server n ::1n); the return path 2001:db8:97::/64 (router
//! ::1, client ::2) carries DR and TUN replies straight to the client.
//! Each real server runs a second HTTP and UDP echo server on IPv6.
//!
//! For DR (VIP on the servers' lo), TUN (IPv6-in-IPv6, decapsulated in
//! user space: this kernel has no ip6_tunnel) and NAT (the servers' IPv6
//! default route via dirigo): ping6 the VIP, 1 MiB TCP each way checked
//! by sha256, UDP echo through the VIP, round-robin over the three
//! servers, weight 0 taking a server out of new connections, `dirigoadm
//! -L -n` and `-L -n -c` in ipvsadm's IPv6 layout. IPv4 traffic through
//! the IPv4 VIP works at the same time, and the services' counters stay
//! apart. NAT64: an IPv6 client reaches the IPv4 servers through
//! [VIP6]:8064 (1 MiB each way, the servers see the pool address; the
//! download's full-size replies do not fit the client's link once
//! translated, and complete through dirigo's fragmentation needed to the
//! server). In NAT, an on-link client address dirigo has not learned gets
//! its first reply at once: held while dirigo solicits the client, not
//! dropped and retransmitted a second later (issue 54). TUN also goes
//! through GRE and GUE (issue 52).
//!
//! Needs root and hugepages (skips outside CI, fails in CI).

mod common;
mod lab_common;

use lab_common::{checks, tun_types, Lab, LabSpec, SERIAL};
use std::collections::BTreeMap;

const P: &str = "dg6m";
const VIP6: &str = "2001:db8:99::100";
const CLIENT6: &str = "2001:db8:99::2";
/// A second client address, never seen by dirigo before its first reply.
const CLIENT6_NEW: &str = "2001:db8:99::3";
const ROUTER6: &str = "2001:db8:98::fe";
const DIRIGO_LAN6: &str = "2001:db8:98::1";

fn rip6(n: usize) -> String {
    format!("2001:db8:98::{}", 10 + n)
}

/// NAT64: the IPv4 address the translated requests leave from.
const POOL4: &str = "10.98.0.200";

fn nat64_svc() -> String {
    format!("[{VIP6}]:8064")
}

fn svc6() -> String {
    format!("[{VIP6}]:80")
}

fn udp6() -> String {
    format!("[{VIP6}]:5353")
}

/// IPv6 in every namespace the IPv6 traffic crosses, and the real
/// servers' second (IPv6) HTTP and UDP servers.
fn ipv6_lab(lab: &Lab) {
    let wan = format!("{P}-wan");
    lab.enable_ipv6("client", &wan, &format!("{CLIENT6}/64"));
    lab.enable_ipv6("client", "ret0", "2001:db8:97::2/64");
    lab.enable_ipv6("srv", "br0", &format!("{ROUTER6}/64"));
    lab.enable_ipv6("srv", "ret", "2001:db8:97::1/64");
    for k in [
        "net.ipv6.conf.all.forwarding=1",
        "net.ipv6.conf.all.disable_ipv6=0",
    ] {
        lab.exec("srv", &["sysctl", "-qw", k]);
    }
    ok(lab.exec(
        "srv",
        &[
            "ip",
            "-6",
            "route",
            "replace",
            "2001:db8:99::/64",
            "via",
            "2001:db8:97::2",
            "dev",
            "ret",
        ],
    ));
    for n in 1..=3 {
        let rs = format!("rs{n}");
        lab.enable_ipv6(&rs, "eth0", &format!("{}/64", rip6(n)));
        lab.exec(&rs, &["sysctl", "-qw", "net.ipv6.conf.lo.disable_ipv6=0"]);
        let name = format!("rs{n}");
        lab.spawn_support(
            &rs,
            &format!("{rs}-http6"),
            "rs_server.py",
            &["--name", &name, "--bind", "::", "--port", "80"],
        );
        lab.spawn_support(
            &rs,
            &format!("{rs}-udp6"),
            "udp_echo.py",
            &["--name", &name, "--bind", "::", "--port", "5353"],
        );
    }
    lab.wait_for("the client's IPv6 addresses", 10, || {
        let o = lab.client(&["ip", "-6", "addr", "show", "dev", &wan]);
        o.contains(CLIENT6) && !o.contains("tentative")
    });
}

fn ok(o: std::process::Output) {
    assert!(o.status.success(), "{}", common::text(&o));
}

/// The real servers set up for `mode`: the VIP on lo (DR), the
/// decapsulator (TUN), the IPv6 default route (via the router for DR and
/// TUN, via dirigo for NAT).
fn rs_mode(lab: &Lab, mode: &str) {
    for n in 1..=3 {
        let rs = format!("rs{n}");
        let vip = format!("{VIP6}/128");
        let _ = lab.exec(&rs, &["ip", "-6", "addr", "del", &vip, "dev", "lo"]);
        if mode == "dr" {
            ok(lab.exec(&rs, &["ip", "-6", "addr", "add", &vip, "dev", "lo"]));
        }
        let gw = if mode == "nat" { DIRIGO_LAN6 } else { ROUTER6 };
        ok(lab.exec(&rs, &["ip", "-6", "route", "replace", "default", "via", gw]));
        if mode == "tun" {
            // GRE and GUE too (issue 52)
            lab.start_ip6ip6_decap(&rs, &rip6(n), VIP6, &["--gre", "--gue-port", "6080"]);
        }
    }
}

/// The IPv6 real servers' method for both IPv6 services.
fn method(lab: &Lab, mode: &str) {
    let f = checks::flag(mode);
    for n in 1..=3 {
        for (sw, svc, port) in [("-t", svc6(), "80"), ("-u", udp6(), "5353")] {
            let r = format!("[{}]:{port}", rip6(n));
            lab.adm(&["-e", sw, &svc, "-r", &r, f, "-w", "1"]);
        }
    }
}

/// GUE and GRE in IPv6 (issue 52): the TUN servers switched at runtime
/// through each tunnel type, 1 MiB each way byte-exact
/// (lab_common/tun_types.rs).
fn tun_types(lab: &Lab) {
    let fam = tun_types::Family {
        svc: svc6(),
        rips: (1..=3).map(|n| format!("[{}]:80", rip6(n))).collect(),
        decap: "decap6",
        transfer: &|lab, tag, _seed| transfer6(lab, tag).1,
        dirigo_lan: DIRIGO_LAN6,
        rip_prefix: "2001:db8:98::1",
        client: CLIENT6,
        vip: VIP6,
    };
    // the IPv6 UDP service's three stay IPIP
    tun_types::gue_and_gre(lab, &fam, 6);
}

/// `curl` in the client namespace, IPv6; its stdout.
fn curl(lab: &Lab, args: &[&str]) -> String {
    let mut a = vec!["curl", "-6", "-g", "-sS", "-m", "30"];
    a.extend_from_slice(args);
    lab.client(&a)
}

/// 1 MiB down (sha256 against the server's header and labutil's own), 1
/// MiB up (the server reports its sha256); returns the servers.
fn transfer6(lab: &Lab, tag: &str) -> (String, String) {
    transfer6_to(lab, tag, &format!("[{VIP6}]"))
}

/// [`transfer6`] to `vip` (`[VIP6]` or `[VIP6]:PORT`).
fn transfer6_to(lab: &Lab, tag: &str, vip: &str) -> (String, String) {
    let size = 1 << 20;
    let body = lab.dir.join(format!("d6-{tag}.bin")).display().to_string();
    let hdr = lab.dir.join(format!("d6-{tag}.hdr")).display().to_string();
    let url = format!("http://{vip}/blob?size={size}");
    curl(lab, &["-D", &hdr, "-o", &body, &url]);
    let headers = std::fs::read_to_string(&hdr).unwrap();
    let field = |k: &str| {
        headers
            .lines()
            .find_map(|l| {
                let (a, b) = l.split_once(':')?;
                a.eq_ignore_ascii_case(k).then(|| b.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no {k} in {headers}"))
    };
    let got = lab.client(&["sha256sum", &body]);
    let got = got.split_whitespace().next().unwrap().to_string();
    assert_eq!(
        std::fs::metadata(&body).unwrap().len(),
        size as u64,
        "{tag}"
    );
    assert_eq!(got, field("X-Sha256"), "{tag}: download sha256");
    let indep = lab.client(&[
        "python3",
        &lab_common::support("labutil.py"),
        "blob-sha256",
        &size.to_string(),
    ]);
    assert_eq!(got, indep.trim(), "{tag}: labutil's sha256");
    let down = field("X-Server");

    let up = lab.dir.join(format!("u6-{tag}.bin"));
    std::fs::write(&up, checks::pattern(size, 11)).unwrap();
    let up_s = up.display().to_string();
    let want = lab.client(&["sha256sum", &up_s]);
    let want = want.split_whitespace().next().unwrap().to_string();
    let data = format!("@{up_s}");
    let out = curl(
        lab,
        &[
            "-H",
            "Expect:",
            "-H",
            "Content-Type: application/octet-stream",
            "--data-binary",
            &data,
            &format!("http://{vip}/upload"),
        ],
    );
    let f: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(f.len(), 3, "{tag}: upload answer {out:?}");
    assert_eq!(f[1], want, "{tag}: upload sha256 at the real server");
    assert_eq!(f[2], size.to_string(), "{tag}: upload length");
    (down, f[0].to_string())
}

/// The server of `n` new TCP connections (X-Server of `/`).
fn servers(lab: &Lab, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let h = curl(
                lab,
                &["-o", "/dev/null", "-D", "-", &format!("http://[{VIP6}]/")],
            );
            h.lines()
                .find_map(|l| l.strip_prefix("X-Server: "))
                .unwrap_or_else(|| panic!("no X-Server in {h}"))
                .trim()
                .to_string()
        })
        .collect()
}

fn count(names: &[String]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for n in names {
        *m.entry(n.clone()).or_insert(0) += 1;
    }
    m
}

/// UDP through the VIP: 6 probes (new flows) answered by every server, from
/// the VIP.
fn udp(lab: &Lab, iface: &str) {
    let out = lab.client(&[
        "python3",
        &lab_common::support("udp_probe.py"),
        VIP6,
        "5353",
        "--count",
        "6",
        "--json",
        "--payload",
        "hello6",
    ]);
    let mut names = Vec::new();
    for l in out.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let reply = v["reply"].as_str().unwrap_or_else(|| panic!("{l}"));
        let (name, rest) = reply.split_once(':').unwrap();
        assert!(rest.starts_with("hello6"), "{reply}");
        assert!(
            v["from"]
                .as_str()
                .unwrap()
                .starts_with(&format!("[{VIP6}]:5353")),
            "reply from the VIP: {l}"
        );
        assert_eq!(v["iface"], iface, "reply's way back: {l}");
        names.push(name.to_string());
    }
    assert_eq!(names.len(), 6, "{out}");
    let c = count(&names);
    assert_eq!(c.len(), 3, "UDP round robin over rs1..rs3: {c:?}");
}

fn mode_checks(lab: &Lab, mode: &str) {
    let t = std::time::Instant::now();
    let (down, up) = transfer6(lab, mode);
    eprintln!("{mode}: 1 MiB down via {down}, 1 MiB up via {up}: checksums ok");
    // round robin: 6 new connections, each server twice
    let c = count(&servers(lab, 6));
    assert!(
        c.len() == 3 && c.values().all(|&k| k == 2),
        "{mode}: rr over rs1..rs3: {c:?}"
    );
    let back = if mode == "nat" {
        format!("{P}-wan")
    } else {
        "ret0".into()
    };
    udp(lab, &back);
    // weight 0: no new connection for rs1, and back
    let r1 = format!("[{}]:80", rip6(1));
    let f = checks::flag(mode);
    lab.adm(&["-e", "-t", &svc6(), "-r", &r1, f, "-w", "0"]);
    let c = count(&servers(lab, 6));
    assert!(
        !c.contains_key("rs1"),
        "{mode}: weight 0 rs1 got new connections: {c:?}"
    );
    lab.adm(&["-e", "-t", &svc6(), "-r", &r1, f, "-w", "1"]);
    // ipvsadm's layouts
    let l = lab.adm(&["-L", "-n"]);
    assert!(l.contains(&format!("TCP  {} rr", svc6())), "{l}");
    assert!(l.contains(&format!("UDP  {} rr", udp6())), "{l}");
    let fw = match mode {
        "dr" => "Route",
        "tun" => "Tunnel",
        _ => "Masq",
    };
    for n in 1..=3 {
        let want = format!("  -> {:<28} {fw:<7} 1", format!("[{}]:80", rip6(n)));
        assert!(l.contains(&want), "{mode}: {want:?} in\n{l}");
    }
    let c = lab.adm(&["-L", "-n", "-c"]);
    assert!(
        c.lines().any(|l| l.starts_with("TCP")
            && l.contains(&format!("[{CLIENT6}]:"))
            && l.contains(&format!("{} ", svc6()))),
        "{mode}: an IPv6 connection in -L -n -c:\n{c}"
    );
    eprintln!("{mode}: checks done in {:.1} s", t.elapsed().as_secs_f64());
}

/// dirigo's count of the ICMP fragmentation-needed messages it generated.
fn frag_needed_sent(lab: &Lab) -> u64 {
    let lc = lab.ctl_json(&["lcores"]);
    lc.as_array()
        .expect("lcores list")
        .iter()
        .flat_map(|l| l["extra"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["name"] == "icmp_frag_needed_sent")
        .map(|c| c["value"].as_u64().unwrap_or(0))
        .sum()
}

/// NAT64 (the lab is in NAT mode: the IPv4 real servers route via
/// dirigo): an IPv6 client reaches the IPv4 servers' port 80 through
/// [VIP6]:8064, 1 MiB each way by sha256; the servers see the pool address.
///
/// The download needs path MTU discovery across the translation: the
/// client advertises an MSS of 1460 to the VIP (a route's `advmss`, as a
/// client whose own link is larger than the 1500-byte one in front of
/// dirigo would), so the server's full-size IPv4 segments are 1500 bytes,
/// 1520 once translated, too big for dirigo's link toward the client.
/// dirigo answers the server with fragmentation needed (1480, counted),
/// the server lowers its path MTU toward the pool address, and the
/// transfer completes byte-exact.
fn nat64(lab: &Lab) {
    let size = 1 << 20;
    let body = lab.dir.join("d64.bin").display().to_string();
    let hdr = lab.dir.join("d64.hdr").display().to_string();
    let url = format!("http://[{VIP6}]:8064/blob?size={size}");
    let vip_route = format!("{VIP6}/128");
    let wan = format!("{P}-wan");
    ok(lab.exec(
        "client",
        &[
            "ip", "-6", "route", "replace", &vip_route, "dev", &wan, "advmss", "1460",
        ],
    ));
    let sent0 = frag_needed_sent(lab);
    curl(lab, &["-D", &hdr, "-o", &body, &url]);
    ok(lab.exec("client", &["ip", "-6", "route", "del", &vip_route]));
    let headers = std::fs::read_to_string(&hdr).unwrap();
    let header = |k: &str| {
        headers
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap_or_else(|| panic!("no {k} in {headers}"))
            .trim()
            .to_string()
    };
    let sha = header("X-Sha256: ");
    let got = lab.client(&["sha256sum", &body]);
    assert_eq!(
        got.split_whitespace().next().unwrap(),
        sha,
        "NAT64 download"
    );
    assert_eq!(std::fs::metadata(&body).unwrap().len(), size as u64);
    // the path MTU the server learnt from dirigo's fragmentation needed
    let rs = header("X-Server: ");
    let route =
        String::from_utf8_lossy(&lab.exec(&rs, &["ip", "route", "get", POOL4]).stdout).into_owned();
    assert!(
        route.contains("mtu 1480"),
        "{rs} learnt no path MTU 1480 toward {POOL4}: {route}"
    );
    let sent = frag_needed_sent(lab) - sent0;
    assert!(sent >= 1, "dirigo counts no fragmentation needed sent");
    eprintln!(
        "nat64 pmtu: 1 MiB down via {rs} after {sent} frag-needed; {}",
        route.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    let up = lab.dir.join("u64.bin");
    std::fs::write(&up, checks::pattern(size, 64)).unwrap();
    let up_s = up.display().to_string();
    let want = lab.client(&["sha256sum", &up_s]);
    let want = want.split_whitespace().next().unwrap().to_string();
    let data = format!("@{up_s}");
    let out = curl(
        lab,
        &[
            "-H",
            "Expect:",
            "-H",
            "Content-Type: application/octet-stream",
            "--data-binary",
            &data,
            &format!("http://[{VIP6}]:8064/upload"),
        ],
    );
    let f: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(f.len(), 3, "NAT64 upload answer {out:?}");
    assert_eq!(f[1], want, "NAT64 upload sha256 at the IPv4 real server");
    // the IPv4 servers saw the pool address, not the client
    let log = std::fs::read_to_string(lab.state_dir().join(format!("{}-http.log", f[0])))
        .unwrap_or_default();
    assert!(
        log.contains(POOL4),
        "{} saw no request from {POOL4}:\n{log}",
        f[0]
    );
    let l = lab.adm(&["-L", "-n"]);
    assert!(
        l.contains(&format!("TCP  {} rr", nat64_svc())) && l.contains("  -> 10.98.0.11:80"),
        "{l}"
    );
    eprintln!("nat64: 1 MiB down, 1 MiB up via {}: checksums ok", f[0]);
}

/// Issue 54: an on-link IPv6 NAT client's first request is answered
/// without a retransmit. The client takes a second address, `CLIENT6_NEW`,
/// that dirigo has never seen, and keeps dirigo's MAC for the VIP as a
/// permanent neighbour (so it never solicits dirigo, which would teach
/// dirigo the new address first). The real server's SYN/ACK to it finds
/// no neighbour: dirigo holds it, solicits the client and sends it as soon
/// as the advertisement is learned. The connection is up in milliseconds
/// (dropped, the SYN/ACK would come again a second later), and dirigo's
/// counters show the reply held and released, no `unresolved6` drop.
fn first_reply_to_a_new_client_held(lab: &Lab) {
    let wan = format!("{P}-wan");
    let n = lab.client(&["ip", "-6", "neigh", "show", VIP6, "dev", &wan]);
    let mac = n
        .split_whitespace()
        .skip_while(|w| *w != "lladdr")
        .nth(1)
        .unwrap_or_else(|| panic!("the client has no neighbour entry for the VIP: {n:?}"))
        .to_string();
    let pin = [
        "ip",
        "-6",
        "neigh",
        "replace",
        VIP6,
        "lladdr",
        &mac,
        "dev",
        &wan,
        "nud",
        "permanent",
    ];
    ok(lab.exec("client", &pin));
    lab.enable_ipv6("client", &wan, &format!("{CLIENT6_NEW}/64"));
    let c = |name| lab.counter(name);
    let before = [c("held"), c("held_released"), c("unresolved6")];
    let t = curl(
        lab,
        &[
            "-o",
            "/dev/null",
            "-w",
            "%{time_connect}",
            "--interface",
            CLIENT6_NEW,
            &format!("http://[{VIP6}]/"),
        ],
    );
    let t: f64 = t
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("time_connect {t:?}"));
    // the counters are published every millisecond
    std::thread::sleep(std::time::Duration::from_millis(50));
    let after = [c("held"), c("held_released"), c("unresolved6")];
    eprintln!(
        "nat: first connection from {CLIENT6_NEW}: connected in {:.1} ms; \
         held {} released {} unresolved6 {}",
        t * 1000.0,
        after[0] - before[0],
        after[1] - before[1],
        after[2] - before[2]
    );
    assert!(
        after[0] > before[0] && after[1] > before[1],
        "the first reply to {CLIENT6_NEW} was not held and released: {before:?} -> {after:?}"
    );
    assert_eq!(after[2], before[2], "an IPv6 packet dropped unresolved");
    assert!(
        t < 0.5,
        "the first connection from {CLIENT6_NEW} took {t} s: a retransmission"
    );
    let _ = lab.exec(
        "client",
        &[
            "ip",
            "-6",
            "addr",
            "del",
            &format!("{CLIENT6_NEW}/64"),
            "dev",
            &wan,
        ],
    );
    let _ = lab.exec("client", &["ip", "-6", "neigh", "del", VIP6, "dev", &wan]);
}

/// conns of the service line `which` (`TCP  ADDR`) of `-L -n --stats`.
/// IPv6 FullNAT's local address, off the servers' network: only their
/// router's route to its /64 leads back to dirigo.
const LADDR6: &str = "2001:db8:96::10";

/// IPv6 FullNAT (issue 51): the servers' default route is the router's
/// again (as in DR), the router routes the local network to dirigo; both
/// IPv6 services switched to FullNAT in one `-R` batch, `-S`/`-C`/`-R`
/// round trip; 1 MiB each way, rr, UDP, the servers' peer the local
/// address, persistence; a `proxy-v2` service's header (TCP6) reaching a
/// server that speaks first.
fn fullnat6(lab: &Lab) {
    let t = std::time::Instant::now();
    for n in 1..=3 {
        let rs = format!("rs{n}");
        ok(lab.exec(
            &rs,
            &["ip", "-6", "route", "replace", "default", "via", ROUTER6],
        ));
    }
    ok(lab.exec(
        "srv",
        &[
            "ip",
            "-6",
            "route",
            "replace",
            "2001:db8:96::/64",
            "via",
            DIRIGO_LAN6,
        ],
    ));
    let mut rules = String::new();
    for (sw, svc, port) in [("-t", svc6(), "80"), ("-u", udp6(), "5353")] {
        rules += &format!("-P {sw} {svc} -z {LADDR6}\n");
        for n in 1..=3 {
            rules += &format!("-e {sw} {svc} -r [{}]:{port} -b -w 1\n", rip6(n));
        }
    }
    lab.adm_stdin(&["-R"], Some(&rules));
    let saved = lab.adm(&["-S", "-n"]);
    assert!(
        saved.contains(&format!("-P -t {} -z {LADDR6}\n", svc6())),
        "{saved}"
    );
    lab.adm(&["-C"]);
    lab.adm_stdin(&["-R"], Some(&saved));
    assert_eq!(lab.adm(&["-S", "-n"]), saved, "-S, -C, -R, -S");
    let l = lab.adm(&["-L", "-n"]);
    let want = format!("  -> {:<28} FullNat 1", format!("[{}]:80", rip6(1)));
    assert!(l.contains(&want), "{want:?} in\n{l}");
    let (down, up) = transfer6(lab, "fullnat6");
    eprintln!("fullnat6: 1 MiB down via {down}, 1 MiB up via {up}: checksums ok");
    let c = count(&servers(lab, 6));
    assert!(
        c.len() == 3 && c.values().all(|&k| k == 2),
        "fullnat6: rr over rs1..rs3: {c:?}"
    );
    udp(lab, &format!("{P}-wan"));
    let who = curl(lab, &[&format!("http://[{VIP6}]/whoami")]);
    assert!(who.contains(&format!("peer={LADDR6}:")), "{who}");
    lab.adm(&["-E", "-t", &svc6(), "-s", "rr", "-p", "60"]);
    let s = servers(lab, 4);
    assert!(s.iter().all(|n| n == &s[0]), "fullnat6 persistence: {s:?}");
    lab_common::client_addr::proxy_v2_ipv6(lab, VIP6, LADDR6, &rip6(3), CLIENT6);
    eprintln!(
        "fullnat6: checks done in {:.1} s",
        t.elapsed().as_secs_f64()
    );
}

/// The IPv4 local address of [`fullnat64`]'s service (on the servers'
/// network: dirigo answers ARP for it).
const LADDR4: &str = "10.98.0.201";

/// IPv6 clients to IPv4 FullNAT servers (issue 51): the NAT64 service's
/// servers switched to FullNAT, leaving from an IPv4 local address of the
/// service (not the NAT64 pool); 1 MiB each way byte-exact, the servers'
/// peer that local address; TOA refused for them, PROXY v2 carrying the
/// IPv6 client to an IPv4 server that speaks first.
fn fullnat64(lab: &Lab) {
    let svc = nat64_svc();
    let mut rules = format!("-P -t {svc} -z {LADDR4}\n");
    for n in 1..=3 {
        rules += &format!("-e -t {svc} -r {}:80 -b -w 1\n", lab_common::rip(n));
    }
    lab.adm_stdin(&["-R"], Some(&rules));
    let l = lab.adm(&["-L", "-n"]);
    assert!(
        l.contains(&format!("  -> {:<28} FullNat 1", "10.98.0.11:80")),
        "{l}"
    );
    let (down, up) = transfer6_to(lab, "fullnat64", &svc);
    let who = curl(lab, &[&format!("http://{svc}/whoami")]);
    assert!(who.contains(&format!("peer={LADDR4}:")), "{who}");
    let o = std::process::Command::new(common::DIRIGOADM)
        .args(["--socket", &lab.sock, "-E", "-t", &svc, "-s", "rr"])
        .args(["--client-address", "toa"])
        .output()
        .unwrap();
    assert!(
        !o.status.success()
            && String::from_utf8_lossy(&o.stderr).contains("TOA does not carry an IPv6 client"),
        "{o:?}"
    );
    // the IPv6 client's address by PROXY v2 to an IPv4 server that
    // speaks first: the header alone, first, then a byte-exact echo
    lab_common::client_addr::proxy_v2_from_ipv6(
        lab,
        VIP6,
        2528,
        LADDR4,
        &lab_common::rip(3),
        "0.0.0.0",
        CLIENT6,
    );
    eprintln!("fullnat64: 1 MiB down via {down}, 1 MiB up via {up} from {LADDR4}: checksums ok");
}

fn stats_conns(lab: &Lab, which: &str) -> u64 {
    let s = lab.adm(&["-L", "-n", "--stats", "--exact"]);
    let line = s
        .lines()
        .find(|l| l.starts_with(which))
        .unwrap_or_else(|| panic!("no {which} in\n{s}"));
    line[which.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn lab_ipv6_dr_tun_nat_dual_stack() {
    if !common::privileged("lab ipv6 modes") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let spec = LabSpec::dr("lab_ipv6_modes", P);
    let rs6: Vec<String> = (1..=3).map(rip6).collect();
    let rs: Vec<(&str, &str)> = rs6.iter().map(|r| (r.as_str(), "dr")).collect();
    let rips4: Vec<String> = (1..=3)
        .map(|n| format!("{}:80", lab_common::rip(n)))
        .collect();
    let rs4: Vec<(&str, &str)> = rips4.iter().map(|r| (r.as_str(), "nat")).collect();
    let lab = Lab::start_with_config(&spec, 65536, |c| {
        c.edit(
            "addresses = [\"10.99.0.1/24\"]",
            "addresses = [\"10.99.0.1/24\", \"2001:db8:99::1/64\"]",
        )
        .edit(
            "addresses = [\"10.98.0.1/24\"]",
            &format!("addresses = [\"10.98.0.1/24\", \"{DIRIGO_LAN6}/64\"]"),
        )
        .service("tcp", &svc6(), "rr", &rs)
        .service("udp", &udp6(), "rr", &rs)
        // NAT64: an IPv6 VIP port with the IPv4 real servers
        .dataplane("nat64_pool", format!("[\"{POOL4}\"]"))
        .service("tcp", &nat64_svc(), "rr", &rs4)
    });
    ipv6_lab(&lab);

    // the VIP is resolved by NDP (dirigo answers for it) and pinged
    let out = lab.client(&["ping", "-6", "-c", "3", "-i", "0.2", "-W", "2", VIP6]);
    assert!(out.contains("3 received"), "ping -6 VIP: {out}");

    for mode in ["dr", "tun", "nat"] {
        if mode != "dr" {
            lab.mode(mode);
            method(&lab, mode);
            if mode == "nat" {
                lab.switch_to_nat();
            }
        }
        rs_mode(&lab, mode);
        mode_checks(&lab, mode);
        if mode == "tun" {
            tun_types(&lab);
        }
        if mode == "nat" {
            first_reply_to_a_new_client_held(&lab);
        }
    }

    nat64(&lab);

    // dual stack: IPv4 through the IPv4 VIP in the same dirigo, the
    // services' counters apart
    let v6_before = stats_conns(&lab, &format!("TCP  {}", svc6()));
    let v4_before = stats_conns(&lab, "TCP  10.99.0.100:80");
    checks::transfer(&lab, "ipv4 beside ipv6");
    let v6_after = stats_conns(&lab, &format!("TCP  {}", svc6()));
    let v4_after = stats_conns(&lab, "TCP  10.99.0.100:80");
    assert_eq!(
        v6_after, v6_before,
        "IPv4 traffic counted on the IPv6 service"
    );
    assert_eq!(
        v4_after,
        v4_before + 2,
        "the IPv4 transfer's two connections"
    );
    // 3 modes x (2 transfers + 12 requests) IPv6 TCP connections, TUN's
    // 5 tunnel types x 2 transfers, and NAT's first one from a new client
    // address
    assert_eq!(
        v6_after,
        3 * 14 + 5 * 2 + 1,
        "IPv6 connections on the IPv6 service"
    );
    fullnat6(&lab);
    fullnat64(&lab);
    let drops = lab.ctl_json(&["drops"]);
    eprintln!("drops: {drops}");
    lab.finish();
}
