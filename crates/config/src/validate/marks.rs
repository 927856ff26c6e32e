//! `[[mark]]`: the rules that give packets a mark for fwmark services.

use super::refusal::Refusal;
use crate::file::MarkConfig;
use crate::locate::{At, Issues};
use dirigo_core::lb::mark::{check_rules, MarkRule, Prefix};

/// The `[[mark]]` rules: each valid, none overlapping another (the
/// first overlapping one is refused at its `destination`).
pub(crate) fn marks(raw: &[MarkConfig], iss: &mut Issues) -> Vec<MarkRule> {
    let mut out: Vec<MarkRule> = Vec::new();
    for (i, m) in raw.iter().enumerate() {
        let at = At::key("mark").i(i);
        match rule(m) {
            Ok(r) => {
                let mut with = out.clone();
                with.push(r);
                match check_rules(&with) {
                    Ok(()) => out.push(r),
                    Err(e) => iss.add(at.k("destination"), e),
                }
            }
            Err((key, msg)) => iss.add(at.k(key), format!("mark rule: {msg}")),
        }
    }
    out
}

fn rule(m: &MarkConfig) -> Result<MarkRule, Refusal> {
    let prefix = |key: &'static str, s: &str| s.parse::<Prefix>().map_err(|e| (key, e));
    let dst = prefix("destination", &m.destination)?;
    let src = m
        .source
        .as_deref()
        .map(|s| prefix("source", s))
        .transpose()?;
    let bad_port = || {
        (
            "port",
            format!("port {}: a port 1..=65535 or a range \"LO-HI\"", m.port),
        )
    };
    let (port_lo, port_hi) = match &m.port {
        toml::Value::Integer(p) => {
            let p = u16::try_from(*p).map_err(|_| bad_port())?;
            (p, p)
        }
        toml::Value::String(s) => {
            let (a, b) = s.split_once('-').unwrap_or((s, s));
            let n = |x: &str| x.trim().parse::<u16>().map_err(|_| bad_port());
            (n(a)?, n(b)?)
        }
        _ => return Err(bad_port()),
    };
    let r = MarkRule {
        proto: m.protocol,
        dst,
        port_lo,
        port_hi,
        src,
        mark: m.mark,
    };
    r.check().map_err(|e| {
        let key = if e.contains("mark") {
            "mark"
        } else if e.contains("port") {
            "port"
        } else if src.is_some_and(|s| e.contains(&s.to_string())) {
            "source"
        } else {
            "destination"
        };
        (key, e)
    })?;
    Ok(r)
}
