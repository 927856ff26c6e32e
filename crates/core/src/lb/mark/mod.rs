//! Firewall marks set by dirigo itself: `[[mark]]` rules and
//! `dirigoctl mark` map a protocol, a destination prefix, a destination
//! port range and optionally a source prefix to a mark, and an fwmark
//! service (`ipvsadm -f MARK`, [`crate::lb::spec::ServiceKey::fwmark`])
//! takes the packets of its mark. Linux IPVS reads the mark iptables set
//! (`-t mangle ... -j MARK`); dirigo has no iptables in front of it, so
//! the rules are its own.
//!
//! The rules are consulted only where the ordinary service lookup misses
//! ([`crate::lb::snapshot::Snapshot::mark_service`]): a service keyed by
//! protocol, VIP and port costs what it did. Rules of one snapshot never
//! overlap ([`check_rules`]), so the first match is the only one.

use crate::lb::spec::Proto;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;

/// The most mark rules a snapshot holds: a miss scans them, so the work
/// per packet stays bounded.
pub const MAX_MARK_RULES: usize = 256;

/// An address prefix of either family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Prefix {
    /// The network's address (host bits past `len` must be zero).
    pub addr: IpAddr,
    /// Prefix length: 0..=32 for IPv4, 0..=128 for IPv6.
    pub len: u8,
}

impl Prefix {
    fn bits(&self) -> u8 {
        if self.addr.is_ipv4() {
            32
        } else {
            128
        }
    }

    fn wide(&self) -> u128 {
        match self.addr {
            IpAddr::V4(a) => u32::from(a) as u128,
            IpAddr::V6(a) => u128::from(a),
        }
    }

    fn mask(&self) -> u128 {
        let bits = self.bits();
        if self.len == 0 {
            0
        } else {
            let all = if bits == 32 {
                u32::MAX as u128
            } else {
                u128::MAX
            };
            all & !(all >> self.len)
        }
    }

    /// Whether the two prefixes (of one family) share an address.
    fn overlaps(&self, o: &Prefix) -> bool {
        let m = self.mask() & o.mask();
        self.addr.is_ipv4() == o.addr.is_ipv4() && self.wide() & m == o.wide() & m
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl std::str::FromStr for Prefix {
    type Err = String;

    /// `ADDR` (a host: /32 or /128) or `ADDR/LEN`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, l) = match s.split_once('/') {
            Some((a, l)) => (a, Some(l)),
            None => (s, None),
        };
        let addr: IpAddr = a
            .parse()
            .map_err(|_| format!("{s:?} is not an address or prefix (ADDR or ADDR/LEN)"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len = match l {
            None => max,
            Some(l) => l
                .parse::<u8>()
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| format!("{s:?}: prefix length must be 0..={max}"))?,
        };
        Ok(Prefix { addr, len })
    }
}

/// One mark rule as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MarkRule {
    /// TCP or UDP.
    pub proto: Proto,
    /// Destination prefix (its family is the rule's).
    pub dst: Prefix,
    /// First destination port of the range.
    pub port_lo: u16,
    /// Last destination port of the range (`port_lo` for one port).
    pub port_hi: u16,
    /// Source prefix (None: any source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<Prefix>,
    /// The mark, 1..=u32::MAX.
    pub mark: u32,
}

impl MarkRule {
    /// The rule's address family: IPv6 when its destination is.
    pub fn is_ipv6(&self) -> bool {
        self.dst.addr.is_ipv6()
    }

    /// The rule on its own: a mark other than 0, a port range in order,
    /// prefixes without host bits, a source of the destination's family.
    pub fn check(&self) -> Result<(), String> {
        if self.mark == 0 {
            return Err("mark 0 is not a mark (1..=4294967295)".into());
        }
        if self.port_lo > self.port_hi {
            return Err(format!(
                "port range {}-{} is backwards",
                self.port_lo, self.port_hi
            ));
        }
        if self.port_lo == 0 {
            return Err("port 0 is not a destination port (1..=65535)".into());
        }
        for p in std::iter::once(&self.dst).chain(self.src.iter()) {
            if p.len > p.bits() {
                return Err(format!("{p}: prefix length above {}", p.bits()));
            }
            if p.wide() & !p.mask() != 0 {
                return Err(format!("{p}: host bits set past the prefix length"));
            }
        }
        if let Some(s) = self.src {
            if s.addr.is_ipv4() != self.dst.addr.is_ipv4() {
                return Err(format!(
                    "source {s} and destination {} are of different families",
                    self.dst
                ));
            }
        }
        Ok(())
    }

    /// Whether some packet matches both rules.
    pub fn overlaps(&self, o: &MarkRule) -> bool {
        let src = match (&self.src, &o.src) {
            (Some(a), Some(b)) => a.overlaps(b),
            _ => true,
        };
        self.proto == o.proto
            && self.dst.overlaps(&o.dst)
            && self.port_lo <= o.port_hi
            && o.port_lo <= self.port_hi
            && src
    }
}

impl fmt::Display for MarkRule {
    /// `tcp 192.0.2.10/32 80-443 from 198.51.100.0/24 mark 1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proto = match self.proto {
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
        };
        write!(f, "{proto} {} ", self.dst)?;
        if self.port_lo == self.port_hi {
            write!(f, "{}", self.port_lo)?;
        } else {
            write!(f, "{}-{}", self.port_lo, self.port_hi)?;
        }
        if let Some(s) = self.src {
            write!(f, " from {s}")?;
        }
        write!(f, " mark {}", self.mark)
    }
}

impl std::str::FromStr for MarkRule {
    type Err = String;

    /// The words [`MarkRule`]'s `Display` writes: `PROTO DST PORTS [from
    /// SRC] mark N`, PORTS one port or `LO-HI`, DST and SRC an address
    /// (a host) or `ADDR/LEN`. Checked with [`MarkRule::check`].
    fn from_str(s: &str) -> Result<Self, String> {
        Self::from_words(&s.split_whitespace().collect::<Vec<_>>())
    }
}

impl MarkRule {
    /// [`MarkRule`]'s `FromStr` over words already split.
    pub fn from_words(w: &[&str]) -> Result<Self, String> {
        const USAGE: &str = "a mark rule is PROTO DST PORTS [from SRC] mark N \
             (tcp 192.0.2.10 80-443 mark 1)";
        let (proto, dst, ports, rest) = match w {
            [p, d, ports, rest @ ..] => (*p, *d, *ports, rest),
            _ => return Err(USAGE.into()),
        };
        let proto = match proto {
            "tcp" | "TCP" => Proto::Tcp,
            "udp" | "UDP" => Proto::Udp,
            p => return Err(format!("protocol {p:?}: tcp or udp")),
        };
        let port = |p: &str| {
            p.parse::<u16>()
                .map_err(|_| format!("port {p:?}: a number 1..=65535"))
        };
        let (port_lo, port_hi) = match ports.split_once('-') {
            Some((a, b)) => (port(a)?, port(b)?),
            None => (port(ports)?, port(ports)?),
        };
        let (src, rest) = match rest {
            ["from", s, rest @ ..] => (Some(s.parse::<Prefix>()?), rest),
            r => (None, r),
        };
        let mark = match rest {
            ["mark", m] => m
                .parse::<u32>()
                .map_err(|_| format!("mark {m:?}: a number 1..=4294967295"))?,
            _ => return Err(USAGE.into()),
        };
        let r = MarkRule {
            proto,
            dst: dst.parse()?,
            port_lo,
            port_hi,
            src,
            mark,
        };
        r.check()?;
        Ok(r)
    }
}

/// A set of rules: each valid, no two overlapping, at most
/// [`MAX_MARK_RULES`].
pub fn check_rules(rules: &[MarkRule]) -> Result<(), String> {
    if rules.len() > MAX_MARK_RULES {
        return Err(format!(
            "{} mark rules: at most {MAX_MARK_RULES}",
            rules.len()
        ));
    }
    for (i, r) in rules.iter().enumerate() {
        r.check().map_err(|e| format!("mark rule {r}: {e}"))?;
        if let Some(o) = rules[..i].iter().find(|o| o.overlaps(r)) {
            return Err(if o == r {
                format!("mark rule {r} given twice")
            } else {
                format!("mark rule {r} overlaps {o}: a packet would match both")
            });
        }
    }
    Ok(())
}

/// A rule as a worker matches it, over one family's addresses
/// (`u32` or `u128`, host order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compiled<A> {
    /// IP protocol number.
    pub proto: u8,
    /// Destination network and mask.
    pub dst: A,
    /// Destination mask.
    pub dmask: A,
    /// Source network (0 with a zero mask: any).
    pub src: A,
    /// Source mask.
    pub smask: A,
    /// Port range.
    pub lo: u16,
    /// Port range's end.
    pub hi: u16,
    /// The mark (for listings and tests).
    pub mark: u32,
    /// The index of the fwmark service of this mark and family in the
    /// snapshot, `u32::MAX` when there is none (a counted miss).
    pub svc: u32,
}

impl<A: Copy + Eq + std::ops::BitAnd<Output = A>> Compiled<A> {
    /// Whether a packet of this protocol, source, destination and
    /// destination port carries this rule's mark.
    #[inline(always)]
    pub fn matches(&self, proto: u8, src: A, dst: A, dport: u16) -> bool {
        self.proto == proto
            && dport >= self.lo
            && dport <= self.hi
            && dst & self.dmask == self.dst
            && src & self.smask == self.src
    }
}

/// The rules of one family, compiled; `svc` maps a mark to the index of
/// its fwmark service of that family.
pub fn compile<A: Copy + Default>(
    rules: &[MarkRule],
    v6: bool,
    to: impl Fn(&Prefix) -> (A, A),
    svc: impl Fn(u32) -> Option<usize>,
) -> Vec<Compiled<A>> {
    rules
        .iter()
        .filter(|r| r.is_ipv6() == v6)
        .map(|r| {
            let (dst, dmask) = to(&r.dst);
            let (src, smask) = r.src.as_ref().map(&to).unwrap_or_default();
            Compiled {
                proto: r.proto.number(),
                dst,
                dmask,
                src,
                smask,
                lo: r.port_lo,
                hi: r.port_hi,
                mark: r.mark,
                svc: svc(r.mark).map_or(u32::MAX, |i| i as u32),
            }
        })
        .collect()
}

/// A prefix as IPv4 bits and mask (host order).
pub fn bits4(p: &Prefix) -> (u32, u32) {
    (p.wide() as u32, p.mask() as u32)
}

/// A prefix as IPv6 bits and mask (host order).
pub fn bits6(p: &Prefix) -> (u128, u128) {
    (p.wide(), p.mask())
}

#[cfg(test)]
mod tests;
