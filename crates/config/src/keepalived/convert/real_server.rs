//! keepalived's `real_server` blocks.

use super::check::checker;
use super::cx::{Cx, ALPHA};
use super::inherit::{Inherit, Vs};
use super::model::{Check, RealServer, Tunnel};
use super::values::{address, command, method, port, uint, word};
use crate::keepalived::diag::Diag;
use crate::keepalived::parse::Node;
use std::net::SocketAddr;
use std::path::Path;

/// The checker keywords dirigo converts.
const CHECKERS: [&str; 9] = [
    "TCP_CHECK",
    "HTTP_GET",
    "SSL_GET",
    "MISC_CHECK",
    "UDP_CHECK",
    "PING_CHECK",
    "SMTP_CHECK",
    "DNS_CHECK",
    "FILE_CHECK",
];

/// A `notify_up` or `notify_down`: where it is and its command.
type Notify<'n> = Option<(&'n Node, Vec<String>)>;

/// The keywords of a `real_server` block, as read.
struct RsKeys<'n> {
    method: Option<(&'static str, Tunnel)>,
    weight: u32,
    upper: u32,
    lower: u32,
    inherit: Inherit,
    notify_up: Notify<'n>,
    notify_down: Notify<'n>,
    checkers: Vec<&'n Node>,
}

/// One `real_server` of `vs`; `None` when it is skipped (with a warning).
pub(super) fn real_server(cx: &mut Cx, n: &Node, vs: &mut Vs) -> Result<Option<RealServer>, Diag> {
    let ip = word(n, 0, "an address")?;
    let addr = address(n, ip)?;
    // (an fwmark service has no address: its servers say its family)
    if !vs.vip.is_unspecified() && addr.is_ipv4() != vs.vip.is_ipv4() {
        let msg = format!(
            "real_server {ip} skipped: not of the family of virtual server {}",
            vs.vip
        );
        cx.warn(n, msg);
        return Ok(None);
    }
    let rport = match n.args.get(1) {
        Some(p) => Some(port(n, p)?).filter(|&p| p != 0),
        None => None,
    }
    .unwrap_or(vs.port);
    let k = RsKeys::read(cx, n, vs.weight)?;
    let (method_, tunnel) = server_method(cx, n, k.method, vs);
    let mut probe_port = None;
    let port_ = if method_ != "nat" && rport != vs.port {
        // (a service without a port, an fwmark one, keeps the client's
        // port with DR and TUN: nothing changes, nothing to say)
        if vs.port != 0 {
            let msg = format!(
                "{} does not change the port: real server {addr} port {rport} becomes {} (a check still probes {rport})",
                method_.to_uppercase(),
                vs.port
            );
            cx.warn(n, msg);
        }
        probe_port = Some(rport);
        vs.port
    } else {
        rport
    };
    let inherit = k.inherit.under(&vs.inherit);
    let mut check = first_check(cx, k.checkers, &inherit, vs, probe_port)?;
    notify(cx, &mut check, k.notify_up, k.notify_down);
    Ok(Some(RealServer {
        loc: n.loc.clone(),
        addr: SocketAddr::new(addr, port_),
        method: method_,
        tunnel,
        weight: k.weight,
        upper: k.upper,
        lower: k.lower,
        check,
    }))
}

impl<'n> RsKeys<'n> {
    /// Read the block of `n`; `weight` is the virtual server's.
    fn read(cx: &mut Cx, n: &'n Node, weight: u32) -> Result<Self, Diag> {
        let mut k = RsKeys {
            method: None,
            weight,
            upper: 0,
            lower: 0,
            inherit: Inherit::default(),
            notify_up: None,
            notify_down: None,
            checkers: Vec::new(),
        };
        for c in n.children() {
            if !k.inherit.take(c)? {
                k.take(cx, c)?;
            }
        }
        Ok(k)
    }

    /// Take one keyword of the block (the inherited ones aside).
    fn take(&mut self, cx: &mut Cx, c: &'n Node) -> Result<(), Diag> {
        match c.key.as_str() {
            "weight" => self.weight = uint(c, "a weight", 0, 65535)?,
            "lvs_method" => self.method = Some(method(cx, c)?),
            "uthreshold" => self.upper = uint(c, "a number of connections", 0, u32::MAX)?,
            "lthreshold" => self.lower = uint(c, "a number of connections", 0, u32::MAX)?,
            "notify_up" => self.notify_up = Some((c, command(c)?)),
            "notify_down" => self.notify_down = Some((c, command(c)?)),
            k if CHECKERS.contains(&k) => self.checkers.push(c),
            "BFD_CHECK" | "track_bfd" => cx.unsupported(c, "dirigo does not run BFD"),
            "warmup" => cx.unsupported(c, "dirigo checks a server from the start"),
            "alpha" => cx.unsupported(c, ALPHA),
            "smtp_alert" | "snmp_name" => cx.unsupported(c, ""),
            _ => cx.unknown(c, " in real_server"),
        }
        Ok(())
    }
}

/// The server's method (with its tunnel), else the virtual server's, else
/// keepalived's NAT (said once per virtual server).
fn server_method(
    cx: &mut Cx,
    n: &Node,
    own: Option<(&'static str, Tunnel)>,
    vs: &mut Vs,
) -> (&'static str, Tunnel) {
    match own.or(vs.method) {
        Some(m) => m,
        None => {
            if !vs.told_nat {
                vs.told_nat = true;
                cx.warn(n, "no lb_kind (lvs_method): keepalived's default NAT");
            }
            ("nat", Tunnel::default())
        }
    }
}

/// The first checker that converts; a warning for each after it.
fn first_check(
    cx: &mut Cx,
    checkers: Vec<&Node>,
    inherit: &Inherit,
    vs: &Vs,
    probe_port: Option<u16>,
) -> Result<Option<Check>, Diag> {
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
        if let Some(k) = checker(cx, c, inherit, vs, probe_port)? {
            check = Some((k, c));
        }
    }
    Ok(check.map(|(k, _)| k))
}

/// `notify_up` and `notify_down` onto the check; a warning for each that
/// cannot be.
fn notify(cx: &mut Cx, check: &mut Option<Check>, up: Notify, down: Notify) {
    for (which, notify) in [(true, up), (false, down)] {
        let Some((c, cmd)) = notify else {
            continue;
        };
        let Some(k) = check else {
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
}
