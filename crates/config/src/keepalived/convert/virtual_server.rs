//! keepalived's `virtual_server` blocks.

use super::cx::{Cx, ALPHA};
use super::group::{keys as group_keys, GroupKeys};
use super::inherit::{Inherit, Vs};
use super::model::{Check, RealServer, Service, PERSISTENCE_TIMEOUT, SCHEDULER};
use super::real_server::real_server;
use super::values::{address, arg, leaf, method, netmask, port, scheduler, uint, word};
use crate::keepalived::diag::Diag;
use crate::keepalived::parse::Node;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The keywords of a `virtual_server` block, as read.
struct VsKeys<'n> {
    sched: Option<String>,
    persistent: Option<u32>,
    mask: Option<Ipv4Addr>,
    quorum: Option<u32>,
    sorry: Option<(IpAddr, u16)>,
    sctp: Option<&'n Node>,
    flags: Vec<(&'n Node, &'static str)>,
    ops: Option<&'n Node>,
    reals: Vec<&'n Node>,
}

/// One `virtual_server`; `None` when it is skipped (with a warning).
pub(super) fn virtual_server(cx: &mut Cx, n: &Node) -> Result<Option<Service>, Diag> {
    let Some(Head { keys, group, body }) = head(cx, n)? else {
        return Ok(None);
    };
    let (vip, vport, fwmark) = (keys.vip, keys.port, keys.fwmark);
    let name = match (&group, fwmark) {
        (Some(g), _) => format!("group {g}"),
        (None, Some(m)) => format!("fwmark {m}"),
        (None, None) => format!("{vip} {vport}"),
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
    let mut k = VsKeys {
        sched: None,
        persistent: None,
        mask: None,
        quorum: None,
        sorry: None,
        sctp: None,
        flags: Vec::new(),
        ops: None,
        reals: Vec::new(),
    };
    for c in body {
        if !vs.inherit.take(c)? {
            k.take(cx, c, &mut vs)?;
        }
    }
    if let Some(c) = k.sctp {
        cx.warn(
            c,
            format!("virtual_server {name} skipped: dirigo does not balance SCTP"),
        );
        return Ok(None);
    }
    let scheduler = k.sched.unwrap_or_else(|| SCHEDULER.into());
    let out_flags = sched_flags(cx, &scheduler, k.flags);
    let mut persistent = k.persistent;
    if k.mask.is_some() && persistent.is_none() {
        persistent = Some(PERSISTENCE_TIMEOUT);
    }
    let mut servers = real_servers(cx, k.reals, &mut vs)?;
    if servers.is_empty() {
        cx.warn(
            n,
            format!(
                "virtual_server {name} has no real servers: skipped (keepalived ignores it too)"
            ),
        );
        return Ok(None);
    }
    let sorry = k
        .sorry
        .map(|(a, p)| SocketAddr::new(a, if p == 0 { vport } else { p }));
    // keepalived's quorum is 1 unless set; say so where it matters
    let quorum = k.quorum.or(sorry.map(|_| 1));
    let check = common_check(&mut servers);
    let ops = k
        .ops
        .is_some_and(|c| ops(cx, c, vs.proto, persistent, &servers));
    if let Some(m) = fwmark {
        cx.warn(
            n,
            format!(
                "virtual_server fwmark {m}: keepalived takes the mark from iptables (-t mangle ... -j MARK), \
                 which dirigo does not read: add [[mark]] rules that give mark {m} to the service's \
                 packets (docs/CONFIG.md, [[mark]]); until then the service receives nothing"
            ),
        );
    }
    Ok(Some(Service {
        loc: n.loc.clone(),
        members: keys.members,
        group,
        fwmark,
        proto: vs.proto,
        vip,
        port: vport,
        scheduler,
        flags: out_flags,
        persistent,
        netmask: k.mask,
        quorum,
        sorry,
        ops,
        check,
        servers,
    }))
}

/// A `virtual_server`'s keys (an fwmark service: address 0.0.0.0, port
/// 0; a group's: its first key, and its members) and block.
struct Head<'n> {
    keys: GroupKeys,
    group: Option<String>,
    body: &'n [Node],
}

/// The keys and block of a `virtual_server`; `None` when it is skipped
/// (with a warning).
fn head<'n>(cx: &mut Cx, n: &'n Node) -> Result<Option<Head<'n>>, Diag> {
    let first = word(n, 0, "an address and a port (or fwmark N, group NAME)")?;
    let (keys, group) = if first == "fwmark" {
        let m = word(n, 1, "a mark after fwmark")?;
        let mark = m.parse::<u32>().ok().filter(|m| *m != 0).ok_or_else(|| {
            Diag::error(
                &n.loc,
                format!("fwmark '{m}' is not a mark (1..4294967295)"),
            )
        })?;
        let keys = GroupKeys {
            vip: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: 0,
            fwmark: Some(mark),
            members: Vec::new(),
        };
        (keys, None)
    } else if first == "group" {
        let name = word(n, 1, "a group name after group")?;
        let Some(entries) = cx.groups.get(name).cloned() else {
            cx.warn(
                n,
                format!("virtual_server group {name} skipped: no virtual_server_group {name}"),
            );
            return Ok(None);
        };
        let Some(keys) = group_keys(cx, n, name, &entries) else {
            return Ok(None);
        };
        (keys, Some(name.to_string()))
    } else {
        let vip = address(n, first)?;
        let vport = port(n, word(n, 1, "a port after the address")?)?;
        let keys = GroupKeys {
            vip,
            port: vport,
            fwmark: None,
            members: Vec::new(),
        };
        (keys, None)
    };
    let Some(body) = &n.block else {
        cx.warn(
            n,
            format!(
                "virtual_server {} has no block, so no real servers: skipped (keepalived ignores it too)",
                n.args.join(" ")
            ),
        );
        return Ok(None);
    };
    Ok(Some(Head {
        keys,
        group,
        body: body.as_slice(),
    }))
}

impl<'n> VsKeys<'n> {
    /// Take one keyword of the block (the inherited ones aside).
    fn take(&mut self, cx: &mut Cx, c: &'n Node, vs: &mut Vs) -> Result<(), Diag> {
        match c.key.as_str() {
            "real_server" => self.reals.push(c),
            "lb_algo" | "lvs_sched" => self.sched = Some(scheduler(cx, c)?),
            "lb_kind" | "lvs_method" => vs.method = Some(method(cx, c)?),
            "persistence_timeout" => {
                leaf(c)?;
                self.persistent = Some(match c.args.first() {
                    None => PERSISTENCE_TIMEOUT,
                    Some(_) => uint(c, "a number of seconds", 1, u32::MAX)?,
                });
            }
            "persistence_granularity" => self.mask = Some(netmask(c)?),
            "protocol" => self.protocol(c, vs)?,
            "quorum" => self.quorum = Some(uint(c, "a weight", 1, u32::MAX)?),
            "weight" => vs.weight = uint(c, "a weight", 0, 65535)?,
            "sorry_server" => self.sorry_server(cx, c)?,
            "sh-port" | "mh-port" | "flag-2" => {
                leaf(c)?;
                self.flags.push((c, "port"));
            }
            "sh-fallback" | "mh-fallback" | "flag-1" => {
                leaf(c)?;
                self.flags.push((c, "fallback"));
            }
            "ops" => {
                leaf(c)?;
                self.ops = Some(c);
            }
            _ => unsupported(cx, c),
        }
        Ok(())
    }

    /// `protocol TCP|UDP|SCTP`.
    fn protocol(&mut self, c: &'n Node, vs: &mut Vs) -> Result<(), Diag> {
        let p = arg(c, 0, "TCP, UDP or SCTP")?;
        match p.to_ascii_uppercase().as_str() {
            "TCP" => vs.proto = "tcp",
            "UDP" => vs.proto = "udp",
            "SCTP" => self.sctp = Some(c),
            _ => {
                return Err(Diag::error(
                    &c.loc,
                    format!("protocol '{p}' is not TCP, UDP or SCTP"),
                ))
            }
        }
        Ok(())
    }

    /// `sorry_server ADDRESS [PORT]` (port 0: the service's).
    fn sorry_server(&mut self, cx: &mut Cx, c: &Node) -> Result<(), Diag> {
        leaf(c)?;
        let ip = word(c, 0, "an address and a port")?;
        let a = address(c, ip)?;
        let p = match c.args.get(1) {
            Some(p) => port(c, p)?,
            None => 0,
        };
        let _ = cx;
        self.sorry = Some((a, p));
        Ok(())
    }
}

/// A `virtual_server` keyword dirigo does not take: one warning.
fn unsupported(cx: &mut Cx, c: &Node) {
    match c.key.as_str() {
        "warmup" => cx.unsupported(c, "dirigo checks a server from the start"),
        "alpha" => cx.unsupported(c, ALPHA),
        "hysteresis" | "quorum_up" | "quorum_down" => cx.unsupported(
            c,
            "dirigo's quorum is the minimum live weight, without scripts",
        ),
        "sorry_server_inhibit" | "sorry_server_lvs_method" => {
            cx.unsupported(c, "dirigo's sorry server is an address and a port")
        }
        "omega" | "ha_suspend" | "smtp_alert" | "snmp_name" | "persistence_engine" | "hashed"
        | "flag-3" | "ip_family" => cx.unsupported(c, ""),
        _ => cx.unknown(c, " in virtual_server"),
    }
}

/// Whether `ops` carries over: dirigo's one-packet scheduling is for UDP
/// services without persistence whose real servers are DR or TUN (its
/// config refuses the rest); otherwise a warning says why it is dropped.
fn ops(
    cx: &mut Cx,
    c: &Node,
    proto: &str,
    persistent: Option<u32>,
    servers: &[RealServer],
) -> bool {
    let why = if proto != "udp" {
        "one-packet scheduling is for UDP services (IPVS ignores it for TCP)"
    } else if persistent.is_some() {
        "dirigo's one-packet scheduling keeps no state, and persistence is state"
    } else if servers.iter().any(|s| s.method == "nat") {
        "dirigo's one-packet scheduling needs DR or TUN real servers: a NAT reply needs a connection entry"
    } else {
        return true;
    };
    cx.warn(c, format!("ops skipped: {why}"));
    false
}

/// The sh and mh flags (`sh-port`, ...), once each; a warning for others'.
fn sched_flags(cx: &mut Cx, scheduler: &str, flags: Vec<(&Node, &str)>) -> Vec<String> {
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
    out_flags
}

/// The real servers, each address once.
fn real_servers(cx: &mut Cx, reals: Vec<&Node>, vs: &mut Vs) -> Result<Vec<RealServer>, Diag> {
    let mut servers: Vec<RealServer> = Vec::new();
    for r in reals {
        let Some(s) = real_server(cx, r, vs)? else {
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
    Ok(servers)
}

/// The check of every server when they all have the same one (taken off
/// them).
fn common_check(servers: &mut [RealServer]) -> Option<Check> {
    let c = servers.first()?.check.clone()?;
    if !servers.iter().all(|s| s.check.as_ref() == Some(&c)) {
        return None;
    }
    for s in servers.iter_mut() {
        s.check = None;
    }
    Some(c)
}
