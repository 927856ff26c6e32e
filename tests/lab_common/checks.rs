//! The checks every mode runs, on a started [`Lab`].

use super::{rip, rs_index, support, Lab, CLIENT, VIP};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::process::Child;
use std::time::{Duration, Instant};

/// dirigoadm's method flag for a method name.
pub fn flag(method: &str) -> &'static str {
    match method {
        "dr" => "-g",
        "tun" => "-i",
        "nat" => "-m",
        m => panic!("unknown method {m}"),
    }
}

fn svc() -> String {
    format!("{VIP}:80")
}

/// `ping` the VIP from the client: dirigo answers echo requests for it.
pub fn ping(lab: &Lab) {
    let out = lab.client(&["ping", "-c", "3", "-i", "0.2", "-W", "2", VIP]);
    assert!(out.contains("3 received"), "ping VIP: {out}");
}

/// Deterministic test bytes (xorshift), so a failure is reproducible.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn sha256_file(lab: &Lab, path: &str) -> String {
    let out = lab.client(&["sha256sum", path]);
    out.split_whitespace().next().unwrap().to_string()
}

/// Start `curl` uploading `size` pattern bytes (POST /upload) in the client
/// namespace; returns the child and the sha256 the server must report.
pub fn spawn_upload(
    lab: &Lab,
    size: usize,
    seed: u64,
    tag: &str,
    rate: Option<&str>,
) -> (Child, String) {
    let path = lab.dir.join(format!("up-{tag}.bin"));
    std::fs::write(&path, pattern(size, seed)).unwrap();
    let p = path.display().to_string();
    let want = sha256_file(lab, &p);
    let url = format!("http://{VIP}/upload");
    let data = format!("@{p}");
    let mut cmd = vec![
        "curl",
        "-sS",
        "-m",
        "90",
        "-H",
        "Expect:",
        "-H",
        "Content-Type: application/octet-stream",
        "--data-binary",
        &data,
    ];
    if let Some(r) = rate {
        cmd.extend_from_slice(&["--limit-rate", r]);
    }
    cmd.push(&url);
    (lab.client_spawn(&cmd), want)
}

/// Wait for an upload: the real server's sha256 and length must equal the
/// client's. Returns the server that answered.
pub fn finish_upload(child: Child, want: &str, size: usize, tag: &str) -> String {
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "upload {tag}: {} {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let f: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(f.len(), 3, "upload answer: {out:?}");
    assert_eq!(f[1], want, "upload {tag}: sha256 at the real server");
    assert_eq!(f[2], size.to_string(), "upload {tag}: length");
    f[0].to_string()
}

/// Upload `size` bytes and check them (see [`finish_upload`]).
pub fn upload(lab: &Lab, size: usize, seed: u64, tag: &str) -> String {
    let (c, want) = spawn_upload(lab, size, seed, tag, None);
    finish_upload(c, &want, size, tag)
}

/// Start `curl` downloading `size` bytes (GET /blob) in the client namespace.
pub fn spawn_download(lab: &Lab, size: usize, tag: &str, rate: Option<&str>) -> Child {
    let body = lab
        .dir
        .join(format!("down-{tag}.bin"))
        .display()
        .to_string();
    let hdr = lab
        .dir
        .join(format!("down-{tag}.hdr"))
        .display()
        .to_string();
    let url = format!("http://{VIP}/blob?size={size}");
    let mut cmd = vec!["curl", "-sS", "-m", "90", "-D", &hdr, "-o", &body];
    if let Some(r) = rate {
        cmd.extend_from_slice(&["--limit-rate", r]);
    }
    cmd.push(&url);
    lab.client_spawn(&cmd)
}

/// Wait for a download: the file's sha256 must equal the X-Sha256 header
/// and labutil's independent value. Returns the server.
pub fn finish_download(lab: &Lab, child: Child, size: usize, tag: &str) -> String {
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "download {tag}: {} {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let body = lab
        .dir
        .join(format!("down-{tag}.bin"))
        .display()
        .to_string();
    let hdr = lab.dir.join(format!("down-{tag}.hdr"));
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
    assert_eq!(
        std::fs::metadata(&body).unwrap().len(),
        size as u64,
        "download {tag}: length"
    );
    let got = sha256_file(lab, &body);
    assert_eq!(got, field("X-Sha256"), "download {tag}: sha256");
    let indep = lab.client(&[
        "python3",
        &support("labutil.py"),
        "blob-sha256",
        &size.to_string(),
    ]);
    assert_eq!(got, indep.trim(), "download {tag}: labutil's sha256");
    field("X-Server")
}

/// Download `size` bytes and check them (see [`finish_download`]).
pub fn download(lab: &Lab, size: usize, tag: &str) -> String {
    let c = spawn_download(lab, size, tag, None);
    finish_download(lab, c, size, tag)
}

/// 2 MB each way through the VIP, checksummed.
pub fn transfer(lab: &Lab, tag: &str) {
    let a = upload(lab, 2 << 20, 7, tag);
    let b = download(lab, 2 << 20, tag);
    eprintln!("{tag}: 2 MiB up via {a}, 2 MiB down via {b}: checksums ok");
}

/// UDP request/response: 6 probes (each a new flow) answered round-robin by
/// rs1..rs3, from VIP:5353, arriving on `iface` (ret0 for DR/TUN, the WAN tap
/// for NAT).
pub fn udp(lab: &Lab, iface: &str) {
    let port = "5353";
    let out = lab.client(&[
        "python3",
        &support("udp_probe.py"),
        VIP,
        port,
        "--count",
        "6",
        "--json",
        "--payload",
        "hello",
    ]);
    let mut names = Vec::new();
    let mut ports = Vec::new();
    for (i, line) in out.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap();
        let reply = v["reply"].as_str().unwrap_or_else(|| panic!("udp: {out}"));
        let (name, payload) = reply.split_once(':').unwrap();
        assert_eq!(payload, format!("hello{i}"), "udp payload echoed");
        assert_eq!(v["from"], format!("{VIP}:{port}"), "udp reply source");
        assert_eq!(v["iface"], iface, "udp reply arrival interface");
        names.push(name.to_string());
        let lport = v["local"]
            .as_str()
            .unwrap()
            .rsplit(':')
            .next()
            .unwrap()
            .to_string();
        ports.push((lport, name.to_string()));
    }
    assert_round_robin(&names, 3);
    // each probe is a UDP entry in `-L -n -c`, with its real server
    let table = entries(lab);
    for (lport, name) in &ports {
        let src = format!("{CLIENT}:{lport}");
        let e = table
            .iter()
            .find(|e| e.proto == "UDP" && e.src == src)
            .unwrap_or_else(|| panic!("no UDP entry for {src}: {table:?}"));
        assert_eq!(e.state, "UDP", "{e:?}");
        assert_eq!(e.vip, format!("{VIP}:{port}"), "{e:?}");
        assert_eq!(e.dst, format!("{}:{port}", rip(rs_index(name))), "{e:?}");
    }
    eprintln!("udp: {names:?}");
}

/// One connection's answer from lab_client.py.
#[derive(Debug, Clone)]
pub struct ConnAnswer {
    /// Client port.
    pub lport: u16,
    /// Client address.
    pub src: String,
    /// Real server name (rsN).
    pub name: String,
}

/// `n` TCP connections open at once, then GET /whoami on each.
pub fn conns(lab: &Lab, n: usize, src: Option<&str>) -> Vec<ConnAnswer> {
    let ns = n.to_string();
    let mut cmd = vec![
        "python3".to_string(),
        support("lab_client.py"),
        "conns".into(),
        VIP.into(),
        "80".into(),
        ns,
    ];
    if let Some(s) = src {
        cmd.extend(["--src".to_string(), s.to_string()]);
    }
    let cmd: Vec<&str> = cmd.iter().map(|s| s.as_str()).collect();
    let out = lab.client(&cmd);
    let v: Vec<ConnAnswer> = out
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["ok"], true, "connection failed: {l}");
            ConnAnswer {
                lport: v["lport"].as_u64().unwrap() as u16,
                src: v["src"].as_str().unwrap().into(),
                name: v["name"].as_str().unwrap().into(),
            }
        })
        .collect();
    assert_eq!(v.len(), n, "{out}");
    v
}

/// Counts per real server name.
pub fn count(names: impl IntoIterator<Item = String>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for n in names {
        *m.entry(n).or_insert(0) += 1;
    }
    m
}

/// Exactly round-robin over `k` servers: the first `k` differ, then the
/// sequence repeats.
pub fn assert_round_robin(names: &[String], k: usize) {
    let first: std::collections::BTreeSet<&String> = names.iter().take(k).collect();
    assert_eq!(first.len(), k, "first {k} answers differ: {names:?}");
    for (i, n) in names.iter().enumerate() {
        assert_eq!(n, &names[i % k], "not round-robin at {i}: {names:?}");
    }
}

/// rr: 30 concurrent connections, exactly 10 each in a strict rotation.
pub fn spread_rr(lab: &Lab) {
    let c = conns(lab, 30, None);
    let names: Vec<String> = c.iter().map(|a| a.name.clone()).collect();
    assert_round_robin(&names, 3);
    eprintln!("rr: {:?}", count(names));
}

/// Set a real server's weight.
pub fn weight(lab: &Lab, method: &str, n: usize, w: u32) {
    lab.adm(&[
        "-e",
        "-t",
        &svc(),
        "-r",
        &rip(n),
        flag(method),
        "-w",
        &w.to_string(),
    ]);
}

/// wrr with weights 1:2:3 over 60 concurrent connections: 10/20/30.
/// Stated tolerance: +-2 per server (one worker's wrr is deterministic, so
/// exact counts are expected; the slack covers a cycle position carried
/// over a reconfiguration). Restores rr with weights 1.
pub fn spread_wrr(lab: &Lab, method: &str) {
    lab.adm(&["-E", "-t", &svc(), "-s", "wrr"]);
    for n in 1..=3 {
        weight(lab, method, n, n as u32);
    }
    let c = count(conns(lab, 60, None).into_iter().map(|a| a.name));
    eprintln!("wrr 1:2:3 over 60: {c:?}");
    for n in 1..=3usize {
        let got = c.get(&format!("rs{n}")).copied().unwrap_or(0) as i64;
        assert!(
            (got - 10 * n as i64).abs() <= 2,
            "wrr: rs{n} got {got}, want {} +-2: {c:?}",
            10 * n
        );
    }
    lab.adm(&["-E", "-t", &svc(), "-s", "rr"]);
    for n in 1..=3 {
        weight(lab, method, n, 1);
    }
}

/// One line of `dirigoadm -L -n -c`.
#[derive(Debug, Clone)]
pub struct Entry {
    /// TCP / UDP.
    pub proto: String,
    /// IPVS state name.
    pub state: String,
    /// client ip:port.
    pub src: String,
    /// vip:port.
    pub vip: String,
    /// rip:port.
    pub dst: String,
}

/// The connection table as dirigoadm prints it. Each worker's census
/// (`dirigoctl census`: its count, a walk, the gauge and the real
/// servers' counters at one moment) must agree with itself too.
pub fn entries(lab: &Lab) -> Vec<Entry> {
    let census = lab.ctl_json(&["census"]);
    let workers = census.as_array().expect("census list");
    assert!(!workers.is_empty(), "no worker in the census");
    for w in workers {
        assert_eq!(w["consistent"], true, "census: {w}");
        assert_eq!(w["entries"], w["walked"], "census: {w}");
    }
    let out = lab.adm(&["-L", "-n", "-c"]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("IPVS connection entries"), "{out}");
    let hdr = lines.next().unwrap_or_default();
    assert!(hdr.starts_with("pro expire state"), "{out}");
    lines
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 6, "connection line {l:?}");
            Entry {
                proto: f[0].into(),
                state: f[2].into(),
                src: f[3].into(),
                vip: f[4].into(),
                dst: f[5].into(),
            }
        })
        .collect()
}

/// The entry for the client port `lport` (client address [`CLIENT`]).
pub fn entry_for(lab: &Lab, lport: u16) -> Option<Entry> {
    let src = format!("{CLIENT}:{lport}");
    entries(lab)
        .into_iter()
        .find(|e| e.proto == "TCP" && e.src == src)
}

/// Connections held open by lab_client.py hold.
pub struct Held {
    child: std::process::Child,
    stop: std::path::PathBuf,
    /// (lport, name) per connection.
    pub conns: Vec<(u16, String)>,
}

impl Held {
    /// Open `n` connections and keep asking /whoami on each every `interval` s.
    pub fn start(lab: &Lab, n: usize, interval: &str, tag: &str) -> Held {
        let ready = lab.dir.join(format!("hold-{tag}.ready"));
        let stop = lab.dir.join(format!("hold-{tag}.stop"));
        let _ = std::fs::remove_file(&ready);
        let _ = std::fs::remove_file(&stop);
        let (r, s) = (ready.display().to_string(), stop.display().to_string());
        let child = lab.client_spawn(&[
            "python3",
            &support("lab_client.py"),
            "hold",
            VIP,
            "80",
            &n.to_string(),
            "--ready-file",
            &r,
            "--stop-file",
            &s,
            "--interval",
            interval,
            "--timeout",
            "3",
        ]);
        let mut h = Held {
            child,
            stop,
            conns: Vec::new(),
        };
        let end = Instant::now() + Duration::from_secs(20);
        while !ready.exists() {
            if let Ok(Some(st)) = h.child.try_wait() {
                let mut e = String::new();
                let _ = h.child.stderr.take().unwrap().read_to_string(&mut e);
                panic!("hold exited early ({st}): {e}");
            }
            assert!(Instant::now() < end, "hold: connections not ready in 20 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        let v: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&ready).unwrap()).unwrap();
        h.conns = v
            .iter()
            .map(|c| {
                (
                    c["lport"].as_u64().unwrap() as u16,
                    c["name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        h
    }

    /// Stop; per connection: (lport, first name, rounds, fails, names seen).
    pub fn stop(mut self) -> Vec<(u16, String, u64, u64, Vec<String>)> {
        std::fs::write(&self.stop, b"stop").unwrap();
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let st = self.child.wait().unwrap();
        assert!(st.success(), "hold: {st} {out}");
        out.lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let names = v["names"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect();
                (
                    v["lport"].as_u64().unwrap() as u16,
                    v["name"].as_str().unwrap().to_string(),
                    v["rounds"].as_u64().unwrap(),
                    v["fails"].as_u64().unwrap(),
                    names,
                )
            })
            .collect()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.stop, b"stop");
        let _ = self.child.wait();
    }
}

/// Weight 0, removal, and the connection listing:
/// * three held connections (one per server) show ESTABLISHED with their
///   real server in `-L -n -c`;
/// * rs2 at weight 0: 12 new connections all go to rs1/rs3 (6 each), while
///   the held connection to rs2 keeps answering;
/// * rs3 removed (`-d`): 12 new connections all go to rs1;
/// * after the held connections close, their entries show `closed_state`.
///
/// Restores rs2 weight 1 and rs3.
pub fn weight0_removed_listing(lab: &Lab, method: &str, closed_state: &str) {
    let held = Held::start(lab, 3, "0.2", method);
    let names: Vec<String> = held.conns.iter().map(|c| c.1.clone()).collect();
    assert_round_robin(&names, 3);
    for (lport, name) in &held.conns {
        let e = entry_for(lab, *lport).unwrap_or_else(|| panic!("no entry for held :{lport}"));
        assert_eq!(e.state, "ESTABLISHED", "held {name}: {e:?}");
        assert_eq!(
            e.dst,
            format!("{}:80", rip(rs_index(name))),
            "held {name}: {e:?}"
        );
        assert_eq!(e.vip, format!("{VIP}:80"));
    }
    weight(lab, method, 2, 0);
    let c = count(conns(lab, 12, None).into_iter().map(|a| a.name));
    assert_eq!(c.get("rs2"), None, "weight 0 got new connections: {c:?}");
    assert_eq!((c.get("rs1"), c.get("rs3")), (Some(&6), Some(&6)), "{c:?}");
    // the held connection to rs2 still works: rounds after the change
    std::thread::sleep(Duration::from_millis(600));
    let rs2_port = held.conns.iter().find(|c| c.1 == "rs2").unwrap().0;
    assert_eq!(entry_for(lab, rs2_port).unwrap().state, "ESTABLISHED");
    lab.adm(&["-d", "-t", &svc(), "-r", &rip(3)]);
    let c = count(conns(lab, 12, None).into_iter().map(|a| a.name));
    assert_eq!(
        c.get("rs1"),
        Some(&12),
        "removed rs3 / weight-0 rs2 got new connections: {c:?}"
    );
    let res = held.stop();
    for (lport, name, rounds, fails, seen) in &res {
        eprintln!("held :{lport} {name}: {rounds} rounds, {fails} fails, {seen:?}");
        // Every held connection keeps working: rs2 was quiesced (weight 0)
        // and rs3 removed; with expire_nodest_conn = false (the default)
        // dirigo keeps forwarding a removed server's established
        // connections until they end or expire (docs/CONFIG.md).
        assert_eq!(
            (*fails, seen.as_slice()),
            (0, [name.clone()].as_slice()),
            "held {name}"
        );
        assert!(*rounds >= 4, "held {name}: only {rounds} rounds");
    }
    std::thread::sleep(Duration::from_millis(500));
    for (lport, name, ..) in res.iter().filter(|r| r.1 != "rs3") {
        let e = entry_for(lab, *lport).unwrap_or_else(|| panic!("no entry for closed :{lport}"));
        assert_eq!(e.state, closed_state, "closed {name}: {e:?}");
        assert_eq!(e.dst, format!("{}:80", rip(rs_index(name))));
    }
    lab.adm(&["-a", "-t", &svc(), "-r", &rip(3), flag(method), "-w", "1"]);
    weight(lab, method, 2, 1);
}

/// Persistence: with `-p 60` eight connections from one client all reach
/// one server; without it they rotate again.
pub fn persistence(lab: &Lab) {
    lab.adm(&["-E", "-t", &svc(), "-s", "rr", "-p", "60"]);
    let l = lab.adm(&["-L", "-n", "-t", &svc()]);
    assert!(l.contains("persistent 60"), "{l}");
    let names: Vec<String> = conns(lab, 8, None).into_iter().map(|a| a.name).collect();
    assert!(
        names.iter().all(|n| n == &names[0]),
        "persistence: {names:?}"
    );
    let again: Vec<String> = conns(lab, 4, None).into_iter().map(|a| a.name).collect();
    assert!(
        again.iter().all(|n| n == &names[0]),
        "persistence (2nd batch): {again:?}"
    );
    lab.adm(&["-E", "-t", &svc(), "-s", "rr"]);
    let names: Vec<String> = conns(lab, 6, None).into_iter().map(|a| a.name).collect();
    assert_round_robin(&names, 3);
    eprintln!("persistence ok");
}

/// Per-worker `conns_created` from `dirigoctl lcores`.
pub fn worker_conns(lab: &Lab) -> Vec<u64> {
    let v = lab.ctl_json(&["lcores"]);
    v.as_array()
        .unwrap()
        .iter()
        .filter(|l| l["role"] == "worker")
        .map(|l| l["conns_created"].as_u64().unwrap())
        .collect()
}

/// A counter from `/proc/net/snmp` in the client namespace (e.g. Icmp InDestUnreachs).
pub fn client_snmp(lab: &Lab, group: &str, field: &str) -> u64 {
    let s = lab.client(&["cat", "/proc/net/snmp"]);
    let rows: Vec<&str> = s
        .lines()
        .filter(|l| l.starts_with(&format!("{group}:")))
        .collect();
    assert!(rows.len() >= 2, "{s}");
    let names: Vec<&str> = rows[0].split_whitespace().collect();
    let vals: Vec<&str> = rows[1].split_whitespace().collect();
    let i = names
        .iter()
        .position(|n| *n == field)
        .unwrap_or_else(|| panic!("no {field}"));
    vals[i].parse().unwrap()
}
