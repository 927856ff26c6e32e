//! keepalived's `virtual_server` blocks as dirigo services.
//!
//! keepalived's defaults are kept (keepalived/check/check_data.c,
//! check_api.c): `delay_loop` 60 s, `connect_timeout` 5 s, `retry` 1 (0
//! for MISC_CHECK), scheduler `wlc`, forwarding `NAT`, weight 1, a
//! `persistence_timeout` without a value (or a `persistence_granularity`
//! alone) 360 s, an HTTP_GET url without `status_code` 200-299, a
//! MISC_CHECK without `misc_timeout` the `delay_loop`. A virtual server's
//! `delay_loop`, `connect_timeout`, `retry`, `inhibit_on_failure` and
//! `virtualhost` are its real servers' defaults, and theirs their checks'.
//!
//! What changes on the way:
//! * `fall` is keepalived's `retry` + 1: keepalived takes a server down
//!   when a failed check is followed by `retry` failed retries
//!   (check_tcp.c `tcp_epilog`); `rise` is 1 (one good check brings a
//!   keepalived server back);
//! * dirigo needs a check's timeout shorter than its interval: a timeout
//!   that is not becomes half the interval, with a warning;
//! * dirigo runs one check per real server and one url per HTTP check:
//!   the first, with a warning for the others;
//! * DR and TUN do not change the port: a real server's other port
//!   becomes the service's, and its check keeps probing the port it had.
//!
//! Everything else (VRRP, `global_defs`, fwmark and group services, IPv6,
//! SCTP, the keywords dirigo has no equivalent for) is one warning each
//! and skipped. Malformed input (a keyword without its value, a bad
//! address, port or number) is an error.

use super::parse::Node;
use super::{Diag, Loc};
use std::net::{IpAddr, Ipv4Addr, SocketAddrV4};
use std::path::Path;

/// keepalived's `delay_loop` (KEEPALIVED_DEFAULT_DELAY), seconds.
pub const DELAY_LOOP: f64 = 60.0;
/// keepalived's `connect_timeout`, seconds.
pub const CONNECT_TIMEOUT: f64 = 5.0;
/// keepalived's `retry` (a checker's `default_retry`).
pub const RETRY: u32 = 1;
/// keepalived's `retry` of a MISC_CHECK.
pub const MISC_RETRY: u32 = 0;
/// keepalived's `persistence_timeout` without a value
/// (IPVS_SVC_PERSISTENT_TIMEOUT), seconds.
pub const PERSISTENCE_TIMEOUT: u32 = 360;
/// keepalived's scheduler (IPVS_DEF_SCHED).
pub const SCHEDULER: &str = "wlc";
/// The statuses an HTTP_GET url accepts without `status_code`.
pub const HTTP_STATUS: &str = "200-299";

/// A converted virtual server.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    /// Where its `virtual_server` is.
    pub loc: Loc,
    /// `tcp` or `udp`.
    pub proto: &'static str,
    /// VIP.
    pub vip: Ipv4Addr,
    /// Port.
    pub port: u16,
    /// dirigo's scheduler name.
    pub scheduler: String,
    /// dirigo's scheduler flags (`sh-port`, ...).
    pub flags: Vec<String>,
    /// Persistence timeout, seconds.
    pub persistent: Option<u32>,
    /// Persistence granularity.
    pub netmask: Option<Ipv4Addr>,
    /// Minimum live weight.
    pub quorum: Option<u32>,
    /// Sorry server.
    pub sorry: Option<SocketAddrV4>,
    /// The check of every real server, when they all have the same one.
    pub check: Option<Check>,
    /// The real servers.
    pub servers: Vec<RealServer>,
}

/// A converted real server.
#[derive(Debug, Clone, PartialEq)]
pub struct RealServer {
    /// Where its `real_server` is.
    pub loc: Loc,
    /// Address and port.
    pub addr: SocketAddrV4,
    /// `dr`, `tun` or `nat`.
    pub method: &'static str,
    /// Weight.
    pub weight: u32,
    /// `uthreshold` (0: none).
    pub upper: u32,
    /// `lthreshold` (0: none).
    pub lower: u32,
    /// Its own check (`None` in the output when it is the service's).
    pub check: Option<Check>,
}

/// A converted check: every key dirigo's check takes from keepalived.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// `tcp`, `http`, `https`, `udp`, `ping` or `exec`.
    pub kind: &'static str,
    /// Seconds (`delay_loop`).
    pub interval: f64,
    /// Seconds (`connect_timeout`, `misc_timeout`).
    pub timeout: f64,
    /// Successes before up.
    pub rise: u32,
    /// Failures before down (`retry` + 1).
    pub fall: u32,
    /// `inhibit` or `remove`.
    pub on_failure: &'static str,
    /// `connect_port`.
    pub port: Option<u16>,
    /// http: the url's path.
    pub path: Option<String>,
    /// http: accepted statuses.
    pub status: Vec<String>,
    /// http: `virtualhost`.
    pub host: Option<String>,
    /// exec: `misc_path`, split.
    pub command: Vec<String>,
    /// The real server's `notify_up`.
    pub notify_up: Vec<String>,
    /// The real server's `notify_down`.
    pub notify_down: Vec<String>,
}

/// Collects the warnings.
struct Cx<'w> {
    warnings: &'w mut Vec<Diag>,
}

impl Cx<'_> {
    fn warn(&mut self, n: &Node, msg: impl Into<String>) {
        self.warnings.push(Diag::warning(&n.loc, msg));
    }

    /// A keyword this converter does not know (or keepalived syntax it
    /// does not take): one warning, skipped with its block.
    fn unknown(&mut self, n: &Node, inside: &str) {
        let msg = if n.key.starts_with('@') {
            format!(
                "conditional configuration ('{}') is not supported: statement skipped",
                n.key
            )
        } else if n.key.starts_with('$') {
            format!(
                "parameter definitions ('{}') are not supported: skipped, and $NAME is not replaced",
                n.key
            )
        } else {
            format!("unknown keyword '{}'{inside}: skipped", n.key)
        };
        self.warn(n, msg);
    }

    /// A keepalived keyword dirigo has no equivalent for.
    fn unsupported(&mut self, n: &Node, why: &str) {
        let msg = if why.is_empty() {
            format!("{} is not supported by dirigo: skipped", n.key)
        } else {
            format!("{} skipped: {why}", n.key)
        };
        self.warn(n, msg);
    }
}

/// The services of a keepalived configuration tree; everything else is
/// warned about in `warnings`.
pub fn services(tree: &[Node], warnings: &mut Vec<Diag>) -> Result<Vec<Service>, Diag> {
    let mut cx = Cx { warnings };
    let mut out: Vec<Service> = Vec::new();
    for n in tree {
        match n.key.as_str() {
            "virtual_server" => {
                let Some(s) = virtual_server(&mut cx, n)? else {
                    continue;
                };
                let same = out
                    .iter()
                    .find(|o| (o.proto, o.vip, o.port) == (s.proto, s.vip, s.port));
                if let Some(first) = same {
                    let msg = format!(
                        "virtual_server {} {} ({}) is already defined at {}: skipped",
                        s.vip,
                        s.port,
                        s.proto.to_uppercase(),
                        first.loc
                    );
                    cx.warn(n, msg);
                } else {
                    out.push(s);
                }
            }
            "global_defs" => {
                cx.unsupported(n, "keepalived's global settings have no dirigo equivalent")
            }
            "vrrp_instance" | "vrrp_sync_group" | "vrrp_script" | "vrrp_track_process"
            | "vrrp_track_file" | "garp_group" => {
                let name = n.args.first().map(|a| format!(" {a}")).unwrap_or_default();
                let msg = format!(
                    "{}{name} skipped: dirigo does not run VRRP (keepalived can go on doing it: \
                     VRRP reaches the kernel through dirigo's exception path)",
                    n.key
                );
                cx.warn(n, msg);
            }
            "static_ipaddress" | "static_routes" | "static_rules" => cx.unsupported(
                n,
                "dirigo's own addresses and routes are [[port]] addresses and [[route]]s",
            ),
            "virtual_server_group" => {
                let name = n.args.first().map(|a| format!(" {a}")).unwrap_or_default();
                let msg = format!(
                    "virtual_server_group{name} skipped: dirigo has no service groups \
                     (write a virtual_server per address)"
                );
                cx.warn(n, msg);
            }
            "SSL" => cx.unsupported(n, "dirigo's https checks present no client certificate"),
            "linkbeat_interfaces"
            | "net_namespace"
            | "net_namespace_ipvs"
            | "namespace_with_ipsets"
            | "instance"
            | "use_pid_dir"
            | "bfd_instance"
            | "track_file"
            | "track_process" => cx.unsupported(n, "not a load-balancing setting dirigo takes"),
            _ => cx.unknown(n, ""),
        }
    }
    Ok(out)
}

/// What a virtual server or real server hands down to its checks.
#[derive(Debug, Clone, Default)]
struct Inherit {
    delay_loop: Option<f64>,
    connect_timeout: Option<f64>,
    retry: Option<u32>,
    inhibit: Option<bool>,
    virtualhost: Option<String>,
}

impl Inherit {
    /// These values, the unset ones from `parent`.
    fn under(&self, parent: &Inherit) -> Inherit {
        Inherit {
            delay_loop: self.delay_loop.or(parent.delay_loop),
            connect_timeout: self.connect_timeout.or(parent.connect_timeout),
            retry: self.retry.or(parent.retry),
            inhibit: self.inhibit.or(parent.inhibit),
            virtualhost: self
                .virtualhost
                .clone()
                .or_else(|| parent.virtualhost.clone()),
        }
    }

    /// Take `n` if it is one of the inherited keywords.
    fn take(&mut self, n: &Node) -> Result<bool, Diag> {
        match n.key.as_str() {
            "delay_loop" => self.delay_loop = Some(seconds(n)?),
            "connect_timeout" => self.connect_timeout = Some(seconds(n)?),
            "retry" | "nb_get_retry" => {
                self.retry = Some(uint(n, "a number of retries", 0, u32::MAX)?)
            }
            "inhibit_on_failure" => self.inhibit = Some(flag(n)?),
            "virtualhost" => self.virtualhost = Some(arg(n, 0, "a host name")?.to_string()),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A virtual server's settings its real servers need.
struct Vs {
    vip: Ipv4Addr,
    port: u16,
    proto: &'static str,
    method: Option<&'static str>,
    weight: u32,
    inherit: Inherit,
    /// Whether "no lb_kind" was already said.
    told_nat: bool,
}

/// One `virtual_server`; `None` when it is skipped (with a warning).
fn virtual_server(cx: &mut Cx, n: &Node) -> Result<Option<Service>, Diag> {
    let first = word(n, 0, "an address and a port (or fwmark N, group NAME)")?;
    if first == "fwmark" || first == "group" {
        let what = n.args.join(" ");
        let msg = format!(
            "virtual_server {what} skipped: dirigo's services are a protocol, an address and a port"
        );
        cx.warn(n, msg);
        return Ok(None);
    }
    let Some(vip) = address(n, first)? else {
        cx.warn(
            n,
            format!("virtual_server {first} skipped: dirigo balances IPv4"),
        );
        return Ok(None);
    };
    let vport = port(n, word(n, 1, "a port after the address")?)?;
    let Some(body) = &n.block else {
        cx.warn(
            n,
            format!("virtual_server {vip} {vport} has no block, so no real servers: skipped (keepalived ignores it too)"),
        );
        return Ok(None);
    };
    let mut vs = Vs {
        vip,
        port: vport,
        proto: "tcp",
        method: None,
        weight: 1,
        inherit: Inherit::default(),
        told_nat: false,
    };
    let mut sched: Option<String> = None;
    let mut persistent = None;
    let mut mask = None;
    let mut quorum = None;
    let mut sorry = None;
    let mut sctp = None;
    let mut flags: Vec<(&Node, &str)> = Vec::new();
    let mut reals = Vec::new();
    for c in body {
        if vs.inherit.take(c)? {
            continue;
        }
        match c.key.as_str() {
            "real_server" => reals.push(c),
            "lb_algo" | "lvs_sched" => sched = Some(scheduler(cx, c)?),
            "lb_kind" | "lvs_method" => vs.method = Some(method(cx, c)?),
            "persistence_timeout" => {
                leaf(c)?;
                persistent = Some(match c.args.first() {
                    None => PERSISTENCE_TIMEOUT,
                    Some(_) => uint(c, "a number of seconds", 1, u32::MAX)?,
                });
            }
            "persistence_granularity" => mask = Some(netmask(c)?),
            "protocol" => {
                let p = arg(c, 0, "TCP, UDP or SCTP")?;
                match p.to_ascii_uppercase().as_str() {
                    "TCP" => vs.proto = "tcp",
                    "UDP" => vs.proto = "udp",
                    "SCTP" => sctp = Some(c),
                    _ => {
                        return Err(Diag::error(
                            &c.loc,
                            format!("protocol '{p}' is not TCP, UDP or SCTP"),
                        ))
                    }
                }
            }
            "quorum" => quorum = Some(uint(c, "a weight", 1, u32::MAX)?),
            "weight" => vs.weight = uint(c, "a weight", 0, 65535)?,
            "sorry_server" => {
                leaf(c)?;
                let ip = word(c, 0, "an address and a port")?;
                match address(c, ip)? {
                    Some(a) => {
                        let p = match c.args.get(1) {
                            Some(p) => port(c, p)?,
                            None => 0,
                        };
                        sorry = Some((a, p));
                    }
                    None => cx.warn(
                        c,
                        format!("sorry_server {ip} skipped: dirigo balances IPv4"),
                    ),
                }
            }
            "sh-port" | "mh-port" | "flag-2" => {
                leaf(c)?;
                flags.push((c, "port"));
            }
            "sh-fallback" | "mh-fallback" | "flag-1" => {
                leaf(c)?;
                flags.push((c, "fallback"));
            }
            "delay_before_retry" => cx.unsupported(c, DELAY_BEFORE_RETRY),
            "warmup" => cx.unsupported(c, "dirigo checks a server from the start"),
            "alpha" => cx.unsupported(c, ALPHA),
            "hysteresis" | "quorum_up" | "quorum_down" => cx.unsupported(
                c,
                "dirigo's quorum is the minimum live weight, without scripts",
            ),
            "sorry_server_inhibit" | "sorry_server_lvs_method" => {
                cx.unsupported(c, "dirigo's sorry server is an address and a port")
            }
            "omega" | "ha_suspend" | "smtp_alert" | "snmp_name" | "persistence_engine" | "ops"
            | "hashed" | "flag-3" | "ip_family" => cx.unsupported(c, ""),
            _ => cx.unknown(c, " in virtual_server"),
        }
    }
    if let Some(c) = sctp {
        cx.warn(
            c,
            format!("virtual_server {vip} {vport} skipped: dirigo does not balance SCTP"),
        );
        return Ok(None);
    }
    let scheduler = sched.unwrap_or_else(|| SCHEDULER.into());
    let mut out_flags = Vec::new();
    for (c, f) in flags {
        if scheduler == "sh" || scheduler == "mh" {
            let name = format!("{scheduler}-{f}");
            if !out_flags.contains(&name) {
                out_flags.push(name);
            }
        } else {
            cx.warn(
                c,
                format!("{} skipped: it is for the sh and mh schedulers", c.key),
            );
        }
    }
    if mask.is_some() && persistent.is_none() {
        persistent = Some(PERSISTENCE_TIMEOUT);
    }
    let mut servers: Vec<RealServer> = Vec::new();
    for r in reals {
        let Some(s) = real_server(cx, r, &mut vs)? else {
            continue;
        };
        if let Some(first) = servers.iter().find(|o| o.addr == s.addr) {
            let msg = format!(
                "real server {} is already defined at {}: skipped",
                s.addr, first.loc
            );
            cx.warn(r, msg);
        } else {
            servers.push(s);
        }
    }
    if servers.is_empty() {
        cx.warn(
            n,
            format!("virtual_server {vip} {vport} has no real servers: skipped (keepalived ignores it too)"),
        );
        return Ok(None);
    }
    let sorry = sorry.map(|(a, p)| SocketAddrV4::new(a, if p == 0 { vport } else { p }));
    // keepalived's quorum is 1 unless set; say so where it matters
    let quorum = quorum.or(sorry.map(|_| 1));
    let mut check = None;
    if let Some(c) = &servers[0].check {
        if servers.iter().all(|s| s.check.as_ref() == Some(c)) {
            check = Some(c.clone());
            for s in &mut servers {
                s.check = None;
            }
        }
    }
    Ok(Some(Service {
        loc: n.loc.clone(),
        proto: vs.proto,
        vip,
        port: vport,
        scheduler,
        flags: out_flags,
        persistent,
        netmask: mask,
        quorum,
        sorry,
        check,
        servers,
    }))
}

const DELAY_BEFORE_RETRY: &str =
    "dirigo checks every interval and takes a server down after `fall` failures in a row";
const ALPHA: &str = "dirigo's real servers start up and go down after `fall` failed checks";

/// The checker keywords dirigo converts.
const CHECKERS: [&str; 6] = [
    "TCP_CHECK",
    "HTTP_GET",
    "SSL_GET",
    "MISC_CHECK",
    "UDP_CHECK",
    "PING_CHECK",
];

/// One `real_server` of `vs`; `None` when it is skipped (with a warning).
fn real_server(cx: &mut Cx, n: &Node, vs: &mut Vs) -> Result<Option<RealServer>, Diag> {
    let ip = word(n, 0, "an address")?;
    let Some(addr) = address(n, ip)? else {
        cx.warn(n, format!("real_server {ip} skipped: dirigo balances IPv4"));
        return Ok(None);
    };
    let rport = match n.args.get(1) {
        Some(p) => Some(port(n, p)?).filter(|&p| p != 0),
        None => None,
    }
    .unwrap_or(vs.port);
    let mut method_ = None;
    let mut weight = vs.weight;
    let (mut upper, mut lower) = (0, 0);
    let mut inherit = Inherit::default();
    let mut notify_up = None;
    let mut notify_down = None;
    let mut checkers = Vec::new();
    for c in n.children() {
        if inherit.take(c)? {
            continue;
        }
        match c.key.as_str() {
            "weight" => weight = uint(c, "a weight", 0, 65535)?,
            "lvs_method" => method_ = Some(method(cx, c)?),
            "uthreshold" => upper = uint(c, "a number of connections", 0, u32::MAX)?,
            "lthreshold" => lower = uint(c, "a number of connections", 0, u32::MAX)?,
            "notify_up" => notify_up = Some((c, command(c)?)),
            "notify_down" => notify_down = Some((c, command(c)?)),
            k if CHECKERS.contains(&k) => checkers.push(c),
            "DNS_CHECK" | "SMTP_CHECK" | "BFD_CHECK" | "FILE_CHECK" | "track_file"
            | "track_bfd" => {
                cx.unsupported(c, "dirigo checks tcp, http, https, udp, ping and exec")
            }
            "delay_before_retry" => cx.unsupported(c, DELAY_BEFORE_RETRY),
            "warmup" => cx.unsupported(c, "dirigo checks a server from the start"),
            "alpha" => cx.unsupported(c, ALPHA),
            "smtp_alert" | "snmp_name" => cx.unsupported(c, ""),
            _ => cx.unknown(c, " in real_server"),
        }
    }
    let method_ = match method_.or(vs.method) {
        Some(m) => m,
        None => {
            if !vs.told_nat {
                vs.told_nat = true;
                cx.warn(n, "no lb_kind (lvs_method): keepalived's default NAT");
            }
            "nat"
        }
    };
    let mut probe_port = None;
    let port_ = if method_ != "nat" && rport != vs.port {
        let msg = format!(
            "{} does not change the port: real server {addr} port {rport} becomes {} (a check still probes {rport})",
            method_.to_uppercase(),
            vs.port
        );
        cx.warn(n, msg);
        probe_port = Some(rport);
        vs.port
    } else {
        rport
    };
    let inherit = inherit.under(&vs.inherit);
    let mut check: Option<(Check, &Node)> = None;
    for c in checkers {
        if let Some((_, used)) = &check {
            let msg = format!(
                "{} skipped: dirigo runs one check per real server (the {} at {} is used)",
                c.key, used.key, used.loc
            );
            cx.warn(c, msg);
            continue;
        }
        if let Some(k) = checker(cx, c, &inherit, vs, probe_port)? {
            check = Some((k, c));
        }
    }
    let mut check = check.map(|(k, _)| k);
    for (which, notify) in [(true, notify_up), (false, notify_down)] {
        let Some((c, cmd)) = notify else {
            continue;
        };
        let Some(k) = &mut check else {
            cx.warn(
                c,
                format!(
                    "{} skipped: the real server has no check, so no state changes",
                    c.key
                ),
            );
            continue;
        };
        if !Path::new(&cmd[0]).is_absolute() {
            cx.warn(
                c,
                format!(
                    "{} skipped: dirigo needs an absolute path, not '{}'",
                    c.key, cmd[0]
                ),
            );
            continue;
        }
        if which {
            k.notify_up = cmd;
        } else {
            k.notify_down = cmd;
        }
    }
    Ok(Some(RealServer {
        loc: n.loc.clone(),
        addr: SocketAddrV4::new(addr, port_),
        method: method_,
        weight,
        upper,
        lower,
        check,
    }))
}

mod check;
mod values;

use check::checker;
use values::*;
