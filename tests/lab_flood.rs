//! Established transfers under a SYN flood (issue 23): the netns lab with a
//! 4,096-connection table, four 32 MiB full-duplex transfers through the VIP,
//! and an hping3 `--rand-source` SYN flood from the client namespace that
//! overflows the table at least five times per round. Every transfer must be
//! byte-exact, with no reset and no stall of either direction longer than
//! [`MAX_STALL_S`], in NAT (one worker, then two with reply steering) and TUN.
//!
//! What the test tells apart: a transfer can only suffer from the director
//! (a connection lost from the table, a packet forwarded to the wrong real
//! server, replies held or dropped) or from the link in front of it. The
//! flood is sent from the client's own namespace, so it shares the client's
//! link into dirigo; when it is sent faster than that link (a net_tap queue)
//! is drained, the kernel drops the client's own packets before dirigo sees
//! them, indiscriminately (measured: an unpaced `--flood` lost 93% of the
//! client's packets there, which is what reset transfers in the original
//! report). Each round therefore measures the client link's drops, dirigo's
//! drop counters and the real servers' accept and idle-close logs, and
//! prints them beside a failure; the flood is paced so that the link is not
//! the bottleneck, which the test checks too.
//!
//! The SYN proxy scenario (issue 19) floods a `--synproxy` NAT service the
//! same way and counts, with nftables in the real servers' namespaces, the
//! SYNs that reach them: none of the flood's with the proxy on, the flood's
//! with it off; transfers running and opened during the flood stay
//! byte-exact, and real servers that never answer or refuse get their
//! clients an RST. The same lab run then does it in IPv6 (issue 54): the
//! ports get IPv6 addresses (the plan of tests/lab_ipv6_modes.rs), an
//! IPv6 `--synproxy` service on [`VIP6`] is flooded by netsniff-ng's
//! `trafgen` (hping3 has no IPv6) with SYNs from random IPv6 sources,
//! while IPv6 transfers run and open through it; they stay byte-exact and
//! nftables at the real servers counts none of the flood's SYNs.
//!
//! Needs root, hugepages, hping3, trafgen and nft (skips outside CI,
//! fails in CI).

mod common;
mod lab_common;

use lab_common::{rip, support, Lab, LabSpec, CLIENT, SERIAL, VIP};
use std::process::Child;
use std::time::Duration;

/// Connections per worker: small, so the flood overflows it many times.
const TABLE: u32 = 4096;
/// The transfers' service port.
const PORT: &str = "9000";
/// Bytes each transfer established before the flood sends (and receives back).
const BYTES: u64 = 32 << 20;
/// Bytes each transfer opened during the flood sends.
const BYTES_B: u64 = 8 << 20;
/// Longest a direction of an established transfer may make no progress.
const MAX_STALL_S: f64 = 2.0;
/// How long each flood runs.
const FLOOD_S: &str = "12";
/// hping3's interval between SYNs: paced below what the client's tap
/// carries into dirigo on a loaded two-CPU machine (see the module doc).
const FLOOD_INTERVAL: &str = "u50";

struct Scenario<'a> {
    spec: LabSpec<'a>,
    /// dirigoadm's forwarding flag: -m (NAT) or -i (TUN).
    flag: &'a str,
    rounds: usize,
}

/// The IPv6 plan of the SYN proxy scenario (tests/lab_ipv6_modes.rs's).
const VIP6: &str = "2001:db8:99::100";
const CLIENT6: &str = "2001:db8:99::2";
const DIRIGO_WAN6: &str = "2001:db8:99::1";
const DIRIGO_LAN6: &str = "2001:db8:98::1";
/// The flood's sources: random in a /64 dirigo has no route to (its
/// SYN/ACKs are counted as `lb_no_route`, as IPv4's).
const FLOOD6_NET: [u8; 8] = [0x20, 0x01, 0x0d, 0xb8, 0x00, 0xaa, 0x00, 0x00];
/// How long the IPv6 flood runs.
const FLOOD6_S: &str = "8";

fn rip6(n: usize) -> String {
    format!("2001:db8:98::{}", 10 + n)
}

/// One line of `flood_transfer.py run` (all fields are printed on failure).
#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Transfer {
    i: u32,
    lport: u32,
    sent: u64,
    received: u64,
    exact: bool,
    error: Option<String>,
    max_stall_s: f64,
    #[serde(default)]
    connect_s: f64,
    #[serde(default)]
    stall_end_s: f64,
}

/// The client link's kernel-side TX drops (packets for dirigo the kernel
/// discarded because the tap's queue was full).
fn link_drops(lab: &Lab) -> u64 {
    let dev = format!("{}-wan", lab.prefix);
    let out = lab.client(&["ip", "-s", "-j", "link", "show", &dev]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("ip -j link");
    v[0]["stats64"]["tx"]["dropped"].as_u64().unwrap_or(0)
}

/// dirigo's non-zero drop counters.
fn drops(lab: &Lab) -> Vec<(String, u64)> {
    let v = lab.ctl_json(&["drops"]);
    let mut out = Vec::new();
    if let Some(a) = v.as_array() {
        for d in a {
            let n = d["count"].as_u64().unwrap_or(0);
            if n > 0 {
                out.push((d["reason"].as_str().unwrap_or("?").to_string(), n));
            }
        }
    }
    out
}

/// New flows dirigo saw: connections created plus flows refused because
/// the table was full of handshakes still in progress.
fn new_flows(lab: &Lab) -> u64 {
    let created: u64 = lab_common::checks::worker_conns(lab).iter().sum();
    let refused = drops(lab)
        .iter()
        .find(|(r, _)| r == "lb_table_full")
        .map_or(0, |d| d.1);
    created + refused
}

fn start_servers(lab: &Lab) -> Vec<Child> {
    let mut servers = Vec::new();
    for n in 1..=2 {
        let log = lab.dir.join(format!("rs{n}.log")).display().to_string();
        let ready = lab.dir.join(format!("rs{n}.ready"));
        let _ = std::fs::remove_file(&ready);
        let ready_s = ready.display().to_string();
        servers.push(lab.spawn(
            &format!("rs{n}"),
            &[
                "python3",
                &support("flood_transfer.py"),
                "serve",
                "--port",
                PORT,
                "--log",
                &log,
                "--ready-file",
                &ready_s,
                "--idle",
                "10",
            ],
        ));
        lab.wait_for(&format!("rs{n} flood server"), 10, || ready.exists());
    }
    servers
}

/// Packets the real servers' raw sockets dropped (TUN: the userspace
/// decapsulator could not keep up): the `drops` column of /proc/net/raw.
fn rs_raw_drops(lab: &Lab) -> u64 {
    (1..=2)
        .map(|n| {
            let o = lab.exec(&format!("rs{n}"), &["cat", "/proc/net/raw"]);
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum()
}

fn server_logs(lab: &Lab) -> String {
    (1..=2)
        .map(|n| {
            let t = std::fs::read_to_string(lab.dir.join(format!("rs{n}.log"))).unwrap_or_default();
            let accepts = t.lines().filter(|l| l.starts_with("accept")).count();
            let other: Vec<&str> = t.lines().filter(|l| !l.starts_with("accept")).collect();
            format!("rs{n}: {accepts} accepted {other:?}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `conns` transfers of `bytes` each way through VIP:[`PORT`], started
/// after `delay` seconds, in the background.
fn batch(lab: &Lab, conns: &str, bytes: u64, delay: &str) -> Child {
    batch_to(lab, VIP, conns, bytes, delay)
}

/// [`batch`] to `vip` (IPv4 or IPv6).
fn batch_to(lab: &Lab, vip: &str, conns: &str, bytes: u64, delay: &str) -> Child {
    lab.client_spawn(&[
        "python3",
        &support("flood_transfer.py"),
        "run",
        vip,
        PORT,
        "--conns",
        conns,
        "--bytes",
        &bytes.to_string(),
        "--timeout",
        "30",
        "--delay",
        delay,
    ])
}

/// The four transfers' lines of a [`batch`].
fn transfers(c: Child) -> Vec<Transfer> {
    let out = c.wait_with_output().expect("flood_transfer run");
    let v: Vec<Transfer> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(v.len(), 4, "{}", String::from_utf8_lossy(&out.stderr));
    v
}

fn run(sc: &Scenario) {
    let lab = Lab::start_with_table(&sc.spec, TABLE);
    let vport = format!("{VIP}:{PORT}");
    lab.adm(&["-A", "-t", &vport, "-s", "rr"]);
    for n in 1..=2 {
        lab.adm(&[
            "-a",
            "-t",
            &vport,
            "-r",
            &format!("{}:{PORT}", rip(n)),
            sc.flag,
        ]);
    }
    let servers = start_servers(&lab);
    let workers = lab_common::checks::worker_conns(&lab).len() as u64;
    // One transfer before any flood: the client learns the path MTU (TUN
    // answers its first full-size segments with fragmentation-needed), so
    // the rounds measure the flood, not path-MTU discovery; with the 600 ms
    // handshake of the TUN scenario, a segment lost to discovery costs a
    // ~1.8 s retransmission timeout.
    lab.client(&[
        "python3",
        &support("flood_transfer.py"),
        "run",
        VIP,
        PORT,
        "--conns",
        "1",
        "--bytes",
        "1048576",
    ]);
    let mut failures = Vec::new();
    for round in 1..=sc.rounds {
        for n in 1..=2 {
            let _ = std::fs::write(lab.dir.join(format!("rs{n}.log")), "");
        }
        let link0 = link_drops(&lab);
        let raw0 = rs_raw_drops(&lab);
        let flows0 = new_flows(&lab);
        // batch A: established before the flood; batch B: handshakes in
        // the middle of it (their SYNs compete with the flood's for the
        // table, so their connect may take SYN retries: only the data phase
        // is held to MAX_STALL_S)
        let a = batch(&lab, "4", BYTES, "0");
        let b = batch(&lab, "4", BYTES_B, "3.5");
        std::thread::sleep(Duration::from_millis(500));
        hping(&lab, FLOOD_S);
        let (ta, tb) = (transfers(a), transfers(b));
        let link = link_drops(&lab) - link0;
        let raw = rs_raw_drops(&lab) - raw0;
        let flood_flows = new_flows(&lab) - flows0;
        let report = format!(
            "{} round {round}: {} new flows ({}x the table); client link dropped {link} \
             packets before dirigo; the real servers' raw sockets dropped {raw}; dirigo drops {:?}; {}",
            sc.spec.name,
            flood_flows,
            flood_flows / (TABLE as u64 * workers),
            drops(&lab),
            server_logs(&lab)
        );
        eprintln!("{report}");
        for (name, ts, bytes, connect_limit) in [
            ("A", &ta, BYTES, MAX_STALL_S),
            ("B", &tb, BYTES_B, f64::MAX),
        ] {
            for t in ts.iter() {
                eprintln!("  {name} {t:?}");
                let ok = t.exact && t.error.is_none() && t.sent == bytes && t.received == bytes;
                if !ok || t.max_stall_s > MAX_STALL_S || t.connect_s > connect_limit {
                    let cause = if link > 0 {
                        "the client's link dropped packets before dirigo saw them \
                         (link saturated: lower the flood rate before blaming the director)"
                    } else {
                        "no loss on the client's link: the director lost or held this flow"
                    };
                    failures.push(format!("batch {name} {t:?} — {cause}\n    {report}"));
                }
            }
        }
        assert!(
            flood_flows >= 5 * TABLE as u64 * workers,
            "the flood did not overflow the table five times: {report}"
        );
        // new connections still work after the flood
        let after = lab_common::checks::conns(&lab, 4, None);
        assert_eq!(after.len(), 4, "after the flood: {after:?}");
    }
    drop(servers);
    assert!(
        failures.is_empty(),
        "{} transfer(s) reset, broken or stalled more than {MAX_STALL_S} s:\n{}",
        failures.len(),
        failures.join("\n")
    );
    lab.finish();
}

fn hping3_present() -> bool {
    let ok = std::process::Command::new("hping3")
        .arg("--version")
        .output()
        .is_ok();
    if !ok {
        let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
        assert!(
            !ci,
            "hping3 missing in CI (scripts/install-deps.sh installs it)"
        );
        eprintln!("SKIP flood lab: hping3 not installed (apt-get install hping3)");
    }
    ok
}

/// One scenario: `mode` is lab.sh's mode and dirigo's method (nat, tun).
fn flood(
    (name, prefix): (&str, &str),
    mode: &str,
    cores: &[&str],
    env: &[(&str, &str)],
    rounds: usize,
) {
    if !common::privileged(name) || !hping3_present() {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let flag = if mode == "tun" { "-i" } else { "-m" };
    run(&Scenario {
        spec: LabSpec {
            name,
            prefix,
            mode,
            method: mode,
            cores,
            nrs: 3,
            env,
        },
        flag,
        rounds,
    });
}

#[test]
fn lab_flood_nat() {
    flood(("lab_flood_nat", "dgfn"), "nat", &["-l", "0-1"], &[], 2);
}

/// Two workers sharing CPU 1 (the machine may have 2 CPUs): the flood's
/// random sources spread over both, so half of it crosses the steering rings.
#[test]
fn lab_flood_nat_two_workers() {
    flood(
        ("lab_flood_nat2", "dgf2"),
        "nat",
        &["--lcores", "0@0,1@1,2@1"],
        &[],
        2,
    );
}

/// The real servers answer SYNs 600 ms late (as servers under a flood do):
/// longer than the flood takes to turn the table over.
#[test]
fn lab_flood_tun() {
    flood(
        ("lab_flood_tun", "dgft"),
        "tun",
        &["-l", "0-1"],
        &[("LAB_DECAP_ARGS", "--syn-delay-ms 600")],
        2,
    );
}

/// nftables counters in real server `n`'s namespace: SYNs to [`PORT`] from
/// the client (`legit`) and from anyone else (`flood`); with `drop_port`,
/// SYNs to that port are dropped (a server that never answers).
fn nft_counters(lab: &Lab, n: usize, drop_port: Option<&str>) {
    let drop = drop_port
        .map(|p| format!("tcp dport {p} tcp flags & (syn | ack) == syn drop\n"))
        .unwrap_or_default();
    let rules = format!(
        "table inet dgsyn {{\n counter legit {{}}\n counter flood {{}}\n \
         counter legit6 {{}}\n counter flood6 {{}}\n \
         chain input {{\n type filter hook input priority 0; policy accept;\n \
         tcp dport {PORT} tcp flags & (syn | ack) == syn ip saddr {CLIENT} counter name legit\n \
         tcp dport {PORT} tcp flags & (syn | ack) == syn ip saddr != {CLIENT} counter name flood\n \
         tcp dport {PORT} tcp flags & (syn | ack) == syn ip6 saddr {CLIENT6} counter name legit6\n \
         tcp dport {PORT} tcp flags & (syn | ack) == syn ip6 saddr != {CLIENT6} counter name flood6\n \
         {drop} }}\n}}\n"
    );
    let f = lab.dir.join(format!("rs{n}.nft"));
    std::fs::write(&f, rules).unwrap();
    let _ = lab.exec(
        &format!("rs{n}"),
        &["nft", "delete", "table", "inet", "dgsyn"],
    );
    let o = lab.exec(&format!("rs{n}"), &["nft", "-f", &f.display().to_string()]);
    assert!(
        o.status.success(),
        "nft -f in rs{n}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// IPv4 SYNs counted at the real servers 1 and 2: (legit, flood).
fn rs_syns(lab: &Lab) -> (u64, u64) {
    rs_syns_of(lab, "")
}

/// SYNs counted at the real servers 1 and 2 by the counters named with
/// `suffix` ("" IPv4, "6" IPv6): (legit, flood).
fn rs_syns_of(lab: &Lab, suffix: &str) -> (u64, u64) {
    let mut sum = (0, 0);
    for n in 1..=2 {
        for (name, slot) in [("legit", &mut sum.0), ("flood", &mut sum.1)] {
            let name = format!("{name}{suffix}");
            let name = name.as_str();
            let o = lab.exec(
                &format!("rs{n}"),
                &["nft", "-j", "list", "counter", "inet", "dgsyn", name],
            );
            let v: serde_json::Value = serde_json::from_slice(&o.stdout)
                .unwrap_or_else(|e| panic!("nft -j: {e}: {}", String::from_utf8_lossy(&o.stderr)));
            let packets = v["nftables"]
                .as_array()
                .and_then(|a| a.iter().find_map(|x| x["counter"]["packets"].as_u64()))
                .expect("nft counter");
            *slot += packets;
        }
    }
    sum
}

/// The SYN proxy's counters summed over workers.
fn synproxy_counts(lab: &Lab) -> std::collections::BTreeMap<String, u64> {
    let mut m = std::collections::BTreeMap::new();
    for l in lab.ctl_json(&["lcores"]).as_array().unwrap() {
        for c in l["extra"].as_array().into_iter().flatten() {
            let name = c["name"].as_str().unwrap_or("");
            if name.starts_with("synproxy_") {
                *m.entry(name.to_string()).or_insert(0) += c["value"].as_u64().unwrap_or(0);
            }
        }
    }
    m
}

fn hping(lab: &Lab, secs: &str) {
    let flood = lab.exec(
        "client",
        &[
            "timeout",
            secs,
            "hping3",
            "-q",
            "-S",
            "-i",
            FLOOD_INTERVAL,
            "--rand-source",
            "-p",
            PORT,
            VIP,
        ],
    );
    let code = flood.status.code();
    assert!(
        code == Some(124) || code == Some(0),
        "hping3 failed ({code:?}): {}",
        String::from_utf8_lossy(&flood.stderr)
    );
}

/// Connect to VIP:`port`, send a line, and report how the connection ended:
/// `data`, `eof`, `reset` or `timeout`, with the seconds it took from the
/// connect (a refusing server's RST can reach the client before its
/// `connect()` returns: a reset either way).
fn probe(lab: &Lab, port: &str) -> (String, f64) {
    probe_to(lab, VIP, port)
}

/// [`probe`] of `vip` (IPv4 or IPv6).
fn probe_to(lab: &Lab, vip: &str, port: &str) -> (String, f64) {
    let code = format!(
        "import socket,time\n\
         t=time.time()\n\
         try:\n  s=socket.create_connection(('{vip}',{port}),timeout=10); \
         s.sendall(b'hello\\n'); d=s.recv(10); r='data' if d else 'eof'\n\
         except ConnectionResetError: r='reset'\n\
         except socket.timeout: r='timeout'\n\
         print(r, round(time.time()-t, 2))\n"
    );
    let out = lab.client(&["python3", "-c", &code]);
    let mut w = out.split_whitespace();
    let what = w.next().unwrap_or("").to_string();
    let secs = w.next().and_then(|s| s.parse().ok()).unwrap_or(-1.0);
    (what, secs)
}

fn trafgen_present() -> bool {
    let ok = std::process::Command::new("trafgen")
        .arg("--version")
        .output()
        .is_ok();
    if !ok {
        let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
        assert!(
            !ci,
            "trafgen missing in CI (scripts/install-deps.sh installs netsniff-ng)"
        );
        eprintln!("SKIP synproxy lab: trafgen not installed (apt-get install netsniff-ng)");
    }
    ok
}

/// The client's NDP entry for the IPv6 VIP: dirigo's wan MAC.
fn vip6_mac(lab: &Lab, wan: &str) -> String {
    let o = lab.client(&["ip", "-6", "neigh", "show", VIP6, "dev", wan]);
    let mut w = o.split_whitespace();
    w.find(|x| *x == "lladdr")
        .and_then(|_| w.next())
        .unwrap_or_else(|| panic!("no NDP entry for {VIP6}: {o}"))
        .to_string()
}

/// A trafgen configuration: TCP SYNs from random sources in
/// [`FLOOD6_NET`] and random ports to [`VIP6`]:[`PORT`], to `dmac`.
fn trafgen_syn6(dmac: &str, smac: &str) -> String {
    let bytes = |v: &[u8]| {
        v.iter()
            .map(|b| format!("0x{b:02x}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mac = |m: &str| {
        let v: Vec<u8> = m
            .split(':')
            .map(|x| u8::from_str_radix(x, 16).expect("mac"))
            .collect();
        bytes(&v)
    };
    let vip: std::net::Ipv6Addr = VIP6.parse().unwrap();
    let port: u16 = PORT.parse().unwrap();
    format!(
        "{{\n  {}, {}, 0x86, 0xdd,\n  \
         0x60, 0x00, 0x00, 0x00, 0x00, 0x14, 0x06, 0x40,\n  \
         {}, drnd(8),\n  {},\n  \
         drnd(2), {}, drnd(4), 0x00, 0x00, 0x00, 0x00,\n  \
         0x50, 0x02, 0xfd, 0x20, csumtcp6(14, 54), 0x00, 0x00\n}}\n",
        mac(dmac),
        mac(smac),
        bytes(&FLOOD6_NET),
        bytes(&vip.octets()),
        bytes(&port.to_be_bytes()),
    )
}

/// IPv6 in the namespaces the IPv6 NAT traffic crosses: the client on
/// the wan link, the real servers 1 and 2 on the lan with dirigo as
/// their default route.
fn ipv6_lab(lab: &Lab, wan: &str) {
    lab.enable_ipv6("client", wan, &format!("{CLIENT6}/64"));
    for n in 1..=2 {
        let rs = format!("rs{n}");
        lab.enable_ipv6(&rs, "eth0", &format!("{}/64", rip6(n)));
        let o = lab.exec(
            &rs,
            &[
                "ip",
                "-6",
                "route",
                "replace",
                "default",
                "via",
                DIRIGO_LAN6,
            ],
        );
        assert!(o.status.success(), "{}", common::text(&o));
    }
    lab.wait_for("the client's IPv6 address", 10, || {
        let o = lab.client(&["ip", "-6", "addr", "show", "dev", wan]);
        o.contains(CLIENT6) && !o.contains("tentative")
    });
}

/// The SYN proxy for IPv6 in the same lab: an IPv6 `--synproxy` service
/// carries IPv6 transfers byte-exact, and under trafgen's IPv6 SYN flood
/// from random sources the transfers running and opened stay byte-exact
/// while the real servers see none of the flood's SYNs.
fn synproxy6(lab: &Lab, wan: &str) {
    ipv6_lab(lab, wan);
    let vport6 = format!("[{VIP6}]:{PORT}");
    lab.adm(&["-A", "-t", &vport6, "-s", "rr", "--synproxy"]);
    for n in 1..=2 {
        lab.adm(&[
            "-a",
            "-t",
            &vport6,
            "-r",
            &format!("[{}]:{PORT}", rip6(n)),
            "-m",
        ]);
    }
    let listing = lab.adm(&["-L", "-n"]);
    assert!(
        listing.contains(&format!("TCP  {vport6} rr synproxy")),
        "{listing}"
    );
    let (legit0, flood0) = rs_syns_of(lab, "6");
    let first = transfers(batch_to(lab, VIP6, "4", 1 << 20, "0"));
    for t in &first {
        assert!(
            t.exact && t.error.is_none() && t.received == 1 << 20,
            "IPv6 through the proxy: {t:?}"
        );
    }
    let (legit1, flood1) = rs_syns_of(lab, "6");
    assert!(
        legit1 - legit0 >= 4,
        "the proxy opened the IPv6 connections: {legit0} -> {legit1}"
    );
    assert_eq!(flood1, flood0);
    let dmac = vip6_mac(lab, wan);
    let smac = lab.client(&["cat", &format!("/sys/class/net/{wan}/address")]);
    let conf = lab.dir.join("syn6.trafgen");
    std::fs::write(&conf, trafgen_syn6(&dmac, smac.trim())).unwrap();
    let c0 = synproxy_counts(lab);
    let d0 = drops(lab);
    let a = batch_to(lab, VIP6, "4", BYTES_B, "0");
    let b = batch_to(lab, VIP6, "4", BYTES_B, "2.5");
    std::thread::sleep(Duration::from_millis(500));
    let gen = lab.exec(
        "client",
        &[
            "timeout",
            FLOOD6_S,
            "trafgen",
            "--dev",
            wan,
            "--conf",
            &conf.display().to_string(),
            "--cpus",
            "1",
            "--gap",
            "50us",
            "--no-sock-mem",
        ],
    );
    let code = gen.status.code();
    assert!(
        code == Some(124) || code == Some(0),
        "trafgen failed ({code:?}): {}",
        common::text(&gen)
    );
    let (ta, tb) = (transfers(a), transfers(b));
    let c1 = synproxy_counts(lab);
    let no_route = |d: &[(String, u64)]| d.iter().find(|x| x.0 == "lb_no_route").map_or(0, |x| x.1);
    let sent = c1.get("synproxy_cookies_sent").copied().unwrap_or(0)
        - c0.get("synproxy_cookies_sent").copied().unwrap_or(0)
        + no_route(&drops(lab))
        - no_route(&d0);
    let (legit, flood) = rs_syns_of(lab, "6");
    let report = format!(
        "IPv6 synproxy: {sent} flood SYNs answered, real servers saw {} flood SYNs and {} of \
         the client's; dirigo {c1:?}; drops {:?}; {}",
        flood - flood1,
        legit - legit1,
        drops(lab),
        server_logs(lab)
    );
    eprintln!("{report}");
    for t in ta.iter().chain(&tb) {
        eprintln!("  {t:?}");
        assert!(
            t.exact && t.error.is_none() && t.sent == BYTES_B && t.received == BYTES_B,
            "IPv6 transfer broken: {t:?}\n{report}"
        );
        assert!(t.max_stall_s <= MAX_STALL_S, "stalled: {t:?}\n{report}");
    }
    for t in &tb {
        assert!(
            t.connect_s < MAX_STALL_S,
            "an IPv6 connection opened during the flood waited {} s\n{report}",
            t.connect_s
        );
    }
    assert!(sent >= 10_000, "the IPv6 flood was too small: {report}");
    assert_eq!(
        flood, flood1,
        "IPv6 flood SYNs reached the real servers: {report}"
    );
    assert!(legit - legit1 >= 8, "{report}");
    // an IPv6 real server that never answers (its SYNs dropped), and one
    // that refuses (no listener): the client gets an RST either way, the
    // first one built by the sweep as an IPv6 frame
    let rs1 = format!("[{}]", rip6(1));
    let f = lab.dir.join("rs1-6.nft");
    std::fs::write(
        &f,
        "table ip6 dgsyn6 {\n chain input {\n type filter hook input priority 0; \
         policy accept;\n tcp dport 9100 tcp flags & (syn | ack) == syn drop\n }\n}\n",
    )
    .unwrap();
    let o = lab.exec("rs1", &["nft", "-f", &f.display().to_string()]);
    assert!(o.status.success(), "{}", common::text(&o));
    let c0 = synproxy_counts(lab);
    for (port, silent) in [("9100", true), ("9200", false)] {
        let v = format!("[{VIP6}]:{port}");
        lab.adm(&["-A", "-t", &v, "-s", "rr", "--synproxy"]);
        lab.adm(&["-a", "-t", &v, "-r", &format!("{rs1}:{port}"), "-m"]);
        let (what, secs) = probe_to(lab, VIP6, port);
        eprintln!(
            "IPv6 synproxy, real server {}: {what} after {secs} s",
            if silent { "silent" } else { "refusing" }
        );
        assert_eq!(what, "reset", "[{VIP6}]:{port}");
        if silent {
            assert!((2.0..8.0).contains(&secs), "reset after {secs} s");
        }
    }
    let c1 = synproxy_counts(lab);
    let grew = |k: &str| c1.get(k).copied().unwrap_or(0) > c0.get(k).copied().unwrap_or(0);
    assert!(grew("synproxy_server_timeout"), "{c0:?} -> {c1:?}");
    assert!(grew("synproxy_server_reset"), "{c0:?} -> {c1:?}");
}

fn nft_present() -> bool {
    let ok = std::process::Command::new("nft")
        .arg("--version")
        .output()
        .is_ok();
    if !ok {
        let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
        assert!(
            !ci,
            "nft missing in CI (scripts/install-deps.sh installs nftables)"
        );
        eprintln!("SKIP synproxy lab: nft not installed (apt-get install nftables)");
    }
    ok
}

/// The SYN proxy under a flood (issue 19): see the module docs.
#[test]
fn lab_flood_nat_synproxy() {
    let name = "lab_flood_synproxy";
    if !common::privileged(name) || !hping3_present() || !nft_present() || !trafgen_present() {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let prefix = "dgfs";
    let spec = LabSpec {
        name,
        prefix,
        mode: "nat",
        method: "nat",
        cores: &["-l", "0-1"],
        nrs: 3,
        env: &[],
    };
    let lab = Lab::start_with_config(&spec, TABLE, |c| {
        c.dataplane("synproxy", "true")
            .edit(
                "addresses = [\"10.99.0.1/24\"]",
                &format!("addresses = [\"10.99.0.1/24\", \"{DIRIGO_WAN6}/64\"]"),
            )
            .edit(
                "addresses = [\"10.98.0.1/24\"]",
                &format!("addresses = [\"10.98.0.1/24\", \"{DIRIGO_LAN6}/64\"]"),
            )
    });
    let vport = format!("{VIP}:{PORT}");
    lab.adm(&["-A", "-t", &vport, "-s", "rr", "--synproxy"]);
    for n in 1..=2 {
        lab.adm(&[
            "-a",
            "-t",
            &vport,
            "-r",
            &format!("{}:{PORT}", rip(n)),
            "-m",
        ]);
    }
    let listing = lab.adm(&["-L", "-n"]);
    assert!(
        listing.contains(&format!("TCP  {vport} rr synproxy")),
        "{listing}"
    );
    // DR real servers are refused on a proxied service
    let o = std::process::Command::new(crate::common::DIRIGOADM)
        .args([
            "--socket",
            &lab.sock,
            "-a",
            "-t",
            &vport,
            "-r",
            &rip(3),
            "-g",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("NAT (-m)"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let servers = start_servers(&lab);
    for n in 1..=2 {
        nft_counters(&lab, n, None);
    }
    // the proxied service carries real kernel TCP byte-exact
    lab.client(&[
        "python3",
        &support("flood_transfer.py"),
        "run",
        VIP,
        PORT,
        "--conns",
        "2",
        "--bytes",
        "4194304",
    ]);
    let (legit0, flood0) = rs_syns(&lab);
    assert!(
        legit0 >= 2,
        "the proxy opened the client's connections: {legit0}"
    );
    assert_eq!(flood0, 0);
    let c0 = synproxy_counts(&lab);
    let d0 = drops(&lab);
    let a = batch(&lab, "4", BYTES_B, "0");
    let b = batch(&lab, "4", BYTES_B, "3.5");
    std::thread::sleep(Duration::from_millis(500));
    hping(&lab, FLOOD_S);
    let (ta, tb) = (transfers(a), transfers(b));
    let c1 = synproxy_counts(&lab);
    // the flood's SYNs dirigo answered: a SYN/ACK sent, or one with no
    // route back to the random source (the lab has no default route)
    let no_route = |d: &[(String, u64)]| d.iter().find(|x| x.0 == "lb_no_route").map_or(0, |x| x.1);
    let sent = c1.get("synproxy_cookies_sent").copied().unwrap_or(0)
        - c0.get("synproxy_cookies_sent").copied().unwrap_or(0)
        + no_route(&drops(&lab))
        - no_route(&d0);
    let (legit, flood) = rs_syns(&lab);
    let report = format!(
        "synproxy on: {sent} SYNs answered with a cookie ({}x the table), real servers saw {flood} flood SYNs \
         and {} of the client's; dirigo {c1:?}; drops {:?}; {}",
        sent / TABLE as u64,
        legit - legit0,
        drops(&lab),
        server_logs(&lab)
    );
    eprintln!("{report}");
    for t in ta.iter().chain(&tb) {
        eprintln!("  {t:?}");
    }
    for t in ta.iter().chain(&tb) {
        assert!(
            t.exact && t.error.is_none() && t.sent == BYTES_B && t.received == BYTES_B,
            "transfer broken: {t:?}\n{report}"
        );
        assert!(t.max_stall_s <= MAX_STALL_S, "stalled: {t:?}\n{report}");
    }
    for t in &tb {
        assert!(
            t.connect_s < MAX_STALL_S,
            "a connection opened during the flood waited {} s\n{report}",
            t.connect_s
        );
    }
    assert!(
        sent >= 10 * TABLE as u64,
        "the flood was not 10x the table: {report}"
    );
    assert_eq!(flood, 0, "flood SYNs reached the real servers: {report}");
    assert!(legit - legit0 >= 8, "{report}");
    // the same in IPv6, in this lab run
    synproxy6(&lab, &format!("{prefix}-wan"));
    // a real server that never answers, and one that refuses: the client
    // gets an RST either way
    for (port, drop) in [("9100", true), ("9200", false)] {
        let v = format!("{VIP}:{port}");
        lab.adm(&["-A", "-t", &v, "-s", "rr", "-j", "enable"]);
        lab.adm(&["-a", "-t", &v, "-r", &format!("{}:{port}", rip(3)), "-m"]);
        if drop {
            let f = lab.dir.join("rs3.nft");
            std::fs::write(
                &f,
                format!(
                    "table inet dgsyn {{\n chain input {{\n type filter hook input priority 0; \
                     policy accept;\n tcp dport {port} tcp flags & (syn | ack) == syn drop\n }}\n}}\n"
                ),
            )
            .unwrap();
            let o = lab.exec("rs3", &["nft", "-f", &f.display().to_string()]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let (what, secs) = probe(&lab, port);
        eprintln!(
            "synproxy, real server {}: {what} after {secs} s",
            if drop { "silent" } else { "refusing" }
        );
        assert_eq!(what, "reset", "port {port}");
        if drop {
            assert!((2.0..8.0).contains(&secs), "reset after {secs} s");
        }
    }
    let c2 = synproxy_counts(&lab);
    assert!(
        c2.get("synproxy_server_timeout").copied().unwrap_or(0) >= 1,
        "{c2:?}"
    );
    assert!(
        c2.get("synproxy_server_reset").copied().unwrap_or(0) >= 1,
        "{c2:?}"
    );
    // the same flood with the proxy off reaches the real servers
    lab.adm(&["-E", "-t", &vport, "-s", "rr"]);
    hping(&lab, "3");
    let (_, flood_off) = rs_syns(&lab);
    eprintln!("synproxy off: the real servers saw {flood_off} flood SYNs in 3 s");
    assert!(
        flood_off > 1000,
        "without the proxy the flood reaches them: {flood_off}"
    );
    drop(servers);
    lab.finish();
}
