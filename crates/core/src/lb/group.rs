//! Service groups (keepalived's `virtual_server_group`): one service,
//! with its one real-server list, scheduler state and checks, reached
//! under several keys ([`ServiceSpec::members`](crate::lb::spec::ServiceSpec::members)).
//!
//! This module reads and writes the members' text, shared by the config
//! file (`members = [...]`), the state file (`#member` lines) and the
//! keepalived converter: `192.0.2.2:80`, a range of the last octet
//! `192.0.2.3-10:80`, `[2001:db8::2]:80`, a range of the last 16-bit
//! group `[2001:db8::1-1f]:80` (hexadecimal, as an IPv6 address is
//! written), and `fwmark 7`.

use crate::lb::spec::{Proto, ServiceKey, MAX_MEMBERS};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The addresses `first`..=`last`, where `last` replaces the last octet
/// (IPv4) or the last 16-bit group (IPv6) of `first`; at most
/// [`MAX_MEMBERS`] of them.
pub fn expand_range(first: IpAddr, last: u16) -> Result<Vec<IpAddr>, String> {
    let (lo, v): (u16, Box<dyn Fn(u16) -> IpAddr>) = match first {
        IpAddr::V4(a) => {
            if last > 255 {
                return Err(format!(
                    "range {a}-{last}: the end replaces the last octet (0..255)"
                ));
            }
            let o = a.octets();
            (
                o[3] as u16,
                Box::new(move |x| IpAddr::V4(Ipv4Addr::new(o[0], o[1], o[2], x as u8))),
            )
        }
        IpAddr::V6(a) => {
            let s = a.segments();
            (
                s[7],
                Box::new(move |x| {
                    let mut s = s;
                    s[7] = x;
                    IpAddr::V6(Ipv6Addr::from(s))
                }),
            )
        }
    };
    if last < lo {
        return Err(format!("range {first}-{last}: the end is below the start"));
    }
    let n = (last - lo) as usize + 1;
    if n > MAX_MEMBERS {
        return Err(format!(
            "range {first}-{last}: {n} addresses, a group has at most {MAX_MEMBERS} members"
        ));
    }
    Ok((lo..=last).map(v).collect())
}

/// Parse `ADDR` or `ADDR-END` (END decimal for IPv4, hexadecimal for
/// IPv6) into the addresses it names.
pub fn parse_range(s: &str) -> Result<Vec<IpAddr>, String> {
    let (a, end) = match s.rsplit_once('-') {
        Some((a, e)) => (a, Some(e)),
        None => (s, None),
    };
    let first: IpAddr = a
        .parse()
        .map_err(|_| format!("{s:?}: not an address or an address range"))?;
    let Some(end) = end else {
        return Ok(vec![first]);
    };
    let radix = if first.is_ipv6() { 16 } else { 10 };
    let last = u16::from_str_radix(end, radix)
        .map_err(|_| format!("{s:?}: the end of a range is a number (hexadecimal for IPv6)"))?;
    expand_range(first, last)
}

/// Parse one member entry of a service of protocol `proto` and family
/// `v6` (see the module docs) into its keys.
pub fn parse_member(s: &str, proto: Proto, v6: bool) -> Result<Vec<ServiceKey>, String> {
    let s = s.trim();
    if let Some(m) = s.strip_prefix("fwmark") {
        let mark: u32 = m
            .trim()
            .parse()
            .ok()
            .filter(|m| *m != 0)
            .ok_or_else(|| format!("{s:?}: a mark is 1..=4294967295"))?;
        return Ok(vec![ServiceKey::fwmark(mark, v6)]);
    }
    let (addr, port) = if let Some(rest) = s.strip_prefix('[') {
        rest.split_once("]:")
            .ok_or_else(|| format!("{s:?}: an IPv6 member is [ADDR]:PORT"))?
    } else {
        s.rsplit_once(':')
            .ok_or_else(|| format!("{s:?}: a member is ADDR:PORT, ADDR-END:PORT or fwmark N"))?
    };
    let port: u16 = port
        .parse()
        .map_err(|_| format!("{s:?}: {port:?} is not a port"))?;
    let addrs = parse_range(addr)?;
    if addrs.iter().any(|a| a.is_ipv6() != v6) {
        return Err(format!(
            "{s:?}: a group's members are of its service's family ({})",
            if v6 { "IPv6" } else { "IPv4" }
        ));
    }
    Ok(addrs
        .into_iter()
        .map(|vip| ServiceKey {
            proto,
            vip,
            port,
            fwmark: 0,
        })
        .collect())
}

/// A member key as [`parse_member`] reads it: `192.0.2.2:80`,
/// `[2001:db8::2]:80`, `fwmark 7`.
pub fn member_text(k: &ServiceKey) -> String {
    if k.is_fwmark() {
        format!("fwmark {}", k.fwmark)
    } else {
        std::net::SocketAddr::new(k.vip, k.port).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(s: &str) -> Result<Vec<ServiceKey>, String> {
        parse_member(s, Proto::Tcp, s.starts_with('['))
    }

    #[test]
    fn members_in_every_shape() {
        let one = tcp("192.0.2.2:80").unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(member_text(&one[0]), "192.0.2.2:80");
        let r = tcp("192.0.2.3-10:80").unwrap();
        assert_eq!(r.len(), 8);
        assert_eq!(member_text(&r[0]), "192.0.2.3:80");
        assert_eq!(member_text(&r[7]), "192.0.2.10:80");
        let r6 = tcp("[2001:db8::1-1f]:443").unwrap();
        assert_eq!(r6.len(), 31);
        assert_eq!(member_text(&r6[30]), "[2001:db8::1f]:443");
        let m = parse_member("fwmark 7", Proto::Tcp, true).unwrap();
        assert_eq!(m, vec![ServiceKey::fwmark(7, true)]);
        assert_eq!(member_text(&m[0]), "fwmark 7");
    }

    #[test]
    fn bad_members_are_refused_with_a_reason() {
        assert!(tcp("192.0.2.3-2:80").unwrap_err().contains("below"));
        assert!(tcp("192.0.2.3-300:80").unwrap_err().contains("last octet"));
        assert!(tcp("[2001:db8::0-ffff]:80")
            .unwrap_err()
            .contains("at most 256"));
        assert!(tcp("192.0.2.1").is_err());
        assert!(tcp("192.0.2.1:http").is_err());
        assert!(parse_member("fwmark 0", Proto::Tcp, false).is_err());
        assert!(parse_member("192.0.2.1:80", Proto::Tcp, true)
            .unwrap_err()
            .contains("family"));
        // 256 is the bound, inclusive
        assert_eq!(
            tcp("[2001:db8::0-ff]:80").unwrap().len(),
            256,
            "a range of 256 is a full group"
        );
    }
}
