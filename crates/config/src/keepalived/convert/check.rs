//! keepalived's checkers (TCP_CHECK, HTTP_GET, SSL_GET, MISC_CHECK, ...)
//! as dirigo checks.

use super::cx::{Cx, ALPHA};
use super::inherit::{Inherit, Vs};
use super::model::{
    Check, CONNECT_TIMEOUT, DELAY_BEFORE_RETRY, DELAY_LOOP, DNS_RETRY, FILE_INTERVAL,
    HTTP_DELAY_BEFORE_RETRY, HTTP_STATUS, MISC_RETRY, RETRY,
};
use super::values::{arg, command, port, uint, weight_factor};
use crate::keepalived::diag::Diag;
use crate::keepalived::parse::Node;
use std::path::Path;

/// An HTTP_GET / SSL_GET `url`.
pub(super) struct Url {
    path: Option<String>,
    status: Vec<String>,
    host: Option<String>,
}

/// `status_code CODE|FROM-TO ...`, each as keepalived reads it.
pub(super) fn status(n: &Node) -> Result<Vec<String>, Diag> {
    arg(n, 0, "a status code")?;
    let mut out = Vec::new();
    for s in &n.args {
        let (a, b) = s.split_once('-').unwrap_or((s, s));
        let ok = match (a.parse::<u16>(), b.parse::<u16>()) {
            (Ok(a), Ok(b)) => (100..=599).contains(&a) && (100..=599).contains(&b) && a <= b,
            _ => false,
        };
        if !ok {
            return Err(Diag::error(
                &n.loc,
                format!("status_code '{s}' is not CODE or FROM-TO in 100..599"),
            ));
        }
        out.push(s.clone());
    }
    Ok(out)
}

/// One `url` block.
pub(super) fn url(cx: &mut Cx, n: &Node) -> Result<Url, Diag> {
    let mut u = Url {
        path: None,
        status: Vec::new(),
        host: None,
    };
    for c in n.children() {
        match c.key.as_str() {
            "path" => u.path = Some(arg(c, 0, "a path")?.to_string()),
            "status_code" => u.status.extend(status(c)?),
            "virtualhost" => u.host = Some(arg(c, 0, "a host name")?.to_string()),
            "digest" => cx.unsupported(
                c,
                "dirigo's http check tests the status (not the body's MD5)",
            ),
            "regex" | "regex_no_match" | "regex_options" | "regex_min_offset"
            | "regex_max_offset" | "regex_stack" => cx.unsupported(
                c,
                "dirigo's http check can test a substring of the body (expect), not a regex",
            ),
            "tls_compliant" => cx.unsupported(c, ""),
            _ => cx.unknown(c, " in url"),
        }
    }
    Ok(u)
}

/// A checker block's own keywords, as read.
struct CheckKeys<'n> {
    own: Inherit,
    port: Option<u16>,
    address: Option<String>,
    source: Option<String>,
    urls: Vec<&'n Node>,
    misc_path: Option<Vec<String>>,
    misc_timeout: Option<u32>,
    helo_name: Option<String>,
    query_type: Option<String>,
    query_name: Option<String>,
    track_file: Option<&'n Node>,
    weight: Option<(i64, bool)>,
}

/// One checker block of a real server; `None` when it cannot be a dirigo
/// check (with a warning).
pub(super) fn checker(
    cx: &mut Cx,
    n: &Node,
    inherit: &Inherit,
    vs: &Vs,
    probe_port: Option<u16>,
) -> Result<Option<Check>, Diag> {
    let kind = match n.key.as_str() {
        "TCP_CHECK" => "tcp",
        "HTTP_GET" => "http",
        "SSL_GET" => "https",
        "MISC_CHECK" => "exec",
        "UDP_CHECK" => "udp",
        "SMTP_CHECK" => "smtp",
        "DNS_CHECK" => "dns",
        "FILE_CHECK" => "file",
        _ => "ping",
    };
    let http = matches!(kind, "http" | "https");
    let k = CheckKeys::read(cx, n, kind, http)?;
    if wrong_proto(cx, n, kind, vs) {
        return Ok(None);
    }
    if kind == "file" {
        return Ok(file_check(cx, n, &k, inherit));
    }
    let t = k.own.under(inherit);
    let mut check = Check {
        kind,
        interval: t.delay_loop.unwrap_or(DELAY_LOOP),
        timeout: 0.0,
        rise: 1,
        fall: 0,
        retry_delay: None,
        on_failure: if t.inhibit == Some(true) {
            "inhibit"
        } else {
            "remove"
        },
        port: k.port.or(probe_port),
        address: k.address.clone(),
        source: k.source.clone(),
        path: None,
        status: Vec::new(),
        host: None,
        command: Vec::new(),
        helo_name: k.helo_name.clone(),
        query_type: k.query_type.clone(),
        query_name: k.query_name.clone(),
        file: None,
        weight_factor: None,
        notify_up: Vec::new(),
        notify_down: Vec::new(),
    };
    timing(cx, n, &mut check, &t, k.misc_timeout);
    if http {
        let Some(u) = chosen_url(cx, n, k.urls)? else {
            return Ok(None);
        };
        check.path = u.path;
        check.status = if u.status.is_empty() {
            vec![HTTP_STATUS.into()]
        } else {
            u.status
        };
        check.host = u.host.or(t.virtualhost);
    }
    if kind == "exec" {
        let Some(cmd) = exec_command(cx, n, k.misc_path) else {
            return Ok(None);
        };
        check.command = cmd;
    }
    Ok(Some(check))
}

impl<'n> CheckKeys<'n> {
    /// Read the block of `n`, a checker of `kind`.
    fn read(cx: &mut Cx, n: &'n Node, kind: &str, http: bool) -> Result<Self, Diag> {
        let mut k = CheckKeys {
            own: Inherit::default(),
            port: None,
            address: None,
            source: None,
            urls: Vec::new(),
            misc_path: None,
            misc_timeout: None,
            helo_name: None,
            query_type: None,
            query_name: None,
            track_file: None,
            weight: None,
        };
        let mut hosts = Vec::new();
        for c in n.children() {
            // FILE_CHECK has none of the other checkers' options
            if kind != "file" && k.own.take(c)? {
                continue;
            }
            match (kind, c.key.as_str()) {
                ("file", "track_file") => {
                    arg(c, 0, "a track_file's name")?;
                    k.track_file = Some(c);
                }
                ("file", "weight") => k.weight = Some(weight_factor(c)?),
                ("file", "dynamic") => cx.unsupported(
                    c,
                    "the file's weight change goes to the server's weight, not the quorum",
                ),
                ("file", _) => cx.unknown(c, " in FILE_CHECK"),
                ("smtp", "helo_name") => k.helo_name = Some(arg(c, 0, "a host name")?.to_string()),
                ("smtp", "host") => hosts.push(c),
                ("dns", "type") => k.query_type = Some(arg(c, 0, "a query type")?.to_string()),
                ("dns", "name") => k.query_name = Some(arg(c, 0, "a domain name")?.to_string()),
                (_, "connect_port") => {
                    k.port = Some(port(c, arg(c, 0, "a port")?)?).filter(|&p| p != 0)
                }
                (_, "url") if http => k.urls.push(c),
                (_, "connect_ip") if kind != "exec" => k.address = Some(ip(c)?),
                (_, "bindto") if kind != "exec" => k.source = Some(ip(c)?),
                ("exec", "misc_path") => k.misc_path = Some(command(c)?),
                ("exec", "misc_timeout") => {
                    k.misc_timeout =
                        Some(uint(c, "a number of seconds", 0, 86_400)?).filter(|&t| t > 0)
                }
                _ => unsupported(cx, n, c, kind, http),
            }
        }
        k.smtp_hosts(cx, hosts)?;
        Ok(k)
    }

    /// SMTP_CHECK's deprecated `host { connect_ip; connect_port; bindto }`
    /// blocks, each a checker of its own in keepalived: without connection
    /// options of the SMTP_CHECK's own, the first is the check's (as
    /// keepalived takes it then); the others are warned about (dirigo
    /// runs one check per real server).
    fn smtp_hosts(&mut self, cx: &mut Cx, hosts: Vec<&Node>) -> Result<(), Diag> {
        let own = self.address.is_some() || self.port.is_some() || self.source.is_some();
        for (i, h) in hosts.into_iter().enumerate() {
            if own || i > 0 {
                cx.warn(
                    h,
                    "host skipped: dirigo runs one check per real server (keepalived makes each \
                     SMTP_CHECK host block a checker of its own)",
                );
                continue;
            }
            for c in h.children() {
                match c.key.as_str() {
                    "connect_ip" => self.address = Some(ip(c)?),
                    "connect_port" => {
                        self.port = Some(port(c, arg(c, 0, "a port")?)?).filter(|&p| p != 0)
                    }
                    "bindto" => self.source = Some(ip(c)?),
                    _ => cx.unsupported(
                        c,
                        "a host block's connect_ip, connect_port and bindto are converted",
                    ),
                }
            }
        }
        Ok(())
    }
}

/// A checker keyword dirigo does not take: one warning.
fn unsupported(cx: &mut Cx, n: &Node, c: &Node, kind: &str, http: bool) {
    match (kind, c.key.as_str()) {
        ("exec", "misc_dynamic") => cx.unsupported(
            c,
            "in dirigo the program's exit code is up (0) or down, not a weight",
        ),
        ("exec", "user") => cx.unsupported(c, "the program runs as dirigo's user"),
        (_, "warmup") => cx.unsupported(c, "dirigo checks a server from the start"),
        (_, "alpha") => cx.unsupported(c, ALPHA),
        (_, "connect_ip" | "bindto") => cx.unsupported(c, "MISC_CHECK's program is given {rip}"),
        (_, "bind_port" | "bind_if" | "source_ip" | "fwmark") => cx.unsupported(
            c,
            "dirigo's probes take an address to leave from (bindto), no port, interface or mark",
        ),
        ("udp", "payload" | "require_reply" | "min_reply_length" | "max_reply_length") => {
            cx.unsupported(c, "keepalived's hex payloads are not converted")
        }
        (_, "http_protocol" | "enable_sni" | "sni_name" | "fast_recovery" | "tls_compliant")
            if http =>
        {
            cx.unsupported(c, "")
        }
        (_, "log_all_failures") => cx.unsupported(c, ""),
        _ => cx.unknown(c, &format!(" in {}", n.key)),
    }
}

/// Whether a check of `kind` cannot probe `vs`'s protocol (with a warning).
fn wrong_proto(cx: &mut Cx, n: &Node, kind: &str, vs: &Vs) -> bool {
    let tcp_check = matches!(kind, "tcp" | "http" | "https" | "smtp");
    if (tcp_check && vs.proto == "udp") || (kind == "udp" && vs.proto == "tcp") {
        let msg = format!(
            "{} skipped: dirigo's {kind} checks are for {} services, {}:{} is {}",
            n.key,
            if kind == "udp" { "UDP" } else { "TCP" },
            vs.vip,
            vs.port,
            vs.proto.to_uppercase()
        );
        cx.warn(n, msg);
        return true;
    }
    false
}

/// The check's timeout and `fall`; a timeout not shorter than the interval
/// becomes half of it (with a warning).
fn timing(cx: &mut Cx, n: &Node, check: &mut Check, t: &Inherit, misc_timeout: Option<u32>) {
    let (timeout, retry) = if check.kind == "exec" {
        // keepalived gives the program the delay_loop without misc_timeout
        let t_out = misc_timeout.map_or(check.interval, f64::from);
        (t_out, t.retry.unwrap_or(MISC_RETRY))
    } else {
        (
            t.connect_timeout.unwrap_or(CONNECT_TIMEOUT),
            t.retry.unwrap_or(RETRY),
        )
    };
    let retry = if check.kind == "dns" {
        t.retry.unwrap_or(DNS_RETRY)
    } else {
        retry
    };
    check.fall = retry.saturating_add(1);
    check.timeout = timeout;
    if retry > 0 {
        let delay = t.delay_before_retry.unwrap_or(match check.kind {
            "http" | "https" => HTTP_DELAY_BEFORE_RETRY,
            "dns" => check.interval,
            _ => DELAY_BEFORE_RETRY,
        });
        if delay > 0.0 {
            check.retry_delay = Some(delay);
        } else {
            cx.warn(
                n,
                format!(
                    "{}: delay_before_retry 0: dirigo retries at the next interval",
                    n.key
                ),
            );
        }
    }
    if timeout >= check.interval {
        check.timeout = check.interval / 2.0;
        let msg = format!(
            "{}: timeout {} s is not shorter than the interval (delay_loop) {} s, as dirigo needs: timeout {} s",
            n.key,
            timeout,
            check.interval,
            check.timeout
        );
        cx.warn(n, msg);
    }
}

/// A FILE_CHECK: its `track_file`'s file and weight (FILE_CHECK's own
/// weight first); `None` without a known `track_file` with a `file` (with
/// a warning). The file is read every [`FILE_INTERVAL`] and acts at once.
fn file_check(cx: &mut Cx, n: &Node, k: &CheckKeys, inherit: &Inherit) -> Option<Check> {
    let Some(tf) = k.track_file else {
        cx.warn(n, "FILE_CHECK without track_file: check skipped");
        return None;
    };
    let name = tf.args[0].as_str();
    let Some(track) = cx.track_files.get(name).cloned() else {
        cx.warn(
            tf,
            format!("FILE_CHECK skipped: no track_file {name} is defined"),
        );
        return None;
    };
    let Some(path) = track.path.filter(|p| Path::new(p).is_absolute()) else {
        cx.warn(
            tf,
            format!("FILE_CHECK skipped: track_file {name} has no absolute `file`"),
        );
        return None;
    };
    Some(Check {
        kind: "file",
        interval: FILE_INTERVAL,
        timeout: 0.0,
        rise: 1,
        fall: 1,
        retry_delay: None,
        on_failure: if inherit.inhibit == Some(true) {
            "inhibit"
        } else {
            "remove"
        },
        port: None,
        address: None,
        source: None,
        path: None,
        status: Vec::new(),
        host: None,
        command: Vec::new(),
        helo_name: None,
        query_type: None,
        query_name: None,
        file: Some(path),
        weight_factor: Some(k.weight.unwrap_or(track.weight)),
        notify_up: Vec::new(),
        notify_down: Vec::new(),
    })
}

/// `connect_ip` / `bindto`: an IPv4 or IPv6 address.
fn ip(n: &Node) -> Result<String, Diag> {
    let a = arg(n, 0, "an address")?;
    a.parse::<std::net::IpAddr>()
        .map(|ip| ip.to_string())
        .map_err(|_| Diag::error(&n.loc, format!("{} '{a}' is not an IP address", n.key)))
}

/// The first `url` with a path; `None` without one (with a warning).
fn chosen_url(cx: &mut Cx, n: &Node, urls: Vec<&Node>) -> Result<Option<Url>, Diag> {
    let mut chosen: Option<(Url, &Node)> = None;
    for u in urls {
        if let Some((_, first)) = &chosen {
            cx.warn(
                u,
                format!(
                    "url skipped: dirigo's http check fetches one url (the one at {})",
                    first.loc
                ),
            );
            continue;
        }
        let parsed = url(cx, u)?;
        if parsed.path.is_none() {
            cx.warn(u, "url without a path: skipped (keepalived ignores it too)");
            continue;
        }
        chosen = Some((parsed, u));
    }
    let Some((u, _)) = chosen else {
        cx.warn(
            n,
            format!("{} without a url (with a path): check skipped", n.key),
        );
        return Ok(None);
    };
    Ok(Some(u))
}

/// MISC_CHECK's `misc_path`, an absolute path; `None` when there is none
/// (with a warning). A program missing here is only warned about.
fn exec_command(cx: &mut Cx, n: &Node, misc_path: Option<Vec<String>>) -> Option<Vec<String>> {
    let Some(cmd) = misc_path.filter(|c| !c.is_empty()) else {
        cx.warn(n, "MISC_CHECK without misc_path: check skipped");
        return None;
    };
    let prog = Path::new(&cmd[0]);
    if !prog.is_absolute() {
        cx.warn(
            n,
            format!(
                "MISC_CHECK skipped: dirigo needs the program's absolute path, not '{}'",
                cmd[0]
            ),
        );
        return None;
    }
    if !prog.is_file() {
        cx.warn(
            n,
            format!("MISC_CHECK: {} does not exist here; dirigo refuses a config whose exec program is missing", cmd[0]),
        );
    }
    Some(cmd)
}
