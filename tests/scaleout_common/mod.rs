//! The scale-out lab from Rust (issue 20): `scripts/lab/scaleout.sh` builds
//! the client, the router (BIRD, ECMP), the front and back segments and
//! three DR real servers; each director is a real `dirigo` on two net_tap
//! ports (front and back, each with a kernel interface in the director's
//! exception namespace `<prefix>-x<letter>`) announcing the VIP through
//! `[announce]`, with the shipped `conf/bird-director.conf` running in that
//! namespace. [`ScaleLab`] removes everything when dropped (success,
//! failure or panic).
//!
//! The lab is dual-stack: every director also serves and announces the
//! IPv6 VIP [`VIP6`] (a /128 route, an IPv6 BGP session from its front
//! port's IPv6 address), the router merges the IPv6 routes into an ECMP
//! route too, and the real servers serve it (DR). The functions that take
//! a `vip` work for either; those without one are the IPv4 VIP's.
//!
//! For further tests on this lab: [`ScaleLab::start`] with the scheduler
//! and extra TOML for both directors, or [`ScaleLab::start_with`] and a
//! hook that changes each director's config (`[sync]`, `[dataplane]`
//! keys), then
//! [`ScaleLab::stop_director`] (SIGTERM), [`ScaleLab::kill_director`]
//! (SIGKILL, optionally with its BIRD: a dead machine),
//! [`ScaleLab::start_director`] (back again), [`ScaleLab::long_transfers`]
//! and [`Transfers::finish`] (N concurrent long downloads, each checked
//! byte-exact), [`ScaleLab::nexthops`] / [`ScaleLab::wait_nexthops`] (the
//! router's view), [`ScaleLab::conns`] (a director's connection count).
#![allow(dead_code)]

use crate::common::{self, repo, support, text, DaemonConfig};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The VIP every director announces.
pub const VIP: &str = "10.90.0.100";
/// The IPv6 VIP every director announces as well.
pub const VIP6: &str = "fd00:90::100";
/// Both VIPs.
pub const VIPS: [&str; 2] = [VIP, VIP6];
/// The directors' letters (index 0 is "a").
pub const LETTERS: [char; 2] = ['a', 'b'];
/// Real server `n`'s address (1-based).
pub fn rip(n: usize) -> String {
    format!("10.93.0.{}", 10 + n)
}
/// Real server `n`'s IPv6 address (1-based).
pub fn rip6(n: usize) -> String {
    format!("fd00:93::{}", 10 + n)
}

/// `ip` or `ip -6`, by the address's family.
fn ip_for(vip: &str) -> Vec<&'static str> {
    if vip.contains(':') {
        vec!["ip", "-6"]
    } else {
        vec!["ip"]
    }
}

/// A service's address as the tools print it (`[fd00:90::100]:80`).
pub fn service_addr(vip: &str) -> String {
    let a: std::net::IpAddr = vip.parse().expect("an address");
    std::net::SocketAddr::new(a, 80).to_string()
}

/// One running director: dirigo and the BIRD of its exception namespace.
pub struct Director {
    /// dirigo.
    pub daemon: common::Daemon,
    /// Its control socket.
    pub sock: String,
}

/// A change to director `i`'s configuration (`[sync]`, `[dataplane]` keys).
pub type Hook = dyn Fn(usize, DaemonConfig) -> DaemonConfig;

/// The lab and its directors.
pub struct ScaleLab {
    /// Name prefix of namespaces and interfaces (at most 5 characters).
    pub prefix: String,
    /// Scratch directory (configs, BIRD sockets and logs of the directors).
    pub dir: PathBuf,
    /// scaleout.sh's state directory (router BIRD, real servers).
    pub state: String,
    /// The service's scheduler.
    sched: String,
    /// What each director's configuration gets besides the common part.
    hook: Box<Hook>,
    /// The directors, by index (None: not running).
    pub directors: Vec<Option<Director>>,
    /// When the lab was started.
    pub t0: Instant,
}

impl ScaleLab {
    /// Build the lab and start both directors with the VIP's TCP service
    /// on `sched` (DR, rs1..3, a TCP check), `extra` TOML added to each
    /// director's config; wait until the router has both next hops.
    pub fn start(name: &str, prefix: &str, sched: &str, extra: &str) -> ScaleLab {
        let extra = extra.to_string();
        ScaleLab::start_with(name, prefix, sched, move |_, c| c.raw(&extra))
    }

    /// [`ScaleLab::start`] with each director's configuration changed by
    /// `hook(index, config)` (e.g. `c.dataplane("idle", "\"sleep\"")`, or
    /// a `[sync]` section through `raw`; it may differ per director).
    pub fn start_with(
        name: &str,
        prefix: &str,
        sched: &str,
        hook: impl Fn(usize, DaemonConfig) -> DaemonConfig + 'static,
    ) -> ScaleLab {
        assert!(prefix.len() <= 5, "interface names must stay short");
        let dir = common::scratch(name);
        let mut lab = ScaleLab {
            prefix: prefix.into(),
            dir,
            state: format!("/run/dirigo-lab/{prefix}-so"),
            sched: sched.into(),
            hook: Box::new(hook),
            directors: vec![None, None],
            t0: Instant::now(),
        };
        // what an aborted (killed) run of this test left: its dirigos
        // (found by their exact config paths) and BIRDs, our prefix only
        for l in LETTERS {
            common::stop_stale_daemon(&lab.dir.join(format!("dir-{l}/dirigo.toml")));
        }
        lab.script(&["down"]);
        let o = lab.script(&["up"]);
        assert!(o.status.success(), "scaleout.sh up: {}", text(&o));
        for i in 0..LETTERS.len() {
            lab.start_director(i);
        }
        lab.wait_all_nexthops(2, 20);
        for i in 0..LETTERS.len() {
            lab.wait_healthy(i, 15);
        }
        eprintln!(
            "scale-out lab {prefix}: up in {:.1} s",
            lab.t0.elapsed().as_secs_f64()
        );
        lab
    }

    /// Change what each director's configuration gets from its next
    /// start on (the running directors keep theirs).
    pub fn set_hook(&mut self, hook: impl Fn(usize, DaemonConfig) -> DaemonConfig + 'static) {
        self.hook = Box::new(hook);
    }

    fn script(&self, args: &[&str]) -> Output {
        self.try_script(args).expect("run scaleout.sh")
    }

    fn try_script(&self, args: &[&str]) -> std::io::Result<Output> {
        Command::new(repo().join("scripts/lab/scaleout.sh"))
            .args(args)
            .env("SO_PREFIX", &self.prefix)
            .env("SO_STATE", &self.state)
            .stdin(Stdio::null())
            .output()
    }

    /// Director `i`'s exception namespace.
    pub fn exc_ns(&self, i: usize) -> String {
        format!("{}-x{}", self.prefix, LETTERS[i])
    }

    /// Director `i`'s front and back tap names (in the switch namespace
    /// once attached).
    pub fn taps(&self, i: usize) -> (String, String) {
        let l = LETTERS[i];
        (
            format!("{}-{l}f", self.prefix),
            format!("{}-{l}b", self.prefix),
        )
    }

    /// Director `i`'s configuration before the hook: two dual-stack ports
    /// with kernel interfaces, `[exception]`, `[announce]` (drain 1.5 s),
    /// `sloppy_tcp`, `idle = "sleep"`,
    /// each VIP's TCP service (IPv4 and IPv6) with a TCP check (every 0.5 s, timeout 0.45 s,
    /// rise 2, fall 3: two directors, two BIRDs and 100 transfers load this
    /// 2-core machine, and a tighter check flapped servers down under it).
    pub fn config(&self, i: usize) -> DaemonConfig {
        let (p, l) = (&self.prefix, LETTERS[i]);
        let (front, back) = self.taps(i);
        let sock = self.dir.join(format!("{l}.sock")).display().to_string();
        let rs = |rip: fn(usize) -> String| -> String {
            (1..=3)
                .map(|n| {
                    format!(
                        "[[service.real_server]]\naddress = \"{}\"\nmethod = \"dr\"\n",
                        rip(n)
                    )
                })
                .collect()
        };
        let service = |vip: &str, rs: String| {
            format!(
                "[[service]]\nprotocol = \"tcp\"\naddress = \"{}\"\nscheduler = \"{}\"\n\
                 [service.check]\ntype = \"tcp\"\ninterval = 0.5\ntimeout = 0.45\nrise = 2\nfall = 3\n{rs}",
                service_addr(vip),
                self.sched,
            )
        };
        DaemonConfig::new(&format!("{p}-{l}"), &sock)
            .vdev(format!("net_tap0,iface={front}"))
            .vdev(format!("net_tap1,iface={back}"))
            .tables(65536, 8191)
            // a flow ECMP moves here mid-stream is taken up (with mh: by
            // the same real server)
            .dataplane("sloppy_tcp", true)
            // two directors, two BIRDs and the peers on a 2-core machine
            .dataplane("idle", "\"sleep\"")
            .port("front", "net_tap0", &format!("10.92.0.{}/24", i + 1))
            .port_keys("front", &format!("kernel_interface = \"{p}-{l}kf\""))
            .port("back", "net_tap1", &format!("10.93.0.{}/24", i + 1))
            .port_keys("back", &format!("kernel_interface = \"{p}-{l}kb\""))
            // the clients through the router: FullNAT's replies go there
            // (DR's go from the real servers)
            .route("10.91.0.0/24", "10.92.0.254")
            .edit(
                &format!("addresses = [\"10.92.0.{}/24\"]", i + 1),
                &format!(
                    "addresses = [\"10.92.0.{n}/24\", \"fd00:92::{n}/64\"]",
                    n = i + 1
                ),
            )
            .edit(
                &format!("addresses = [\"10.93.0.{}/24\"]", i + 1),
                &format!(
                    "addresses = [\"10.93.0.{n}/24\", \"fd00:93::{n}/64\"]",
                    n = i + 1
                ),
            )
            .raw(&format!(
                "[exception]\nbackend = \"tap\"\nnetns = \"{}\"\n\
                 [announce]\nport = \"front\"\ndrain_ms = 1500\n{}{}",
                self.exc_ns(i),
                service(VIP, rs(rip)),
                service(VIP6, rs(rip6)),
            ))
    }

    /// Start director `i`: dirigo, its taps onto the bridges, its BIRD.
    pub fn start_director(&mut self, i: usize) {
        assert!(self.directors[i].is_none(), "director {i} runs");
        let l = LETTERS[i];
        let cfg = (self.hook)(i, self.config(i));
        let ddir = self.dir.join(format!("dir-{l}"));
        std::fs::create_dir_all(&ddir).unwrap();
        let sock = self.dir.join(format!("{l}.sock")).display().to_string();
        let daemon = common::Daemon::start(&ddir, &cfg.toml());
        let (front, back) = self.taps(i);
        let o = self.script(&["attach", &front, &back]);
        assert!(o.status.success(), "attach: {}", text(&o));
        self.directors[i] = Some(Director { daemon, sock });
        self.start_bird(i);
    }

    /// (Re)start the BIRD of director `i`'s exception namespace on the
    /// shipped configuration (unless it still runs).
    pub fn start_bird(&self, i: usize) {
        let l = LETTERS[i];
        let pid = self.dir.join(format!("bird-{l}.pid"));
        if bird_alive(&pid) {
            return;
        }
        let conf = self.dir.join(format!("bird-{l}.conf"));
        let shipped = std::fs::read_to_string(repo().join("conf/bird-director.conf")).unwrap();
        let log = self.dir.join(format!("bird-{l}.log"));
        let ours = shipped.replace(
            "log syslog all;",
            &format!("log \"{}\" all;", log.display()),
        );
        assert_ne!(ours, shipped, "the shipped config logs to syslog");
        std::fs::write(&conf, ours).unwrap();
        let o = Command::new("ip")
            .args(["netns", "exec", &self.exc_ns(i), "bird", "-c"])
            .arg(&conf)
            .arg("-s")
            .arg(self.dir.join(format!("bird-{l}.ctl")))
            .arg("-P")
            .arg(&pid)
            .output()
            .expect("bird");
        assert!(o.status.success(), "bird of director {l}: {}", text(&o));
    }

    /// Stop director `i`'s BIRD (SIGKILL: no goodbye to the router).
    pub fn kill_bird(&self, i: usize) {
        let pid = self.dir.join(format!("bird-{}.pid", LETTERS[i]));
        if let Ok(p) = std::fs::read_to_string(&pid) {
            let _ = Command::new("kill").args(["-KILL", p.trim()]).status();
            let _ = std::fs::remove_file(&pid);
        }
    }

    /// Director `i`'s dirigo.
    pub fn director(&self, i: usize) -> &Director {
        self.directors[i].as_ref().expect("the director runs")
    }

    /// SIGTERM to director `i`; returns how long it took to exit, and
    /// calls `while_draining` repeatedly until it has (e.g. to watch the
    /// router). Its BIRD keeps running, as a system's would.
    pub fn stop_director(&mut self, i: usize, mut while_draining: impl FnMut()) -> Duration {
        let mut d = self.directors[i].take().expect("the director runs");
        let t = Instant::now();
        let _ = Command::new("kill")
            .args(["-TERM", &d.daemon.pid().expect("running").to_string()])
            .status();
        let status = loop {
            if let Some(st) = d.daemon.exited() {
                break st;
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "director {i} did not stop"
            );
            while_draining();
            std::thread::sleep(Duration::from_millis(20));
        };
        let took = t.elapsed();
        std::thread::sleep(Duration::from_millis(100)); // the last lines
        let out = d.daemon.output();
        assert!(
            status.success(),
            "director {i} exited with {status}:\n{out}"
        );
        assert!(!out.contains("panicked"), "dirigo panicked:\n{out}");
        took
    }

    /// SIGKILL director `i` (a crash); with `bird` its BIRD too (the whole
    /// machine gone: only BFD tells the router). Returns dirigo's output.
    pub fn kill_director(&mut self, i: usize, bird: bool) -> String {
        let d = self.directors[i].take().expect("the director runs");
        if bird {
            self.kill_bird(i);
        }
        d.daemon.kill9()
    }

    /// Run `cmd` in namespace `ns`; any outcome.
    pub fn in_ns(&self, ns: &str, cmd: &[&str]) -> Output {
        common::in_netns(ns, cmd)
    }

    /// A namespace of the lab by its short name (`cl`, `rt`, `sw`, `rs1`).
    pub fn ns(&self, short: &str) -> String {
        format!("{}-{short}", self.prefix)
    }

    /// The router's next hops for the IPv4 VIP.
    pub fn nexthops(&self) -> Vec<String> {
        self.nexthops_of(VIP)
    }

    /// The router's next hops for `vip` (`ip route` or `ip -6 route` in
    /// its namespace).
    pub fn nexthops_of(&self, vip: &str) -> Vec<String> {
        let s = self.router_route_of(vip);
        let mut v: Vec<String> = s
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .filter(|w| w[0] == "via")
            .map(|w| w[1].to_string())
            .collect();
        v.sort();
        v
    }

    /// The router's route to the IPv4 VIP as `ip route` prints it.
    pub fn router_route(&self) -> String {
        self.router_route_of(VIP)
    }

    /// The router's route to `vip` as `ip route` (`ip -6 route`) prints it.
    pub fn router_route_of(&self, vip: &str) -> String {
        let mut cmd = ip_for(vip);
        cmd.extend(["route", "show", vip]);
        let o = self.in_ns(&self.ns("rt"), &cmd);
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Wait until the router has `n` next hops for the IPv4 VIP.
    pub fn wait_nexthops(&self, n: usize, secs: u64) {
        self.wait_nexthops_of(VIP, n, secs)
    }

    /// Wait until the router has `n` next hops for each VIP.
    pub fn wait_all_nexthops(&self, n: usize, secs: u64) {
        for vip in VIPS {
            self.wait_nexthops_of(vip, n, secs);
        }
    }

    /// Wait until the router has `n` next hops for `vip`.
    pub fn wait_nexthops_of(&self, vip: &str, n: usize, secs: u64) {
        let end = Instant::now() + Duration::from_secs(secs);
        while self.nexthops_of(vip).len() != n {
            if Instant::now() > end {
                panic!(
                    "the router has not {n} next hop(s) for {vip} after {secs} s: {:?}\n{}",
                    self.router_route_of(vip),
                    self.birdc_router("show protocols")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `birdc` on the router's BIRD.
    pub fn birdc_router(&self, cmd: &str) -> String {
        let mut c = Command::new("birdc");
        c.arg("-s").arg(format!("{}/bird-router.ctl", self.state));
        c.args(cmd.split_whitespace());
        c.output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// `dirigoadm --socket S ARGS` on director `i`; its stdout (panics
    /// unless it succeeds).
    pub fn adm(&self, i: usize, args: &[&str]) -> String {
        let o = Command::new(crate::common::DIRIGOADM)
            .arg("--socket")
            .arg(&self.director(i).sock)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "dirigoadm {args:?}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// `dirigoctl --json ARGS` on director `i`: the response's data.
    pub fn ctl_json(&self, i: usize, args: &[&str]) -> serde_json::Value {
        common::ctl_json(&self.director(i).sock, args)
    }

    /// Director `i`'s IPv4 VIP entry in `dirigoctl vips`.
    pub fn vip_state(&self, i: usize) -> serde_json::Value {
        self.vip_state_of(i, VIP)
    }

    /// Director `i`'s entry for `vip` in `dirigoctl vips`.
    pub fn vip_state_of(&self, i: usize, vip: &str) -> serde_json::Value {
        let v = self.ctl_json(i, &["vips"]);
        v["vips"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["vip"] == vip).cloned())
            .unwrap_or_else(|| panic!("no {vip} in {v}"))
    }

    /// Wait until director `i` sees every real server of both VIPs up
    /// (its first checks ran before its taps were on the bridges).
    pub fn wait_healthy(&self, i: usize, secs: u64) {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let vs: Vec<serde_json::Value> = VIPS.iter().map(|v| self.vip_state_of(i, v)).collect();
            if vs.iter().all(|v| {
                v["state"] == "announced"
                    && v["why"].as_str().is_some_and(|w| w.ends_with(" 3/3 up"))
            }) {
                return;
            }
            let v = serde_json::Value::from(vs);
            assert!(
                Instant::now() < end,
                "director {i} not healthy after {secs} s: {v}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Connections director `i` scheduled for the IPv4 VIP's service so
    /// far.
    pub fn conns(&self, i: usize) -> u64 {
        self.conns_of(i, VIP)
    }

    /// Connections director `i` scheduled for `vip`'s service so far
    /// (`dirigoadm -L -n --stats`, the Conns column).
    pub fn conns_of(&self, i: usize, vip: &str) -> u64 {
        let out = self.adm(i, &["-L", "-n", "--stats"]);
        let svc = format!(" {}", service_addr(vip));
        out.lines()
            .find(|l| l.starts_with("TCP") && l.contains(&svc))
            .and_then(|l| l.split_whitespace().nth(2))
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no service line in:\n{out}"))
    }

    /// `n` short downloads of `size` bytes from the client to the IPv4
    /// VIP, `parallel` at a time, each checked; the client's JSON summary.
    pub fn burst(&self, n: usize, size: usize, parallel: usize) -> serde_json::Value {
        self.burst_to(VIP, n, size, parallel)
    }

    /// [`ScaleLab::burst`] to `vip`.
    pub fn burst_to(&self, vip: &str, n: usize, size: usize, parallel: usize) -> serde_json::Value {
        self.burst_port(vip, 80, n, size, parallel)
    }

    /// [`ScaleLab::burst`] to `vip`'s port `port`.
    pub fn burst_port(
        &self,
        vip: &str,
        port: u16,
        n: usize,
        size: usize,
        parallel: usize,
    ) -> serde_json::Value {
        let o = self.in_ns(
            &self.ns("cl"),
            &[
                "python3",
                &support("scaleout_client.py"),
                "burst",
                vip,
                &n.to_string(),
                "--size",
                &size.to_string(),
                "--parallel",
                &parallel.to_string(),
                "--port",
                &port.to_string(),
            ],
        );
        serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("burst: {}", text(&o)))
    }

    /// Start `n` concurrent downloads of `size` bytes at `rate` bytes/s
    /// each from the client to the IPv4 VIP; returns once each has its
    /// headers.
    pub fn long_transfers(&self, n: usize, size: usize, rate: usize) -> Transfers {
        self.long_transfers_to(VIP, n, size, rate)
    }

    /// [`ScaleLab::long_transfers`] to `vip`.
    pub fn long_transfers_to(&self, vip: &str, n: usize, size: usize, rate: usize) -> Transfers {
        self.long_transfers_port(vip, 80, n, size, rate)
    }

    /// [`ScaleLab::long_transfers`] to `vip`'s port `port`.
    pub fn long_transfers_port(
        &self,
        vip: &str,
        port: u16,
        n: usize,
        size: usize,
        rate: usize,
    ) -> Transfers {
        let ready = self.dir.join(format!(
            "long-{}-{}.ready",
            vip.replace(':', "_"),
            self.t0.elapsed().as_micros()
        ));
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns("cl"), "python3"])
            .arg(support("scaleout_client.py"))
            .args(["long", vip, &n.to_string(), "--size", &size.to_string()])
            .args(["--rate", &rate.to_string(), "--port", &port.to_string()])
            .arg("--ready-file")
            .arg(&ready)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the transfers");
        let mut t = Transfers { child: Some(child) };
        // a first attempt's 10 s timeout and a second try's
        let end = Instant::now() + Duration::from_secs(30);
        while !ready.exists() {
            if Instant::now() > end || t.child.as_mut().unwrap().try_wait().unwrap().is_some() {
                let o = t.child.take().unwrap().wait_with_output().unwrap();
                panic!("the transfers did not start: {}", text(&o));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        t
    }
}

fn bird_alive(pidfile: &std::path::Path) -> bool {
    std::fs::read_to_string(pidfile)
        .ok()
        .and_then(|p| p.trim().parse::<u32>().ok())
        .is_some_and(|p| std::path::Path::new(&format!("/proc/{p}")).exists())
}

/// Long transfers running in the client namespace.
pub struct Transfers {
    child: Option<Child>,
}

impl Transfers {
    /// Wait for them: one JSON object per transfer (`exact`, `error`,
    /// `server`, `received`, `seconds`).
    pub fn finish(mut self) -> Vec<serde_json::Value> {
        let o = self.child.take().unwrap().wait_with_output().unwrap();
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|_| panic!("transfer line {l:?}: {}", text(&o)))
            })
            .collect()
    }

    /// The transfers that were not byte-exact.
    pub fn broken(results: &[serde_json::Value]) -> Vec<&serde_json::Value> {
        results.iter().filter(|r| r["exact"] != true).collect()
    }

    /// The transfers whose first connection got no headers and that were
    /// tried again before the ready file (printed: a loaded machine's
    /// connection set-up, not what the failover tests judge).
    pub fn retried(results: &[serde_json::Value]) -> Vec<&serde_json::Value> {
        results
            .iter()
            .filter(|r| r.get("retried").is_some())
            .collect()
    }
}

impl Drop for Transfers {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for ScaleLab {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for (i, d) in self.directors.iter().enumerate() {
                if let Some(d) = d {
                    let out = d.daemon.output();
                    let tail: Vec<&str> = out.lines().rev().take(30).collect();
                    eprintln!(
                        "--- director {} (last 30 lines) ---\n{}",
                        LETTERS[i],
                        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                    );
                }
            }
            for vip in VIPS {
                eprintln!("--- router ({vip}) ---\n{}", self.router_route_of(vip));
            }
            eprintln!("{}", self.birdc_router("show protocols"));
        }
        for i in 0..LETTERS.len() {
            self.kill_bird(i);
            if let Some(d) = self.directors[i].take() {
                drop(d.daemon.kill9());
            }
        }
        match self.try_script(&["down"]) {
            Ok(o) if o.status.success() => {}
            Ok(o) => eprintln!("scaleout.sh down: {}", text(&o)),
            Err(e) => eprintln!("scaleout.sh down: {e}"),
        }
    }
}
