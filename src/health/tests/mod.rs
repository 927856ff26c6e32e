//! The probes against small servers on 127.0.0.1, the engine's schedule
//! and job replacement, a thousand jobs at once, and (as root) an engine in
//! a network namespace.

mod checkers;
mod codecs;
mod engine;
mod netns;
mod probe;
mod servers;

use super::spec::{CheckSpec, Job, JobKey, OnFailure, Probe};
use crate::lb::spec::{DestKey, Proto, ServiceKey};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

/// A job checking `target` with `probe`, keyed by the target (and `n`, to
/// have several jobs of one target).
fn job(probe: Probe, target: SocketAddrV4, interval_ms: u64, timeout_ms: u64, n: u16) -> Job {
    Job {
        key: JobKey {
            service: ServiceKey {
                fwmark: 0,
                proto: Proto::Tcp,
                vip: std::net::IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                port: 80,
            },
            rs: DestKey {
                addr: std::net::IpAddr::V4(*target.ip()),
                port: n,
            },
        },
        spec: CheckSpec {
            probe,
            interval: Duration::from_millis(interval_ms),
            timeout: Duration::from_millis(timeout_ms),
            rise: 1,
            fall: 1,
            retry_delay: None,
            on_failure: OnFailure::Inhibit,
            port: None,
            address: None,
            source: None,
            via_vip: false,
            notify_up: vec![],
            notify_down: vec![],
        },
        target: std::net::SocketAddr::V4(target),
        bind: None,
        rs: std::net::SocketAddr::V4(target),
        vip: std::net::SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 80)),
    }
}

/// An HTTP probe.
fn http(path: &str, status: &[(u16, u16)], expect: Option<&str>, tls: bool) -> Probe {
    Probe::Http {
        path: path.to_string(),
        host: None,
        status: status.to_vec(),
        expect: expect.map(str::to_string),
        tls,
    }
}

/// Whether this process is root (for the namespace test); in CI
/// (`CI=true`) not being root is a failure, elsewhere a printed skip.
fn root(what: &str) -> bool {
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false);
    if root {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what}: cannot run in CI: not running as root");
    }
    eprintln!("SKIP {what}: not running as root");
    false
}
