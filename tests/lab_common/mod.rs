//! The netns lab from Rust: `scripts/lab/lab.sh` builds the namespaces, a
//! real `dirigo` runs on two net_tap ports, and the checks drive kernel
//! TCP/UDP clients in the client namespace. [`Lab`] tears everything down
//! when dropped (success, failure or panic).
#![allow(dead_code)]

pub mod checks;
pub mod client_addr;
pub mod ftp;
pub mod handoff;
pub mod snat;
pub mod tun_types;

use crate::common::{self, stop_stale_daemon};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The lab tests of one binary run one at a time: every dirigo busy-polls a
/// CPU and the machine may have only two.
pub static SERIAL: Mutex<()> = Mutex::new(());

/// The virtual IP of every lab service.
pub const VIP: &str = "10.99.0.100";
/// The client's address on the WAN side.
pub const CLIENT: &str = "10.99.0.2";

/// Address of real server `n` (1-based): 10.98.0.(10+n).
pub fn rip(n: usize) -> String {
    format!("10.98.0.{}", 10 + n)
}

/// `rsN` -> N.
pub fn rs_index(name: &str) -> usize {
    name.strip_prefix("rs")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a real server name: {name:?}"))
}

/// How a lab is built.
pub struct LabSpec<'a> {
    /// Test name: scratch dir and EAL file prefix.
    pub name: &'a str,
    /// LAB_PREFIX (short; tap names are PREFIX-wan / PREFIX-lan).
    pub prefix: &'a str,
    /// lab.sh mode: dr, tun, nat.
    pub mode: &'a str,
    /// dirigo method for the start-up real servers: dr, tun, nat.
    pub method: &'a str,
    /// EAL core arguments, e.g. `["-l", "0-1"]`.
    pub cores: &'a [&'a str],
    /// Number of real-server namespaces (LAB_NRS).
    pub nrs: usize,
    /// Extra environment for lab.sh (LAB_LAN_MTU, ...).
    pub env: &'a [(&'a str, &'a str)],
}

impl<'a> LabSpec<'a> {
    /// The usual lab: DR real servers rs1..rs3, dirigo on lcores 0-1 (one
    /// worker).
    pub fn dr(name: &'a str, prefix: &'a str) -> LabSpec<'a> {
        LabSpec {
            name,
            prefix,
            mode: "dr",
            method: "dr",
            cores: &["-l", "0-1"],
            nrs: 3,
            env: &[],
        }
    }
}

/// A running lab + dirigo. Dropping it stops dirigo and removes the lab.
pub struct Lab {
    /// LAB_PREFIX.
    pub prefix: String,
    /// Scratch directory (files shared with the namespaces).
    pub dir: PathBuf,
    /// Control socket.
    pub sock: String,
    env: Vec<(String, String)>,
    daemon: Option<common::Daemon>,
    /// When the lab was started.
    pub t0: Instant,
}

pub use crate::common::support;
use crate::common::{repo, text};

impl Lab {
    /// Build the lab (phase 1), start dirigo with the lab's services for
    /// `spec.method` (TCP VIP:80 rr and UDP VIP:5353 rr over rs1..rs3),
    /// attach its taps.
    pub fn start(spec: &LabSpec) -> Lab {
        Lab::start_with_table(spec, 65536)
    }

    /// [`Lab::start`] with `conns` connections per worker (a small table
    /// lets a flood overflow it many times).
    pub fn start_with_table(spec: &LabSpec, conns: u32) -> Lab {
        Lab::start_with_config(spec, conns, |c| c)
    }

    /// [`Lab::start_with_table`] with the daemon's configuration changed
    /// by `f` (an `[exception]` section, kernel interfaces, ...).
    pub fn start_with_config(
        spec: &LabSpec,
        conns: u32,
        f: impl FnOnce(common::DaemonConfig) -> common::DaemonConfig,
    ) -> Lab {
        let dir = common::scratch(spec.name);
        let sock = dir.join("ctl.sock").display().to_string();
        let mut env: Vec<(String, String)> = vec![
            ("LAB_PREFIX".into(), spec.prefix.into()),
            ("LAB_NRS".into(), spec.nrs.to_string()),
            (
                "LAB_STATE_DIR".into(),
                format!("/run/dirigo-lab/{}", spec.prefix),
            ),
        ];
        env.extend(spec.env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut lab = Lab {
            prefix: spec.prefix.into(),
            dir,
            sock,
            env,
            daemon: None,
            t0: Instant::now(),
        };
        // A lab left behind by an aborted (killed) run of this same test:
        // its dirigo (found by our exact config path) and our prefix only.
        stop_stale_daemon(&lab.dir.join("dirigo.toml"));
        lab.lab_sh(&["down"]);
        lab.lab_ok(&["up", spec.mode]);
        let cfg = f(lab.config(spec, conns)).toml();
        lab.daemon = Some(common::Daemon::start(&lab.dir, &cfg));
        lab.lab_ok(&["attach"]);
        eprintln!(
            "lab {}: up in {:.1} s",
            spec.prefix,
            lab.t0.elapsed().as_secs_f64()
        );
        lab
    }

    fn config(&self, spec: &LabSpec, conns: u32) -> common::DaemonConfig {
        let p = &self.prefix;
        let rips: Vec<String> = (1..=3).map(rip).collect();
        let rs: Vec<(&str, &str)> = rips.iter().map(|r| (r.as_str(), spec.method)).collect();
        common::DaemonConfig::new(&format!("dg-{}", spec.name), &self.sock)
            .lcores(spec.cores)
            .vdev(format!("net_tap0,iface={p}-wan"))
            .vdev(format!("net_tap1,iface={p}-lan"))
            .tables(conns, 8191)
            .port("wan", "net_tap0", "10.99.0.1/24")
            .port("lan", "net_tap1", "10.98.0.1/24")
            .service("tcp", &format!("{VIP}:80"), "rr", &rs)
            .service("udp", &format!("{VIP}:5353"), "rr", &rs)
    }

    /// The daemon's process id.
    pub fn daemon_pid(&self) -> u32 {
        self.daemon
            .as_ref()
            .and_then(|d| d.pid())
            .expect("dirigo is running")
    }

    /// The daemon's log so far.
    pub fn daemon_log(&self) -> String {
        self.daemon.as_ref().map(|d| d.output()).unwrap_or_default()
    }

    /// Run a command in namespace `ns` (any namespace, e.g. dirigo's
    /// exception namespace); any outcome.
    pub fn in_netns(&self, ns: &str, cmd: &[&str]) -> Output {
        common::in_netns(ns, cmd)
    }

    fn lab_cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(repo().join("scripts/lab/lab.sh"));
        c.args(args).stdin(Stdio::null());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// Run `lab.sh ARGS` (any outcome).
    pub fn lab_sh(&self, args: &[&str]) -> Output {
        self.lab_cmd(args).output().expect("run lab.sh")
    }

    /// Run `lab.sh ARGS`; panic unless it succeeds; its stdout.
    pub fn lab_ok(&self, args: &[&str]) -> String {
        let o = self.lab_sh(args);
        assert!(o.status.success(), "lab.sh {args:?} failed: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Run a command in namespace `who` (client, srv, rsN); any outcome.
    pub fn exec(&self, who: &str, cmd: &[&str]) -> Output {
        let mut a = vec!["exec", who];
        a.extend_from_slice(cmd);
        self.lab_sh(&a)
    }

    /// Run a command in the client namespace; panic unless it succeeds; stdout.
    pub fn client(&self, cmd: &[&str]) -> String {
        let o = self.exec("client", cmd);
        assert!(o.status.success(), "client {cmd:?} failed: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Start a command in the client namespace in the background.
    pub fn client_spawn(&self, cmd: &[&str]) -> Child {
        self.spawn("client", cmd)
    }

    /// Start a command in namespace `who` in the background (stdout and
    /// stderr piped; `lab.sh down` ends whatever still runs there).
    pub fn spawn(&self, who: &str, cmd: &[&str]) -> Child {
        let mut a = vec!["exec", who];
        a.extend_from_slice(cmd);
        self.lab_cmd(&a)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn in client namespace")
    }

    /// Reconfigure the real servers (`lab.sh mode`).
    pub fn mode(&self, mode: &str) {
        self.lab_ok(&["mode", mode]);
    }

    /// Switch the running lab to NAT: the real servers route via dirigo and
    /// the TCP service's rs1..rs3 masquerade (weight 1).
    pub fn switch_to_nat(&self) {
        self.mode("nat");
        for n in 1..=3 {
            self.adm(&[
                "-e",
                "-t",
                &format!("{VIP}:80"),
                "-r",
                &rip(n),
                "-m",
                "-w",
                "1",
            ]);
        }
    }

    /// The lab's state directory (LAB_STATE_DIR): helpers' logs, pid and
    /// ready files.
    pub fn state_dir(&self) -> PathBuf {
        let st = self.env.iter().find(|(k, _)| k == "LAB_STATE_DIR");
        PathBuf::from(&st.expect("LAB_STATE_DIR").1)
    }

    /// Turn IPv6 on for interface `dev` in namespace `who` (lab.sh turns it
    /// off in every namespace, "all" and "default") without DAD, and give
    /// it `addr` (with its prefix length, e.g. "2001:db8:98::11/64") `nodad`:
    /// e.g. a real server's `eth0` before [`Lab::start_ip6ip6_decap`].
    pub fn enable_ipv6(&self, who: &str, dev: &str, addr: &str) {
        for k in [
            format!("net.ipv6.conf.{dev}.accept_dad=0"),
            format!("net.ipv6.conf.{dev}.disable_ipv6=0"),
        ] {
            let o = self.exec(who, &["sysctl", "-qw", &k]);
            assert!(o.status.success(), "{who}: sysctl {k}: {}", text(&o));
        }
        let o = self.exec(
            who,
            &["ip", "-6", "addr", "replace", addr, "dev", dev, "nodad"],
        );
        assert!(o.status.success(), "{who}: {addr} on {dev}: {}", text(&o));
    }

    /// IPv6 TUN mode at real server `rs` ("rs1".."rsN"): the IPv6 twin of
    /// what `lab.sh mode tun` does for IPv4 with `ipip_decap.py`. Starts
    /// `tests/support/ip6ip6_decap.py` in the server's namespace, as
    /// `lab.sh` starts its helpers (setsid, stdin from /dev/null, its files
    /// in the lab's state directory as `rsN-decap6.{log,pid,ready,spawn}`,
    /// so `lab.sh down` stops it; `lab.sh mode` leaves it alone). It puts
    /// `vip6` as /128 `nodad` on TUN `vip6` (IPv6 on, no DAD, no link-local)
    /// and decapsulates IPv6-in-IPv6 (next header 41) addressed to `rip6`
    /// only; the real server's kernel then answers from the VIP through its
    /// routing table. Waits until it is ready (panics with its log if it
    /// dies first); returns its log file.
    ///
    /// The caller gives the server's `eth0` IPv6 and `rip6`
    /// ([`Lab::enable_ipv6`]) and a route back to the client's IPv6
    /// network (no rp_filter in IPv6: any way back works). While the
    /// decapsulator runs, the kernel no longer answers next header 41 with
    /// ICMPv6 parameter problem. Checked without dirigo by
    /// `tests/support/ip6ip6_selftest.sh` (tests/ip6ip6_tool.rs).
    ///
    /// `extra`: more arguments (`--gre`, `--gue-port P`: GRE and GUE too).
    pub fn start_ip6ip6_decap(&self, rs: &str, rip6: &str, vip6: &str, extra: &[&str]) -> PathBuf {
        rs_index(rs); // panics unless "rsN"
        let mut args = vec!["--vip", vip6, "--tun", "vip6", "--local", rip6];
        args.extend_from_slice(extra);
        self.spawn_support(rs, &format!("{rs}-decap6"), "ip6ip6_decap.py", &args)
    }

    /// Start support program `script` (tests/support) with `args` in
    /// namespace `who`, as `lab.sh` starts its helpers: setsid, stdin from
    /// /dev/null, its files in the lab's state directory as
    /// `NAME.{log,pid,ready,spawn}` (so `lab.sh down` stops it). Waits until
    /// it is ready (panics with its log if it dies first); returns its log.
    pub fn spawn_support(&self, who: &str, name: &str, script: &str, args: &[&str]) -> PathBuf {
        let st = self.state_dir();
        let file = |ext: &str| st.join(format!("{name}.{ext}"));
        let _ = std::fs::remove_file(file("ready"));
        let python = self
            .env
            .iter()
            .find(|(k, _)| k == "LAB_PYTHON")
            .map_or("python3".to_string(), |(_, v)| v.clone());
        let ns = format!("{}-{who}", self.prefix);
        let st_s = st.display().to_string();
        let script = support(script);
        // `sh` backgrounds it and exits: init adopts it, as lab.sh's helpers
        let o = Command::new("sh")
            .arg("-c")
            .arg(
                r#"ns=$1 st=$2 name=$3; shift 3
                ip netns exec "$ns" setsid "$@" --log "$st/$name.log" \
                    --pid-file "$st/$name.pid" --ready-file "$st/$name.ready" \
                    </dev/null >>"$st/$name.log" 2>&1 &
                echo $! >"$st/$name.spawn""#,
            )
            .args(["sh", &ns, &st_s, name, &python, &script])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("spawn {script}: {e}"));
        assert!(o.status.success(), "start {script}: {}", text(&o));
        let pid: u32 = std::fs::read_to_string(file("spawn"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name}: no spawn pid"));
        let log = file("log");
        let end = Instant::now() + Duration::from_secs(15);
        while !file("ready").exists() {
            let tail = || std::fs::read_to_string(&log).unwrap_or_default();
            if !common::alive(pid) {
                std::thread::sleep(Duration::from_millis(100));
                if file("ready").exists() {
                    break;
                }
                panic!("{name} exited before it was ready; its log:\n{}", tail());
            }
            assert!(
                Instant::now() < end,
                "{name} not ready in 15 s:\n{}",
                tail()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        log
    }

    /// `dirigoadm --socket S ARGS`; panic unless it succeeds; stdout.
    pub fn adm(&self, args: &[&str]) -> String {
        self.adm_stdin(args, None)
    }

    /// `dirigoadm` with `input` on stdin (for `-R`).
    pub fn adm_stdin(&self, args: &[&str], input: Option<&str>) -> String {
        use std::io::Write;
        let mut c = Command::new(crate::common::DIRIGOADM)
            .arg("--socket")
            .arg(&self.sock)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn dirigoadm");
        let mut stdin = c.stdin.take().unwrap();
        if let Some(s) = input {
            stdin
                .write_all(s.as_bytes())
                .expect("write dirigoadm stdin");
        }
        drop(stdin);
        let o = c.wait_with_output().unwrap();
        assert!(
            o.status.success(),
            "dirigoadm {args:?} failed: {}",
            text(&o)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// `dirigoctl --json ARGS` parsed; the response's `ok.data`.
    pub fn ctl_json(&self, args: &[&str]) -> serde_json::Value {
        common::ctl_json(&self.sock, args)
    }

    /// A data-plane counter summed over the workers (`dirigoctl lcores`).
    pub fn counter(&self, name: &str) -> u64 {
        let lc = self.ctl_json(&["lcores"]);
        lc.as_array()
            .expect("lcores list")
            .iter()
            .flat_map(|l| l["extra"].as_array().cloned().unwrap_or_default())
            .filter(|c| c["name"] == name)
            .map(|c| c["value"].as_u64().unwrap_or(0))
            .sum()
    }

    /// SIGTERM dirigo and start it again on the same configuration file,
    /// the taps attached to the new one's; `between` runs while no dirigo
    /// runs. Returns the stopped dirigo's output.
    pub fn restart(&mut self, between: impl FnOnce(&Lab)) -> String {
        let out = self.daemon.take().expect("daemon").stop();
        assert!(!out.contains("panicked"), "dirigo panicked:\n{out}");
        self.lab_sh(&["detach"]);
        between(self);
        let cfg = std::fs::read_to_string(self.dir.join("dirigo.toml")).expect("config");
        self.daemon = Some(common::Daemon::start(&self.dir, &cfg));
        self.lab_ok(&["attach"]);
        out
    }

    /// SIGKILL dirigo (it writes no handoff: only a checkpoint it wrote
    /// before is left) and start it again on the same configuration.
    /// Returns the killed daemon's output.
    pub fn crash_restart(&mut self) -> String {
        let out = self.daemon.take().expect("daemon").kill9();
        self.lab_sh(&["detach"]);
        let cfg = std::fs::read_to_string(self.dir.join("dirigo.toml")).expect("config");
        self.daemon = Some(common::Daemon::start(&self.dir, &cfg));
        self.lab_ok(&["attach"]);
        out
    }

    /// Stop dirigo (it must exit cleanly) and remove the lab.
    pub fn finish(mut self) {
        self.lab_sh(&["detach"]);
        let d = self.daemon.take().expect("daemon");
        let out = d.stop();
        assert!(!out.contains("panicked"), "dirigo panicked:\n{out}");
        eprintln!(
            "lab {}: done in {:.1} s",
            self.prefix,
            self.t0.elapsed().as_secs_f64()
        );
        // Drop removes the lab.
    }

    /// Wait until `f` holds (polling), or panic with `what`.
    pub fn wait_for(&self, what: &str, secs: u64, mut f: impl FnMut() -> bool) {
        let end = Instant::now() + Duration::from_secs(secs);
        while !f() {
            assert!(Instant::now() < end, "timeout waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Some(d) = &self.daemon {
                let out = d.output();
                let tail: Vec<&str> = out.lines().rev().take(40).collect();
                eprintln!(
                    "--- dirigo output (last 40 lines) ---\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
            let st = self.lab_sh(&["status"]);
            eprintln!(
                "--- lab status ---\n{}",
                String::from_utf8_lossy(&st.stdout)
            );
        }
        // Taps back first (deleting a namespace would destroy a live tap),
        // then the namespaces and programs, then dirigo.
        let o = self.lab_sh(&["down"]);
        if !o.status.success() {
            eprintln!("lab.sh down failed: {}", text(&o));
        }
        drop(self.daemon.take());
    }
}
