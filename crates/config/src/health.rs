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
    // a file check over a probe's takes no timeout or port (it has none)
    let file = !same && over.kind.as_deref() == Some("file");
    CheckConfig {
        kind: over.kind.clone().or_else(|| base.kind.clone()),
        interval: over.interval.or(base.interval),
        timeout: over.timeout.or(if file { None } else { base.timeout }),
        rise: over.rise.or(base.rise),
        fall: over.fall.or(base.fall),
        retry_delay: over.retry_delay.or(base.retry_delay),
        on_failure: over.on_failure.or(base.on_failure),
        port: over.port.or(if file { None } else { base.port }),
        address: over
            .address
            .clone()
            .or_else(|| if file { None } else { base.address.clone() }),
        source: over
            .source
            .clone()
            .or_else(|| if file { None } else { base.source.clone() }),
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
        helo_name: pick(&over.helo_name, &base.helo_name),
        query_type: pick(&over.query_type, &base.query_type),
        query_name: pick(&over.query_name, &base.query_name),
        file: pick(&over.file, &base.file),
        weight_factor: over
            .weight_factor
            .or(if same { base.weight_factor } else { None }),
        reverse: over.reverse.or(if same { base.reverse } else { None }),
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

/// An address key (`address`, `source`): an IPv4 or IPv6 address.
fn ip_key(key: &str, v: &Option<String>) -> Result<Option<std::net::IpAddr>, String> {
    v.as_deref()
        .map(|a| {
            a.parse()
                .map_err(|_| format!("{key} '{a}' is not an IP address"))
        })
        .transpose()
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
    let keys: [(&str, bool, &[&str]); 11] = [
        ("path", c.path.is_some(), &["http", "https"]),
        ("status", c.status.is_some(), &["http", "https"]),
        ("host", c.host.is_some(), &["http", "https"]),
        ("payload", c.payload.is_some(), &["udp"]),
        ("command", c.command.is_some(), &["exec"]),
        ("helo_name", c.helo_name.is_some(), &["smtp"]),
        ("query_type", c.query_type.is_some(), &["dns"]),
        ("query_name", c.query_name.is_some(), &["dns"]),
        ("file", c.file.is_some(), &["file"]),
        ("weight_factor", c.weight_factor.is_some(), &["file"]),
        ("reverse", c.reverse.is_some(), &["file"]),
    ];
    for (key, set, types) in keys {
        if set && !types.contains(&kind) {
            return Err(format!("'{key}' is for {} checks", types.join("/")));
        }
    }
    if c.expect.is_some() && !matches!(kind, "http" | "https" | "udp" | "dns") {
        return Err("'expect' is for http/https/udp/dns checks".into());
    }
    if kind == "file" {
        for (key, set) in [
            ("port", c.port.is_some()),
            ("via_vip", c.via_vip.is_some()),
            ("timeout", c.timeout.is_some()),
            ("address", c.address.is_some()),
            ("source", c.source.is_some()),
        ] {
            if set {
                return Err(format!("'{key}' does not apply to file checks"));
            }
        }
    }
    if kind == "exec" && (c.address.is_some() || c.source.is_some()) {
        return Err(
            "'address' and 'source' do not apply to exec checks (use {rip} in command)".into(),
        );
    }
    Ok(())
}

/// Validate one check for a real server of `proto` forwarded by `method`.
pub fn check_spec(c: &CheckConfig, proto: Proto, method: Method) -> Result<CheckSpec, String> {
    let kind = check_kind(c)?;
    only_for(c, kind)?;
    let probe = probe(c, kind)?;
    match (&probe, proto) {
        (Probe::Tcp | Probe::Http { .. } | Probe::Smtp { .. }, Proto::Udp) => {
            return Err(format!("{kind} checks need a TCP service"))
        }
        (Probe::Udp { .. }, Proto::Tcp) => return Err("udp checks need a UDP service".into()),
        _ => {}
    }
    let (interval, timeout) = timing(c, kind)?;
    let retry_delay = c
        .retry_delay
        .map(|v| seconds("retry_delay", v))
        .transpose()?;
    let via_vip = c.via_vip.unwrap_or(false);
    if via_vip && matches!(method, Method::Nat | Method::FullNat) {
        return Err(
            "via_vip is for DR and TUN real servers (NAT and FullNAT ones are probed directly)"
                .into(),
        );
    }
    let address = ip_key("address", &c.address)?;
    let source = ip_key("source", &c.source)?;
    if via_vip && (address.is_some() || source.is_some()) {
        return Err(
            "via_vip probes the VIP from dirigo's own address: no 'address' or 'source'".into(),
        );
    }
    if let (Some(a), Some(s)) = (address, source) {
        if a.is_ipv4() != s.is_ipv4() {
            return Err(format!(
                "source {s} and address {a} are of different families"
            ));
        }
    }
    if via_vip && matches!(probe, Probe::Ping | Probe::Exec { .. } | Probe::File { .. }) {
        return Err(format!("via_vip does not apply to {kind} checks"));
    }
    Ok(CheckSpec {
        notify_up: notify("notify_up", &c.notify_up)?,
        notify_down: notify("notify_down", &c.notify_down)?,
        probe,
        interval,
        timeout,
        // a file is read, not probed: its value acts at once, as in
        // keepalived, unless told otherwise
        rise: c
            .rise
            .unwrap_or(if kind == "file" { 1 } else { RISE })
            .max(1),
        fall: c
            .fall
            .unwrap_or(if kind == "file" { 1 } else { FALL })
            .max(1),
        retry_delay,
        on_failure: c.on_failure.unwrap_or(OnFailure::Inhibit),
        port: c.port.filter(|&p| p != 0),
        address,
        source,
        via_vip,
    })
}

/// The check types.
const KINDS: &str = "tcp, http, https, udp, ping, exec, smtp, dns, file";

/// The check's `type`: one of those known.
fn check_kind(c: &CheckConfig) -> Result<&str, String> {
    let kind = c
        .kind
        .as_deref()
        .ok_or(format!("a check needs a type ({KINDS})"))?;
    if !KINDS.split(", ").any(|k| k == kind) {
        return Err(format!("unknown check type '{kind}' ({KINDS})"));
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
        "smtp" => Probe::Smtp {
            helo: helo_name(c.helo_name.as_deref())?,
        },
        "dns" => dns_probe(c)?,
        "file" => file_probe(c)?,
        other => return Err(format!("unknown check type '{other}' ({KINDS})")),
    })
}

/// An SMTP check's HELO name: printable ASCII without spaces.
fn helo_name(name: Option<&str>) -> Result<String, String> {
    let name = name.unwrap_or(crate::check::SMTP_HELO);
    if name.is_empty() || name.len() > 255 || !name.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "helo_name '{name}' is not a host name (printable ASCII, no spaces, at most 255 bytes)"
        ));
    }
    Ok(name.to_string())
}

/// A DNS check: a known query type (default SOA, as keepalived), a valid
/// name (default the root), and an expected answer of that type.
fn dns_probe(c: &CheckConfig) -> Result<Probe, String> {
    let names = || {
        crate::check::DNS_TYPES
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let qtype = match &c.query_type {
        None => 6,
        Some(t) => crate::check::dns_type(t)
            .ok_or_else(|| format!("query_type '{t}' is not one of {}", names()))?,
    };
    let name = dns_name(c.query_name.as_deref().unwrap_or("."))?;
    if let Some(e) = &c.expect {
        let ok = match qtype {
            1 => e.parse::<std::net::Ipv4Addr>().is_ok(),
            28 => e.parse::<std::net::Ipv6Addr>().is_ok(),
            16 => true,
            _ => dns_name(e).is_ok(),
        };
        if !ok {
            return Err(format!(
                "expect '{e}' cannot be a {} answer ({})",
                crate::check::dns_type_name(qtype),
                match qtype {
                    1 => "an IPv4 address",
                    28 => "an IPv6 address",
                    _ => "a domain name",
                }
            ));
        }
    }
    Ok(Probe::Dns {
        qtype,
        name,
        expect: c.expect.clone(),
    })
}

/// A domain name as a DNS check sends it: without the final dot, labels
/// of 1..=63 bytes of letters, digits, '-' and '_', at most 253 bytes.
fn dns_name(n: &str) -> Result<String, String> {
    let bare = n.strip_suffix('.').unwrap_or(n);
    let bad = |why: &str| format!("'{n}' is not a domain name: {why}");
    if bare.len() > 253 {
        return Err(bad("longer than 253 bytes"));
    }
    if bare.is_empty() {
        return Ok(String::new());
    }
    for label in bare.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(bad("a label is empty or longer than 63 bytes"));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'*')
        {
            return Err(bad("letters, digits, '-' and '_' only"));
        }
    }
    Ok(bare.to_ascii_lowercase())
}

/// A file check: an absolute path, a factor in keepalived's range.
fn file_probe(c: &CheckConfig) -> Result<Probe, String> {
    let path = c
        .file
        .clone()
        .ok_or("a file check needs file = \"/path/to/file\"")?;
    if !std::path::Path::new(&path).is_absolute() {
        return Err(format!("file check: '{path}' must be an absolute path"));
    }
    let factor = c.weight_factor.unwrap_or(1);
    const LIMIT: i64 = i32::MAX as i64;
    if !(-LIMIT..=LIMIT).contains(&factor) {
        return Err(format!(
            "weight_factor {factor} is not in -{LIMIT}..={LIMIT}"
        ));
    }
    Ok(Probe::File {
        path,
        factor,
        reverse: c.reverse.unwrap_or(false),
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

/// `interval` and `timeout`, the timeout the shorter (a file check, which
/// only reads a file, gets half the interval).
fn timing(c: &CheckConfig, kind: &str) -> Result<(Duration, Duration), String> {
    let interval = seconds("interval", c.interval.unwrap_or(INTERVAL_S))?;
    if kind == "file" {
        return Ok((interval, interval / 2));
    }
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

/// A probe's `source` of the family of the address it probes (`address`,
/// else the server's).
fn same_family(spec: &CheckSpec, rs: std::net::IpAddr) -> Result<(), String> {
    match spec.source {
        Some(s) if s.is_ipv4() != spec.address.unwrap_or(rs).is_ipv4() => Err(format!(
            "source {s} cannot reach {} (another family)",
            spec.address.unwrap_or(rs)
        )),
        _ => Ok(()),
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
    let ctx = |e: String| format!("service {}: {e}", s.label());
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
            check_spec(c, s.protocol.unwrap_or(Proto::Tcp), first)
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
        let spec = check_spec(&c, s.protocol.unwrap_or(Proto::Tcp), d.method)
            .and_then(|spec| same_family(&spec, d.key.addr).map(|()| spec))
            .map_err(|e| {
                (
                    where_,
                    ctx(format!("real server {}: check: {e}", r.address)),
                )
            })?;
        h.checks.push((d.key, spec));
    }
    Ok(h)
}
