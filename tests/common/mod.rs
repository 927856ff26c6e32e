//! Shared helpers for the integration tests.
#![allow(dead_code)]

pub mod tmux;

/// dirigoadm and dirigoctl. They are the `dirigo-tools` package's, built
/// into the workspace's one target directory beside this package's
/// `dirigo` (which `cargo test` at the root builds too), so their paths
/// are dirigo's with the program's suffix.
pub const DIRIGOADM: &str = concat!(env!("CARGO_BIN_EXE_dirigo"), "adm");
/// See [`DIRIGOADM`].
pub const DIRIGOCTL: &str = concat!(env!("CARGO_BIN_EXE_dirigo"), "ctl");

use std::path::PathBuf;

/// Whether the test may run privileged/EAL work here. In CI (`CI=true`) a
/// missing prerequisite is a failure, never a skip; elsewhere the skip is
/// printed with its reason.
pub fn privileged(what: &str) -> bool {
    let mut why = Vec::new();
    if !is_root() {
        why.push("not running as root");
    }
    let huge = std::fs::read_to_string("/proc/sys/vm/nr_hugepages")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(0);
    if huge < 256 {
        why.push("fewer than 256 hugepages reserved (run scripts/setup-hugepages.sh)");
    }
    may_run(what, &why)
}

/// [`privileged`] for a test that needs root but no hugepages or EAL.
pub fn root(what: &str) -> bool {
    let why: &[&str] = if is_root() {
        &[]
    } else {
        &["not running as root"]
    };
    may_run(what, why)
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// True when nothing is missing; else a failure in CI, a printed skip
/// elsewhere.
pub fn may_run(what: &str, why: &[&str]) -> bool {
    if why.is_empty() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what}: cannot run in CI: {}", why.join("; "));
    }
    eprintln!("SKIP {what}: {}", why.join("; "));
    false
}

/// Run `cmd` with `sh -c`: whether it succeeded, and its stdout + stderr.
pub fn sh(cmd: &str) -> (bool, String) {
    let o = Command::new("sh").arg("-c").arg(cmd).output().unwrap();
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// Each thread of process `pid`: its name and where it waits in the kernel
/// (for a process that hangs).
pub fn threads_of(pid: u32) -> String {
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return format!("(no /proc/{pid}/task)");
    };
    let mut out = String::new();
    for t in rd.flatten() {
        let read = |f: &str| std::fs::read_to_string(t.path().join(f)).unwrap_or_default();
        let stack = read("stack");
        out += &format!(
            "  {} {} wchan={} {}\n",
            t.file_name().to_string_lossy(),
            read("comm").trim(),
            read("wchan").trim(),
            stack.lines().take(3).collect::<Vec<_>>().join(" < ")
        );
    }
    out
}

/// A scratch directory under target/ for a test.
pub fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `dirigo` daemon (child process) with its output captured.
pub struct Daemon {
    child: Option<Child>,
    /// stderr + stdout lines so far.
    pub log: Arc<Mutex<Vec<String>>>,
    /// The config file.
    pub config: PathBuf,
}

impl Daemon {
    /// Write `config` to `dir/dirigo.toml`, start dirigo on it and wait
    /// until it says it is running (or fail with its output).
    pub fn start(dir: &std::path::Path, config: &str) -> Daemon {
        Daemon::start_bin(env!("CARGO_BIN_EXE_dirigo"), dir, config)
    }

    /// [`Daemon::start`] with the dirigo at `bin` (an installed one).
    pub fn start_bin(bin: &str, dir: &std::path::Path, config: &str) -> Daemon {
        let path = dir.join("dirigo.toml");
        std::fs::write(&path, config).expect("write config");
        let mut child = Command::new(bin)
            .arg("--config")
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn dirigo");
        let log = Arc::new(Mutex::new(Vec::new()));
        for stream in [
            Box::new(child.stderr.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stdout.take().unwrap()),
        ] {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    log.lock().unwrap().push(line);
                }
            });
        }
        let mut d = Daemon {
            child: Some(child),
            log,
            config: path,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !d.has_line("running (SIGINT/SIGTERM to stop)") {
            if let Some(st) = d.child.as_mut().unwrap().try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(100));
                panic!("dirigo exited early ({st}):\n{}", d.output());
            }
            if Instant::now() > deadline {
                panic!("dirigo did not start in 30 s:\n{}", d.output());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        d
    }

    /// The daemon's process id (None once stopped).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// The exit status once the process has exited (reaped then).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// Whether some output line contains `s`.
    pub fn has_line(&self, s: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(s))
    }

    /// All output so far.
    pub fn output(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Send SIGKILL (a crash: nothing is cleaned up) and wait; returns the
    /// output.
    pub fn kill9(mut self) -> String {
        let mut child = self.child.take().unwrap();
        let _ = child.kill();
        let _ = child.wait();
        std::thread::sleep(Duration::from_millis(50));
        self.output()
    }

    /// Send SIGTERM and wait for a clean exit; returns the output.
    pub fn stop(mut self) -> String {
        let mut child = self.child.take().unwrap();
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if Instant::now() > deadline {
                let mut threads = threads_of(child.id());
                if std::env::var_os("DIRIGO_TEST_GDB").is_some() {
                    // a developer's aid: every thread's stack (needs gdb)
                    if let Ok(o) = Command::new("gdb")
                        .args([
                            "-p",
                            &child.id().to_string(),
                            "-batch",
                            "-ex",
                            "thread apply all bt",
                        ])
                        .output()
                    {
                        threads += &String::from_utf8_lossy(&o.stdout);
                    }
                }
                let _ = child.kill();
                panic!(
                    "dirigo did not stop on SIGTERM; its threads (name, kernel wait):\n{threads}\n{}",
                    self.output()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        std::thread::sleep(Duration::from_millis(100));
        let out = self.output();
        assert!(status.success(), "dirigo exited with {status}:\n{out}");
        out
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// What a finished command printed, and its exit code (-1: killed).
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run `cmd` with `input` on its stdin; wait for it and take its output.
pub fn run_with_input(cmd: &mut Command, input: &str) -> Out {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // A command that exits before reading its input closes the pipe.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let o = child.wait_with_output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A dirigo configuration for a test, written as the TOML the daemon reads:
/// `[eal]` (lcores `-l 0-1` unless [`lcores`](Self::lcores) says otherwise,
/// in-memory, no PCI, no telemetry, a file prefix of its own), `[control]`,
/// `[dataplane]`, then ports, routes, neighbors and services in the order
/// they were added.
pub struct DaemonConfig {
    lcores: Vec<String>,
    eal: Vec<String>,
    socket: String,
    control: String,
    dataplane: String,
    body: String,
}

impl DaemonConfig {
    /// EAL with `--file-prefix prefix`, the control socket at `socket`.
    pub fn new(prefix: &str, socket: impl std::fmt::Display) -> Self {
        DaemonConfig {
            lcores: vec!["-l".into(), "0-1".into()],
            eal: [
                "--in-memory",
                "--no-pci",
                "--no-telemetry",
                "--file-prefix",
                prefix,
            ]
            .map(String::from)
            .to_vec(),
            socket: socket.to_string(),
            control: String::new(),
            dataplane: String::new(),
            body: String::new(),
        }
    }

    /// The EAL lcore arguments (`["-l", "0-2"]`, `["--lcores", "0@0,1@1,2@0"]`).
    pub fn lcores(mut self, args: &[&str]) -> Self {
        self.lcores = args.iter().map(|a| a.to_string()).collect();
        self
    }

    /// One more `[control]` key (a TOML line).
    pub fn control(mut self, line: &str) -> Self {
        self.control += line;
        self.control.push('\n');
        self
    }

    /// One more EAL argument.
    pub fn eal(mut self, arg: impl Into<String>) -> Self {
        self.eal.push(arg.into());
        self
    }

    /// Without the default EAL argument `arg` (`"--no-telemetry"` for a
    /// telemetry socket, `"--in-memory"` for hugepage files a secondary
    /// process such as dpdk-dumpcap can attach to).
    pub fn eal_without(mut self, arg: &str) -> Self {
        let before = self.eal.len();
        self.eal.retain(|a| a != arg);
        assert!(self.eal.len() < before, "{arg} is not an EAL argument here");
        self
    }

    /// A virtual device (`--vdev=SPEC`).
    pub fn vdev(self, spec: impl std::fmt::Display) -> Self {
        self.eal(format!("--vdev={spec}"))
    }

    /// `[dataplane]` connections_per_worker and mbufs.
    pub fn tables(self, connections_per_worker: u32, mbufs: u32) -> Self {
        self.dataplane("connections_per_worker", connections_per_worker)
            .dataplane("mbufs", mbufs)
    }

    /// Any `[dataplane]` key (the value as TOML).
    pub fn dataplane(mut self, key: &str, value: impl std::fmt::Display) -> Self {
        self.dataplane += &format!("{key} = {value}\n");
        self
    }

    /// Set a `[dataplane]` key another part of the test already set.
    pub fn dataplane_replace(mut self, key: &str, value: impl std::fmt::Display) -> Self {
        let prefix = format!("{key} =");
        self.dataplane = self
            .dataplane
            .lines()
            .filter(|l| !l.starts_with(&prefix))
            .map(|l| format!("{l}\n"))
            .collect();
        self.dataplane(key, value)
    }

    /// A `[[port]]` with one address.
    pub fn port(mut self, name: &str, device: &str, address: &str) -> Self {
        self.body += &format!(
            "[[port]]\nname = \"{name}\"\ndevice = \"{device}\"\naddresses = [\"{address}\"]\n"
        );
        self
    }

    /// Replace `from` (which must be there) by `to` in the configuration's
    /// body (ports, routes, services).
    pub fn edit(mut self, from: &str, to: &str) -> Self {
        assert!(self.body.contains(from), "no {from:?} in the config");
        self.body = self.body.replacen(from, to, 1);
        self
    }

    /// Add keys (TOML lines) to the port named `name` defined earlier.
    pub fn port_keys(mut self, name: &str, extra: &str) -> Self {
        let head = format!("[[port]]\nname = \"{name}\"\n");
        assert!(self.body.contains(&head), "no port {name}");
        self.body = self.body.replace(&head, &format!("{head}{extra}\n"));
        self
    }

    /// The two ports most tests use: wan 10.0.0.1/24 on `wan`, lan
    /// 172.16.0.1/24 on `lan`, default route via 10.0.0.254.
    pub fn wan_lan(self, wan: &str, lan: &str) -> Self {
        self.port("wan", wan, "10.0.0.1/24")
            .port("lan", lan, "172.16.0.1/24")
            .route("0.0.0.0/0", "10.0.0.254")
    }

    /// A `[[route]]`.
    pub fn route(mut self, prefix: &str, via: &str) -> Self {
        self.body += &format!("[[route]]\nprefix = \"{prefix}\"\nvia = \"{via}\"\n");
        self
    }

    /// A static `[[neighbor]]`.
    pub fn neighbor(mut self, ip: &str, mac: &str, port: &str) -> Self {
        self.body += &format!("[[neighbor]]\nip = \"{ip}\"\nmac = \"{mac}\"\nport = \"{port}\"\n");
        self
    }

    /// A `[[service]]` with its real servers (`(address, method)`).
    pub fn service(mut self, proto: &str, address: &str, sched: &str, rs: &[(&str, &str)]) -> Self {
        self.body += &service_toml(proto, address, sched, rs);
        self
    }

    /// TOML added as it is (services of a test case).
    pub fn raw(mut self, toml: &str) -> Self {
        self.body += toml;
        self
    }

    /// The EAL arguments (lcores first).
    pub fn eal_args(&self) -> Vec<String> {
        self.lcores.iter().chain(&self.eal).cloned().collect()
    }

    /// The configuration file's text.
    pub fn toml(&self) -> String {
        let args: Vec<String> = self.eal_args().iter().map(|a| format!("{a:?}")).collect();
        let mut s = format!(
            "[eal]\nargs = [{}]\n[control]\nsocket = \"{}\"\n{}",
            args.join(", "),
            self.socket,
            self.control
        );
        if !self.dataplane.is_empty() {
            s += &format!("[dataplane]\n{}", self.dataplane);
        }
        s + &self.body
    }
}

/// A `[[service]]` and its `[[service.real_server]]`s (`(address, method)`).
pub fn service_toml(proto: &str, address: &str, sched: &str, rs: &[(&str, &str)]) -> String {
    let mut s = format!(
        "[[service]]\nprotocol = \"{proto}\"\naddress = \"{address}\"\nscheduler = \"{sched}\"\n"
    );
    for (a, method) in rs {
        s += &format!("[[service.real_server]]\naddress = \"{a}\"\nmethod = \"{method}\"\n");
    }
    s
}

/// Write `frames` as an Ethernet pcap.
pub fn write_pcap(path: &std::path::Path, frames: &[Vec<u8>]) {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let f = std::fs::File::create(path).unwrap();
    let mut w = PcapWriter::with_header(f, PcapHeader::default()).unwrap();
    for (i, fr) in frames.iter().enumerate() {
        w.write_packet(&PcapPacket::new(
            Duration::from_micros(i as u64),
            fr.len() as u32,
            fr,
        ))
        .unwrap();
    }
}

/// Every frame of a pcap.
pub fn read_pcap(path: &std::path::Path) -> Vec<Vec<u8>> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let mut r = pcap_file::pcap::PcapReader::new(f).unwrap();
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        out.push(p.unwrap().data.into_owned());
    }
    out
}

/// Stop a dirigo left running by a killed test run: the process whose
/// command line is exactly `... --config PATH` for this test's config.
pub fn stop_stale_daemon(config: &std::path::Path) {
    let want = config.display().to_string();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
        let exe_ok = args.first().is_some_and(|a| a.ends_with(b"/dirigo"));
        let cfg_ok = args
            .windows(2)
            .any(|w| w[0] == b"--config" && w[1] == want.as_bytes());
        if exe_ok && cfg_ok {
            eprintln!("stopping a stale dirigo (pid {pid}) from an aborted run");
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(pid.to_string())
                .status();
            let end = Instant::now() + Duration::from_secs(10);
            while alive(pid) && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .status();
        }
    }
}

/// Whether `pid` runs (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| !r.starts_with('Z')))
        .unwrap_or(false)
}

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Path of a support program (tests/support).
pub fn support(name: &str) -> String {
    repo()
        .join("tests/support")
        .join(name)
        .display()
        .to_string()
}

/// A finished command's status, stdout and stderr, for a failure message.
pub fn text(o: &std::process::Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Run a command in network namespace `ns`; any outcome.
pub fn in_netns(ns: &str, cmd: &[&str]) -> std::process::Output {
    Command::new("ip")
        .args(["netns", "exec", ns])
        .args(cmd)
        .stdin(Stdio::null())
        .output()
        .expect("ip netns exec")
}

/// `dirigoctl --socket SOCK --json ARGS` parsed; the response's `ok.data`
/// (panics unless it succeeds).
pub fn ctl_json(sock: &str, args: &[&str]) -> serde_json::Value {
    let o = Command::new(DIRIGOCTL)
        .arg("--socket")
        .arg(sock)
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "dirigoctl {args:?}: {}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("dirigoctl json");
    v["ok"]["data"].clone()
}
