//! IPv6 routes: connected routes from the ports' global IPv6 addresses
//! plus static routes, with longest-prefix match — the IPv6 twin of
//! [`crate::net::route`], built the same way (one sorted vector per prefix
//! length, the non-empty lengths longest first, a binary search per
//! length; rebuilt whole by the control thread, read-only for workers).
//!
//! Link-local addresses (`fe80::/10`) are tied to their link: no route
//! leads to one, and a static route whose gateway is link-local must name
//! its port (as `ip -6 route add ... via fe80::1 dev eth0` must).

use crate::net::addr::{Ipv6Cidr, OwnAddrs};
pub use crate::net::wire::ipv6::is_link_local;
use std::net::Ipv6Addr;

/// A static IPv6 route as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticRoute6 {
    /// Destination prefix (host bits are ignored).
    pub prefix: Ipv6Cidr,
    /// Gateway; `None` for a route straight out of `port` (on-link).
    pub via: Option<u128>,
    /// Egress port; `None` to take the port whose connected network holds
    /// `via` (required for a link-local gateway).
    pub port: Option<u16>,
}

/// Where the route for an IPv6 destination points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteHit6 {
    /// Egress port.
    pub port: u16,
    /// Gateway, or `None` when the destination is on-link.
    pub gateway: Option<u128>,
    /// The matched prefix (network form).
    pub prefix: Ipv6Cidr,
    /// True for a connected route (from a port address).
    pub connected: bool,
}

impl RouteHit6 {
    /// The address whose MAC the frame goes to: the gateway, or `dst`.
    #[inline]
    pub fn next_hop_ip(&self, dst: u128) -> u128 {
        self.gateway.unwrap_or(dst)
    }
}

/// Why an IPv6 route table could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Route6Error {
    /// Two routes for the same prefix.
    #[error("duplicate route for {0}")]
    Duplicate(Ipv6Cidr),
    /// A static route with neither gateway nor port.
    #[error("route {0} has neither gateway nor port")]
    NoNextHop(Ipv6Cidr),
    /// The gateway is not inside any connected network.
    #[error("gateway {0} of a route is not on a connected network")]
    GatewayNotOnLink(Ipv6Addr),
    /// A link-local gateway without a port.
    #[error("gateway {0} is link-local: the route must name its port")]
    LinkLocalNeedsPort(Ipv6Addr),
}

/// An immutable longest-prefix-match table for IPv6.
#[derive(Clone, Debug)]
pub struct RouteTable6 {
    by_len: Vec<Vec<(u128, RouteHit6)>>,
    /// Non-empty prefix lengths, longest first.
    lens: Vec<u8>,
}

impl Default for RouteTable6 {
    /// An empty table (every lookup misses).
    fn default() -> Self {
        RouteTable6 {
            by_len: vec![Vec::new(); 129],
            lens: Vec::new(),
        }
    }
}

fn network(c: Ipv6Cidr) -> Ipv6Cidr {
    Ipv6Cidr {
        addr: c.addr & Ipv6Cidr::mask_of(c.len),
        len: c.len,
    }
}

/// The port whose connected (global) IPv6 network holds `ip`.
pub fn on_link6(addrs: &OwnAddrs, ip: u128) -> Option<u16> {
    addrs
        .port_addrs6()
        .iter()
        .filter(|a| !is_link_local(a.cidr.addr))
        .filter(|a| a.cidr.contains(ip))
        .max_by_key(|a| a.cidr.len)
        .map(|a| a.port)
}

impl RouteTable6 {
    /// Build from the connected networks of the ports' global IPv6
    /// addresses and `statics`. Two addresses in one network give one
    /// connected route (first port wins); a static route may not repeat a
    /// connected prefix.
    pub fn new(addrs: &OwnAddrs, statics: &[StaticRoute6]) -> Result<Self, Route6Error> {
        let mut t = RouteTable6::default();
        for a in addrs.port_addrs6() {
            if is_link_local(a.cidr.addr) {
                continue;
            }
            let net = network(a.cidr);
            let v = &mut t.by_len[net.len as usize];
            if !v.iter().any(|(n, _)| *n == net.addr) {
                v.push((
                    net.addr,
                    RouteHit6 {
                        port: a.port,
                        gateway: None,
                        prefix: net,
                        connected: true,
                    },
                ));
            }
        }
        for r in statics {
            let net = network(r.prefix);
            let port = match (r.via, r.port) {
                (_, Some(p)) => p,
                (Some(gw), None) if is_link_local(gw) => {
                    return Err(Route6Error::LinkLocalNeedsPort(Ipv6Addr::from(gw)))
                }
                (Some(gw), None) => {
                    on_link6(addrs, gw).ok_or(Route6Error::GatewayNotOnLink(Ipv6Addr::from(gw)))?
                }
                (None, None) => return Err(Route6Error::NoNextHop(net)),
            };
            let v = &mut t.by_len[net.len as usize];
            if v.iter().any(|(n, _)| *n == net.addr) {
                return Err(Route6Error::Duplicate(net));
            }
            v.push((
                net.addr,
                RouteHit6 {
                    port,
                    gateway: r.via,
                    prefix: net,
                    connected: false,
                },
            ));
        }
        for (len, v) in t.by_len.iter_mut().enumerate().rev() {
            if !v.is_empty() {
                v.sort_unstable_by_key(|(n, _)| *n);
                t.lens.push(len as u8);
            }
        }
        Ok(t)
    }

    /// Longest-prefix match for `dst` (host order). Never allocates; a
    /// link-local destination has no route.
    #[inline]
    pub fn lookup(&self, dst: u128) -> Option<RouteHit6> {
        if is_link_local(dst) {
            return None;
        }
        for &len in &self.lens {
            let v = self.by_len.get(len as usize)?;
            let net = dst & Ipv6Cidr::mask_of(len);
            if let Ok(i) = v.binary_search_by_key(&net, |(n, _)| *n) {
                return v.get(i).map(|(_, h)| *h);
            }
        }
        None
    }

    /// Every route, longest prefixes first (for display).
    pub fn iter(&self) -> impl Iterator<Item = &RouteHit6> + '_ {
        self.lens
            .iter()
            .flat_map(move |&l| self.by_len[l as usize].iter().map(|(_, h)| h))
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.by_len.iter().map(Vec::len).sum()
    }

    /// True when there are no routes.
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ip(s: &str) -> u128 {
        u128::from(s.parse::<Ipv6Addr>().unwrap())
    }
    fn cidr(s: &str) -> Ipv6Cidr {
        s.parse().unwrap()
    }

    fn addrs() -> OwnAddrs {
        let mut a = OwnAddrs::new();
        a.add_port_addr6(0, cidr("fe80::1/64")).unwrap();
        a.add_port_addr6(0, cidr("2001:db8:1::1/64")).unwrap();
        a.add_port_addr6(1, cidr("fe80::2/64")).unwrap();
        a.add_port_addr6(1, cidr("2001:db8:2::1/64")).unwrap();
        a
    }

    fn table() -> RouteTable6 {
        RouteTable6::new(
            &addrs(),
            &[
                StaticRoute6 {
                    prefix: cidr("::/0"),
                    via: Some(ip("2001:db8:1::fe")),
                    port: None,
                },
                StaticRoute6 {
                    prefix: cidr("2001:db8:100::/48"),
                    via: Some(ip("fe80::99")),
                    port: Some(1),
                },
                StaticRoute6 {
                    prefix: cidr("2001:db8:100:5::/64"),
                    via: None,
                    port: Some(0),
                },
            ],
        )
        .unwrap()
    }

    #[test]
    fn longest_prefix_wins() {
        let t = table();
        // two connected (the link-local addresses give none) + three static
        assert_eq!(t.len(), 5);
        let h = t.lookup(ip("2001:db8:2::77")).unwrap();
        assert_eq!((h.port, h.gateway, h.connected), (1, None, true));
        assert_eq!(h.next_hop_ip(ip("2001:db8:2::77")), ip("2001:db8:2::77"));
        let h = t.lookup(ip("2001:db8:100:7::1")).unwrap();
        assert_eq!((h.port, h.gateway), (1, Some(ip("fe80::99"))));
        assert_eq!(h.prefix, cidr("2001:db8:100::/48"));
        let h = t.lookup(ip("2001:db8:100:5::1")).unwrap();
        assert_eq!((h.port, h.gateway), (0, None));
        let h = t.lookup(ip("2606:4700::1")).unwrap();
        assert_eq!((h.port, h.gateway), (0, Some(ip("2001:db8:1::fe"))));
        assert_eq!(h.next_hop_ip(ip("2606:4700::1")), ip("2001:db8:1::fe"));
        // link-local destinations are never routed, not even by ::/0
        assert_eq!(t.lookup(ip("fe80::5")), None);
        let lens: Vec<u8> = t.iter().map(|h| h.prefix.len).collect();
        assert_eq!(lens, vec![64, 64, 64, 48, 0]);
    }

    #[test]
    fn errors() {
        let a = addrs();
        let r = |p: &str, via: Option<&str>, port| StaticRoute6 {
            prefix: cidr(p),
            via: via.map(ip),
            port,
        };
        assert_eq!(
            RouteTable6::new(&a, &[r("2001:db8:1::/64", None, Some(1))]).unwrap_err(),
            Route6Error::Duplicate(cidr("2001:db8:1::/64"))
        );
        assert_eq!(
            RouteTable6::new(&a, &[r("2001:db8:9::/48", None, None)]).unwrap_err(),
            Route6Error::NoNextHop(cidr("2001:db8:9::/48"))
        );
        assert_eq!(
            RouteTable6::new(&a, &[r("::/0", Some("2001:db8:9::1"), None)]).unwrap_err(),
            Route6Error::GatewayNotOnLink(ip("2001:db8:9::1").into())
        );
        assert_eq!(
            RouteTable6::new(&a, &[r("::/0", Some("fe80::1:1"), None)]).unwrap_err(),
            Route6Error::LinkLocalNeedsPort(ip("fe80::1:1").into())
        );
        // host bits of a prefix are ignored
        let t = RouteTable6::new(&a, &[r("2001:db8:9::5/48", None, Some(0))]).unwrap();
        assert_eq!(
            t.lookup(ip("2001:db8:9:1::1")).unwrap().prefix,
            cidr("2001:db8:9::/48")
        );
        assert!(RouteTable6::default().is_empty());
        assert_eq!(RouteTable6::default().lookup(ip("2001:db8::1")), None);
    }

    #[test]
    fn link_local_test() {
        assert!(is_link_local(ip("fe80::1")));
        assert!(is_link_local(ip("febf:ffff::1")));
        assert!(!is_link_local(ip("fec0::1")));
        assert!(!is_link_local(ip("2001:db8::1")));
        assert!(!is_link_local(ip("ff02::1")));
    }

    proptest! {
        /// The table agrees with a brute-force scan of all prefixes.
        #[test]
        fn matches_linear_scan(
            nets in proptest::collection::vec((any::<u128>(), 0u8..=128), 1..20),
            probes in proptest::collection::vec(any::<u128>(), 1..50),
        ) {
            let mut statics = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for (i, (a, l)) in nets.into_iter().enumerate() {
                let p = network(Ipv6Cidr::new(a, l).unwrap());
                if seen.insert(p) {
                    statics.push(StaticRoute6 { prefix: p, via: None, port: Some(i as u16) });
                }
            }
            let t = RouteTable6::new(&OwnAddrs::new(), &statics).unwrap();
            for d in probes.into_iter().filter(|&d| !is_link_local(d)) {
                let want = statics
                    .iter()
                    .filter(|r| r.prefix.contains(d))
                    .max_by_key(|r| r.prefix.len)
                    .map(|r| r.port.unwrap());
                prop_assert_eq!(t.lookup(d).map(|h| h.port), want);
            }
        }
    }
}
