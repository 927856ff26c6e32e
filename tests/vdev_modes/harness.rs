//! The daemon harness of the vdev tests: write the rx pcaps, start the real
//! `dirigo` on net_pcap ports, wait until its worker took every packet,
//! stop it and read the tx pcaps; plus the test topology.

use crate::common;
use crate::packets::{ip_tcp, seg, Ip, Mac, ETH_ARP};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One daemon at a time.
pub static SERIAL: Mutex<()> = Mutex::new(());

/// net_pcap's MACs are fixed per vdev index (`02:70:63:61:70:0N`); the
/// fixtures address dirigo with them, and every run checks that `dirigoctl
/// ports` reports exactly these.
pub const WAN_MAC: Mac = [0x02, 0x70, 0x63, 0x61, 0x70, 0x00];
pub const LAN_MAC: Mac = [0x02, 0x70, 0x63, 0x61, 0x70, 0x01];
/// The client-side router (default gateway of dirigo).
pub const GW_MAC: Mac = [0x02, 0x00, 0x00, 0x00, 0xfe, 0x01];
/// dirigo's addresses, the VIP, the real servers (same values as the config).
pub const WAN_IP: Ip = [10, 0, 0, 1];
pub const LAN_IP: Ip = [172, 16, 0, 1];
pub const VIP: Ip = [10, 0, 0, 100];
pub const RS1: Ip = [172, 16, 0, 11];
pub const RS2: Ip = [172, 16, 0, 12];
pub const RS1_MAC: Mac = [0x02, 0x00, 0x00, 0x00, 0x00, 0x11];
pub const RS2_MAC: Mac = [0x02, 0x00, 0x00, 0x00, 0x00, 0x12];

// ------------------------------------------------------------ pcap + daemon

pub use common::{read_pcap, write_pcap};

/// dirigo on net_pcap ports `wan` and `lan` (two-port topology, static
/// neighbors for the gateway and both real servers).
pub fn config(prefix: &str, sock: &Path, wan: &str, lan: &str) -> common::DaemonConfig {
    common::DaemonConfig::new(prefix, sock.display())
        .vdev(format!("net_pcap0,{wan}"))
        .vdev(format!("net_pcap1,{lan}"))
        .wan_lan("net_pcap0", "net_pcap1")
        .neighbor("10.0.0.254", "02:00:00:00:fe:01", "wan")
        .neighbor("172.16.0.11", "02:00:00:00:00:11", "lan")
        .neighbor("172.16.0.12", "02:00:00:00:00:12", "lan")
}

/// `dirigoctl --socket S ARGS --json`: the response's `data`.
pub fn ctl(sock: &Path, args: &[&str]) -> Value {
    let out = Command::new(crate::common::DIRIGOCTL)
        .arg("--socket")
        .arg(sock)
        .arg("--json")
        .args(args)
        .output()
        .expect("run dirigoctl");
    assert!(
        out.status.success(),
        "dirigoctl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("dirigoctl json");
    v["ok"]["data"].clone()
}

/// What one daemon run produced.
pub struct Run {
    pub wan_out: Vec<Vec<u8>>,
    pub lan_out: Vec<Vec<u8>>,
    /// Gratuitous ARPs dirigo sent at start (removed from the outs).
    pub garps: usize,
    /// `dirigoctl drops`: reason -> count (taken after all rx was processed).
    pub drops: HashMap<String, u64>,
    /// `dirigoctl ports`, by port name.
    pub ports: HashMap<String, Value>,
    /// Daemon output (stderr + stdout).
    pub log: String,
}

impl Run {
    /// A `dirigoctl drops` counter (panics if the reason is unknown).
    pub fn drop_count(&self, reason: &str) -> u64 {
        *self
            .drops
            .get(reason)
            .unwrap_or_else(|| panic!("no drop reason '{reason}' in {:?}", self.drops))
    }
}

/// Start dirigo on `wan_in`/`lan_in` with `extra` appended to the config,
/// wait until its worker has taken every fixture packet, stop it and read
/// the out pcaps.
pub fn run(name: &str, extra: &str, wan_in: &[Vec<u8>], lan_in: &[Vec<u8>]) -> Run {
    run_with(name, extra, wan_in, lan_in, |_| {})
}

/// [`run`], calling `during(socket)` after the packets were processed and
/// before the daemon is stopped.
pub fn run_with(
    name: &str,
    extra: &str,
    wan_in: &[Vec<u8>],
    lan_in: &[Vec<u8>],
    during: impl FnOnce(&Path),
) -> Run {
    run_cfg(name, |c| c.raw(extra), wan_in, lan_in, during)
}

/// [`run_with`] on the two-port configuration as `edit` changes it (IPv6
/// addresses, routes and neighbors, services).
pub fn run_cfg(
    name: &str,
    edit: impl FnOnce(common::DaemonConfig) -> common::DaemonConfig,
    wan_in: &[Vec<u8>],
    lan_in: &[Vec<u8>],
    during: impl FnOnce(&Path),
) -> Run {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = common::scratch(&format!("vdev-{name}"));
    let p = |f: &str| -> PathBuf { dir.join(f) };
    write_pcap(&p("wan_in.pcap"), wan_in);
    write_pcap(&p("lan_in.pcap"), lan_in);
    let sock = PathBuf::from(format!("/tmp/dg-vdev-{name}.sock"));
    let cfg = config(
        &format!("dg-vdev-{name}"),
        &sock,
        &format!(
            "rx_pcap={},tx_pcap={}",
            p("wan_in.pcap").display(),
            p("wan_out.pcap").display()
        ),
        &format!(
            "rx_pcap={},tx_pcap={}",
            p("lan_in.pcap").display(),
            p("lan_out.pcap").display()
        ),
    )
    .tables(65536, 4095);
    let cfg = edit(cfg);
    let d = common::Daemon::start(&dir, &cfg.toml());
    let want = (wan_in.len() + lan_in.len()) as u64;
    let deadline = Instant::now() + Duration::from_secs(15);
    // Worker counters are published after the burst's tx flush, so once
    // they show every fixture packet received, everything has been sent.
    loop {
        let l = ctl(&sock, &["lcores"]);
        let rx: u64 = l
            .as_array()
            .expect("lcores array")
            .iter()
            .map(|w| w["rx_packets"].as_u64().unwrap())
            .sum();
        if rx == want {
            break;
        }
        assert!(rx < want, "worker rx {rx} > fixture packets {want}");
        assert!(
            Instant::now() < deadline,
            "worker rx {rx} of {want} after 15 s:\n{}",
            d.output()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let drops: HashMap<String, u64> = ctl(&sock, &["drops"])
        .as_array()
        .expect("drops array")
        .iter()
        .map(|x| {
            (
                x["reason"].as_str().unwrap().to_string(),
                x["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let ports: HashMap<String, Value> = ctl(&sock, &["ports"])
        .as_array()
        .expect("ports array")
        .iter()
        .map(|x| (x["name"].as_str().unwrap().to_string(), x.clone()))
        .collect();
    assert_eq!(ports["wan"]["mac"], "02:70:63:61:70:00", "wan MAC");
    assert_eq!(ports["lan"]["mac"], "02:70:63:61:70:01", "lan MAC");
    during(&sock);
    let log = d.stop();
    let (wan_out, g1) = strip_garps(read_pcap(&p("wan_out.pcap")), WAN_MAC);
    let (lan_out, g2) = strip_garps(read_pcap(&p("lan_out.pcap")), LAN_MAC);
    Run {
        wan_out,
        lan_out,
        garps: g1 + g2,
        drops,
        ports,
        log,
    }
}

/// Remove the gratuitous ARPs (sender IP == target IP) dirigo announces at
/// start, checking each is a well-formed broadcast from the port's MAC.
pub fn strip_garps(frames: Vec<Vec<u8>>, port_mac: Mac) -> (Vec<Vec<u8>>, usize) {
    let mut n = 0;
    let rest = frames
        .into_iter()
        .filter(|f| {
            let garp =
                f.len() >= 42 && f[12..14] == ETH_ARP.to_be_bytes() && f[28..32] == f[38..42];
            if garp {
                n += 1;
                assert_eq!(f[0..6], [0xff; 6], "GARP dst");
                assert_eq!(f[6..12], port_mac, "GARP src");
                assert_eq!(f[22..28], port_mac, "GARP sender MAC");
            }
            !garp
        })
        .collect();
    (rest, n)
}

/// A `[[service]]` (TCP, rr) with real servers `(RIP, port)` of `method`.
pub fn rules(service: &str, method: &str, rss: &[(&str, Option<u16>)]) -> String {
    let addrs: Vec<String> = rss
        .iter()
        .map(|(a, port)| match port {
            Some(p) => format!("{a}:{p}"),
            None => a.to_string(),
        })
        .collect();
    let rs: Vec<(&str, &str)> = addrs.iter().map(|a| (a.as_str(), method)).collect();
    common::service_toml("tcp", service, "rr", &rs)
}

/// Client `i` (behind the gateway).
pub fn client(i: u8) -> Ip {
    [198, 51, 100, 10 + i]
}

/// SYN, then ACK, then ACK+data from each of `flows` clients to VIP:80, in
/// three rounds (all SYNs, all ACKs, all data), as IP packets, with the flow
/// index of each.
pub fn three_rounds(flows: u8) -> Vec<(usize, Vec<u8>)> {
    let mut v = Vec::new();
    for round in 0..3u32 {
        for f in 0..flows {
            let mut s = seg(client(f), VIP, 40000 + f as u16, 80);
            s.id = 0x100 * (f as u16 + 1) + round as u16;
            s.ttl = 60 + f;
            // vary what TUN copies to the outer header
            s.df = f != 3;
            s.tos = if f == 2 { 0xb9 } else { 0 };
            s.seq = 1000 + round;
            if round > 0 {
                s.syn = false;
                s.ack = true;
            }
            if round == 2 {
                s.payload = format!("GET /{f} HTTP/1.0\r\n\r\n").into_bytes();
            }
            v.push((f as usize, ip_tcp(&s)));
        }
    }
    v
}

/// The MAC of real server `rip`.
pub fn rs_mac(rip: Ip) -> Mac {
    if rip == RS1 {
        RS1_MAC
    } else {
        RS2_MAC
    }
}
