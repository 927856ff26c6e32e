//! The worker's connections as `ipvsadm -L -n -c` lists them.

use super::{Balancer, ConnEntry};
use crate::lb::conn::tick_of;
use crate::lb::spec::Proto;
use crate::lb::state::TcpState;
use crate::net::meta::PROTO_TCP;
use std::net::{SocketAddr, SocketAddrV4};

impl Balancer {
    /// Connections for `ipvsadm -L -n -c`, at time `now` (ns). Iterating
    /// scans the whole table: call it when the control side asks, between
    /// bursts (collecting into a `Vec` allocates, off the fast path).
    pub fn conns(&self, now: u64) -> impl Iterator<Item = ConnEntry> + '_ {
        let now = tick_of(now);
        self.table.iter().map(move |c| {
            let left = c.expires.wrapping_sub(now) as i32;
            let sa = |a: u32, p: u16| SocketAddr::V4(SocketAddrV4::new(a.into(), p));
            ConnEntry {
                proto: if c.proto == PROTO_TCP {
                    Proto::Tcp
                } else {
                    Proto::Udp
                },
                client: sa(c.caddr, c.cport),
                vip: sa(c.vaddr, c.vport),
                rs: sa(c.daddr, c.dport),
                state: if c.proto == PROTO_TCP {
                    TcpState::from_u8(c.state).name()
                } else {
                    "UDP"
                },
                expires_s: left.max(0) as u32 / 1000,
            }
        })
    }
}
