//! [`NetView`]: the immutable picture of the network a worker forwards with
//! — port MACs/MTUs, own addresses, routes and the neighbor snapshot — and
//! its [`Egress`] implementation.
//!
//! The control thread builds one and publishes it (e.g. as
//! `arc_swap::ArcSwap<NetView>`); workers load it once per burst. Each part
//! sits behind its own `Arc`, so publishing a new neighbor snapshot
//! ([`NetView::with_neigh`]) copies four pointers, not tables. Queries never
//! allocate.

use crate::net::addr::OwnAddrs;
use crate::net::egress::{Egress, Egress6, NextHopOf, Resolve, Resolve6, ResolveOf};
use crate::net::family::Family;
use crate::net::neigh::NeighSnapshot;
use crate::net::route::{Hit, RouteHit, RouteTable};
use crate::net::route6::{RouteHit6, RouteTable6};
use std::sync::Arc;

/// Static facts about one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// The port's MAC.
    pub mac: [u8; 6],
    /// The port's MTU (IP bytes).
    pub mtu: u16,
    /// Whether the port has a kernel interface (the exception path): what
    /// arrives for its own addresses and dirigo does not answer goes there.
    pub kernel: bool,
}

/// Routes + neighbors + ports + own addresses, immutable. IPv6 routes
/// and neighbors sit beside the IPv4 ones (empty until set with
/// [`NetView::with_routes6`] and [`NetView::with_neigh6`]).
#[derive(Clone, Debug, Default)]
pub struct NetView {
    ports: Arc<[PortInfo]>,
    addrs: Arc<OwnAddrs>,
    routes: Arc<RouteTable>,
    neigh: Arc<NeighSnapshot>,
    routes6: Arc<RouteTable6>,
    neigh6: Arc<NeighSnapshot<u128>>,
}

impl NetView {
    /// Assemble a view. `ports[i]` describes port index `i`.
    pub fn new(
        ports: Arc<[PortInfo]>,
        addrs: Arc<OwnAddrs>,
        routes: Arc<RouteTable>,
        neigh: Arc<NeighSnapshot>,
    ) -> Self {
        NetView {
            ports,
            addrs,
            routes,
            neigh,
            routes6: Arc::default(),
            neigh6: Arc::default(),
        }
    }

    /// The same view with a new IPv6 neighbor snapshot.
    pub fn with_neigh6(&self, neigh6: Arc<NeighSnapshot<u128>>) -> Self {
        NetView {
            neigh6,
            ..self.clone()
        }
    }

    /// The same view with new IPv6 routes.
    pub fn with_routes6(&self, routes6: Arc<RouteTable6>) -> Self {
        NetView {
            routes6,
            ..self.clone()
        }
    }

    /// The IPv6 route table.
    #[inline]
    pub fn routes6(&self) -> &RouteTable6 {
        &self.routes6
    }

    /// The IPv6 neighbor snapshot.
    #[inline]
    pub fn neigh6(&self) -> &NeighSnapshot<u128> {
        &self.neigh6
    }

    /// The IPv6 route for `dst`.
    #[inline]
    pub fn route6(&self, dst: u128) -> Option<RouteHit6> {
        self.routes6.lookup(dst)
    }

    /// The same view with a new neighbor snapshot.
    pub fn with_neigh(&self, neigh: Arc<NeighSnapshot>) -> Self {
        NetView {
            neigh,
            ..self.clone()
        }
    }

    /// The same view with new addresses and routes (VIP or address change).
    pub fn with_addrs_routes(&self, addrs: Arc<OwnAddrs>, routes: Arc<RouteTable>) -> Self {
        NetView {
            addrs,
            routes,
            ..self.clone()
        }
    }

    /// Port facts, if the port exists.
    #[inline]
    pub fn port(&self, port: u16) -> Option<&PortInfo> {
        self.ports.get(port as usize)
    }

    /// All ports.
    pub fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    /// Own addresses and VIPs.
    #[inline]
    pub fn addrs(&self) -> &OwnAddrs {
        &self.addrs
    }

    /// The route table.
    #[inline]
    pub fn routes(&self) -> &RouteTable {
        &self.routes
    }

    /// The neighbor snapshot.
    #[inline]
    pub fn neigh(&self) -> &NeighSnapshot {
        &self.neigh
    }

    /// The route for `dst`.
    #[inline]
    pub fn route(&self, dst: u32) -> Option<RouteHit> {
        self.routes.lookup(dst)
    }

    /// The next hop toward `dst` of either family, whose route lookup
    /// gave `hit`: the gateway (or `dst` when on-link) in `neigh`, ready
    /// when it was learned on the route's port, else to be resolved there;
    /// `src_ip` gives the port's source address toward `dst`. Out of
    /// line: it runs when a worker's next-hop cache misses, and inlined
    /// into the burst loop it cost 12 instructions per DR packet on the
    /// cache's hit path (callgrind).
    #[inline(never)]
    fn resolve<F: Family>(
        &self,
        hit: Option<Hit<F>>,
        neigh: &NeighSnapshot<F::Addr>,
        dst: F::Addr,
        src_ip: impl FnOnce(u16) -> F::Addr,
    ) -> ResolveOf<F> {
        let Some(hit) = hit else {
            return ResolveOf::NoRoute;
        };
        let Some(port) = self.port(hit.port) else {
            return ResolveOf::NoRoute;
        };
        let ip = hit.next_hop_ip(dst);
        match neigh.lookup(ip) {
            Some((mac, p)) if p == hit.port => ResolveOf::Ready(NextHopOf {
                port: hit.port,
                src_mac: port.mac,
                dst_mac: mac,
                src_ip: src_ip(hit.port),
                mtu: port.mtu,
            }),
            _ => ResolveOf::Unresolved { ip, port: hit.port },
        }
    }
}

impl Egress for NetView {
    /// Route lookup, then the gateway (or `dst` when on-link) in the
    /// neighbor snapshot. `Unresolved` (with the next hop and its port) when
    /// the neighbor is unknown or was learned on another port; the caller
    /// requests resolution. `NoRoute` also when the route points at a port
    /// the view does not know.
    #[inline]
    fn next_hop(&self, dst: u32) -> Resolve {
        let hit = self.routes.lookup(dst);
        self.resolve(hit, &self.neigh, dst, |p| {
            self.addrs.primary(p).unwrap_or(0)
        })
    }

    #[inline]
    fn on_link(&self, addr: u32) -> Option<u16> {
        self.addrs.on_link(addr)
    }
}

impl Egress6 for NetView {
    /// Route lookup for an IPv6 destination, then its next hop in the IPv6
    /// neighbor snapshot (as [`Egress::next_hop`] does for IPv4).
    #[inline]
    fn next_hop6(&self, dst: u128) -> Resolve6 {
        let hit = self.routes6.lookup(dst);
        self.resolve(hit, &self.neigh6, dst, |p| {
            self.addrs.source6_for(p, dst).unwrap_or(0)
        })
    }

    #[inline]
    fn on_link6(&self, addr: u128) -> Option<u16> {
        self.addrs.on_link6(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::addr::Ipv4Cidr;
    use crate::net::egress::{NextHop, NextHop6};
    use crate::net::neigh::{NeighConfig, NeighTable};
    use crate::net::route::StaticRoute;
    use std::net::Ipv4Addr;

    fn ip(s: &str) -> u32 {
        u32::from(s.parse::<Ipv4Addr>().unwrap())
    }

    const M0: [u8; 6] = [2, 0, 0, 0, 0, 0xa0];
    const M1: [u8; 6] = [2, 0, 0, 0, 0, 0xa1];
    const RS: [u8; 6] = [2, 0, 0, 0, 0, 0x55];
    const GW: [u8; 6] = [2, 0, 0, 0, 0, 0x99];

    fn view() -> NetView {
        let mut a = OwnAddrs::new();
        a.add_port_addr(0, "10.0.0.1/24".parse::<Ipv4Cidr>().unwrap())
            .unwrap();
        a.add_port_addr(1, "192.168.1.1/24".parse::<Ipv4Cidr>().unwrap())
            .unwrap();
        let routes = RouteTable::new(
            &a,
            &[StaticRoute {
                prefix: "0.0.0.0/0".parse().unwrap(),
                via: Some(ip("192.168.1.254")),
                port: None,
            }],
        )
        .unwrap();
        let mut n = NeighTable::new(NeighConfig::default());
        n.learn(ip("10.0.0.5"), RS, 0, 0, true);
        n.learn(ip("10.0.0.6"), RS, 1, 0, true); // learned on the wrong port
        NetView::new(
            Arc::from(vec![
                PortInfo {
                    mac: M0,
                    mtu: 1500,
                    kernel: false,
                },
                PortInfo {
                    mac: M1,
                    mtu: 9000,
                    kernel: false,
                },
            ]),
            Arc::new(a),
            Arc::new(routes),
            Arc::new(n.snapshot()),
        )
    }

    #[test]
    fn next_hop_on_link_and_via_gateway() {
        let v = view();
        assert_eq!(
            v.next_hop(ip("10.0.0.5")),
            Resolve::Ready(NextHop {
                port: 0,
                src_mac: M0,
                dst_mac: RS,
                src_ip: ip("10.0.0.1"),
                mtu: 1500
            })
        );
        // learned on another port: resolve it again on the route's port
        assert_eq!(
            v.next_hop(ip("10.0.0.6")),
            Resolve::Unresolved {
                ip: ip("10.0.0.6"),
                port: 0
            }
        );
        // via the gateway: the gateway is what needs resolving
        let via_gw = Resolve::Unresolved {
            ip: ip("192.168.1.254"),
            port: 1,
        };
        assert_eq!(v.next_hop(ip("8.8.8.8")), via_gw);
        let mut n = NeighTable::new(NeighConfig::default());
        n.learn(ip("192.168.1.254"), GW, 1, 0, true);
        let v2 = v.with_neigh(Arc::new(n.snapshot()));
        assert_eq!(
            v2.next_hop(ip("8.8.8.8")),
            Resolve::Ready(NextHop {
                port: 1,
                src_mac: M1,
                dst_mac: GW,
                src_ip: ip("192.168.1.1"),
                mtu: 9000
            })
        );
        // the old view is untouched
        assert_eq!(v.next_hop(ip("8.8.8.8")), via_gw);
    }

    #[test]
    fn ipv6_next_hops() {
        use crate::net::addr::Ipv6Cidr;
        use crate::net::route6::StaticRoute6;
        let ip6 = |s: &str| u128::from(s.parse::<std::net::Ipv6Addr>().unwrap());
        let base = view();
        let mut a = base.addrs().clone();
        a.add_port_addr6(1, "2001:db8:1::1/64".parse::<Ipv6Cidr>().unwrap())
            .unwrap();
        let r6 = RouteTable6::new(
            &a,
            &[StaticRoute6 {
                prefix: "::/0".parse().unwrap(),
                via: Some(ip6("fe80::fe")),
                port: Some(1),
            }],
        )
        .unwrap();
        let v = base
            .with_addrs_routes(Arc::new(a), Arc::new(base.routes().clone()))
            .with_routes6(Arc::new(r6));
        // the IPv4 side is unchanged
        assert!(matches!(v.next_hop(ip("10.0.0.5")), Resolve::Ready(_)));
        assert_eq!(
            v.next_hop6(ip6("2001:db8:1::9")),
            Resolve6::Unresolved {
                ip: ip6("2001:db8:1::9"),
                port: 1
            }
        );
        assert_eq!(
            v.next_hop6(ip6("2001:db8:77::9")),
            Resolve6::Unresolved {
                ip: ip6("fe80::fe"),
                port: 1
            }
        );
        assert_eq!(v.next_hop6(ip6("fe80::9")), Resolve6::NoRoute);
        let mut n = NeighTable::<u128>::new(NeighConfig::default());
        n.learn(ip6("fe80::fe"), GW, 1, 0, true);
        n.learn(ip6("2001:db8:1::9"), RS, 0, 0, true); // the wrong port
        let v = v.with_neigh6(Arc::new(n.snapshot()));
        assert!(matches!(
            v.next_hop6(ip6("2001:db8:77::9")),
            Resolve6::Ready(NextHop6 { port: 1, dst_mac: GW, src_ip, .. })
                if src_ip == ip6("2001:db8:1::1")
        ));
        assert_eq!(v.on_link6(ip6("2001:db8:1::9")), Some(1));
        assert_eq!(v.on_link6(ip6("2001:db8:2::9")), None);
        assert!(matches!(
            v.next_hop6(ip6("2001:db8:1::9")),
            Resolve6::Unresolved { port: 1, .. }
        ));
        assert_eq!(v.route6(ip6("2001:db8:1::9")).unwrap().port, 1);
        assert_eq!(
            NetView::default().next_hop6(ip6("2001:db8:1::9")),
            Resolve6::NoRoute
        );
    }

    #[test]
    fn no_route_and_on_link() {
        let mut a = OwnAddrs::new();
        a.add_port_addr(0, "10.0.0.1/24".parse::<Ipv4Cidr>().unwrap())
            .unwrap();
        let r = RouteTable::new(&a, &[]).unwrap();
        let v = NetView::default().with_addrs_routes(Arc::new(a), Arc::new(r));
        // route exists but the view has no port 0
        assert_eq!(v.next_hop(ip("10.0.0.9")), Resolve::NoRoute);
        assert_eq!(v.next_hop(ip("11.0.0.9")), Resolve::NoRoute);
        let v = view();
        assert_eq!(v.on_link(ip("192.168.1.77")), Some(1));
        assert_eq!(v.on_link(ip("8.8.8.8")), None);
        assert!(v.addrs().is_local(ip("10.0.0.1")));
        assert_eq!(v.port(1).unwrap().mtu, 9000);
        assert!(v.port(2).is_none());
    }
}
