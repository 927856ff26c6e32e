//! Validating the health-check keys: `[service.check]`, a real server's
//! `check`, `quorum`, `sorry_server` and `[health]`.

use super::file::{CheckConfig, ServiceConfig};
use super::locate::At;
use super::parse_ip_port;
use crate::check::{CheckSpec, OnFailure, Probe};
use dirigo_core::lb::spec::{DestSpec, Method, Proto};
use std::net::SocketAddr;
use std::time::Duration;

/// A service's health settings, validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServiceHealth {
    /// The service's own check (what real servers added later get).
    pub check: Option<CheckSpec>,
    /// Each configured real server's check (the service's, or its own).
    pub checks: Vec<(dirigo_core::lb::spec::DestKey, CheckSpec)>,
    /// Minimum live weight; below it the VIP is withdrawn.
    pub quorum: Option<u32>,
    /// Takes new connections while the quorum is lost.
    pub sorry: Option<SocketAddr>,
}

impl ServiceHealth {
    /// Whether the service is checked or has a quorum (only then can it
    /// lose its quorum).
    pub fn active(&self) -> bool {
        self.check.is_some() || !self.checks.is_empty() || self.quorum.is_some()
    }
}

/// Defaults: keepalived's semantics, the example values.
const INTERVAL_S: f64 = 2.0;
const TIMEOUT_S: f64 = 1.0;
const RISE: u32 = 2;
const FALL: u32 = 2;

/// `over` with the keys it leaves unset taken from `base`.
fn merged(base: &CheckConfig, over: &CheckConfig) -> CheckConfig {
    // a different type takes none of the base's type-specific keys
    let same = over.kind.is_none() || over.kind == base.kind;
    let pick = |o: &Option<String>, b: &Option<String>| {
        o.clone().or_else(|| if same { b.clone() } else { None })
    };
    CheckConfig {
        kind: over.kind.clone().or_else(|| base.kind.clone()),
        interval: over.interval.or(base.interval),
        timeout: over.timeout.or(base.timeout),
        rise: over.rise.or(base.rise),
        fall: over.fall.or(base.fall),
        on_failure: over.on_failure.or(base.on_failure),
        port: over.port.or(base.port),
        path: pick(&over.path, &base.path),
        status: over
            .status
            .clone()
            .or_else(|| if same { base.status.clone() } else { None }),
        expect: pick(&over.expect, &base.expect),
        host: pick(&over.host, &base.host),
        payload: pick(&over.payload, &base.payload),
        command: over
            .command
            .clone()
            .or_else(|| if same { base.command.clone() } else { None }),
        via_vip: over.via_vip.or(if same { base.via_vip } else { None }),
        notify_up: over.notify_up.clone().or_else(|| base.notify_up.clone()),
        notify_down: over
            .notify_down
            .clone()
            .or_else(|| base.notify_down.clone()),
    }
}

/// A seconds value as a duration: positive and finite.
fn seconds(what: &str, v: f64) -> Result<Duration, String> {
    if !(v.is_finite() && v > 0.0 && v <= 86_400.0) {
        return Err(format!(
            "{what} {v} is not a number of seconds in (0, 86400]"
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

/// `"200"` or `"200-299"`.
fn status_range(s: &str) -> Result<(u16, u16), String> {
    let bad = || format!("status '{s}' is not CODE or FROM-TO (100..599)");
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let a: u16 = a.trim().parse().map_err(|_| bad())?;
    let b: u16 = b.trim().parse().map_err(|_| bad())?;
    if !(100..=599).contains(&a) || !(100..=599).contains(&b) || a > b {
        return Err(bad());
    }
    Ok((a, b))
}

/// Refuse the keys of other check types.
fn only_for(c: &CheckConfig, kind: &str) -> Result<(), String> {
    let keys: [(&str, bool, &[&str]); 5] = [
        ("path", c.path.is_some(), &["http", "https"]),
        ("status", c.status.is_some(), &["http", "https"]),
        ("host", c.host.is_some(), &["http", "https"]),
        ("payload", c.payload.is_some(), &["udp"]),
        ("command", c.command.is_some(), &["exec"]),
    ];
    for (key, set, types) in keys {
        if set && !types.contains(&kind) {
            return Err(format!("'{key}' is for {} checks", types.join("/")));
        }
    }
    if c.expect.is_some() && !matches!(kind, "http" | "https" | "udp") {
        return Err("'expect' is for http/https/udp checks".into());
    }
    Ok(())
}

/// Validate one check for a real server of `proto` forwarded by `method`.
pub fn check_spec(c: &CheckConfig, proto: Proto, method: Method) -> Result<CheckSpec, String> {
    let kind = check_kind(c)?;
    only_for(c, kind)?;
    let probe = probe(c, kind)?;
    match (&probe, proto) {
        (Probe::Tcp | Probe::Http { .. }, Proto::Udp) => {
            return Err(format!("{kind} checks need a TCP service"))
        }
        (Probe::Udp { .. }, Proto::Tcp) => return Err("udp checks need a UDP service".into()),
        _ => {}
    }
    let (interval, timeout) = timing(c)?;
    let via_vip = c.via_vip.unwrap_or(false);
    if via_vip && matches!(method, Method::Nat | Method::FullNat) {
        return Err(
            "via_vip is for DR and TUN real servers (NAT and FullNAT ones are probed directly)"
                .into(),
        );
    }
    if via_vip && matches!(probe, Probe::Ping | Probe::Exec { .. }) {
        return Err(format!("via_vip does not apply to {kind} checks"));
    }
    Ok(CheckSpec {
        notify_up: notify("notify_up", &c.notify_up)?,
        notify_down: notify("notify_down", &c.notify_down)?,
        probe,
        interval,
        timeout,
        rise: c.rise.unwrap_or(RISE).max(1),
        fall: c.fall.unwrap_or(FALL).max(1),
        on_failure: c.on_failure.unwrap_or(OnFailure::Inhibit),
        port: c.port.filter(|&p| p != 0),
        via_vip,
    })
}

/// The check's `type`: one of those known.
fn check_kind(c: &CheckConfig) -> Result<&str, String> {
    let kind = c
        .kind
        .as_deref()
        .ok_or("a check needs a type (tcp, http, https, udp, ping, exec)")?;
    if !matches!(kind, "tcp" | "http" | "https" | "udp" | "ping" | "exec") {
        return Err(format!(
            "unknown check type '{kind}' (tcp, http, https, udp, ping, exec)"
        ));
    }
    Ok(kind)
}

/// What a check of type `kind` sends and expects.
fn probe(c: &CheckConfig, kind: &str) -> Result<Probe, String> {
    Ok(match kind {
        "tcp" => Probe::Tcp,
        "http" | "https" => Probe::Http {
            path: c.path.clone().unwrap_or_else(|| "/".into()),
            host: c.host.clone(),
            status: match &c.status {
                Some(v) if !v.is_empty() => v
                    .iter()
                    .map(|s| status_range(s))
                    .collect::<Result<_, _>>()?,
                _ => vec![(200, 299)],
            },
            expect: c.expect.clone(),
            tls: kind == "https",
        },
        "udp" => Probe::Udp {
            payload: c.payload.clone().unwrap_or_default().into_bytes(),
            expect: c.expect.clone(),
        },
        "ping" => Probe::Ping,
        "exec" => exec_probe(c)?,
        other => {
            return Err(format!(
                "unknown check type '{other}' (tcp, http, https, udp, ping, exec)"
            ))
        }
    })
}

/// An exec check: its `command`'s program an existing absolute path.
fn exec_probe(c: &CheckConfig) -> Result<Probe, String> {
    let command = c
        .command
        .clone()
        .filter(|v| !v.is_empty())
        .ok_or("an exec check needs command = [\"/path/to/program\", ...]")?;
    let prog = std::path::Path::new(&command[0]);
    if !prog.is_absolute() {
        return Err(format!(
            "exec check: '{}' must be an absolute path",
            command[0]
        ));
    }
    if !prog.is_file() {
        return Err(format!("exec check: '{}' does not exist", command[0]));
    }
    Ok(Probe::Exec { command })
}

/// `interval` and `timeout`, the timeout the shorter.
fn timing(c: &CheckConfig) -> Result<(Duration, Duration), String> {
    let interval = seconds("interval", c.interval.unwrap_or(INTERVAL_S))?;
    let timeout = seconds("timeout", c.timeout.unwrap_or(TIMEOUT_S))?;
    if timeout >= interval {
        return Err(format!(
            "timeout ({} s) must be shorter than interval ({} s)",
            timeout.as_secs_f64(),
            interval.as_secs_f64()
        ));
    }
    Ok((interval, timeout))
}

/// A `notify_up`/`notify_down` command: its program an absolute path.
fn notify(key: &str, v: &Option<Vec<String>>) -> Result<Vec<String>, String> {
    let v = v.clone().unwrap_or_default();
    match v.first() {
        Some(p) if !std::path::Path::new(p).is_absolute() => {
            Err(format!("{key}: '{p}' must be an absolute path"))
        }
        _ => Ok(v),
    }
}

/// A service's health settings; `dests` are its validated real servers
/// (in the order of `s.real_server`), `at` the service's place in the
/// file. A refusal names the key it is about.
pub(super) fn service_health(
    s: &ServiceConfig,
    dests: &[DestSpec],
    at: &At,
) -> Result<ServiceHealth, (At, String)> {
    let ctx = |e: String| format!("service {}: {e}", s.address);
    let mut h = ServiceHealth {
        quorum: s.quorum,
        ..Default::default()
    };
    if s.quorum == Some(0) {
        return Err((at.k("quorum"), ctx("quorum must be at least 1".into())));
    }
    if let Some(sorry) = &s.sorry_server {
        let (a, p) = parse_ip_port(sorry).ok_or_else(|| {
            (
                at.k("sorry_server"),
                ctx(format!("sorry_server '{sorry}' is not IP:PORT")),
            )
        })?;
        h.sorry = Some(SocketAddr::new(a, p));
    }
    if let Some(c) = &s.check {
        // the service's check is validated as for a DR server (a later
        // server's method decides via_vip; NAT servers refuse it below)
        let first = dests.first().map_or(Method::Dr, |d| d.method);
        h.check = Some(
            check_spec(c, s.protocol, first)
                .map_err(|e| (at.k("check"), ctx(format!("check: {e}"))))?,
        );
    }
    let base = s.check.clone().unwrap_or_default();
    for (j, (r, d)) in s.real_server.iter().zip(dests).enumerate() {
        let (c, where_) = match &r.check {
            Some(own) => (merged(&base, own), at.k("real_server").i(j).k("check")),
            None if s.check.is_some() => (base.clone(), at.k("check")),
            None => continue,
        };
        let spec = check_spec(&c, s.protocol, d.method).map_err(|e| {
            (
                where_,
                ctx(format!("real server {}: check: {e}", r.address)),
            )
        })?;
        h.checks.push((d.key, spec));
    }
    Ok(h)
}
