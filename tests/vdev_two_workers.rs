//! Two workers on virtual devices (issue 8): NAT requests arrive on worker
//! 0's queue and their replies on worker 1's queue. Every reply must be
//! translated (by the worker that owns the connection, reached over the
//! steering ring), counted once, and no connection tracked twice.

mod common;
#[path = "vdev_modes/harness.rs"]
#[allow(dead_code)]
mod harness;
#[path = "vdev_modes/packets.rs"]
#[allow(dead_code)]
mod packets;

use harness::{read_pcap, write_pcap, GW_MAC, LAN_MAC, RS1 as RS, RS1_MAC as RS_MAC, VIP, WAN_MAC};
use packets::{eth, ip_udp, ipv4_checked, udp_checked, ETH_IPV4};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const FLOWS: u8 = 40;

fn client(i: u8) -> [u8; 4] {
    [198, 18, i / 10, 1 + i]
}

fn ctl(sock: &str, args: &[&str]) -> Value {
    harness::ctl(Path::new(sock), args)
}

fn extra(l: &Value, name: &str) -> u64 {
    l["extra"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["name"] == name)
        .map(|c| c["value"].as_u64().unwrap_or(0))
        .sum()
}

#[test]
fn nat_replies_on_another_worker_are_translated_once() {
    if !common::privileged("vdev two workers") {
        return;
    }
    let dir = common::scratch("vdev-two-workers");
    let p = |n: &str| dir.join(n).display().to_string();
    let requests: Vec<Vec<u8>> = (0..FLOWS)
        .map(|i| {
            eth(
                WAN_MAC,
                GW_MAC,
                ETH_IPV4,
                &ip_udp(client(i), VIP, 30000 + i as u16, 53, 64, b"question"),
            )
        })
        .collect();
    // The replies queue starts with frames for another host (dropped at
    // once, `other_host`) so that worker 0 has created the connections
    // before worker 1 reaches the replies.
    let mut replies: Vec<Vec<u8>> = (0..100_000)
        .map(|_| {
            eth(
                [0x02, 0, 0, 0, 0x77, 0x77],
                RS_MAC,
                ETH_IPV4,
                &ip_udp(RS, [192, 0, 2, 1], 5353, 9, 64, b"x"),
            )
        })
        .collect();
    let fillers = replies.len();
    replies.extend((0..FLOWS).map(|i| {
        eth(
            LAN_MAC,
            RS_MAC,
            ETH_IPV4,
            &ip_udp(RS, client(i), 5353, 30000 + i as u16, 64, b"answer"),
        )
    }));
    write_pcap(&dir.join("req.pcap"), &requests);
    write_pcap(&dir.join("rep.pcap"), &replies);
    write_pcap(&dir.join("empty.pcap"), &[]);
    let sock = p("ctl.sock");
    let cfg = harness::config(
        "dg-vdev2w",
        Path::new(&sock),
        &format!(
            "rx_pcap={},rx_pcap={},tx_pcap={},tx_pcap={}",
            p("req.pcap"),
            p("empty.pcap"),
            p("wan0.pcap"),
            p("wan1.pcap")
        ),
        &format!(
            "rx_pcap={},rx_pcap={},tx_pcap={},tx_pcap={}",
            p("empty.pcap"),
            p("rep.pcap"),
            p("lan0.pcap"),
            p("lan1.pcap")
        ),
    )
    .lcores(&["--lcores", "0@0,1@1,2@0"])
    .tables(4096, 8191)
    .service("udp", "10.0.0.100:53", "rr", &[("172.16.0.11:5353", "nat")]);
    let d = common::Daemon::start(&dir, &cfg.toml());
    let total = requests.len() + replies.len();
    let deadline = Instant::now() + Duration::from_secs(30);
    let lcores = loop {
        let l = ctl(&sock, &["lcores"]);
        let rx: u64 = l
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["rx_packets"].as_u64().unwrap())
            .sum();
        if rx as usize >= total {
            break l;
        }
        assert!(
            Instant::now() < deadline,
            "only {rx} of {total} received: {l}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_millis(300));
    let lcores = {
        let _ = lcores;
        ctl(&sock, &["lcores"])
    };
    let ws = lcores.as_array().unwrap();
    assert_eq!(ws.len(), 2, "{lcores}");
    // Requests were received by worker 0 only, replies by worker 1 only.
    assert_eq!(ws[0]["rx_packets"].as_u64(), Some(FLOWS as u64), "{lcores}");
    assert_eq!(
        ws[1]["rx_packets"].as_u64(),
        Some((fillers + FLOWS as usize) as u64),
        "{lcores}"
    );
    // Each connection tracked exactly once, by its owner.
    let conns: u64 = ws.iter().map(|w| w["conns"].as_u64().unwrap()).sum();
    let created: u64 = ws
        .iter()
        .map(|w| w["conns_created"].as_u64().unwrap())
        .sum();
    assert_eq!((conns, created), (FLOWS as u64, FLOWS as u64), "{lcores}");
    // Both directions crossed between the workers.
    let out: u64 = ws.iter().map(|w| extra(w, "steered_out")).sum();
    let inn: u64 = ws.iter().map(|w| extra(w, "steered_in")).sum();
    assert_eq!(out, inn, "{lcores}");
    assert!(
        extra(&ws[0], "steered_out") > 0 && extra(&ws[1], "steered_out") > 0,
        "{lcores}"
    );
    assert_eq!(extra(&ws[1], "other_host"), fillers as u64);
    let stats = Command::new(crate::common::DIRIGOADM)
        .args(["--socket", &sock, "-L", "-n", "--stats", "--exact"])
        .output()
        .unwrap();
    let stats = String::from_utf8_lossy(&stats.stdout).into_owned();
    let svc = stats
        .lines()
        .find(|l| l.starts_with("UDP  10.0.0.100:53"))
        .unwrap_or_else(|| panic!("{stats}"));
    let f: Vec<&str> = svc.split_whitespace().collect();
    // Conns InPkts OutPkts: every packet counted exactly once
    assert_eq!(&f[2..5], &["40", "40", "40"], "{stats}");
    let out = d.stop();
    assert!(out.contains("steer_lost=0"), "{out}");
    // net_pcap has no RSS: the start log says so, and software steering
    // (above) is what delivered the replies
    for port in ["wan", "lan"] {
        let line = format!("dirigo: port {port}: software steering: net_pcap has no RSS");
        assert!(out.contains(&line), "{line:?} in:\n{out}");
    }

    let not_arp = |f: &Vec<u8>| f.len() > 13 && f[12..14] == [0x08, 0x00];
    let lan: Vec<Vec<u8>> = [p("lan0.pcap"), p("lan1.pcap")]
        .iter()
        .flat_map(|f| read_pcap(Path::new(f)))
        .filter(not_arp)
        .collect();
    let wan: Vec<Vec<u8>> = [p("wan0.pcap"), p("wan1.pcap")]
        .iter()
        .flat_map(|f| read_pcap(Path::new(f)))
        .filter(not_arp)
        .collect();
    assert_eq!(lan.len(), FLOWS as usize, "requests out on the lan");
    assert_eq!(wan.len(), FLOWS as usize, "replies out on the wan");
    let mut seen = std::collections::HashSet::new();
    for f in &lan {
        udp_checked(f);
        let ip = ipv4_checked(f);
        assert_eq!(ip.destination, RS);
        assert_eq!(&f[0..6], &RS_MAC);
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), 5353);
    }
    for f in &wan {
        udp_checked(f);
        let ip = ipv4_checked(f);
        assert_eq!(ip.source, VIP, "reply translated to the VIP");
        assert_eq!(&f[0..6], &GW_MAC);
        assert_eq!(u16::from_be_bytes([f[34], f[35]]), 53);
        let port = u16::from_be_bytes([f[36], f[37]]);
        assert!(seen.insert((ip.destination, port)), "reply twice: {port}");
        let i = (port - 30000) as u8;
        assert_eq!(ip.destination, client(i));
    }
}
