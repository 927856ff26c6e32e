//! IPv6 routes: [`crate::net::route`]'s table for [`V6`] (connected
//! routes from the ports' global IPv6 addresses plus static routes,
//! longest-prefix match), and what only IPv6 has.
//!
//! Link-local addresses (`fe80::/10`) are tied to their link: no route
//! leads to one, and a static route whose gateway is link-local must name
//! its port (as `ip -6 route add ... via fe80::1 dev eth0` must).

use crate::net::family::V6;
pub use crate::net::route::on_link6;
use crate::net::route::{Error, Hit, Routes, Static};
pub use crate::net::wire::ipv6::is_link_local;

/// A static IPv6 route as configured.
pub type StaticRoute6 = Static<V6>;
/// Where the route for an IPv6 destination points.
pub type RouteHit6 = Hit<V6>;
/// Why an IPv6 route table could not be built.
pub type Route6Error = Error<V6>;
/// The IPv6 route table.
pub type RouteTable6 = Routes<V6>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::addr::{Ipv6Cidr, OwnAddrs};
    use crate::net::family::Family;
    use std::net::Ipv6Addr;

    fn network(c: Ipv6Cidr) -> Ipv6Cidr {
        V6::network(&c)
    }
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
