//! Routes of either family: connected routes from the ports' addresses
//! plus static routes, with longest-prefix match. Written once over
//! [`Family`] ([`Routes<V4>`](RouteTable) for IPv4, [`Routes<V6>`] for
//! IPv6, see [`crate::net::route6`] for what only IPv6 has).
//!
//! **Choice:** a small LPM of our own rather than a crate. A director's
//! table holds a handful of connected networks and a few static routes, so
//! the table is one vector per prefix length (33 for IPv4, 129 for IPv6),
//! each sorted by network address, plus the list of non-empty lengths from
//! longest to shortest. A lookup masks the destination once per non-empty
//! length and binary searches that vector: typically two or three
//! searches, no allocation, no hashing, read-only and shareable through an
//! `Arc`. The table is rebuilt whole by the control thread on any change
//! (cheap at this size), which keeps workers lock-free. A trie crate (e.g.
//! `prefix-trie`) would pay off only with thousands of routes, which a
//! director does not carry.

use crate::net::addr::OwnAddrs;
use crate::net::family::{Family, V4, V6};
use crate::net::wire::ipv6::is_link_local;

/// A static route as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Static<F: Family> {
    /// Destination prefix (host bits are ignored).
    pub prefix: F::Cidr,
    /// Gateway; `None` for a route straight out of `port` (on-link).
    pub via: Option<F::Addr>,
    /// Egress port; `None` to take the port whose connected network holds
    /// `via` (an IPv6 link-local gateway needs its port).
    pub port: Option<u16>,
}

/// Where the route for a destination points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit<F: Family> {
    /// Egress port.
    pub port: u16,
    /// Gateway, or `None` when the destination is on-link.
    pub gateway: Option<F::Addr>,
    /// The matched prefix (network form).
    pub prefix: F::Cidr,
    /// True for a connected route (from a port address).
    pub connected: bool,
}

impl<F: Family> Hit<F> {
    /// The address whose MAC the frame goes to: the gateway, or `dst` itself.
    #[inline]
    pub fn next_hop_ip(&self, dst: F::Addr) -> F::Addr {
        self.gateway.unwrap_or(dst)
    }
}

/// Why a route table could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error<F: Family> {
    /// Two routes for the same prefix.
    #[error("duplicate route for {0}")]
    Duplicate(F::Cidr),
    /// A static route with neither gateway nor port.
    #[error("route {0} has neither gateway nor port")]
    NoNextHop(F::Cidr),
    /// The gateway is not inside any connected network.
    #[error("gateway {0} of a route is not on a connected network")]
    GatewayNotOnLink(F::Std),
    /// An IPv6 link-local gateway without a port.
    #[error("gateway {0} is link-local: the route must name its port")]
    LinkLocalNeedsPort(F::Std),
}

/// What building a table needs of a family beside [`Family`]: its
/// connected networks and the port a gateway is reached through.
pub trait Connected: Family {
    /// The connected networks (network form) of the ports' addresses,
    /// with their ports, in the ports' order (IPv6: global ones only).
    fn connected(addrs: &OwnAddrs) -> Vec<(u16, Self::Cidr)>;
    /// The port a static route's gateway `gw` is reached through.
    fn gateway_port(addrs: &OwnAddrs, gw: Self::Addr) -> Result<u16, Error<Self>>;
}

impl Connected for V4 {
    fn connected(addrs: &OwnAddrs) -> Vec<(u16, Self::Cidr)> {
        addrs.connected().collect()
    }

    fn gateway_port(addrs: &OwnAddrs, gw: u32) -> Result<u16, Error<V4>> {
        addrs
            .on_link(gw)
            .ok_or(Error::GatewayNotOnLink(V4::to_std(gw)))
    }
}

impl Connected for V6 {
    fn connected(addrs: &OwnAddrs) -> Vec<(u16, Self::Cidr)> {
        addrs
            .port_addrs6()
            .iter()
            .filter(|a| !is_link_local(a.cidr.addr))
            .map(|a| (a.port, V6::network(&a.cidr)))
            .collect()
    }

    fn gateway_port(addrs: &OwnAddrs, gw: u128) -> Result<u16, Error<V6>> {
        if is_link_local(gw) {
            return Err(Error::LinkLocalNeedsPort(V6::to_std(gw)));
        }
        on_link6(addrs, gw).ok_or(Error::GatewayNotOnLink(V6::to_std(gw)))
    }
}

/// The port whose connected (global) IPv6 network holds `ip` (the
/// longest prefix that does).
pub fn on_link6(addrs: &OwnAddrs, ip: u128) -> Option<u16> {
    addrs
        .port_addrs6()
        .iter()
        .filter(|a| !is_link_local(a.cidr.addr))
        .filter(|a| a.cidr.contains(ip))
        .max_by_key(|a| a.cidr.len)
        .map(|a| a.port)
}

/// An immutable longest-prefix-match table.
#[derive(Clone, Debug)]
pub struct Routes<F: Family> {
    /// Per prefix length, the routes sorted by network address.
    by_len: Vec<Vec<(F::Addr, Hit<F>)>>,
    /// Non-empty prefix lengths, longest first.
    lens: Vec<u8>,
}

impl<F: Family> Default for Routes<F> {
    /// An empty table (every lookup misses).
    fn default() -> Self {
        Routes {
            by_len: vec![Vec::new(); F::BITS as usize + 1],
            lens: Vec::new(),
        }
    }
}

impl<F: Connected> Routes<F> {
    /// Build from the connected networks of `addrs` and `statics`. Two port
    /// addresses in the same network give one connected route (first port
    /// wins); a static route may not repeat a connected prefix.
    pub fn new(addrs: &OwnAddrs, statics: &[Static<F>]) -> Result<Self, Error<F>> {
        let mut t = Routes::<F>::default();
        for (port, net) in F::connected(addrs) {
            let (addr, len) = F::parts(&net);
            let v = &mut t.by_len[len as usize];
            if !v.iter().any(|(n, _)| *n == addr) {
                let hit = Hit {
                    port,
                    gateway: None,
                    prefix: net,
                    connected: true,
                };
                v.push((addr, hit));
            }
        }
        for r in statics {
            let net = F::network(&r.prefix);
            let (addr, len) = F::parts(&net);
            let port = match (r.via, r.port) {
                (_, Some(p)) => p,
                (Some(gw), None) => F::gateway_port(addrs, gw)?,
                (None, None) => return Err(Error::NoNextHop(net)),
            };
            let v = &mut t.by_len[len as usize];
            if v.iter().any(|(n, _)| *n == addr) {
                return Err(Error::Duplicate(net));
            }
            let hit = Hit {
                port,
                gateway: r.via,
                prefix: net,
                connected: false,
            };
            v.push((addr, hit));
        }
        for (len, v) in t.by_len.iter_mut().enumerate().rev() {
            if !v.is_empty() {
                v.sort_unstable_by_key(|(n, _)| *n);
                t.lens.push(len as u8);
            }
        }
        Ok(t)
    }
}

impl<F: Family> Routes<F> {
    /// Longest-prefix match for `dst` (host order). Never allocates; an
    /// IPv6 link-local destination has no route.
    #[inline]
    pub fn lookup(&self, dst: F::Addr) -> Option<Hit<F>> {
        if !F::routable(dst) {
            return None;
        }
        for &len in &self.lens {
            let v = self.by_len.get(len as usize)?;
            let net = dst & F::mask_of(len);
            if let Ok(i) = v.binary_search_by_key(&net, |(n, _)| *n) {
                return v.get(i).map(|(_, h)| *h);
            }
        }
        None
    }

    /// Every route, longest prefixes first (for display).
    pub fn iter(&self) -> impl Iterator<Item = &Hit<F>> + '_ {
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

/// An IPv4 static route.
pub type StaticRoute = Static<V4>;
/// Where an IPv4 destination's route points.
pub type RouteHit = Hit<V4>;
/// Why an IPv4 route table could not be built.
pub type RouteError = Error<V4>;
/// The IPv4 route table.
pub type RouteTable = Routes<V4>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::addr::Ipv4Cidr;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;

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
