//! The values of ipvsadm's options: numbers, timeouts, `host[:port]`
//! (with `/etc/services` names), scheduler flags.

use crate::adm::defaults::MAX_TIMEOUT;
use crate::adm::error::AdmError;
use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::spec::Proto;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

pub(super) fn number(s: &str, min: u64, max: u64) -> Option<u64> {
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
    // a fuzzed host name is never looked up: a DNS query per input
    if cfg!(fuzzing) {
        return (host == "localhost").then_some(Ipv4Addr::LOCALHOST);
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
/// The port may be a number or a service name from `/etc/services`. An
/// IPv6 address is written in brackets (`[2001:db8::10]:80`, or
/// `[2001:db8::10]` without a port), or bare without a port.
pub fn parse_addr_port(s: &str, proto: Proto) -> Option<(IpAddr, Option<u16>)> {
    if s.is_empty() || s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let port_of = |p: &str| match number(p, 0, 65535) {
        Some(n) => Some(n as u16),
        None => port_by_name(p, proto),
    };
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let a: Ipv6Addr = host.parse().ok()?;
        let port = match after {
            "" => None,
            _ => Some(port_of(after.strip_prefix(':')?)?),
        };
        return Some((IpAddr::V6(a), port));
    }
    if let Ok(a) = s.parse::<Ipv6Addr>() {
        return Some((IpAddr::V6(a), None));
    }
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) => (h, Some(port_of(p)?)),
        None => (s, None),
    };
    Some((IpAddr::V4(resolve(host)?), port))
}

/// ipvsadm's `-M` for an IPv6 service: a prefix length 1..=128.
pub fn prefix6(s: &str) -> Result<u8, AdmError> {
    number(s, 1, 128)
        .map(|n| n as u8)
        .ok_or_else(|| AdmError::usage("illegal ipv6 netmask specified"))
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

pub(super) fn parse_sched_flags(sched: SchedKind, arg: &str) -> Result<SchedFlags, AdmError> {
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

pub(super) fn timeout(s: &str, min: u64) -> Result<u32, AdmError> {
    number(s, min, u64::from(MAX_TIMEOUT))
        .map(|n| n as u32)
        .ok_or_else(|| AdmError::usage(format!("invalid timeout value `{s}' specified")))
}
