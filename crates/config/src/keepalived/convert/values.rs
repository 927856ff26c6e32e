//! Reading keepalived's values: words, numbers, addresses, ports,
//! schedulers, methods.

use super::cx::Cx;
use super::model::Tunnel;
use crate::keepalived::diag::Diag;
use crate::keepalived::parse::Node;
use std::net::{IpAddr, Ipv4Addr};

/// The `i`-th word after the keyword, for a statement without a block.
pub(super) fn arg<'n>(n: &'n Node, i: usize, what: &str) -> Result<&'n str, Diag> {
    leaf(n)?;
    word(n, i, what)
}

/// The `i`-th word after the keyword.
pub(super) fn word<'n>(n: &'n Node, i: usize, what: &str) -> Result<&'n str, Diag> {
    n.args
        .get(i)
        .map(String::as_str)
        .ok_or_else(|| Diag::error(&n.loc, format!("{} needs {what}", n.key)))
}

/// Refuse a block after a keyword that takes none.
pub(super) fn leaf(n: &Node) -> Result<(), Diag> {
    match n.block {
        Some(_) => Err(Diag::error(
            &n.loc,
            format!("{} takes no {{ }} block", n.key),
        )),
        None => Ok(()),
    }
}

/// The first word as an integer in `min..=max`.
pub(super) fn uint(n: &Node, what: &str, min: u32, max: u32) -> Result<u32, Diag> {
    let s = arg(n, 0, what)?;
    s.parse::<u32>()
        .ok()
        .filter(|v| (min..=max).contains(v))
        .ok_or_else(|| {
            Diag::error(
                &n.loc,
                format!("{} '{s}' is not {what} in {min}..={max}", n.key),
            )
        })
}

/// The first word as seconds (keepalived's timers take fractions).
pub(super) fn seconds(n: &Node) -> Result<f64, Diag> {
    let s = arg(n, 0, "a number of seconds")?;
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= 86_400.0)
        .ok_or_else(|| {
            Diag::error(
                &n.loc,
                format!("{} '{s}' is not a number of seconds in (0, 86400]", n.key),
            )
        })
}

/// A keyword that is a switch, with keepalived's optional boolean.
pub(super) fn flag(n: &Node) -> Result<bool, Diag> {
    leaf(n)?;
    match n.args.first().map(|s| s.to_ascii_lowercase()).as_deref() {
        None | Some("true" | "yes" | "on") => Ok(true),
        Some("false" | "no" | "off") => Ok(false),
        Some(other) => Err(Diag::error(
            &n.loc,
            format!("{} '{other}' is not true or false", n.key),
        )),
    }
}

/// An address, IPv4 or IPv6; anything else is an error.
pub(super) fn address(n: &Node, s: &str) -> Result<IpAddr, Diag> {
    s.parse::<IpAddr>()
        .map_err(|_| Diag::error(&n.loc, format!("{}: '{s}' is not an IP address", n.key)))
}

/// A port number.
pub(super) fn port(n: &Node, s: &str) -> Result<u16, Diag> {
    s.parse()
        .map_err(|_| Diag::error(&n.loc, format!("{}: '{s}' is not a port (0..65535)", n.key)))
}

/// A command line (`misc_path`, `notify_up`): the words, split again on
/// whitespace outside '...' and "..." (a quoted keepalived word holds the
/// whole line).
pub(super) fn command(n: &Node) -> Result<Vec<String>, Diag> {
    arg(n, 0, "a command")?;
    let line = n.args.join(" ");
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => out.extend(cur.take()),
            (None, c) => cur.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(cur);
    if quote.is_some() {
        return Err(Diag::error(
            &n.loc,
            format!("{}: unterminated quote in '{line}'", n.key),
        ));
    }
    Ok(out)
}

/// `lb_algo` / `lvs_sched`.
pub(super) fn scheduler(cx: &mut Cx, n: &Node) -> Result<String, Diag> {
    let s = arg(n, 0, "a scheduler name")?;
    match s {
        "rr" | "wrr" | "lc" | "wlc" | "sh" | "dh" | "mh" | "fo" | "sed" | "nq" => Ok(s.into()),
        "lblc" | "lblcr" | "ovf" | "twos" => {
            cx.warn(n, format!("scheduler {s} is not dirigo's: wlc instead"));
            Ok("wlc".into())
        }
        _ => Err(Diag::error(
            &n.loc,
            format!(
                "{} '{s}' is not an IPVS scheduler (rr wrr lc wlc lblc lblcr dh sh mh fo ovf sed nq twos)",
                n.key
            ),
        )),
    }
}

/// `lb_kind` / `lvs_method`: NAT, DR or TUN, and TUN's tunnel options as
/// keepalived reads them (check_parser.c): `type ipip|gue|gre`, `port N`
/// (GUE's, required with gue and only there), `nocsum|csum|remcsum` (not
/// with ipip; remcsum not with gre). Tunnel options on NAT or DR are
/// skipped with a warning (keepalived reads them; IPVS ignores them).
pub(super) fn method(cx: &mut Cx, n: &Node) -> Result<(&'static str, Tunnel), Diag> {
    let s = arg(n, 0, "NAT, DR or TUN")?;
    let m = match s.to_ascii_uppercase().as_str() {
        "NAT" => "nat",
        "DR" => "dr",
        "TUN" => "tun",
        _ => {
            return Err(Diag::error(
                &n.loc,
                format!("{} '{s}' is not NAT, DR or TUN", n.key),
            ))
        }
    };
    let rest = &n.args[1..];
    let t = tunnel(n, rest)?;
    if m != "tun" && !rest.is_empty() {
        let msg = format!(
            "{} options '{}' skipped: tunnel options are for TUN",
            n.key,
            rest.join(" ")
        );
        cx.warn(n, msg);
        return Ok((m, Tunnel::default()));
    }
    Ok((m, t))
}

/// The tunnel options after `lvs_method TUN`.
fn tunnel(n: &Node, opts: &[String]) -> Result<Tunnel, Diag> {
    let err = |m: String| Diag::error(&n.loc, format!("{}: {m}", n.key));
    let mut t = Tunnel::default();
    let mut i = 0;
    while i < opts.len() {
        let o = opts[i].as_str();
        let value = || {
            opts.get(i + 1)
                .map(String::as_str)
                .ok_or_else(|| err(format!("'{o}' needs a value")))
        };
        match o {
            "type" => {
                t.kind = match value()? {
                    "ipip" => "ipip",
                    "gue" => "gue",
                    "gre" => "gre",
                    v => return Err(err(format!("tunnel type '{v}' is not ipip, gue or gre"))),
                };
                i += 1;
            }
            "port" => {
                let v = value()?;
                t.port = v
                    .parse()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| err(format!("gue tunnel port '{v}' is not 1..=65535")))?;
                i += 1;
            }
            "nocsum" => t.csum = "none",
            "csum" => t.csum = "csum",
            "remcsum" => t.csum = "remcsum",
            _ => {
                return Err(err(format!(
                    "tunnel option '{o}' is not type, port, nocsum, csum or remcsum"
                )))
            }
        }
        i += 1;
    }
    if (t.kind == "gue") != (t.port != 0) {
        return Err(err(
            "a gue tunnel needs a port, and only a gue tunnel takes one".into(),
        ));
    }
    if t.kind == "ipip" && t.csum != "none" {
        return Err(err("an ipip tunnel takes no checksum option".into()));
    }
    if t.kind == "gre" && t.csum == "remcsum" {
        return Err(err(
            "a gre tunnel takes no remcsum (remote checksum offload is GUE's)".into(),
        ));
    }
    Ok(t)
}

/// `persistence_granularity`: an IPv4 netmask.
pub(super) fn netmask(n: &Node) -> Result<Ipv4Addr, Diag> {
    let s = arg(n, 0, "a netmask")?;
    s.parse()
        .map_err(|_| Diag::error(&n.loc, format!("{} '{s}' is not an IPv4 netmask", n.key)))
}

/// A track_file's or FILE_CHECK's `weight N [reverse|noreverse]`:
/// keepalived's range.
pub(super) fn weight_factor(n: &Node) -> Result<(i64, bool), Diag> {
    let s = arg(n, 0, "a weight")?;
    const LIMIT: i64 = i32::MAX as i64;
    let w: i64 = s
        .parse()
        .ok()
        .filter(|w| (-LIMIT..=LIMIT).contains(w))
        .ok_or_else(|| Diag::error(&n.loc, format!("weight '{s}' is not in -{LIMIT}..={LIMIT}")))?;
    let reverse = match n.args.get(1).map(String::as_str) {
        None | Some("noreverse") => false,
        Some("reverse") => true,
        Some(o) => {
            return Err(Diag::error(
                &n.loc,
                format!("weight option '{o}' is not reverse or noreverse"),
            ))
        }
    };
    Ok((w, reverse))
}
