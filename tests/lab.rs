//! The netns lab, end to end: unmodified kernel TCP/UDP clients and servers
//! talking through a real dirigo in DR, TUN and NAT (issue 7). One test per
//! mode runs every check of that mode on one lab + daemon:
//! ping the VIP; 2 MiB up and 2 MiB down, checksummed; UDP request/response;
//! rr (exact rotation) and wrr 1:2:3 over concurrent connections; weight 0
//! and removal with a held connection; `-L -n -c` states and real servers;
//! persistence. TUN also proves path-MTU discovery through the tunnel,
//! then GUE and GRE tunnels (issue 52, lab_common/tun_types.rs).
//! DR, TUN and NAT each restart dirigo with SIGTERM mid-transfer: the
//! connection handoff keeps every transfer and UDP flow (issue 53); DR
//! then proves a handoff file of another version or a bad checksum is
//! refused, and entries of a removed real server refused alone; NAT, that
//! a SIGKILL after a crash checkpoint keeps them too; FullNAT, that a
//! restart keeps its connections (local address and port). NAT also
//! masquerades the real servers' own connections out (`[[snat]]`, issue
//! 51; lab_common/snat.rs).
//! Needs root and hugepages (skips outside CI, fails in CI).

mod common;
mod lab_common;

use lab_common::checks::*;
use lab_common::handoff::{
    bad_checksum_and_removed_server_are_refused, bumped_version_is_refused,
    crash_keeps_checkpointed, restart_keeps_connections, with_checkpoint, with_handoff,
};
use lab_common::{tun_types, Lab, LabSpec, SERIAL, VIP};

/// The checks shared by every mode.
fn common_checks(lab: &Lab, method: &str, reply_iface: &str, closed_state: &str) {
    ping(lab);
    spread_rr(lab);
    transfer(lab, method);
    // after spread_rr: dirigo drops a datagram to a not-yet-resolved real
    // server (no ARP pending queue), and UDP does not retransmit
    udp(lab, reply_iface);
    spread_wrr(lab, method);
    weight0_removed_listing(lab, method, closed_state);
    persistence(lab);
}

/// The lab of `mode`, its dirigo with a handoff file (issue 53).
fn start(name: &str, prefix: &str, mode: &str) -> Lab {
    start_with(name, prefix, mode, with_handoff)
}

/// The lab of `mode`, its dirigo's configuration made by `config`.
fn start_with(
    name: &str,
    prefix: &str,
    mode: &str,
    config: impl Fn(common::DaemonConfig, &str) -> common::DaemonConfig,
) -> Lab {
    start_env(name, prefix, mode, &[], config)
}

/// [`start_with`] with extra environment for lab.sh.
fn start_env(
    name: &str,
    prefix: &str,
    mode: &str,
    env: &[(&str, &str)],
    config: impl Fn(common::DaemonConfig, &str) -> common::DaemonConfig,
) -> Lab {
    let spec = LabSpec {
        name,
        prefix,
        mode,
        method: mode,
        cores: &["-l", "0-1"],
        nrs: 3,
        env,
    };
    Lab::start_with_config(&spec, 65536, |c| config(c, name))
}

#[test]
fn lab_dr() {
    if !common::privileged("lab DR") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut lab = start("lab_dr", "dgtd", "dr");
    // a SIGTERM restart breaks no connection; a bumped version is refused
    restart_keeps_connections(&mut lab, "dr");
    bumped_version_is_refused(&mut lab);
    bad_checksum_and_removed_server_are_refused(&mut lab, "dr");
    // DR/TUN see only the client's half: the client's FIN moves the entry to
    // FIN_WAIT and nothing later changes it (IPVS input-only table).
    common_checks(&lab, "dr", "ret0", "FIN_WAIT");
    lab.finish();
}

#[test]
fn lab_tun_with_pmtu() {
    if !common::privileged("lab TUN") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // LAN MTU 1500 (lab and dirigo defaults), client WAN MTU 1500: a full
    // 1500-byte segment becomes a 1520-byte IPIP packet that does not fit.
    // the real servers' decapsulators take GRE and GUE too (issue 52)
    let env = [("LAB_DECAP_ARGS", tun_types::DECAP_ARGS)];
    let mut lab = start_env("lab_tun", "dgtt", "tun", &env, with_handoff);
    let unreach0 = client_snmp(&lab, "Icmp", "InDestUnreachs");
    lab.client(&["ip", "route", "flush", "cache"]);
    // full-size segments with DF (Linux's default PMTU discovery) upstream
    let rs = upload(&lab, 2 << 20, 11, "pmtu");
    let route = lab.client(&["ip", "route", "get", VIP]);
    assert!(
        route.contains("mtu 1480"),
        "client learnt no path MTU 1480: {route}"
    );
    let unreach = client_snmp(&lab, "Icmp", "InDestUnreachs") - unreach0;
    assert!(unreach >= 1, "client got no ICMP destination unreachable");
    eprintln!(
        "tun pmtu: upload via {rs} ok; {unreach} frag-needed; route: {}",
        route.trim()
    );
    // dirigo's own count of the frag-needed messages it sent
    let lc = lab.ctl_json(&["lcores"]);
    let sent: u64 = lc
        .as_array()
        .expect("lcores list")
        .iter()
        .flat_map(|l| l["extra"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["name"] == "icmp_frag_needed_sent")
        .map(|c| c["value"].as_u64().unwrap_or(0))
        .sum();
    assert!(sent >= 1, "dirigo reports no frag-needed sent: {lc}");
    restart_keeps_connections(&mut lab, "tun");
    common_checks(&lab, "tun", "ret0", "FIN_WAIT");
    // GUE and GRE: the servers switched at runtime, bytes through each
    // (the UDP service's three servers stay IPIP all along)
    tun_types::gue_and_gre(&lab, &tun_types::Family::ipv4(), 6);
    lab.finish();
}

#[test]
fn lab_nat() {
    if !common::privileged("lab NAT") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // with the crash checkpoint (a SIGKILL keeps the connections too),
    // the SYN proxy, and a state file that keeps the service's flag
    let mut lab = start_with("lab_nat", "dgtn", "nat", |c, name| {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        with_checkpoint(c, name)
            .dataplane("synproxy", "true")
            .control(&format!("state_file = \"{}/rules\"", dir.display()))
            .raw(lab_common::snat::SNAT_RULES)
    });
    // the handoff of SYN-proxied NAT connections (their sequence deltas)
    let web = format!("{VIP}:80");
    lab.adm(&["-E", "-t", &web, "-s", "rr", "--synproxy"]);
    restart_keeps_connections(&mut lab, "nat+synproxy");
    crash_keeps_checkpointed(&mut lab, "nat+synproxy");
    let l = lab.adm(&["-L", "-n"]);
    assert!(l.contains(&format!("TCP  {web} rr synproxy")), "{l}");
    lab.adm(&["-E", "-t", &web, "-s", "rr"]);
    // NAT sees both halves: client FIN, server FIN, last ACK -> TIME_WAIT.
    common_checks(&lab, "nat", "dgtn-wan", "TIME_WAIT");
    // the real server saw the real client address, and dirigo's NAT replies
    let who = lab.client(&["curl", "-sS", "-m", "5", &format!("http://{VIP}/whoami")]);
    assert!(
        who.contains("local=10.98.0.1") && who.contains("peer=10.99.0.2:"),
        "{who}"
    );
    // the FTP helper: vsftpd behind VIP:21, curl in all four modes
    lab_common::ftp::ftp(&lab, std::path::Path::new("/tmp/dirigo-lab-nat-ftp"));
    // the real servers' own connections out, masqueraded (issue 51)
    lab_common::snat::snat_checks(&lab);
    lab.finish();
}

/// FullNAT (issue 51): the real servers keep their default gateway (the
/// lab's router, as in DR), and the local address is not on their network:
/// only the router's route to it leads back to dirigo. The services are set
/// up by one `-R` batch (`-P` local addresses, `-b` servers), saved with
/// `-S`, cleared and restored; then rr, 2 MiB each way byte-exact, UDP,
/// the servers seeing the local address as their peer, a SIGTERM restart
/// that breaks no transfer (the handoff, issue 53), and persistence; then
/// the client's address through PROXY v1/v2 (nginx, HAProxy, a server
/// that speaks first) and TOA (`lab_common::client_addr`).
#[test]
fn lab_fullnat() {
    if !common::privileged("lab FullNAT") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // a state file: the services -R makes come back at the restart below
    let mut lab = start_with("lab_fullnat", "dgtf", "dr", |c, name| {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        with_handoff(c, name).control(&format!("state_file = \"{}/rules\"", dir.display()))
    });
    // the servers' router: the local network behind dirigo, no redirects
    // (the servers' replies keep taking the router)
    for k in ["all", "br0"] {
        lab.exec(
            "srv",
            &[
                "sysctl",
                "-qw",
                &format!("net.ipv4.conf.{k}.send_redirects=0"),
            ],
        );
    }
    let o = lab.exec(
        "srv",
        &["ip", "route", "add", LADDR_NET, "via", "10.98.0.1"],
    );
    assert!(o.status.success(), "route to the local network: {o:?}");
    let mut rules = String::from("-C\n");
    for (sw, port) in [("-t", 80), ("-u", 5353)] {
        let svc = format!("{VIP}:{port}");
        rules += &format!("-A {sw} {svc} -s rr\n-P {sw} {svc} -z {LADDR}\n");
        for n in 1..=3 {
            rules += &format!("-a {sw} {svc} -r {}:{port} -b -w 1\n", lab_common::rip(n));
        }
    }
    lab.adm_stdin(&["-R"], Some(&rules));
    let saved = lab.adm(&["-S", "-n"]);
    assert!(
        saved.contains(&format!("-P -t {VIP}:80 -z {LADDR}\n"))
            && saved.contains(&format!("-a -u {VIP}:5353 -r 10.98.0.11:5353 -b -w 1\n")),
        "{saved}"
    );
    lab.adm(&["-C"]);
    lab.adm_stdin(&["-R"], Some(&saved));
    assert_eq!(lab.adm(&["-S", "-n"]), saved, "-S, -C, -R, -S");
    let l = lab.adm(&["-L", "-n"]);
    assert!(l.contains("FullNat"), "{l}");
    let g = lab.adm(&["--get-laddr", "-t", &format!("{VIP}:80")]);
    assert!(g.contains(LADDR), "{g}");
    // without local addresses a FullNAT service is refused
    let o = std::process::Command::new(common::DIRIGOADM)
        .args([
            "--socket",
            &lab.sock,
            "-Q",
            "-t",
            &format!("{VIP}:80"),
            "-z",
            LADDR,
        ])
        .output()
        .unwrap();
    assert!(!o.status.success(), "the last local address removed");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("needs the service's local addresses"),
        "{o:?}"
    );
    ping(&lab);
    spread_rr(&lab);
    transfer(&lab, "fullnat");
    udp(&lab, &format!("{}-wan", lab.prefix));
    // the real server's peer is the local address, not the client
    let who = lab.client(&["curl", "-sS", "-m", "5", &format!("http://{VIP}/whoami")]);
    assert!(who.contains(&format!("peer={LADDR}:")), "{who}");
    // a SIGTERM restart keeps FullNAT's connections, local legs and all
    restart_keeps_connections(&mut lab, "fullnat");
    persistence(&lab);
    every_scheduler(&lab);
    // the client's address through PROXY v1/v2 and TOA (issue 51)
    lab_common::client_addr::client_address_checks(&mut lab, LADDR);
    // the pool's and client_address's drop reasons are listed, and
    // nothing was refused
    let d = lab.ctl_json(&["drops"]);
    for reason in ["lb_fullnat_ports_exhausted", "lb_client_address_no_room"] {
        let ex = d
            .as_array()
            .expect("drops")
            .iter()
            .find(|d| d["reason"] == reason)
            .unwrap_or_else(|| panic!("no {reason} in {d}"));
        assert_eq!(ex["count"], 0, "{ex}");
    }
    lab.finish();
}

/// Every scheduler through FullNAT (issue 51): whole connections on
/// each, the hashing ones (one client, one VIP) on one server, rr and wrr
/// (equal weights) over all three; the service goes back to rr.
fn every_scheduler(lab: &Lab) {
    let svc = format!("{VIP}:80");
    for s in dirigo_core::lb::sched::SchedKind::ALL {
        lab.adm(&["-E", "-t", &svc, "-s", s.name()]);
        let names: Vec<String> = conns(lab, 6, None).into_iter().map(|a| a.name).collect();
        let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
        match s.name() {
            "rr" | "wrr" => assert_eq!(distinct.len(), 3, "{}: {names:?}", s.name()),
            "sh" | "dh" | "mh" | "fo" => assert_eq!(distinct.len(), 1, "{}: {names:?}", s.name()),
            _ => assert!(!distinct.is_empty(), "{}: {names:?}", s.name()),
        }
    }
    lab.adm(&["-E", "-t", &svc, "-s", "rr"]);
    eprintln!("fullnat: every scheduler ok");
}

/// FullNAT's local address in [`lab_fullnat`], and its network (behind
/// dirigo, seen from the servers' router).
const LADDR: &str = "10.96.0.10";
const LADDR_NET: &str = "10.96.0.0/24";

/// Connection thresholds (`-x`): a real server at its upper threshold takes
/// no new connections (IPVS's overload flag) while its existing ones keep
/// working; the others take the new ones.
#[test]
fn lab_threshold() {
    if !common::privileged("lab threshold") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lab = start("lab_threshold", "dgth", "dr");
    let svc = format!("{VIP}:80");
    lab.adm(&[
        "-e",
        "-t",
        &svc,
        "-r",
        &lab_common::rip(1),
        "-g",
        "-w",
        "1",
        "-x",
        "2",
    ]);
    let listing = lab.adm(&["-L", "-n", "--thresholds"]);
    assert!(listing.contains("2 "), "threshold not listed: {listing}");
    // six held connections: rr gives rs1 two, which reaches its threshold
    let held = Held::start(&lab, 6, "0.2", "thr");
    let per = count(held.conns.iter().map(|c| c.1.clone()));
    assert_eq!(per.get("rs1"), Some(&2), "{per:?}");
    let c = conns(&lab, 12, None);
    let per_new = count(c.iter().map(|a| a.name.clone()));
    assert_eq!(
        per_new.get("rs1"),
        None,
        "rs1 over its threshold got new connections: {per_new:?}"
    );
    assert_eq!(per_new.get("rs2"), Some(&6), "{per_new:?}");
    assert_eq!(per_new.get("rs3"), Some(&6), "{per_new:?}");
    // give the held connections at least two rounds at their 0.2 s
    // interval: with real servers resolved in advance the twelve new
    // connections above can take less than that
    std::thread::sleep(std::time::Duration::from_millis(600));
    for (lport, name, rounds, fails, seen) in held.stop() {
        assert_eq!(
            (fails, seen.as_slice()),
            (0, [name.clone()].as_slice()),
            "held :{lport}"
        );
        assert!(rounds >= 2, "held :{lport} {name}: {rounds} rounds");
    }
    lab.finish();
}

/// The client's connections to `port` through the VIP, `n` at once: the
/// real servers that answered, in order.
fn names_on(lab: &Lab, port: u16, n: usize) -> Vec<String> {
    let out = lab.client(&[
        "python3",
        &common::support("lab_client.py"),
        "conns",
        VIP,
        &port.to_string(),
        &n.to_string(),
    ]);
    let names: Vec<String> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["ok"], true, "connection to :{port} failed: {l}");
            v["name"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(names.len(), n, "{out}");
    names
}

/// `dirigoctl ARGS` that must fail: its stderr.
fn ctl_fails(lab: &Lab, args: &[&str]) -> String {
    let o = std::process::Command::new(common::DIRIGOCTL)
        .arg("--socket")
        .arg(&lab.sock)
        .args(args)
        .output()
        .unwrap();
    assert!(!o.status.success(), "dirigoctl {args:?} succeeded");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// fwmark services (issue 52): a NAT fwmark service spanning ports 80 and
/// 443 of the VIP, its marks set by dirigo's own rules. A `[[mark]]` of
/// the config gives 443 the mark; rr rotates over the servers there (the
/// NAT replies come back); a rule added at runtime with `dirigoctl mark
/// add` takes port 80 once its ordinary service is gone; with `-p` one
/// client sticks to one server on both ports (the template is the
/// mark's); a mark without a service is a counted drop; bad rules are
/// refused; and the rules, services and all, survive a restart through
/// the state file.
#[test]
fn lab_fwmark() {
    if !common::privileged("lab fwmark") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let spec = LabSpec {
        name: "lab_fwmark",
        prefix: "dgtk",
        mode: "nat",
        method: "nat",
        cores: &["-l", "0-1"],
        nrs: 3,
        env: &[],
    };
    let state = common::scratch("lab_fwmark").join("state");
    let _ = std::fs::remove_file(&state);
    let rs: String = (1..=3)
        .map(|n| {
            format!(
                "[[service.real_server]]\naddress = \"{}\"\nmethod = \"nat\"\n",
                lab_common::rip(n)
            )
        })
        .collect();
    let extra = format!(
        "[[service]]\nfwmark = 1\nscheduler = \"rr\"\n{rs}\n\
         [[mark]]\nprotocol = \"tcp\"\ndestination = \"{VIP}\"\nport = 443\nmark = 1\n"
    );
    let mut lab = Lab::start_with_config(&spec, 65536, |c| {
        c.control(&format!("state_file = \"{}\"", state.display()))
            .raw(&extra)
    });
    // a second HTTP server on each real server, on 443
    let servers: Vec<_> = (1..=3)
        .map(|n| {
            lab.spawn(
                &format!("rs{n}"),
                &[
                    "python3",
                    &common::support("rs_server.py"),
                    "--name",
                    &format!("rs{n}"),
                    "--port",
                    "443",
                ],
            )
        })
        .collect();
    lab.wait_for("the real servers on 443", 10, || {
        (1..=3).all(|n| {
            let o = lab.exec(&format!("rs{n}"), &["ss", "-Hltn", "sport = :443"]);
            String::from_utf8_lossy(&o.stdout).contains("443")
        })
    });
    let l = lab.adm(&["-L", "-n"]);
    assert!(l.contains("FWM  1 rr\n"), "{l}");
    assert!(lab.adm(&["-S", "-n"]).contains("-A -f 1 -s rr\n"));
    // 443 has no ordinary service: the config's rule gives it mark 1
    assert_round_robin(&names_on(&lab, 443, 6), 3);
    // garbage and conflicts are refused, nothing changes
    let e = ctl_fails(&lab, &["mark", "add", "tcp", "nowhere", "80", "mark", "1"]);
    assert!(e.contains("not an address"), "{e}");
    let e = ctl_fails(&lab, &["mark", "add", "tcp", VIP, "80", "mark", "0"]);
    assert!(e.contains("mark 0"), "{e}");
    let e = ctl_fails(
        &lab,
        &["mark", "add", "tcp", "10.99.0.0/24", "400-500", "mark", "2"],
    );
    assert!(e.contains("overlaps"), "{e}");
    let e = ctl_fails(&lab, &["mark", "del", "tcp", VIP, "81", "mark", "1"]);
    assert!(e.contains("no mark rule"), "{e}");
    // port 80: its ordinary service goes, a runtime rule gives it mark 1
    lab.adm(&["-D", "-t", &format!("{VIP}:80")]);
    let c = common::DIRIGOCTL;
    let o = std::process::Command::new(c)
        .args([
            "--socket", &lab.sock, "mark", "add", "tcp", VIP, "80", "mark", "1",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "mark add: {o:?}");
    // a mark no service has: allowed, its packets a counted drop
    lab.ctl_json(&["mark", "add", "udp", VIP, "6000", "mark", "9"]);
    let list = lab.ctl_json(&["mark", "list"]);
    assert_eq!(list.as_array().map(|a| a.len()), Some(3), "{list}");
    assert_round_robin(&names_on(&lab, 80, 6), 3);
    // persistence across the mark's ports: one template for 80 and 443
    lab.adm(&["-E", "-f", "1", "-s", "rr", "-p", "60"]);
    let mut names = names_on(&lab, 80, 4);
    names.extend(names_on(&lab, 443, 4));
    names.extend(names_on(&lab, 80, 2));
    assert!(
        names.iter().all(|n| n == &names[0]),
        "persistence over 80 and 443: {names:?}"
    );
    lab.client(&[
        "python3",
        "-c",
        &format!(
            "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); \
             [s.sendto(b'x', ('{VIP}', 6000)) for _ in range(3)]"
        ),
    ]);
    lab.wait_for("mark_no_service drops", 5, || {
        lab.ctl_json(&["drops"])
            .as_array()
            .expect("drops")
            .iter()
            .any(|d| d["reason"] == "lb_mark_no_service" && d["count"].as_u64() >= Some(1))
    });
    // a restart: the state file brings back the rules and the table
    let saved = std::fs::read_to_string(&state).expect("state file");
    assert!(
        saved.contains(&format!("#mark tcp {VIP}/32 80 mark 1\n")),
        "{saved}"
    );
    lab.restart(|_| {});
    let l = lab.adm(&["-L", "-n"]);
    assert!(l.contains("FWM  1 rr persistent 60\n"), "{l}");
    assert!(!l.contains(&format!("TCP  {VIP}:80")), "{l}");
    let list = lab.ctl_json(&["mark", "list"]);
    assert_eq!(list.as_array().map(|a| a.len()), Some(3), "{list}");
    let after: Vec<String> = names_on(&lab, 80, 3)
        .into_iter()
        .chain(names_on(&lab, 443, 3))
        .collect();
    assert!(
        after.iter().all(|n| n == &after[0]),
        "after the restart: {after:?}"
    );
    for mut s in servers {
        let _ = s.kill();
        let _ = s.wait();
    }
    lab.finish();
}
