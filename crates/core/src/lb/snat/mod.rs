//! Source NAT for the real servers' own connections (`[[snat]]`, issue
//! 51): a packet from a source in a rule's prefix, to a destination that
//! is none of dirigo's services, leaves from one of the rule's pool
//! addresses and a port of the worker's share, and its replies come back
//! to that address and port (DPVS's SNAT, Linux's MASQUERADE).
//!
//! The rules are consulted only where the IPv4 path misses (no
//! connection, no service, no VIP), as the mark rules are: a packet of a
//! service costs what it did. Rules never overlap ([`check_rules`]), so
//! the first match is the only one. The connections themselves are IPv4
//! FullNAT's records with the destination left as it was (see
//! `lb::balancer::snat`).

use crate::lb::mark::Prefix;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;

/// The most SNAT rules a snapshot holds (a miss scans them; each has its
/// counters in every worker's statistics).
pub const MAX_SNAT_RULES: usize = 64;

/// The most addresses one rule's pool holds.
pub const MAX_SNAT_POOL: usize = 256;

/// The service slot an SNAT connection's record carries: no service has
/// it (slots are far fewer), so a service's counters never see one.
pub const SNAT_SVC: u16 = u16::MAX;

/// The real-server slot of rule `i`'s connections: `SNAT_DEST_BASE + i`,
/// beyond any real server's slot.
pub const SNAT_DEST_BASE: u32 = 0xffff_0000;

/// The rule index an SNAT record's `dest` names (None: not SNAT's).
#[inline]
pub fn rule_of(svc: u16, dest: u32) -> Option<usize> {
    if svc != SNAT_SVC {
        return None;
    }
    let i = dest.wrapping_sub(SNAT_DEST_BASE) as usize;
    (i < MAX_SNAT_RULES).then_some(i)
}

/// One SNAT rule as configured.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SnatRule {
    /// The sources it masquerades (the real servers' network).
    pub source: Prefix,
    /// The addresses their connections leave from (the source's family).
    pub pool: Vec<IpAddr>,
    /// The most of its connections one worker keeps (0: no limit of its
    /// own; every worker's SNAT connections together stay within half its
    /// IPv6 table).
    #[serde(default)]
    pub max_conns: u32,
    /// The first source port its connections use (default 1024).
    #[serde(default = "port_lo")]
    pub port_lo: u16,
    /// The last (default 65535).
    #[serde(default = "port_hi")]
    pub port_hi: u16,
}

/// The source ports of a rule that says none: 1024..=65535 (FullNAT's).
pub const DEFAULT_PORTS: (u16, u16) = (1024, 65535);

fn port_lo() -> u16 {
    DEFAULT_PORTS.0
}

fn port_hi() -> u16 {
    DEFAULT_PORTS.1
}

fn width(p: &Prefix) -> u8 {
    if p.addr.is_ipv4() {
        32
    } else {
        128
    }
}

fn wide(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => u32::from(a) as u128,
        IpAddr::V6(a) => u128::from(a),
    }
}

fn mask(p: &Prefix) -> u128 {
    let all = if width(p) == 32 {
        u32::MAX as u128
    } else {
        u128::MAX
    };
    if p.len == 0 {
        0
    } else {
        all & !(all >> p.len)
    }
}

impl SnatRule {
    /// The rule on its own: a prefix without host bits, a pool of 1 to
    /// [`MAX_SNAT_POOL`] distinct addresses of the source's family, none
    /// unspecified, multicast or broadcast, none inside the source prefix.
    pub fn check(&self) -> Result<(), String> {
        let s = &self.source;
        if s.len > width(s) {
            return Err(format!("{s}: prefix length above {}", width(s)));
        }
        if wide(s.addr) & !mask(s) != 0 {
            return Err(format!("{s}: host bits set past the prefix length"));
        }
        if self.pool.is_empty() {
            return Err(format!("{s}: the pool has no address"));
        }
        if self.port_lo == 0 || self.port_lo > self.port_hi {
            return Err(format!(
                "{s}: ports {}-{} are not a range of 1..=65535",
                self.port_lo, self.port_hi
            ));
        }
        if self.pool.len() > MAX_SNAT_POOL {
            return Err(format!(
                "{s}: {} pool addresses, at most {MAX_SNAT_POOL}",
                self.pool.len()
            ));
        }
        for (i, a) in self.pool.iter().enumerate() {
            if a.is_ipv4() != s.addr.is_ipv4() {
                return Err(format!(
                    "pool address {a} and source {s} are of different families"
                ));
            }
            if a.is_unspecified() || a.is_multicast() || *a == IpAddr::from([255, 255, 255, 255]) {
                return Err(format!("pool address {a} is not a unicast address"));
            }
            if self.pool[..i].contains(a) {
                return Err(format!("pool address {a} is listed twice"));
            }
            if self.matches(*a) {
                return Err(format!("pool address {a} is inside the source {s}"));
            }
        }
        Ok(())
    }

    /// Whether `a` is inside the rule's source prefix.
    pub fn matches(&self, a: IpAddr) -> bool {
        let m = mask(&self.source);
        a.is_ipv4() == self.source.addr.is_ipv4() && wide(a) & m == wide(self.source.addr) & m
    }

    /// Whether a source matches both rules (prefixes of one family that
    /// share an address).
    pub fn overlaps(&self, o: &SnatRule) -> bool {
        let m = mask(&self.source) & mask(&o.source);
        self.source.addr.is_ipv4() == o.source.addr.is_ipv4()
            && wide(self.source.addr) & m == wide(o.source.addr) & m
    }
}

impl fmt::Display for SnatRule {
    /// `10.1.0.0/24 -> 203.0.113.10,203.0.113.11` (with ` max 1000`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ->", self.source)?;
        for (i, a) in self.pool.iter().enumerate() {
            write!(f, "{}{a}", if i == 0 { " " } else { "," })?;
        }
        if (self.port_lo, self.port_hi) != DEFAULT_PORTS {
            write!(f, " ports {}-{}", self.port_lo, self.port_hi)?;
        }
        if self.max_conns != 0 {
            write!(f, " max {}", self.max_conns)?;
        }
        Ok(())
    }
}

/// A set of rules: each valid ([`SnatRule::check`]), at most
/// [`MAX_SNAT_RULES`], no two overlapping, IPv4 only (IPv6 SNAT is not
/// built yet).
pub fn check_rules(rules: &[SnatRule]) -> Result<(), String> {
    if rules.len() > MAX_SNAT_RULES {
        return Err(format!(
            "{} SNAT rules, at most {MAX_SNAT_RULES}",
            rules.len()
        ));
    }
    for (i, r) in rules.iter().enumerate() {
        r.check()?;
        if r.source.addr.is_ipv6() {
            return Err(format!(
                "SNAT rule {r}: IPv6 SNAT is not supported (IPv4 sources only)"
            ));
        }
        if let Some(o) = rules[..i].iter().find(|o| o.overlaps(r)) {
            return Err(format!(
                "SNAT source {} overlaps {} (a source is masqueraded by one rule)",
                r.source, o.source
            ));
        }
    }
    Ok(())
}

/// An IPv4 rule as a worker matches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snat4 {
    net: u32,
    mask: u32,
    /// The pool (host order, as configured).
    pub pool: Vec<u32>,
    /// The most of its connections one worker keeps (0: no own limit).
    pub max_conns: u32,
    /// The source ports its connections use (first, last).
    pub ports: (u16, u16),
}

impl Snat4 {
    /// Whether IPv4 source `src` is the rule's.
    #[inline(always)]
    pub fn matches(&self, src: u32) -> bool {
        src & self.mask == self.net
    }
}

/// The IPv4 rules of `rules`, in order (checked beforehand).
pub fn compile4(rules: &[SnatRule]) -> Vec<Snat4> {
    rules
        .iter()
        .filter_map(|r| match r.source.addr {
            IpAddr::V4(a) => {
                let m = mask(&r.source) as u32;
                Some(Snat4 {
                    net: u32::from(a) & m,
                    mask: m,
                    pool: r
                        .pool
                        .iter()
                        .filter_map(|p| match p {
                            IpAddr::V4(p) => Some(u32::from(*p)),
                            IpAddr::V6(_) => None,
                        })
                        .collect(),
                    max_conns: r.max_conns,
                    ports: (r.port_lo, r.port_hi),
                })
            }
            IpAddr::V6(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests;
