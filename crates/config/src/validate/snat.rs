//! `[[snat]]`: the rules that masquerade the real servers' own outbound
//! connections through a pool address.

use super::refusal::Refusal;
use crate::file::SnatConfig;
use crate::locate::{At, Issues};
use crate::Port;
use dirigo_core::lb::mark::Prefix;
use dirigo_core::lb::snat::{check_rules, SnatRule, DEFAULT_PORTS, MAX_SNAT_POOL};
use std::net::{IpAddr, Ipv4Addr};

/// The `[[snat]]` rules: each valid, none overlapping another, no pool
/// address one of the ports' addresses or a VIP (`ours`); a refused rule
/// is reported at its key's line and left out.
pub(crate) fn snat(
    raw: &[SnatConfig],
    ports: &[Port],
    vips: &[IpAddr],
    iss: &mut Issues,
) -> Vec<SnatRule> {
    let mut out: Vec<SnatRule> = Vec::new();
    for (i, c) in raw.iter().enumerate() {
        let at = At::key("snat").i(i);
        let r = match rule(c) {
            Ok(r) => r,
            Err((key, msg)) => {
                iss.add(at.k(key), format!("snat rule: {msg}"));
                continue;
            }
        };
        let own = r.pool.iter().find(|a| {
            vips.contains(a)
                || ports.iter().any(|p| {
                    p.addresses
                        .iter()
                        .any(|c| IpAddr::V4(Ipv4Addr::from(c.addr)) == **a)
                })
        });
        if let Some(a) = own {
            iss.add(
                at.k("pool"),
                format!(
                    "snat rule: pool address {a} is one of dirigo's own addresses or a VIP \
                     (a pool address is routed to dirigo and used for nothing else)"
                ),
            );
            continue;
        }
        let mut with = out.clone();
        with.push(r.clone());
        match check_rules(&with) {
            Ok(()) => out.push(r),
            Err(e) => {
                let key = if e.contains("pool") { "pool" } else { "source" };
                iss.add(at.k(key), format!("snat rule: {e}"));
            }
        }
    }
    out
}

fn rule(c: &SnatConfig) -> Result<SnatRule, Refusal> {
    let source: Prefix = c.source.parse().map_err(|e| ("source", e))?;
    let bad = |m: String| ("pool", m);
    let pool: Vec<IpAddr> = match &c.pool {
        toml::Value::Array(a) => a
            .iter()
            .map(|v| match v {
                toml::Value::String(s) => s
                    .parse::<IpAddr>()
                    .map_err(|_| bad(format!("{s:?} is not an address"))),
                _ => Err(bad(format!("{v} is not an address string"))),
            })
            .collect::<Result<_, _>>()?,
        toml::Value::String(s) => range(s).map_err(bad)?,
        _ => {
            return Err(bad(
                "a list of addresses or a range \"FIRST-LAST\"".to_string()
            ))
        }
    };
    let (port_lo, port_hi) = match &c.ports {
        None => DEFAULT_PORTS,
        Some(s) => {
            let bad = || {
                (
                    "ports",
                    format!("ports {s:?}: a range \"LO-HI\" of 1..=65535"),
                )
            };
            let (a, b) = s.split_once('-').ok_or_else(bad)?;
            let n = |x: &str| x.trim().parse::<u16>().map_err(|_| bad());
            (n(a)?, n(b)?)
        }
    };
    let r = SnatRule {
        source,
        pool,
        max_conns: c.max_conns,
        port_lo,
        port_hi,
    };
    r.check().map_err(|e| {
        let key = if e.contains("ports") {
            "ports"
        } else if e.contains("pool") {
            "pool"
        } else {
            "source"
        };
        (key, e)
    })?;
    Ok(r)
}

/// `"FIRST-LAST"` (IPv4, at most [`MAX_SNAT_POOL`] addresses) or one
/// address.
fn range(s: &str) -> Result<Vec<IpAddr>, String> {
    let Some((a, b)) = s.split_once('-') else {
        return s
            .trim()
            .parse::<IpAddr>()
            .map(|a| vec![a])
            .map_err(|_| format!("{s:?} is not an address or a range \"FIRST-LAST\""));
    };
    let ip = |x: &str| {
        x.trim()
            .parse::<Ipv4Addr>()
            .map(u32::from)
            .map_err(|_| format!("{s:?}: {x:?} is not an IPv4 address (a range is IPv4)"))
    };
    let (lo, hi) = (ip(a)?, ip(b)?);
    if lo > hi {
        return Err(format!("{s:?}: the range is backwards"));
    }
    if (hi - lo) as usize >= MAX_SNAT_POOL {
        return Err(format!("{s:?}: more than {MAX_SNAT_POOL} addresses"));
    }
    Ok((lo..=hi).map(|a| IpAddr::V4(Ipv4Addr::from(a))).collect())
}
