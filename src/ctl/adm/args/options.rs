//! ipvsadm's options: the table of short and long names, the tokenizer
//! (bundling, attached values, `-p`'s optional value) and the
//! command/option compatibility rules with ipvsadm's wording.

use crate::ctl::adm::AdmError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arg {
    No,
    Req,
    Opt,
}

/// Every option; the first group are commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum O {
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

pub(super) const TABLE: &[(Option<char>, &str, Arg, O)] = &[
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
pub(super) const OPTNAMES: &[(O, &str)] = &[
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
pub(super) fn class(o: O) -> O {
    match o {
        O::Udp => O::Tcp,
        O::Masq | O::Ipip => O::Gate,
        other => other,
    }
}

pub(super) fn optname(o: O) -> &'static str {
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

pub(super) fn check(cmd: O, seen: &[O]) -> Result<(), AdmError> {
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
pub(super) type Tokens = (Vec<(O, Option<String>)>, Vec<String>);

pub(super) fn tokenize(args: &[String]) -> Result<Tokens, AdmError> {
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
