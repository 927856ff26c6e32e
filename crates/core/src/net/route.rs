//! IPv4 routes: connected routes from the ports' addresses plus static
//! routes, with longest-prefix match.
//!
//! **Choice:** a small LPM of our own rather than a crate. A director's
//! table holds a handful of connected networks and a few static routes, so
//! the table is 33 vectors (one per prefix length), each sorted by network
//! address, plus the list of non-empty lengths from longest to shortest.
//! A lookup masks the destination once per non-empty length and binary
//! searches that vector: at most 33 searches, typically two or three, no
//! allocation, no hashing, read-only and shareable through an `Arc`. The
//! table is rebuilt whole by the control thread on any change (cheap at this
//! size), which keeps workers lock-free. A trie crate (e.g. `prefix-trie`)
//! would pay off only with thousands of routes, which a director does not
//! carry.

use crate::net::addr::{Ipv4Cidr, OwnAddrs};
use std::net::Ipv4Addr;

/// A static route as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticRoute {
    /// Destination prefix (host bits are ignored).
    pub prefix: Ipv4Cidr,
    /// Gateway; `None` for a route straight out of `port` (on-link).
    pub via: Option<u32>,
    /// Egress port; `None` to take the port whose connected network holds `via`.
    pub port: Option<u16>,
}

/// Where the route for a destination points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteHit {
    /// Egress port.
    pub port: u16,
    /// Gateway, or `None` when the destination is on-link.
    pub gateway: Option<u32>,
    /// The matched prefix (network form).
    pub prefix: Ipv4Cidr,
    /// True for a connected route (from a port address).
    pub connected: bool,
}

impl RouteHit {
    /// The address whose MAC the frame goes to: the gateway, or `dst` itself.
    #[inline]
    pub fn next_hop_ip(&self, dst: u32) -> u32 {
        self.gateway.unwrap_or(dst)
    }
}

/// Why a route table could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// Two routes for the same prefix.
    #[error("duplicate route for {0}")]
    Duplicate(Ipv4Cidr),
    /// A static route with neither gateway nor port.
    #[error("route {0} has neither gateway nor port")]
    NoNextHop(Ipv4Cidr),
    /// The gateway is not inside any connected network.
    #[error("gateway {0} of a route is not on a connected network")]
    GatewayNotOnLink(Ipv4Addr),
}

/// An immutable longest-prefix-match table.
#[derive(Clone, Debug)]
pub struct RouteTable {
    by_len: [Vec<(u32, RouteHit)>; 33],
    /// Non-empty prefix lengths, longest first.
    lens: Vec<u8>,
}

impl Default for RouteTable {
    /// An empty table (every lookup misses).
    fn default() -> Self {
        RouteTable {
            by_len: std::array::from_fn(|_| Vec::new()),
            lens: Vec::new(),
        }
    }
}

impl RouteTable {
    /// Build from the connected networks of `addrs` and `statics`. Two port
    /// addresses in the same network give one connected route (first port
    /// wins); a static route may not repeat a connected prefix.
    pub fn new(addrs: &OwnAddrs, statics: &[StaticRoute]) -> Result<Self, RouteError> {
        let mut t = RouteTable::default();
        for (port, net) in addrs.connected() {
            let hit = RouteHit {
                port,
                gateway: None,
                prefix: net,
                connected: true,
            };
            let v = &mut t.by_len[net.len as usize];
            if !v.iter().any(|(n, _)| *n == net.addr) {
                v.push((net.addr, hit));
            }
        }
        for r in statics {
            let net = r.prefix.to_network();
            let port = match (r.via, r.port) {
                (_, Some(p)) => p,
                (Some(gw), None) => addrs
                    .on_link(gw)
                    .ok_or(RouteError::GatewayNotOnLink(Ipv4Addr::from(gw)))?,
                (None, None) => return Err(RouteError::NoNextHop(net)),
            };
            let v = &mut t.by_len[net.len as usize];
            if v.iter().any(|(n, _)| *n == net.addr) {
                return Err(RouteError::Duplicate(net));
            }
            v.push((
                net.addr,
                RouteHit {
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

    /// Longest-prefix match for `dst` (host order). Never allocates.
    #[inline]
    pub fn lookup(&self, dst: u32) -> Option<RouteHit> {
        for &len in &self.lens {
            let v = self.by_len.get(len as usize)?;
            let net = dst & Ipv4Cidr::mask_of(len);
            if let Ok(i) = v.binary_search_by_key(&net, |(n, _)| *n) {
                return v.get(i).map(|(_, h)| *h);
            }
        }
        None
    }

    /// Every route, longest prefixes first (for display).
    pub fn iter(&self) -> impl Iterator<Item = &RouteHit> + '_ {
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

    fn ip(s: &str) -> u32 {
        u32::from(s.parse::<Ipv4Addr>().unwrap())
    }
    fn cidr(s: &str) -> Ipv4Cidr {
        s.parse().unwrap()
    }

    fn addrs() -> OwnAddrs {
        let mut a = OwnAddrs::new();
        a.add_port_addr(0, cidr("10.0.0.1/24")).unwrap();
        a.add_port_addr(1, cidr("192.168.1.1/24")).unwrap();
        a
    }

    fn table() -> RouteTable {
        RouteTable::new(
            &addrs(),
            &[
                StaticRoute {
                    prefix: cidr("0.0.0.0/0"),
                    via: Some(ip("192.168.1.254")),
                    port: None,
                },
                StaticRoute {
                    prefix: cidr("172.16.0.0/12"),
                    via: Some(ip("10.0.0.254")),
                    port: None,
                },
                StaticRoute {
                    prefix: cidr("172.16.5.0/24"),
                    via: None,
                    port: Some(1),
                },
            ],
        )
        .unwrap()
    }

    #[test]
    fn longest_prefix_wins() {
        let t = table();
        assert_eq!(t.len(), 5);
        let h = t.lookup(ip("10.0.0.9")).unwrap();
        assert_eq!((h.port, h.gateway, h.connected), (0, None, true));
        assert_eq!(h.next_hop_ip(ip("10.0.0.9")), ip("10.0.0.9"));
        let h = t.lookup(ip("172.20.1.1")).unwrap();
        assert_eq!((h.port, h.gateway), (0, Some(ip("10.0.0.254"))));
        assert_eq!(h.prefix, cidr("172.16.0.0/12"));
        let h = t.lookup(ip("172.16.5.77")).unwrap();
        assert_eq!((h.port, h.gateway), (1, None));
        let h = t.lookup(ip("8.8.8.8")).unwrap();
        assert_eq!((h.port, h.gateway), (1, Some(ip("192.168.1.254"))));
        assert_eq!(h.next_hop_ip(ip("8.8.8.8")), ip("192.168.1.254"));
        let lens: Vec<u8> = t.iter().map(|h| h.prefix.len).collect();
        assert_eq!(lens, vec![24, 24, 24, 12, 0]);
    }

    #[test]
    fn no_default_no_route() {
        let t = RouteTable::new(&addrs(), &[]).unwrap();
        assert_eq!(t.lookup(ip("8.8.8.8")), None);
        assert!(RouteTable::default().lookup(1).is_none());
        assert!(RouteTable::default().is_empty());
    }

    #[test]
    fn errors() {
        let a = addrs();
        let r = |p: &str, via: Option<&str>, port| StaticRoute {
            prefix: cidr(p),
            via: via.map(ip),
            port,
        };
        assert_eq!(
            RouteTable::new(&a, &[r("10.0.0.0/24", None, Some(1))]).unwrap_err(),
            RouteError::Duplicate(cidr("10.0.0.0/24"))
        );
        assert_eq!(
            RouteTable::new(&a, &[r("1.0.0.0/8", None, None)]).unwrap_err(),
            RouteError::NoNextHop(cidr("1.0.0.0/8"))
        );
        assert_eq!(
            RouteTable::new(&a, &[r("1.0.0.0/8", Some("9.9.9.9"), None)]).unwrap_err(),
            RouteError::GatewayNotOnLink(Ipv4Addr::new(9, 9, 9, 9))
        );
    }

    proptest! {
        /// The table agrees with a brute-force scan of all prefixes.
        #[test]
        fn matches_linear_scan(
            nets in proptest::collection::vec((any::<u32>(), 0u8..=32), 1..20),
            probes in proptest::collection::vec(any::<u32>(), 1..50),
        ) {
            let mut statics = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for (i, (a, l)) in nets.into_iter().enumerate() {
                let p = Ipv4Cidr::new(a, l).unwrap().to_network();
                if seen.insert(p) {
                    statics.push(StaticRoute { prefix: p, via: None, port: Some(i as u16) });
                }
            }
            let t = RouteTable::new(&OwnAddrs::new(), &statics).unwrap();
            for d in probes {
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
