//! keepalived's `virtual_server_group NAME { VIP PORT; VIP-RANGE PORT;
//! fwmark N }` blocks, and what a `virtual_server group NAME` takes of
//! one: the first key as its service's, the others as its `members`.

use super::cx::{Cx, Entry};
use super::values::{port, word};
use crate::keepalived::diag::Diag;
use crate::keepalived::parse::Node;
use dirigo_core::lb::group::parse_range;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// A group's keys as a service takes them: its own key (`vip`, `port`,
/// `fwmark`) and its members, as the config's `members` writes them.
pub(super) struct GroupKeys {
    pub(super) vip: IpAddr,
    pub(super) port: u16,
    pub(super) fwmark: Option<u32>,
    pub(super) members: Vec<String>,
}

/// The top-level `virtual_server_group` blocks, by name. A malformed
/// entry is an error; an unknown keyword a warning.
pub(super) fn groups(cx: &mut Cx, tree: &[Node]) -> Result<HashMap<String, Vec<Entry>>, Diag> {
    let mut out = HashMap::new();
    for n in tree.iter().filter(|n| n.key == "virtual_server_group") {
        let name = word(n, 0, "a group name")?.to_string();
        let mut entries = Vec::new();
        for c in n.children() {
            if c.key == "fwmark" {
                let m = word(c, 0, "a mark after fwmark")?;
                let mark = m.parse::<u32>().ok().filter(|m| *m != 0).ok_or_else(|| {
                    Diag::error(
                        &c.loc,
                        format!("fwmark '{m}' is not a mark (1..4294967295)"),
                    )
                })?;
                entries.push(Entry::Mark(mark));
                continue;
            }
            if c.key
                .starts_with(|ch: char| ch.is_ascii_hexdigit() || ch == ':')
            {
                let addrs = parse_range(&c.key).map_err(|e| Diag::error(&c.loc, e))?;
                let p = port(c, word(c, 0, "a port after the address")?)?;
                entries.push(Entry::Addrs(addrs, p));
                continue;
            }
            cx.unknown(c, &format!(" in virtual_server_group {name}"));
        }
        out.insert(name, entries);
    }
    Ok(out)
}

/// A member's text: one address, or the range of the rest of `addrs`
/// (last octet, or last 16-bit group in hexadecimal).
fn member_text(addrs: &[IpAddr], port: u16) -> String {
    let first = addrs[0];
    let Some(&last) = addrs.last().filter(|_| addrs.len() > 1) else {
        return SocketAddr::new(first, port).to_string();
    };
    match (first, last) {
        (IpAddr::V4(a), IpAddr::V4(l)) => format!("{a}-{}:{port}", l.octets()[3]),
        (a, IpAddr::V6(l)) => format!("[{a}-{:x}]:{port}", l.segments()[7]),
        (a, l) => format!("{a}-{l}:{port}"),
    }
}

/// The keys of group `entries` (named `name`, used at `n`): the first
/// entry's first key is the service's; entries of another family than
/// it are skipped with a warning (a dirigo group is of one family).
/// `None` (with a warning) when nothing is left.
pub(super) fn keys(cx: &mut Cx, n: &Node, name: &str, entries: &[Entry]) -> Option<GroupKeys> {
    let v6 = entries.iter().find_map(|e| match e {
        Entry::Addrs(a, _) => Some(a[0].is_ipv6()),
        Entry::Mark(_) => None,
    });
    let mut out: Option<GroupKeys> = None;
    for e in entries {
        let (rest, own) = match e {
            Entry::Addrs(a, p) => {
                if Some(a[0].is_ipv6()) != v6 {
                    let msg = format!(
                        "virtual_server_group {name}: {} skipped: a dirigo service group is of one family",
                        member_text(a, *p)
                    );
                    cx.warn(n, msg);
                    continue;
                }
                let own = GroupKeys {
                    vip: a[0],
                    port: *p,
                    fwmark: None,
                    members: Vec::new(),
                };
                let rest = match a.len() {
                    1 => None,
                    _ => Some(member_text(&a[1..], *p)),
                };
                (rest, own)
            }
            Entry::Mark(m) => {
                let vip = if v6 == Some(true) {
                    IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED)
                } else {
                    IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)
                };
                let own = GroupKeys {
                    vip,
                    port: 0,
                    fwmark: Some(*m),
                    members: Vec::new(),
                };
                (None, own)
            }
        };
        match &mut out {
            None => {
                let mut g = own;
                g.members.extend(rest);
                out = Some(g);
            }
            Some(g) => g.members.push(match e {
                Entry::Addrs(a, p) => member_text(a, *p),
                Entry::Mark(m) => format!("fwmark {m}"),
            }),
        }
    }
    if out.is_none() {
        cx.warn(
            n,
            format!("virtual_server group {name}: the group has no entries: skipped"),
        );
    }
    out
}
