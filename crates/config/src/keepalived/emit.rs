//! Converted services as dirigo TOML (docs/CONFIG.md `[[service]]`): a
//! header saying what else a config needs, then per service its keys, its
//! `[service.check]` when all its real servers share one, and its
//! `[[service.real_server]]`s, each with its own `check = { ... }` when
//! they differ.

use super::convert::{Check, Service};
use std::fmt::Write;

/// A TOML basic string.
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML array of strings.
fn strings(v: &[String]) -> String {
    let items: Vec<String> = v.iter().map(|s| string(s)).collect();
    format!("[{}]", items.join(", "))
}

/// Seconds: an integer when whole, else a float.
fn seconds(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A check's keys, `key = value` each, in a fixed order.
fn check_keys(c: &Check) -> Vec<String> {
    let mut k = vec![
        format!("type = {}", string(c.kind)),
        format!("interval = {}", seconds(c.interval)),
    ];
    // a file check has no timeout (it reads a file)
    if c.kind != "file" {
        k.push(format!("timeout = {}", seconds(c.timeout)));
    }
    k.extend([
        format!("rise = {}", c.rise),
        format!("fall = {}", c.fall),
        format!("on_failure = {}", string(c.on_failure)),
    ]);
    if let Some(d) = c.retry_delay {
        k.push(format!("retry_delay = {}", seconds(d)));
    }
    if let Some(p) = c.port {
        k.push(format!("port = {p}"));
    }
    for (key, v) in [
        ("address", &c.address),
        ("source", &c.source),
        ("helo_name", &c.helo_name),
        ("query_type", &c.query_type),
        ("query_name", &c.query_name),
        ("file", &c.file),
    ] {
        if let Some(v) = v {
            k.push(format!("{key} = {}", string(v)));
        }
    }
    if let Some((w, reverse)) = c.weight_factor {
        k.push(format!("weight_factor = {w}"));
        if reverse {
            k.push("reverse = true".into());
        }
    }
    if let Some(p) = &c.path {
        k.push(format!("path = {}", string(p)));
    }
    if !c.status.is_empty() {
        k.push(format!("status = {}", strings(&c.status)));
    }
    if let Some(h) = &c.host {
        k.push(format!("host = {}", string(h)));
    }
    for (key, v) in [
        ("command", &c.command),
        ("notify_up", &c.notify_up),
        ("notify_down", &c.notify_down),
    ] {
        if !v.is_empty() {
            k.push(format!("{key} = {}", strings(v)));
        }
    }
    k
}

/// The TOML text of `services`, converted from `source`.
pub fn toml(services: &[Service], source: &str) -> String {
    let mut o = String::new();
    let source = source.replace(['\n', '\r'], " ");
    let _ = writeln!(
        o,
        "# dirigo services converted from {source} by `dirigoctl keepalived-convert`.\n\
         #\n\
         # Only the services are here: a dirigo config also needs [eal] and the\n\
         # [[port]]s (and [[route]]s), and the health checks need a way to the real\n\
         # servers: an exception path ([exception] and a port's kernel_interface)\n\
         # or [health] netns = \"...\". See docs/CONFIG.md."
    );
    if services.is_empty() {
        let _ = writeln!(o, "#\n# (no virtual_server was converted)");
    }
    for s in services {
        if let Some(m) = s.fwmark {
            let _ = writeln!(
                o,
                "\n# virtual_server fwmark {m} ({})\n\
                 # keepalived's marks come from iptables (-t mangle ... -j MARK --set-mark {m}),\n\
                 # which dirigo does not read: dirigo sets marks with its own rules. Add one\n\
                 # [[mark]] per protocol, destination and port range that iptables marked {m}:\n\
                 # [[mark]]\n\
                 # protocol = \"tcp\"\n\
                 # destination = \"192.0.2.10\"    # an address or a prefix ADDR/LEN\n\
                 # port = \"80\"                   # a port or a range \"LO-HI\"\n\
                 # mark = {m}",
                s.loc
            );
            let _ = writeln!(o, "[[service]]");
            let _ = writeln!(o, "fwmark = {m}");
            // an fwmark service's family: its group's, or its servers'
            let v6 = s.vip.is_ipv6()
                || (!s.servers.is_empty() && s.servers.iter().all(|r| r.addr.is_ipv6()));
            if v6 {
                let _ = writeln!(o, "family = \"ipv6\"");
            }
        } else {
            match &s.group {
                Some(g) => {
                    let _ = writeln!(o, "\n# virtual_server group {g} ({})", s.loc);
                }
                None => {
                    let _ = writeln!(o, "\n# virtual_server {} {} ({})", s.vip, s.port, s.loc);
                }
            }
            let _ = writeln!(o, "[[service]]");
            let _ = writeln!(o, "protocol = {}", string(s.proto));
            let addr = std::net::SocketAddr::new(s.vip, s.port).to_string();
            let _ = writeln!(o, "address = {}", string(&addr));
        }
        if !s.members.is_empty() {
            let _ = writeln!(o, "members = {}", strings(&s.members));
        }
        let _ = writeln!(o, "scheduler = {}", string(&s.scheduler));
        if !s.flags.is_empty() {
            let _ = writeln!(o, "flags = {}", strings(&s.flags));
        }
        if let Some(p) = s.persistent {
            let _ = writeln!(o, "persistent = {p}");
        }
        if let Some(m) = s.netmask {
            let _ = writeln!(o, "netmask = {}", string(&m.to_string()));
        }
        if let Some(q) = s.quorum {
            let _ = writeln!(o, "quorum = {q}");
        }
        if let Some(a) = s.sorry {
            let _ = writeln!(o, "sorry_server = {}", string(&a.to_string()));
        }
        if s.ops {
            let _ = writeln!(o, "ops = true");
        }
        if let Some(c) = &s.check {
            let _ = writeln!(o, "\n[service.check]");
            for k in check_keys(c) {
                let _ = writeln!(o, "{k}");
            }
        }
        for r in &s.servers {
            let _ = writeln!(o, "\n[[service.real_server]]");
            let _ = writeln!(o, "address = {}", string(&r.addr.to_string()));
            let _ = writeln!(o, "method = {}", string(r.method));
            if r.method == "tun" && r.tunnel.kind != "ipip" {
                let _ = writeln!(o, "tun_type = {}", string(r.tunnel.kind));
                if r.tunnel.port != 0 {
                    let _ = writeln!(o, "tun_port = {}", r.tunnel.port);
                }
                if r.tunnel.csum != "none" {
                    let _ = writeln!(o, "tun_csum = {}", string(r.tunnel.csum));
                }
            }
            let _ = writeln!(o, "weight = {}", r.weight);
            if r.upper != 0 {
                let _ = writeln!(o, "upper_threshold = {}", r.upper);
            }
            if r.lower != 0 {
                let _ = writeln!(o, "lower_threshold = {}", r.lower);
            }
            if let Some(c) = &r.check {
                let _ = writeln!(o, "check = {{ {} }}", check_keys(c).join(", "));
            }
        }
    }
    o
}
