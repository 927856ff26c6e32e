//! Running the real `dirigo` daemon (the device under test) as a child on
//! net_pcap (wan, replaying a pcap forever) -> net_null (lan), and reading
//! its counters over the control socket (what `dirigoctl --json ports` /
//! `dirigoctl --json lcores` print).

use dirigo_core::lb::spec::Method;
use dirigo_proto::client::Client;
use dirigo_proto::proto::{Request, Response};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One daemon run.
pub struct DutCase<'a> {
    /// The `dirigo` binary.
    pub bin: &'a Path,
    /// The pcap the wan port replays.
    pub pcap: &'a Path,
    /// Packets in that pcap (the pool must hold them all: net_pcap
    /// preloads the file for `infinite_rx`).
    pub pcap_pkts: u64,
    /// Forwarding method of the real servers.
    pub method: Method,
    /// `connections_per_worker`.
    pub capacity: u32,
    /// `embryonic_grace_ms`: 0 in the new-connection scenario, whose SYNs
    /// keep a small table full of fresh embryonic entries (it measures the
    /// cost of admitting a flow into a full table, not a flood's refusals).
    pub embryonic_grace_ms: u32,
    /// Scratch directory (config, socket).
    pub dir: &'a Path,
    /// Seconds of traffic before the first sample.
    pub warmup: Duration,
    /// Seconds between the two samples.
    pub measure: Duration,
    /// Worker lcores (1, or 2: `--lcores 0@0,1@1,2@0`, the second worker
    /// sharing CPU 0 with the mostly idle control thread).
    pub workers: u32,
    /// The exception path: the wan port gets the kernel interface
    /// [`KERNEL_IF`] (net_tap) in the namespace [`NETNS`], with the default
    /// rate limit.
    pub exception: bool,
    /// The metrics endpoint: `[metrics] listen = METRICS_ADDR` with the
    /// workers' burst histogram on, scraped once a second for the whole run
    /// (a scrape renders every family: the IPVS ones, ports with xstats,
    /// drops, workers with their histograms).
    pub metrics: bool,
    /// The SYN proxy: `[dataplane] synproxy` and the service's `synproxy`
    /// (NAT real servers): every SYN of the pcap is answered on the wan
    /// port with a SYN/ACK cookie ([`DutResult::wan_tx_mpps`]).
    pub synproxy: bool,
    /// The crash checkpoint: `[control] handoff_file` in `dir` and
    /// `connection_checkpoint_s = 1`, so the workers sweep their tables
    /// into the checkpoint thread's buffers every second of the run.
    pub checkpoint: bool,
    /// The connection handoff: `[control] handoff_file` in `dir` (also
    /// with `checkpoint`).
    pub handoff: bool,
    /// IPv6: the ports also get IPv6 addresses ([`crate::gen::OWN_ADDR6`] on the
    /// wan, the lan /64's `::1`), a default route via [`crate::gen::GW6`], static
    /// neighbours for it and the IPv6 real servers, and the service is the
    /// IPv6 VIP's ([`crate::gen::VIP6`]) with those servers; the IPv6 connection
    /// table gets `capacity`, the IPv4 one its minimum.
    pub v6: bool,
    /// Mark rules that match none of the pcap's packets (each a /32 of
    /// its own, a mark without a service): the cost of rules configured
    /// beside an ordinary service (`DR-marks`).
    pub marks: u32,
    /// The service is an fwmark service (mark 1), its packets given the
    /// mark by one more rule after the `marks` others (`DR-fwm`,
    /// `newconn-fwm`): every new flow scans them all.
    pub fwmark: bool,
}

/// Where the metrics scenario's endpoint listens.
pub const METRICS_ADDR: &str = "127.0.0.1:19642";

/// The wan port's kernel interface in the exception scenario.
pub const KERNEL_IF: &str = "dgbench-kwan";
/// The namespace it is put in (created by dirigo if missing).
pub const NETNS: &str = "dg-bench";

/// What the daemon did between the two samples.
#[derive(Clone, Debug, Default)]
pub struct DutResult {
    /// Packets transmitted on the lan port per second / 1e6.
    pub mpps: f64,
    /// Connections in the worker's table (second sample).
    pub tracked: u64,
    /// Connections created per second / 1e6.
    pub mconn_s: f64,
    /// Packets received on the wan port per second / 1e6.
    pub rx_mpps: f64,
    /// Packets transmitted on the wan port per second / 1e6 (the SYN
    /// proxy's SYN/ACKs).
    pub wan_tx_mpps: f64,
    /// The wan port's kernel interface, when it has one.
    pub kernel: Option<KernelRates>,
    /// Scrapes of the metrics endpoint that returned the burst histogram
    /// (metrics scenario; 0 otherwise).
    pub scrapes: u32,
    /// Checkpoints written by the end of the run (checkpoint scenario; 0
    /// otherwise), the last one's entries and time (ms).
    pub checkpoints: u64,
    /// The last checkpoint's entries.
    pub checkpoint_entries: u64,
    /// The last checkpoint's time, ms.
    pub checkpoint_ms: u64,
}

/// What the wan port's exception path did per second (packets/s).
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelRates {
    /// Handed to the kernel interface.
    pub to_kernel: f64,
    /// Over the port's rate limit (dropped, `kernel_rate_limited_wan`).
    pub rate_limited: f64,
    /// Lost to a full exception ring.
    pub ring_full: f64,
    /// Not taken by the kernel interface.
    pub write_failed: f64,
}

impl KernelRates {
    /// Packets for the kernel that arrived: every fate counted.
    pub fn arrived(&self) -> f64 {
        self.to_kernel + self.rate_limited + self.ring_full + self.write_failed
    }
}

struct Daemon {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Daemon {
    fn output(&self) -> String {
        self.log
            .lock()
            .map(|l| l[l.len().saturating_sub(40)..].join("\n"))
            .unwrap_or_default()
    }
    fn has_line(&self, s: &str) -> bool {
        self.log
            .lock()
            .map(|l| l.iter().any(|x| x.contains(s)))
            .unwrap_or(false)
    }
    fn stop(mut self) -> Result<(), String> {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) if st.success() => return Ok(()),
                Ok(Some(st)) => return Err(format!("dirigo exited with {st}:\n{}", self.output())),
                _ if Instant::now() > deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err("dirigo did not stop on SIGTERM".into());
                }
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn start(bin: &Path, cfg_path: &Path) -> Result<Daemon, String> {
    let mut child = Command::new(bin)
        .arg("--config")
        .arg(cfg_path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let log = Arc::new(Mutex::new(Vec::new()));
    let streams: Vec<Box<dyn std::io::Read + Send>> = vec![
        Box::new(child.stderr.take().ok_or("no stderr")?),
        Box::new(child.stdout.take().ok_or("no stdout")?),
    ];
    for stream in streams {
        let log = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if let Ok(mut l) = log.lock() {
                    l.push(line);
                }
            }
        });
    }
    let mut d = Daemon { child, log };
    let deadline = Instant::now() + Duration::from_secs(90);
    while !d.has_line("running (SIGINT/SIGTERM to stop)") {
        if let Ok(Some(st)) = d.child.try_wait() {
            std::thread::sleep(Duration::from_millis(200));
            return Err(format!("dirigo exited early ({st}):\n{}", d.output()));
        }
        if Instant::now() > deadline {
            return Err(format!("dirigo did not start in 90 s:\n{}", d.output()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(d)
}

#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    at: Option<Instant>,
    lan_tx: u64,
    wan_rx: u64,
    wan_tx: u64,
    conns: u64,
    created: u64,
    /// The wan port's kernel interface counters: to_kernel, rate_limited,
    /// ring_full, write_failed.
    kernel: Option<[u64; 4]>,
}

fn sample(c: &mut Client) -> Result<Sample, String> {
    let t0 = Instant::now();
    let ports = match c.call(Request::Ports { xstats: false }) {
        Ok(Response::Ports(p)) => p,
        other => return Err(format!("ports: unexpected answer {other:?}")),
    };
    let t1 = Instant::now();
    let lcores = match c.call(Request::Lcores) {
        Ok(Response::Lcores(l)) => l,
        other => return Err(format!("lcores: unexpected answer {other:?}")),
    };
    let find = |name: &str| ports.iter().find(|p| p.name == name);
    let lan = &find("lan").ok_or("no lan port")?.counters;
    let wan_port = find("wan").ok_or("no wan port")?;
    let wan = &wan_port.counters;
    let kernel = wan_port
        .kernel
        .as_ref()
        .map(|k| [k.to_kernel, k.rate_limited, k.ring_full, k.write_failed]);
    let workers = lcores.iter().filter(|l| l.role == "worker");
    let (conns, created) = workers.fold((0, 0), |(a, b), l| (a + l.conns, b + l.conns_created));
    Ok(Sample {
        at: Some(t0 + (t1 - t0) / 2),
        lan_tx: lan.opackets,
        wan_rx: wan.ipackets,
        wan_tx: wan.opackets,
        conns,
        created,
        kernel,
    })
}

fn connect(sock: &Path) -> Result<Client, String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match Client::connect(sock) {
            Ok(c) => return Ok(c),
            Err(e) if Instant::now() > deadline => return Err(format!("control socket: {e}")),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// `ip netns delete` the exception scenario's namespace.
fn remove_netns() {
    let _ = Command::new("ip")
        .args(["netns", "delete", NETNS])
        .stderr(Stdio::null())
        .status();
}

/// Start dirigo on `c`, warm up, sample twice `c.measure` apart, stop it.
pub fn run(c: &DutCase<'_>, tag: &str) -> Result<DutResult, String> {
    let prefix = format!("dg-bench-{tag}-{}", std::process::id());
    let sock: PathBuf = c.dir.join(format!("{tag}.sock"));
    let cfg_path = c.dir.join(format!("{tag}.toml"));
    std::fs::write(&cfg_path, config(c, &prefix, &sock)).map_err(|e| e.to_string())?;
    // dirigo creates the namespace when missing and leaves it: remove it
    // afterwards unless it was there before
    let netns_path = Path::new("/run/netns").join(NETNS);
    let new_netns = c.exception && !netns_path.exists();
    let d = match start(c.bin, &cfg_path) {
        Ok(d) => d,
        Err(e) => {
            if new_netns {
                remove_netns();
            }
            return Err(e);
        }
    };
    let scraper = c.metrics.then(Scraper::start);
    let res = (|| {
        let mut cl = connect(&sock)?;
        std::thread::sleep(c.warmup);
        let a = sample(&mut cl)?;
        std::thread::sleep(c.measure);
        let b = sample(&mut cl)?;
        let dt = match (a.at, b.at) {
            (Some(x), Some(y)) => (y - x).as_secs_f64(),
            _ => return Err("no sample time".to_string()),
        };
        Ok(DutResult {
            mpps: (b.lan_tx - a.lan_tx) as f64 / dt / 1e6,
            tracked: b.conns,
            mconn_s: (b.created - a.created) as f64 / dt / 1e6,
            rx_mpps: (b.wan_rx - a.wan_rx) as f64 / dt / 1e6,
            wan_tx_mpps: (b.wan_tx - a.wan_tx) as f64 / dt / 1e6,
            kernel: match (a.kernel, b.kernel) {
                (Some(x), Some(y)) => {
                    let rate = |i: usize| y[i].saturating_sub(x[i]) as f64 / dt;
                    Some(KernelRates {
                        to_kernel: rate(0),
                        rate_limited: rate(1),
                        ring_full: rate(2),
                        write_failed: rate(3),
                    })
                }
                _ if c.exception => return Err("no kernel interface on the wan port".into()),
                _ => None,
            },
            scrapes: 0,
            checkpoints: 0,
            checkpoint_entries: 0,
            checkpoint_ms: 0,
        })
    })();
    // the checkpoint's own account: one at least, or the run is wrong
    let res = match res {
        Ok(r) if c.checkpoint => checkpoint_info(&sock).and_then(|k| match k.written {
            0 => Err("no checkpoint was written during the run".to_string()),
            n => Ok(DutResult {
                checkpoints: n,
                checkpoint_entries: k.last_entries,
                checkpoint_ms: k.last_ms,
                ..r
            }),
        }),
        r => r,
    };
    let res = match (res, scraper) {
        (Ok(r), Some(s)) => match s.stop() {
            0 => Err("the metrics endpoint answered no scrape with the burst histogram".into()),
            n => Ok(DutResult { scrapes: n, ..r }),
        },
        (r, _) => r,
    };
    let out = d.output();
    let stopped = d.stop();
    if new_netns {
        remove_netns();
    }
    let r = res.map_err(|e| format!("{e}\ndirigo output:\n{out}"))?;
    stopped?;
    let _ = std::fs::remove_file(&sock);
    // the stop's handoff (and the last checkpoint): up to 100 MB
    let _ = std::fs::remove_file(c.dir.join("handoff"));
    Ok(r)
}

/// `dirigoctl handoff`'s checkpoint.
fn checkpoint_info(sock: &Path) -> Result<dirigo_proto::view::CheckpointInfo, String> {
    match connect(sock)?.call(Request::Handoff) {
        Ok(Response::Handoff(h)) => h
            .checkpoint
            .ok_or_else(|| "no checkpoint configured".into()),
        other => Err(format!("handoff: unexpected answer {other:?}")),
    }
}

/// A Prometheus stand-in: `GET /metrics` on [`METRICS_ADDR`] once a
/// second until stopped, as a scraper with `scrape_interval: 1s` would.
struct Scraper {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<u32>,
}

impl Scraper {
    fn start() -> Scraper {
        use std::sync::atomic::Ordering::Relaxed;
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut ok = 0;
            while !flag.load(Relaxed) {
                if scrape()
                    .is_some_and(|t| t.contains("dirigo_worker_burst_duration_seconds_bucket"))
                {
                    ok += 1;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
            ok
        });
        Scraper { stop, thread }
    }

    /// Stop; the number of good scrapes.
    fn stop(self) -> u32 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap_or(0)
    }
}

/// One `GET /metrics`: the response, or `None`.
fn scrape() -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(METRICS_ADDR).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    body.starts_with("HTTP/1.1 200").then_some(body)
}

mod config;
pub use config::config;

// the tests' names (they take this module's)
#[cfg(test)]
use crate::{gen, micro::N_RS};
#[cfg(test)]
use std::net::{IpAddr, Ipv6Addr};

#[cfg(test)]
mod tests;

/// What a SIGTERM restart with a full table costs ([`restart_gap`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct GapResult {
    /// Connections in the table at the stop.
    pub tracked: u64,
    /// Entries the stopping dirigo wrote, and in how many ms (its log).
    pub written: u64,
    /// The old process's export and write, ms.
    pub write_ms: u64,
    /// Entries the next one installed.
    pub installed: u64,
    /// Its install, ms (its log).
    pub install_ms: u64,
    /// No packet forwarded, ms: the old process's last burst to the new
    /// one's first (`dirigoctl handoff`).
    pub gap_ms: u64,
}

/// Start dirigo on `c` (with `c.handoff`), let the traffic fill its
/// table for `c.warmup`, stop it with SIGTERM (the handoff written) and
/// start it again on the same configuration: the gap and its parts.
pub fn restart_gap(c: &DutCase<'_>, tag: &str) -> Result<GapResult, String> {
    let prefix = format!("dg-bench-{tag}-{}", std::process::id());
    let sock: PathBuf = c.dir.join(format!("{tag}.sock"));
    let cfg_path = c.dir.join(format!("{tag}.toml"));
    std::fs::write(&cfg_path, config(c, &prefix, &sock)).map_err(|e| e.to_string())?;
    let d = start(c.bin, &cfg_path)?;
    let mut cl = connect(&sock)?;
    std::thread::sleep(c.warmup);
    let tracked = sample(&mut cl)?.conns;
    drop(cl);
    let log = d.log.clone();
    d.stop()?;
    // "dirigo: handoff: N entries written to P in M ms"
    let line = |log: &Arc<Mutex<Vec<String>>>, what: &str| {
        log.lock()
            .ok()
            .and_then(|l| l.iter().find(|x| x.contains(what)).cloned())
            .ok_or_else(|| format!("no '{what}' line"))
    };
    let nums = |l: &str| -> Vec<u64> {
        l.split(|ch: char| !ch.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let w = nums(&line(&log, "entries written to")?);
    let d = start(c.bin, &cfg_path)?;
    let i = nums(&line(&d.log, "template(s) installed of")?);
    let h = match connect(&sock)?.call(Request::Handoff) {
        Ok(Response::Handoff(h)) => h,
        other => return Err(format!("handoff: unexpected answer {other:?}")),
    };
    d.stop()?;
    let _ = std::fs::remove_file(c.dir.join("handoff"));
    let _ = std::fs::remove_file(&sock);
    let installed = h
        .counters
        .iter()
        .find(|c| c.name == "handoff_installed")
        .map_or(0, |c| c.value);
    Ok(GapResult {
        tracked,
        written: w.first().copied().unwrap_or(0),
        write_ms: w.last().copied().unwrap_or(0),
        installed,
        install_ms: i.last().copied().unwrap_or(0),
        gap_ms: h.gap_ms.ok_or("no gap: nothing was installed")?,
    })
}
