//! Director failure in the scale-out lab (issue 20): SIGKILL one of two
//! directors — with its BIRD, a machine gone, so only BFD tells the router —
//! during 50 concurrent long downloads, then bring it back during 50 more.
//!
//! * `mh` + `sloppy_tcp`, no sync: the surviving director takes the moved
//!   flows mid-stream and picks the same real servers: every transfer is
//!   byte-exact, also when the director comes back and ECMP moves flows to
//!   it again.
//! * `rr`, no `sloppy_tcp`, `[sync]` on: the survivor has the dead
//!   director's connections from its IPVS sync messages: every transfer is
//!   byte-exact; the director that comes back says hello, gets the
//!   survivor's table, holds its VIP back until that table is installed
//!   (`[announce] sync_wait_ms`), and again nothing breaks. tshark decodes the sync
//!   messages captured on the segment as IPVS, field by field, matching the
//!   connections the sender listed.
//! * `rr`, neither: the baseline the other two improve on — the dead
//!   director's flows break (counted and printed).
//!
//! Needs root, hugepages, bird (bird2), tshark and python3 (skips outside
//! CI, fails in CI). The lab is tests/scaleout_common's.

mod common;
mod scaleout_common;

use scaleout_common::{rip, ScaleLab, Transfers, VIP};
use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Concurrent downloads per phase.
const N: usize = 50;
/// Each download's size and pace: about 4 s.
const SIZE: usize = 1_200_000;
const RATE: usize = 300_000;

fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success() || !o.stderr.is_empty());
    if !ok && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("lab_failover: {tool} is not installed: run scripts/install-deps.sh");
    }
    if !ok {
        eprintln!("SKIP lab_failover: {tool} is not installed");
    }
    ok
}

fn sync_on(c: common::DaemonConfig) -> common::DaemonConfig {
    c.dataplane_replace("sloppy_tcp", false)
        .raw("[sync]\nenabled = true\nport = \"back\"\n")
}

#[test]
fn lab_failover() {
    if !common::privileged("lab failover") || !have("bird") || !have("tshark") {
        return;
    }
    let t0 = Instant::now();
    {
        // director B has its real servers in the opposite order
        let mut lab = ScaleLab::start_with("lab_failover_mh", "dgm", "mh", |i, c| {
            if i == 0 {
                return c;
            }
            let rs = |n: usize| {
                format!(
                    "[[service.real_server]]\naddress = \"{}\"\nmethod = \"dr\"\n",
                    rip(n)
                )
            };
            c.edit(
                &(1..=3).map(rs).collect::<String>(),
                &(1..=3).rev().map(rs).collect::<String>(),
            )
        });
        let order: Vec<String> = (0..2)
            .map(|i| {
                lab.adm(i, &["-L", "-n", "--nosort"])
                    .lines()
                    .filter(|l| l.contains("->") && l.contains("10.93.0."))
                    .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let fp: Vec<serde_json::Value> =
            (0..2).map(|i| lab.ctl_json(i, &["fingerprint"])).collect();
        eprintln!(
            "mh: real servers A [{}], B [{}]; fingerprints {} / {}",
            order[0], order[1], fp[0], fp[1]
        );
        assert_ne!(order[0], order[1], "configured in different orders");
        assert_eq!(fp[0], fp[1], "the same Maglev table on both directors");
        let broken = kill_during_transfers(&mut lab, "mh");
        assert!(
            broken.is_empty(),
            "mh: {} of {N} broke: {broken:?}",
            broken.len()
        );
        let broken = back_during_transfers(&mut lab, "mh");
        assert!(
            broken.is_empty(),
            "mh, back: {} of {N} broke: {broken:?}",
            broken.len()
        );
    }
    {
        let mut lab = ScaleLab::start_with("lab_failover_sync", "dgy", "rr", |_, c| sync_on(c));
        let capture = Capture::start(&lab);
        let t = lab.long_transfers(N, SIZE, RATE);
        // A's own connections and B's, synced to A (a loaded machine may
        // take a moment): all of them in the captured messages
        // (every flow A listed past its handshake at some point: the
        // first transfers may end while the last ones' messages arrive,
        // and on a loaded machine a flow may already be closing when A
        // first lists it; it was synced ESTABLISHED all the same)
        let end = Instant::now() + Duration::from_secs(10);
        let mut listed = past_handshake(&lab, 0);
        while listed.len() < N && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(100));
            listed.extend(past_handshake(&lab, 0));
        }
        if listed.len() != N {
            for i in 0..2 {
                eprintln!(
                    "director {i}: {}\nsync {}",
                    lab.adm(i, &["-L", "-n", "-c"]),
                    lab.ctl_json(i, &["lcores"])
                );
            }
        }
        assert_eq!(listed.len(), N, "A lists every flow: {listed:?}");
        let decoded = capture.stop(&lab);
        check_decoded(&listed, &decoded);
        // A's own (scheduled there), each sent once when it was established
        let sent_by_a = lab.conns(0);
        assert!(sent_by_a > 0, "A carries some of the flows");
        let broken = kill_and_finish(&mut lab, t, "rr + sync");
        assert!(
            broken.is_empty(),
            "rr + sync: {} of {N} broke: {broken:?}",
            broken.len()
        );
        let (sent, installed) = (sent_by_a, counter(&lab, 1, "sync_installed"));
        assert!(
            installed > 0 && installed >= sent,
            "B installed {installed} of the {sent} A sent"
        );
        let broken = back_during_transfers(&mut lab, "rr + sync");
        assert!(
            broken.is_empty(),
            "rr + sync, back: {} of {N} broke: {broken:?}",
            broken.len()
        );
        // A held its VIP back until B's table was installed, so the
        // routers moved no flow to it before it knew them
        assert!(
            lab.director(0)
                .daemon
                .has_line("start-up hold over (the other directors' connections are installed)"),
            "A's hold: {}",
            lab.director(0).daemon.output()
        );
        assert!(counter(&lab, 1, "sync_peer_hello") > 0, "B heard A start");
        assert!(counter(&lab, 1, "sync_resent") > 0, "B sent A its table");
        assert!(counter(&lab, 0, "sync_installed") > 0, "A installed it");
        // flows did move to A (it scheduled none of them: it forwarded
        // them on the connections B sent it)
        let stats = lab.adm(0, &["-L", "-n", "--stats"]);
        let in_pkts: u64 = stats
            .lines()
            .find(|l| l.starts_with("TCP"))
            .and_then(|l| l.split_whitespace().nth(3))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(in_pkts > 0, "A forwarded moved flows: {stats}");
        sync_flood_is_bounded(&lab);
        let daemon = lab.adm(0, &["-L", "--daemon"]);
        assert!(
            daemon.contains("master sync daemon (mcast=dgy-akb, syncid=0"),
            "{daemon}"
        );
        assert!(
            daemon.contains("backup sync daemon (mcast=dgy-akb"),
            "{daemon}"
        );
    }
    {
        let mut lab = ScaleLab::start_with("lab_failover_rr", "dgr", "rr", |_, c| {
            c.dataplane_replace("sloppy_tcp", false)
        });
        let t = lab.long_transfers(N, SIZE, RATE);
        std::thread::sleep(Duration::from_millis(800));
        let on_a = lab.conns(0);
        let broken = kill_and_finish(&mut lab, t, "rr baseline");
        eprintln!(
            "failover baseline (rr, no sync, no sloppy_tcp): {} of {N} transfers broke \
             ({on_a} were on the killed director)",
            broken.len()
        );
        assert!(
            !broken.is_empty(),
            "the baseline breaks the killed director's flows"
        );
    }
    eprintln!("lab_failover: {:.1} s", t0.elapsed().as_secs_f64());
}

/// Long transfers, director A SIGKILLed (with its BIRD) 0.8 s in; the
/// transfers that were not byte-exact.
fn kill_during_transfers(lab: &mut ScaleLab, what: &str) -> Vec<serde_json::Value> {
    let t = lab.long_transfers(N, SIZE, RATE);
    std::thread::sleep(Duration::from_millis(800));
    kill_and_finish(lab, t, what)
}

fn kill_and_finish(lab: &mut ScaleLab, t: Transfers, what: &str) -> Vec<serde_json::Value> {
    // scheduled by A (synced copies of B's flows are not counted there)
    let on_a = lab.conns(0);
    // what A dropped so far (printed if transfers broke: A is gone then)
    let a_drops = nonzero(&lab.ctl_json(0, &["drops"]));
    let k = Instant::now();
    lab.kill_director(0, true);
    lab.wait_nexthops(1, 10);
    let gone = k.elapsed();
    let results = t.finish();
    assert_eq!(results.len(), N);
    let broken: Vec<serde_json::Value> = Transfers::broken(&results).into_iter().cloned().collect();
    note_retried(&results, what, &a_drops);
    if !broken.is_empty() {
        eprintln!("{what}: director 0 before the kill dropped {a_drops}");
        diagnose(lab, &[1], what);
    }
    eprintln!(
        "{what}: SIGKILL with {on_a} of {N} flows on A; the router dropped A after {:.2} s; {} broke",
        gone.as_secs_f64(),
        broken.len()
    );
    broken
}

/// A comes back while transfers run on B alone: the router adds A again
/// and ECMP moves some flows to it.
fn back_during_transfers(lab: &mut ScaleLab, what: &str) -> Vec<serde_json::Value> {
    let t = lab.long_transfers(N, SIZE, RATE);
    std::thread::sleep(Duration::from_millis(300));
    let b0 = lab.conns(1);
    lab.start_director(0);
    lab.wait_nexthops(2, 20);
    let results = t.finish();
    assert_eq!(results.len(), N);
    let on_a = lab.conns(0);
    eprintln!(
        "{what}: A back during {N} transfers (B had scheduled {b0}); A scheduled {on_a} of them"
    );
    let broken: Vec<serde_json::Value> = Transfers::broken(&results).into_iter().cloned().collect();
    note_retried(&results, what, "");
    if !broken.is_empty() {
        diagnose(lab, &[0, 1], what);
    }
    broken
}

/// Say which connections needed a second try before the transfers were
/// under way (and what A had dropped by the kill, when known).
fn note_retried(results: &[serde_json::Value], what: &str, a_drops: &str) {
    let r = Transfers::retried(results);
    if !r.is_empty() {
        eprintln!(
            "{what}: {} of {N} connections got no headers at first and were tried again \
             (director 0 had dropped: {a_drops}): {r:?}",
            r.len()
        );
    }
}

/// What the running directors say when transfers broke: their drop
/// counters and their real servers' health, for the failure's reader.
fn diagnose(lab: &ScaleLab, running: &[usize], what: &str) {
    for &i in running {
        eprintln!(
            "{what}: director {i} drops {}\nhealth {}\ncounters {}",
            nonzero(&lab.ctl_json(i, &["drops"])),
            lab.ctl_json(i, &["health"]),
            lab.ctl_json(i, &["lcores"])
        );
    }
}

/// The non-zero entries of `dirigoctl drops`.
fn nonzero(drops: &serde_json::Value) -> String {
    drops
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|d| d["count"].as_u64().unwrap_or(0) > 0)
                .map(|d| format!("{} {}", d["reason"].as_str().unwrap_or("?"), d["count"]))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// Director `i`'s TCP connections past their handshake (ESTABLISHED or
/// closing) as (client port, real server); `-L -n -c` lines read
/// `TCP expire state source virtual destination`.
fn past_handshake(lab: &ScaleLab, i: usize) -> HashSet<(u16, String)> {
    const STATES: [&str; 6] = [
        "ESTABLISHED",
        "FIN_WAIT",
        "CLOSE_WAIT",
        "LAST_ACK",
        "TIME_WAIT",
        "CLOSE",
    ];
    let out = lab.adm(i, &["-L", "-n", "-c"]);
    out.lines()
        .filter(|l| l.starts_with("TCP"))
        .filter(|l| {
            l.split_whitespace()
                .nth(2)
                .is_some_and(|s| STATES.contains(&s))
        })
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let src = f.get(3)?;
            let dst = f.get(5)?;
            let port = src.rsplit_once(':')?.1.parse().ok()?;
            Some((port, dst.rsplit_once(':')?.0.to_string()))
        })
        .collect()
}

/// The router, on the back segment, floods the sync port with valid
/// messages (more connections than a table may hold) and garbage: both
/// directors count and drop what they cannot take, their tables stay
/// within their share, and they keep serving.
fn sync_flood_is_bounded(lab: &ScaleLab) {
    let before: Vec<u64> = (0..2).map(|i| counter(lab, i, "sync_installed")).collect();
    let o = lab.in_ns(
        &lab.ns("rt"),
        &[
            "python3",
            &common::support("sync_flood.py"),
            "224.0.0.81",
            "8848",
            "10.93.0.254",
            VIP,
            &rip(1),
            "2",
        ],
    );
    let flood: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("sync_flood.py: {}", common::text(&o)));
    std::thread::sleep(Duration::from_millis(500));
    let offered = flood["conns"].as_u64().unwrap();
    for (i, &b0) in before.iter().enumerate() {
        let v = lab.ctl_json(i, &["sync"]);
        let all = v["counters"].as_array().unwrap();
        let sum = |pre: &str| -> u64 {
            all.iter()
                .filter(|c| c["name"].as_str().is_some_and(|n| n.starts_with(pre)))
                .map(|c| c["value"].as_u64().unwrap())
                .sum()
        };
        let bad = sum("sync_bad_");
        let installed = counter(lab, i, "sync_installed") - b0;
        let refused =
            counter(lab, i, "sync_table_full") + counter(lab, i, "sync_worker_queue_full");
        let conns: u64 = lab
            .ctl_json(i, &["lcores"])
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["conns"].as_u64().unwrap())
            .sum();
        eprintln!(
            "sync flood on {}: {offered} connections and {} garbage datagrams offered; \
             {installed} installed, {refused} refused (table share or queue), {bad} bad; \
             table {conns} of 65536",
            scaleout_common::LETTERS[i],
            flood["garbage"]
        );
        assert!(bad > 0, "garbage counted: {v}");
        assert!(
            conns <= 65536 / 8 * 7 + 2 * N as u64,
            "synced entries keep to 7/8: {conns}"
        );
        if offered > 65536 {
            assert!(refused > 0, "what did not fit was counted: {v}");
        }
    }
    // both alive and announced (a loaded machine's BFD may have flapped
    // during the flood: the sessions come back), and both still serve
    lab.wait_nexthops(2, 15);
    let r = lab.burst(20, 20_000, 4);
    assert_eq!(r["ok"], 20, "both still serve: {r}");
}

/// A counter of director `i`'s `dirigoctl sync`.
fn counter(lab: &ScaleLab, i: usize, name: &str) -> u64 {
    let v = lab.ctl_json(i, &["sync"]);
    v["counters"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == name))
        .and_then(|c| c["value"].as_u64())
        .unwrap_or_else(|| panic!("no {name} in {v}"))
}

/// tshark capturing the sync port on the back segment's bridge.
struct Capture {
    child: std::process::Child,
    file: std::path::PathBuf,
}

impl Capture {
    fn start(lab: &ScaleLab) -> Capture {
        let file = lab.dir.join("sync.pcap");
        let _ = std::fs::remove_file(&file);
        let mut child = Command::new("ip")
            .args(["netns", "exec", &lab.ns("sw"), "tshark", "-q", "-i", "brb"])
            .args(["-f", "udp port 8848", "-w"])
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tshark");
        // tshark says "Capturing on 'brb'" once it listens
        let mut err = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut seen = String::new();
            let mut b = [0u8; 256];
            while let Ok(n) = err.read(&mut b) {
                if n == 0 {
                    break;
                }
                seen.push_str(&String::from_utf8_lossy(&b[..n]));
                if seen.contains("Capturing on") {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(Duration::from_secs(15))
            .expect("tshark started capturing");
        Capture { child, file }
    }

    /// Stop (after the flush period) and decode: one (client port, real
    /// server, state, flags, vaddr:vport, caddr) per entry.
    fn stop(mut self, lab: &ScaleLab) -> Vec<Decoded> {
        std::thread::sleep(Duration::from_millis(500));
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        let _ = lab;
        let o = Command::new("tshark")
            .arg("-r")
            .arg(&self.file)
            .args([
                "-d",
                "udp.port==8848,ipvs",
                "-T",
                "fields",
                "-E",
                "separator=|",
            ])
            .args([
                "-e",
                "ipvs.conncount",
                "-e",
                "ipvs.version",
                "-e",
                "ipvs.proto",
            ])
            .args(["-e", "ipvs.cport", "-e", "ipvs.vport", "-e", "ipvs.dport"])
            .args(["-e", "ipvs.caddr", "-e", "ipvs.vaddr", "-e", "ipvs.daddr"])
            .args([
                "-e",
                "ipvs.state",
                "-e",
                "ipvs.flags.v1",
                "-e",
                "ipvs.timeout",
            ])
            .output()
            .expect("tshark -r");
        assert!(o.status.success(), "tshark -r: {}", common::text(&o));
        let mut v = Vec::new();
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let f: Vec<Vec<&str>> = line.split('|').map(|x| x.split(',').collect()).collect();
            if f.len() < 12 || f[0][0] == "0" || f[0][0].is_empty() {
                continue; // a hello: no entries
            }
            assert_eq!(f[1][0], "1", "version 1: {line}");
            for k in 0..f[3].len() {
                let at = |j: usize| f[j].get(k).copied().unwrap_or("");
                v.push(Decoded {
                    proto: at(2).into(),
                    cport: at(3).parse().unwrap_or(0),
                    vport: at(4).into(),
                    dport: at(5).into(),
                    caddr: at(6).into(),
                    vaddr: at(7).into(),
                    daddr: at(8).into(),
                    state: at(9).into(),
                    flags: at(10).into(),
                    timeout: at(11).parse().unwrap_or(0),
                });
            }
        }
        v
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Decoded {
    proto: String,
    cport: u16,
    vport: String,
    dport: String,
    caddr: String,
    vaddr: String,
    daddr: String,
    state: String,
    flags: String,
    timeout: u32,
}

/// Every connection A listed as established is in the capture as tshark
/// decodes it: TCP, the client, the VIP, its real server, ESTABLISHED, DR
/// with no output seen, a timeout of about 900 s.
fn check_decoded(listed: &HashSet<(u16, String)>, decoded: &[Decoded]) {
    let rips: Vec<String> = (1..=3).map(rip).collect();
    let missing: Vec<_> = listed
        .iter()
        .filter(|(p, _)| !decoded.iter().any(|d| d.cport == *p))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} listed connections not in the {} captured entries: {missing:?}; captured ports {:?}",
        missing.len(),
        listed.len(),
        decoded.len(),
        decoded.iter().map(|d| d.cport).collect::<Vec<_>>()
    );
    for (port, rs) in listed {
        let e = decoded
            .iter()
            .find(|d| d.cport == *port && d.state == "0x0001")
            .unwrap_or_else(|| panic!("client port {port} not in the captured sync: {decoded:?}"));
        assert_eq!(e.proto, "0x06", "{e:?}");
        assert_eq!((e.vaddr.as_str(), e.vport.as_str()), (VIP, "80"), "{e:?}");
        assert_eq!(
            (e.caddr.as_str(), e.daddr.as_str()),
            ("10.91.0.2", rs.as_str()),
            "{e:?}"
        );
        assert_eq!(e.dport, "80", "{e:?}");
        assert!(rips.contains(&e.daddr), "{e:?}");
        // IP_VS_CONN_F_DROUTE | IP_VS_CONN_F_NOOUTPUT
        assert_eq!(e.flags, "0x00000083", "{e:?}");
        assert!((850..=900).contains(&e.timeout), "{e:?}");
    }
    eprintln!(
        "tshark decoded {} IPVS sync entries; all {} of A's established connections among them",
        decoded.len(),
        listed.len()
    );
}
