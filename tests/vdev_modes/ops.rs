//! One-packet scheduling (`ops = true`, ipvsadm's `-o`) through the real
//! binary: 1,000 DNS-like queries from one client socket (one tuple) to a
//! UDP DR service with two real servers under rr alternate the servers
//! datagram by datagram, and no connection entry is left.

use super::harness::*;
use super::packets::*;
use std::process::Command;

fn adm_run(sock: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(crate::common::DIRIGOADM)
        .arg("--socket")
        .arg(sock)
        .args(args)
        .output()
        .expect("run dirigoadm")
}

fn adm(sock: &std::path::Path, args: &[&str]) -> String {
    let out = adm_run(sock, args);
    assert!(
        out.status.success(),
        "dirigoadm {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn ops_spreads_one_socket_and_keeps_no_connection() {
    if !crate::common::privileged("vdev ops") {
        return;
    }
    const N: usize = 1000;
    let c = client(1);
    let wan: Vec<Vec<u8>> = (0..N)
        .map(|i| {
            let q = format!("dns query {i:04}");
            eth(
                WAN_MAC,
                GW_MAC,
                ETH_IPV4,
                &ip_udp(c, VIP, 5300, 53, 50, q.as_bytes()),
            )
        })
        .collect();
    let svc = crate::common::service_toml(
        "udp",
        "10.0.0.100:53",
        "rr",
        &[("172.16.0.11", "dr"), ("172.16.0.12", "dr")],
    )
    .replacen(
        "scheduler = \"rr\"\n",
        "scheduler = \"rr\"\nops = true\n",
        1,
    );
    let mut listed = String::new();
    let mut conns = String::new();
    let mut stats = String::new();
    let r = run_with("ops", &svc, &wan, &[], |sock| {
        let l = ctl(sock, &["lcores"]);
        let live: u64 = l
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["conns"].as_u64().unwrap())
            .sum();
        assert_eq!(live, 0, "no connection entry: {l}");
        listed = adm(sock, &["-L", "-n"]);
        stats = adm(sock, &["-L", "-n", "--stats"]);
        conns = adm(sock, &["-L", "-n", "-c"]);
        // the daemon refuses a NAT server for the service, with the reason
        let nat = adm_run(
            sock,
            &["-a", "-u", "10.0.0.100:53", "-r", "172.16.0.13", "-m"],
        );
        let why = String::from_utf8_lossy(&nat.stderr);
        assert!(
            !nat.status.success() && why.contains("is NAT (-m)"),
            "{why}"
        );
        // -E without -o turns it off, with -o on again
        adm(sock, &["-E", "-u", "10.0.0.100:53", "-s", "rr"]);
        let off = adm(sock, &["-L", "-n"]);
        assert!(off.contains("UDP  10.0.0.100:53 rr\n"), "{off}");
        adm(sock, &["-E", "-u", "10.0.0.100:53", "-s", "rr", "-o"]);
        let on = adm(sock, &["-S", "-n"]);
        assert!(on.contains("-A -u 10.0.0.100:53 -s rr -o\n"), "{on}");
    });
    assert!(
        listed.contains("UDP  10.0.0.100:53 rr ops"),
        "the listing shows ops:\n{listed}"
    );
    assert!(!conns.contains("UDP"), "no connection listed:\n{conns}");
    // IPVS counts each datagram's one-packet connection in Conns
    assert!(
        stats.contains("UDP  10.0.0.100:53                    1000     1000"),
        "{stats}"
    );
    assert!(r.wan_out.is_empty(), "nothing back on the wan");
    assert_eq!(r.lan_out.len(), N, "every query forwarded:\n{}", r.log);
    let mut per = [0usize; 2];
    let mut prev = None;
    for (i, out) in r.lan_out.iter().enumerate() {
        let to = match &out[0..6] {
            m if m == RS1_MAC => 0,
            m if m == RS2_MAC => 1,
            m => panic!("query {i} to {m:02x?}"),
        };
        assert_ne!(prev, Some(to), "rr alternates datagram by datagram ({i})");
        prev = Some(to);
        per[to] += 1;
        // DR: the datagram itself is untouched
        assert_eq!(&out[14..], &wan[i][14..], "query {i}");
        udp_checked(out);
    }
    assert_eq!(per, [N / 2, N / 2]);
}
