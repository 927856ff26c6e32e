//! ipvsadm 1.31's command line: short and long options, bundling (`-Ln`),
//! attached values (`-t1.2.3.4:80`, `--weight=3`), `-p`'s optional value,
//! the command/option compatibility checks and ipvsadm's error wording.

use super::defaults::{MAX_TIMEOUT, PERSISTENT_TIMEOUT};
use super::{AdmError, Command, ListCmd};
use crate::ctl::proto::BatchCmd;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec, Timeouts};
use std::net::{Ipv4Addr, ToSocketAddrs};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arg {
    No,
    Req,
    Opt,
}

/// Every option; the first group are commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum O {
    Add,
    Edit,
    Del,
    Clear,
    List,
    Zero,
    AddDest,
    EditDest,
    DelDest,
    Set,
    Help,
    Version,
    Restore,
    Save,
    Tcp,
    Udp,
    Sched,
    SchedFlags,
    Persistent,
    Netmask,
    Real,
    Masq,
    Ipip,
    Gate,
    Weight,
    UThr,
    LThr,
    Numeric,
    Conn,
    Timeout,
    Stats,
    Rate,
    Thresholds,
    PersistConn,
    NoSort,
    Sort,
    Exact,
}

const TABLE: &[(Option<char>, &str, Arg, O)] = &[
    (Some('A'), "add-service", Arg::No, O::Add),
    (Some('E'), "edit-service", Arg::No, O::Edit),
    (Some('D'), "delete-service", Arg::No, O::Del),
    (Some('C'), "clear", Arg::No, O::Clear),
    (Some('L'), "list", Arg::No, O::List),
    (Some('l'), "list", Arg::No, O::List),
    (Some('Z'), "zero", Arg::No, O::Zero),
    (Some('a'), "add-server", Arg::No, O::AddDest),
    (Some('e'), "edit-server", Arg::No, O::EditDest),
    (Some('d'), "delete-server", Arg::No, O::DelDest),
    (None, "set", Arg::No, O::Set),
    (Some('h'), "help", Arg::No, O::Help),
    (Some('v'), "version", Arg::No, O::Version),
    (Some('R'), "restore", Arg::No, O::Restore),
    (Some('S'), "save", Arg::No, O::Save),
    (Some('t'), "tcp-service", Arg::Req, O::Tcp),
    (Some('u'), "udp-service", Arg::Req, O::Udp),
    (Some('s'), "scheduler", Arg::Req, O::Sched),
    (Some('b'), "sched-flags", Arg::Req, O::SchedFlags),
    (Some('p'), "persistent", Arg::Opt, O::Persistent),
    (Some('M'), "netmask", Arg::Req, O::Netmask),
    (Some('r'), "real-server", Arg::Req, O::Real),
    (Some('m'), "masquerading", Arg::No, O::Masq),
    (Some('i'), "ipip", Arg::No, O::Ipip),
    (Some('g'), "gatewaying", Arg::No, O::Gate),
    (Some('w'), "weight", Arg::Req, O::Weight),
    (Some('x'), "u-threshold", Arg::Req, O::UThr),
    (Some('y'), "l-threshold", Arg::Req, O::LThr),
    (Some('n'), "numeric", Arg::No, O::Numeric),
    (Some('c'), "connection", Arg::No, O::Conn),
    (None, "timeout", Arg::No, O::Timeout),
    (None, "stats", Arg::No, O::Stats),
    (None, "rate", Arg::No, O::Rate),
    (None, "thresholds", Arg::No, O::Thresholds),
    (None, "persistent-conn", Arg::No, O::PersistConn),
    (None, "nosort", Arg::No, O::NoSort),
    (None, "sort", Arg::No, O::Sort),
    (Some('X'), "exact", Arg::No, O::Exact),
];

/// Option classes for the compatibility check (ipvsadm's `optnames`).
const OPTNAMES: &[(O, &str)] = &[
    (O::Numeric, "numeric"),
    (O::Conn, "connection"),
    (O::Tcp, "service-address"),
    (O::Sched, "scheduler"),
    (O::Persistent, "persistent"),
    (O::Netmask, "netmask"),
    (O::Real, "real-server"),
    (O::Gate, "forwarding-method"),
    (O::Weight, "weight"),
    (O::UThr, "u-threshold"),
    (O::LThr, "l-threshold"),
    (O::Timeout, "timeout"),
    (O::Stats, "stats"),
    (O::Rate, "rate"),
    (O::Thresholds, "thresholds"),
    (O::PersistConn, "persistent-conn"),
    (O::NoSort, "nosort"),
    (O::Exact, "exact"),
    (O::SchedFlags, "sched-flags"),
];

/// The option class of `o` (service and forwarding options share one).
fn class(o: O) -> O {
    match o {
        O::Udp => O::Tcp,
        O::Masq | O::Ipip => O::Gate,
        other => other,
    }
}

fn optname(o: O) -> &'static str {
    OPTNAMES
        .iter()
        .find(|(k, _)| *k == class(o))
        .map(|(_, n)| *n)
        .unwrap_or("?")
}

fn cmdname(c: O) -> &'static str {
    match c {
        O::Add => "add-service",
        O::Edit => "edit-service",
        O::Del => "delete-service",
        O::Clear => "flush",
        O::List => "list",
        O::AddDest => "add-server",
        O::DelDest => "delete-server",
        O::EditDest => "edit-server",
        O::Set => "set",
        O::Restore => "restore",
        O::Save => "save",
        O::Zero => "zero",
        _ => "?",
    }
}

/// `' '` allowed, `'+'` required, `'1'` allowed but exclusive with other
/// `'1'`s; anything not listed is illegal (`'x'`).
fn rule(cmd: O, opt: O) -> char {
    use O::*;
    match (cmd, class(opt)) {
        (Add | Edit, Tcp) => '+',
        (Add | Edit, Sched | Persistent | Netmask | SchedFlags) => ' ',
        (Del, Tcp) => '+',
        (List, Numeric | Stats | Rate | Thresholds | PersistConn | NoSort | Exact) => ' ',
        (List, Conn | Tcp | Timeout) => '1',
        (AddDest | EditDest, Tcp | Real) => '+',
        (AddDest | EditDest, Gate | Weight | UThr | LThr) => ' ',
        (DelDest, Tcp | Real) => '+',
        (Save, Numeric) => ' ',
        (Zero, Tcp) => ' ',
        _ => 'x',
    }
}

fn check(cmd: O, seen: &[O]) -> Result<(), AdmError> {
    for (o, name) in OPTNAMES {
        let present = seen.iter().any(|s| class(*s) == *o);
        let r = rule(cmd, *o);
        if !present && r == '+' {
            return Err(AdmError::usage(format!(
                "You need to supply the '{name}' option for the '{}' command",
                cmdname(cmd)
            )));
        }
        if present && r == 'x' {
            return Err(AdmError::usage(format!(
                "Illegal '{name}' option with the '{}' command",
                cmdname(cmd)
            )));
        }
    }
    let mut last: Option<&str> = None;
    for (o, name) in OPTNAMES {
        if rule(cmd, *o) == '1' && seen.iter().any(|s| class(*s) == *o) {
            if let Some(l) = last {
                return Err(AdmError::usage(format!(
                    "The option '{name}' conflicts with the '{l}' option in the '{}' command",
                    cmdname(cmd)
                )));
            }
            last = Some(name);
        }
    }
    Ok(())
}

/// Split `argv[1..]` into (option, value) pairs and positional words.
/// Options with their values, and positional words.
type Tokens = (Vec<(O, Option<String>)>, Vec<String>);

fn tokenize(args: &[String]) -> Result<Tokens, AdmError> {
    let mut opts = Vec::new();
    let mut pos = Vec::new();
    let mut i = 1;
    let next_val = |i: &mut usize, kind: Arg, name: &str| -> Result<Option<String>, AdmError> {
        match (kind, args.get(*i + 1)) {
            (Arg::Req, Some(v)) => {
                *i += 1;
                Ok(Some(v.clone()))
            }
            (Arg::Req, None) => Err(AdmError::usage(format!(
                "{name}: missing argument\nTry `ipvsadm -h' or 'ipvsadm --help' for more information."
            ))),
            (Arg::Opt, Some(v)) if !v.starts_with('-') => {
                *i += 1;
                Ok(Some(v.clone()))
            }
            _ => Ok(None),
        }
    };
    while i < args.len() {
        let a = &args[i];
        if let Some(long) = a.strip_prefix("--") {
            if long.is_empty() {
                pos.extend(args[i + 1..].iter().cloned());
                break;
            }
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let (_, _, kind, o) = TABLE
                .iter()
                .find(|(_, l, _, _)| *l == name)
                .ok_or_else(|| AdmError::usage(format!("invalid option `{a}'")))?;
            let val = match (kind, inline) {
                (Arg::No, Some(_)) => {
                    return Err(AdmError::usage(format!(
                        "option `--{name}' takes no argument"
                    )))
                }
                (_, Some(v)) => Some(v),
                (k, None) => next_val(&mut i, *k, a)?,
            };
            opts.push((*o, val));
        } else if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                let (_, _, kind, o) = TABLE
                    .iter()
                    .find(|(s, _, _, _)| *s == Some(c))
                    .ok_or_else(|| AdmError::usage(format!("invalid option `-{c}'")))?;
                let rest: String = chars[j + 1..].iter().collect();
                if *kind != Arg::No && !rest.is_empty() {
                    opts.push((*o, Some(rest)));
                    break;
                }
                let val = if *kind == Arg::No {
                    None
                } else {
                    next_val(&mut i, *kind, &format!("-{c}"))?
                };
                opts.push((*o, val));
                j += 1;
            }
        } else {
            pos.push(a.clone());
        }
        i += 1;
    }
    Ok((opts, pos))
}

fn number(s: &str, min: u64, max: u64) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<u64>().ok().filter(|n| (min..=max).contains(n))
}

fn resolve(host: &str) -> Option<Ipv4Addr> {
    if let Ok(a) = host.parse::<Ipv4Addr>() {
        return Some(a);
    }
    // Dotted digits that are not an address are an error, not a name to
    // look up (no DNS round trip for a typo).
    if host.is_empty()
        || host.starts_with('[')
        || host.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    {
        return None;
    }
    (host, 0u16)
        .to_socket_addrs()
        .ok()?
        .find_map(|sa| match sa {
            std::net::SocketAddr::V4(v4) => Some(*v4.ip()),
            _ => None,
        })
}

/// `host[:port]` as ipvsadm's `parse_service`; the port is None if absent.
/// The port may be a number or a service name from `/etc/services`.
pub fn parse_addr_port(s: &str, proto: Proto) -> Option<(Ipv4Addr, Option<u16>)> {
    if s.is_empty() || s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) => {
            let port = match number(p, 0, 65535) {
                Some(n) => n as u16,
                None => port_by_name(p, proto)?,
            };
            (h, Some(port))
        }
        None => (s, None),
    };
    Some((resolve(host)?, port))
}

/// Look a service name up in `/etc/services`.
fn port_by_name(name: &str, proto: Proto) -> Option<u16> {
    let text = std::fs::read_to_string("/etc/services").ok()?;
    lookup_service(&text, name, proto)
}

/// Find `name` (or an alias) for `proto` in `/etc/services`-format text.
pub fn lookup_service(text: &str, name: &str, proto: Proto) -> Option<u16> {
    if name.is_empty() {
        return None;
    }
    let want = match proto {
        Proto::Tcp => "tcp",
        Proto::Udp => "udp",
    };
    text.lines().find_map(|line| {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        let first = words.next()?;
        let (port, p) = words.next()?.split_once('/')?;
        if p != want || (first != name && !words.any(|w| w == name)) {
            return None;
        }
        port.parse().ok()
    })
}

fn parse_sched_flags(sched: SchedKind, arg: &str) -> Result<SchedFlags, AdmError> {
    let mut f = SchedFlags::default();
    for flag in arg.split(',') {
        let (want, port) = match flag {
            "sh-fallback" => (SchedKind::Sh, false),
            "sh-port" => (SchedKind::Sh, true),
            "mh-fallback" => (SchedKind::Mh, false),
            "mh-port" => (SchedKind::Mh, true),
            _ => return Err(AdmError::usage(format!("invalid scheduler flag `{flag}'"))),
        };
        if sched != want {
            return Err(AdmError::usage(format!(
                "incompatible scheduler flag `{flag}'"
            )));
        }
        if port {
            f.port = true;
        } else {
            f.fallback = true;
        }
    }
    Ok(f)
}

fn timeout(s: &str, min: u64) -> Result<u32, AdmError> {
    number(s, min, u64::from(MAX_TIMEOUT))
        .map(|n| n as u32)
        .ok_or_else(|| AdmError::usage(format!("invalid timeout value `{s}' specified")))
}

/// Parse a full argv (`args[0]` is the program name) into a [`Command`].
pub fn parse(args: &[String]) -> Result<Command, AdmError> {
    if args.len() <= 1 {
        return Ok(Command::List(ListCmd::default()));
    }
    let (opts, pos) = tokenize(args)?;
    let mut cmd: Option<O> = None;
    let mut seen: Vec<O> = Vec::new();
    let mut svc: Option<(Proto, Ipv4Addr, Option<u16>)> = None;
    let mut sched: Option<SchedKind> = None;
    let mut flags_arg: Option<String> = None;
    let mut persistent: Option<u32> = None;
    let mut netmask = Ipv4Addr::BROADCAST;
    let mut real_arg: Option<String> = None;
    let mut method = Method::Dr;
    let mut weight = 1u32;
    let (mut upper, mut lower) = (0u32, 0u32);
    let mut list = ListCmd::default();
    for (o, val) in opts {
        let v = val.unwrap_or_default();
        match o {
            O::Add
            | O::Edit
            | O::Del
            | O::Clear
            | O::List
            | O::Zero
            | O::AddDest
            | O::EditDest
            | O::DelDest
            | O::Set
            | O::Restore
            | O::Save => {
                if cmd.is_some() {
                    return Err(AdmError::usage("multiple commands specified"));
                }
                cmd = Some(o);
                continue;
            }
            O::Help => return Ok(Command::Help),
            O::Version => return Ok(Command::Version),
            O::Sort => continue,
            _ => {}
        }
        if seen.iter().any(|s| class(*s) == class(o)) {
            return Err(AdmError::usage(format!(
                "multiple '{}' options specified",
                optname(o)
            )));
        }
        seen.push(o);
        match o {
            O::Tcp | O::Udp => {
                let proto = if o == O::Tcp { Proto::Tcp } else { Proto::Udp };
                let (a, p) = parse_addr_port(&v, proto).ok_or_else(|| {
                    AdmError::usage("illegal virtual server address[:port] specified")
                })?;
                svc = Some((proto, a, p));
            }
            O::Sched => {
                sched = Some(
                    v.parse()
                        .map_err(|_| AdmError::usage("Scheduler not found"))?,
                )
            }
            O::SchedFlags => flags_arg = Some(v),
            O::Persistent => {
                persistent = Some(if v.is_empty() {
                    PERSISTENT_TIMEOUT
                } else {
                    timeout(&v, 1)?
                })
            }
            O::Netmask => {
                netmask = v.parse().map_err(|_| {
                    AdmError::usage("illegal virtual server persistent mask specified")
                })?
            }
            O::Real => real_arg = Some(v),
            O::Masq => method = Method::Nat,
            O::Ipip => method = Method::Tun,
            O::Gate => method = Method::Dr,
            O::Weight => {
                weight = number(&v, 0, 65535)
                    .ok_or_else(|| AdmError::usage("illegal weight specified"))?
                    as u32
            }
            O::UThr => {
                upper = number(&v, 0, i32::MAX as u64)
                    .ok_or_else(|| AdmError::usage("illegal u_threshold specified"))?
                    as u32
            }
            O::LThr => {
                lower = number(&v, 0, i32::MAX as u64)
                    .ok_or_else(|| AdmError::usage("illegal l_threshold specified"))?
                    as u32
            }
            O::Numeric => list.numeric = true,
            O::Conn => list.conns = true,
            O::Timeout => list.timeout = true,
            O::Stats => list.stats = true,
            O::Rate => list.rate = true,
            O::Thresholds => list.thresholds = true,
            O::PersistConn => list.persist_conn = true,
            O::NoSort => list.nosort = true,
            O::Exact => list.exact = true,
            _ => {}
        }
    }
    let cmd = cmd.ok_or_else(|| {
        AdmError::usage("Try `ipvsadm -h' or 'ipvsadm --help' for more information.")
    })?;
    if cmd == O::Set {
        if pos.len() < 3 {
            return Err(AdmError::usage("--set option requires 3 timeout values"));
        }
    } else if let Some(p) = pos.first() {
        return Err(AdmError::usage(format!("unexpected argument {p}")));
    }
    if pos.len() > 3 {
        return Err(AdmError::usage(format!("unexpected argument {}", pos[3])));
    }
    check(cmd, &seen)?;

    let real =
        match &real_arg {
            Some(r) => {
                let proto = svc.map_or(Proto::Tcp, |s| s.0);
                Some(parse_addr_port(r, proto).ok_or_else(|| {
                    AdmError::usage("illegal real server address[:port] specified")
                })?)
            }
            None => None,
        };
    let key = svc.map(|(proto, vip, port)| ServiceKey {
        proto,
        vip,
        port: port.unwrap_or(0),
    });
    // check() guarantees the service (and real server) where required.
    let need_key = || key.ok_or_else(|| AdmError::usage("no service specified"));
    Ok(match cmd {
        O::Add | O::Edit => {
            let key = need_key()?;
            if key.port == 0 && persistent.is_none() {
                return Err(AdmError::usage(
                    "Zero port specified for non-persistent service",
                ));
            }
            let sched = sched.unwrap_or(SchedKind::Wlc);
            let flags = match &flags_arg {
                Some(f) => parse_sched_flags(sched, f)?,
                None => SchedFlags::default(),
            };
            let spec = ServiceSpec {
                key,
                sched,
                flags,
                persistent,
                netmask,
            };
            Command::Mutate(if cmd == O::Add {
                BatchCmd::AddService { service: spec }
            } else {
                BatchCmd::EditService { service: spec }
            })
        }
        O::Del => Command::Mutate(BatchCmd::DelService { key: need_key()? }),
        O::Clear => Command::Mutate(BatchCmd::Clear),
        O::AddDest | O::EditDest | O::DelDest => {
            let key = need_key()?;
            let (addr, rport) = real.ok_or_else(|| AdmError::usage("no real server specified"))?;
            let mut port = rport.unwrap_or(key.port);
            if method != Method::Nat {
                port = key.port;
            }
            let dkey = DestKey { addr, port };
            let spec = DestSpec {
                key: dkey,
                method,
                weight,
                upper,
                lower,
            };
            Command::Mutate(match cmd {
                O::AddDest => BatchCmd::AddDest {
                    service: key,
                    dest: spec,
                },
                O::EditDest => BatchCmd::EditDest {
                    service: key,
                    dest: spec,
                },
                _ => BatchCmd::DelDest {
                    service: key,
                    dest: dkey,
                },
            })
        }
        O::List => {
            if (list.conns || list.timeout)
                && (list.stats || list.rate || list.thresholds || list.persist_conn)
            {
                return Err(AdmError::usage("options conflicts in the list command"));
            }
            list.service = key;
            Command::List(list)
        }
        O::Zero => Command::Mutate(BatchCmd::Zero { service: key }),
        O::Set => Command::Mutate(BatchCmd::SetTimeouts {
            timeouts: Timeouts {
                tcp: timeout(&pos[0], 0)?,
                tcpfin: timeout(&pos[1], 0)?,
                udp: timeout(&pos[2], 0)?,
            },
        }),
        O::Restore => Command::Restore,
        O::Save => Command::Save {
            numeric: list.numeric,
        },
        _ => return Err(AdmError::usage("unknown command")),
    })
}
