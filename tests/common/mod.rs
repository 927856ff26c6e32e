//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// Whether the test may run privileged/EAL work here. In CI (`CI=true`) a
/// missing prerequisite is a failure, never a skip; elsewhere the skip is
/// printed with its reason.
pub fn privileged(what: &str) -> bool {
    let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
    let mut why = Vec::new();
    // SAFETY-free check: /proc/self/status Uid line.
    let uid0 = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false);
    if !uid0 {
        why.push("not running as root");
    }
    let huge = std::fs::read_to_string("/proc/sys/vm/nr_hugepages")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(0);
    if huge < 256 {
        why.push("fewer than 256 hugepages reserved (run scripts/setup-hugepages.sh)");
    }
    if why.is_empty() {
        return true;
    }
    if ci {
        panic!("{what}: cannot run in CI: {}", why.join("; "));
    }
    eprintln!("SKIP {what}: {}", why.join("; "));
    false
}

/// A scratch directory under target/ for a test.
pub fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

use std::io::{BufRead, BufReader};
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
        let path = dir.join("dirigo.toml");
        std::fs::write(&path, config).expect("write config");
        let mut child = Command::new(env!("CARGO_BIN_EXE_dirigo"))
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

    /// Whether some output line contains `s`.
    pub fn has_line(&self, s: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(s))
    }

    /// All output so far.
    pub fn output(&self) -> String {
        self.log.lock().unwrap().join("\n")
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
                let _ = child.kill();
                panic!("dirigo did not stop on SIGTERM:\n{}", self.output());
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
