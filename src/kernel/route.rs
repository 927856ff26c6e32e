//! Device routes over rtnetlink: what `ip route add/del ADDR/LEN dev IF
//! scope link table T proto P` and `ip route show table T proto P` do,
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
use std::net::Ipv4Addr;

/// An IPv4 route through a device, without a gateway (scope link), in a
/// routing table, tagged with a routing protocol number (`RTPROT_*`; a
/// value of its own lets its owner find its routes again).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevRoute {
    /// The destination.
    pub dst: Ipv4Addr,
    /// Its prefix length (32 for a VIP).
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
        msg.header.address_family = AddressFamily::Inet;
        msg.header.destination_prefix_length = self.prefix_len;
        // a table past 255 goes in RTA_TABLE alone
        msg.header.table = u8::try_from(self.table).unwrap_or(RouteHeader::RT_TABLE_UNSPEC);
        msg.header.protocol = RouteProtocol::from(self.protocol);
        msg.header.scope = RouteScope::Link;
        msg.header.kind = RouteType::Unicast;
        msg.attributes
            .push(RouteAttribute::Destination(RouteAddress::Inet(self.dst)));
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

    /// The IPv4 routes through a device of `table` tagged `protocol`, in
    /// the kernel's order (a dump of every IPv4 route, filtered here).
    pub fn routes(&mut self, table: u32, protocol: u8) -> Result<Vec<DevRoute>, KernelError> {
        let op = Op::new(
            "netlink",
            format!("cannot list the routes of table {table}"),
        );
        let mut msg = RouteMessage::default();
        msg.header.address_family = AddressFamily::Inet;
        let replies = self.exchange(&op, RouteNetlinkMessage::GetRoute(msg), NLM_F_DUMP)?;
        let mut out = Vec::new();
        for r in replies {
            let RouteNetlinkMessage::NewRoute(m) = r else {
                continue;
            };
            if m.header.address_family != AddressFamily::Inet
                || u8::from(m.header.protocol) != protocol
            {
                continue;
            }
            let mut t = u32::from(m.header.table);
            let (mut dst, mut oif) = (None, None);
            for a in &m.attributes {
                match a {
                    RouteAttribute::Table(x) => t = *x,
                    RouteAttribute::Destination(RouteAddress::Inet(d)) => dst = Some(*d),
                    RouteAttribute::Oif(o) => oif = Some(*o),
                    _ => {}
                }
            }
            let (Some(oif), true) = (oif, t == table) else {
                continue;
            };
            out.push(DevRoute {
                dst: dst.unwrap_or(Ipv4Addr::UNSPECIFIED),
                prefix_len: m.header.destination_prefix_length,
                oif,
                table,
                protocol,
            });
        }
        Ok(out)
    }
}
