//! Device routes over rtnetlink: what `ip route add/del ADDR/LEN dev IF
//! scope link table T proto P` and `ip route show table T proto P` do (`ip
//! -6 route` for an IPv6 destination: one type for both families),
//! without running `ip`. dirigo announces a VIP with such a route in its
//! exception namespace (a routing daemon redistributes it) and withdraws it
//! by removing it; a route through a device goes when the device goes, so
//! a dirigo that dies (its tap interfaces with it) withdraws as well.

use super::error::KernelError;
use super::link::{Op, Rtnl};
use netlink_packet_core::{NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_REPLACE};
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteHeader, RouteMessage, RouteProtocol, RouteScope, RouteType,
};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use std::net::IpAddr;

/// An IPv4 or IPv6 route through a device, without a gateway (scope link), in a
/// routing table, tagged with a routing protocol number (`RTPROT_*`; a
/// value of its own lets its owner find its routes again).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevRoute {
    /// The destination (its family is the route's).
    pub dst: IpAddr,
    /// Its prefix length (a VIP's: 32, or 128 for IPv6).
    pub prefix_len: u8,
    /// The output interface's index (in the socket's namespace).
    pub oif: u32,
    /// The routing table (`RT_TABLE_MAIN` is 254).
    pub table: u32,
    /// The protocol number (`proto` in `ip route`).
    pub protocol: u8,
}

impl DevRoute {
    fn message(&self) -> RouteMessage {
        let mut msg = RouteMessage::default();
        let (family, dst, scope) = match self.dst {
            IpAddr::V4(a) => (AddressFamily::Inet, RouteAddress::Inet(a), RouteScope::Link),
            // IPv6 routes have no scope (the kernel reports them universe)
            IpAddr::V6(a) => (
                AddressFamily::Inet6,
                RouteAddress::Inet6(a),
                RouteScope::Universe,
            ),
        };
        msg.header.address_family = family;
        msg.header.destination_prefix_length = self.prefix_len;
        // a table past 255 goes in RTA_TABLE alone
        msg.header.table = u8::try_from(self.table).unwrap_or(RouteHeader::RT_TABLE_UNSPEC);
        msg.header.protocol = RouteProtocol::from(self.protocol);
        msg.header.scope = scope;
        msg.header.kind = RouteType::Unicast;
        msg.attributes.push(RouteAttribute::Destination(dst));
        msg.attributes.push(RouteAttribute::Oif(self.oif));
        msg.attributes.push(RouteAttribute::Table(self.table));
        msg
    }

    fn op(&self, what: &str) -> Op {
        Op::new(
            format!("route {}/{}", self.dst, self.prefix_len),
            format!(
                "{what} (interface index {}, table {}, proto {})",
                self.oif, self.table, self.protocol
            ),
        )
    }
}

impl Rtnl {
    /// Add `r`, or replace the route to the same destination in its table
    /// (so adding twice is not an error, and a route left by an earlier
    /// run through another interface is taken over).
    pub fn add_route(&mut self, r: &DevRoute) -> Result<(), KernelError> {
        let op = r.op("cannot add it");
        let flags = NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
        self.exchange(&op, RouteNetlinkMessage::NewRoute(r.message()), flags)
            .map(drop)
    }

    /// Remove `r`; `false` when there was no such route (`No such
    /// process`, the kernel's answer), which is not an error.
    pub fn del_route(&mut self, r: &DevRoute) -> Result<bool, KernelError> {
        let op = r.op("cannot remove it");
        match self.exchange(&op, RouteNetlinkMessage::DelRoute(r.message()), NLM_F_ACK) {
            Ok(_) => Ok(true),
            Err(e) if e.errno() == Some(libc::ESRCH) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The routes (IPv4, then IPv6) through a device of `table` tagged
    /// `protocol`, in the kernel's order (a dump of every route of each
    /// family, filtered here).
    pub fn routes(&mut self, table: u32, protocol: u8) -> Result<Vec<DevRoute>, KernelError> {
        let op = Op::new(
            "netlink",
            format!("cannot list the routes of table {table}"),
        );
        let mut out = Vec::new();
        for family in [AddressFamily::Inet, AddressFamily::Inet6] {
            let mut msg = RouteMessage::default();
            msg.header.address_family = family;
            let replies = self.exchange(&op, RouteNetlinkMessage::GetRoute(msg), NLM_F_DUMP)?;
            for r in replies {
                let RouteNetlinkMessage::NewRoute(m) = r else {
                    continue;
                };
                if m.header.address_family != family || u8::from(m.header.protocol) != protocol {
                    continue;
                }
                let mut t = u32::from(m.header.table);
                // the default route has no destination attribute
                let mut dst = match family {
                    AddressFamily::Inet6 => IpAddr::from(std::net::Ipv6Addr::UNSPECIFIED),
                    _ => IpAddr::from(std::net::Ipv4Addr::UNSPECIFIED),
                };
                let mut oif = None;
                for a in &m.attributes {
                    match a {
                        RouteAttribute::Table(x) => t = *x,
                        RouteAttribute::Destination(RouteAddress::Inet(d)) => dst = (*d).into(),
                        RouteAttribute::Destination(RouteAddress::Inet6(d)) => dst = (*d).into(),
                        RouteAttribute::Oif(o) => oif = Some(*o),
                        _ => {}
                    }
                }
                let (Some(oif), true) = (oif, t == table) else {
                    continue;
                };
                out.push(DevRoute {
                    dst,
                    prefix_len: m.header.destination_prefix_length,
                    oif,
                    table,
                    protocol,
                });
            }
        }
        Ok(out)
    }
}
