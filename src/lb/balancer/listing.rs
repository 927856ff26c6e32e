//! The worker's connections as `ipvsadm -L -n -c` lists them.

use super::{Balancer, ConnEntry};
use crate::lb::conn::tick_of;
use crate::lb::spec::Proto;
use crate::lb::state::TcpState;
use crate::net::meta::PROTO_TCP;
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6};

impl Balancer {
    /// Connections for `ipvsadm -L -n -c`, at time `now` (ns). Iterating
    /// scans the whole table: call it when the control side asks, between
    /// bursts (collecting into a `Vec` allocates, off the fast path).
    pub fn conns(&self, now: u64) -> impl Iterator<Item = ConnEntry> + '_ {
        self.conns4(now).chain(self.conns6(now))
    }

    fn conns6(&self, now: u64) -> impl Iterator<Item = ConnEntry> + '_ {
        let now = tick_of(now);
        self.table6().iter().map(move |c| {
            let left = c.expires.wrapping_sub(now) as i32;
            let sa = |a: u128, p: u16| SocketAddr::V6(SocketAddrV6::new(a.into(), p, 0, 0));
            entry(
                c.proto,
                c.state,
                sa(c.caddr, c.cport),
                sa(c.vaddr, c.vport),
                sa(c.daddr, c.dport),
                left,
            )
        })
    }

    fn conns4(&self, now: u64) -> impl Iterator<Item = ConnEntry> + '_ {
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

/// One listing line.
fn entry(
    proto: u8,
    state: u8,
    client: SocketAddr,
    vip: SocketAddr,
    rs: SocketAddr,
    left_ms: i32,
) -> ConnEntry {
    ConnEntry {
        proto: if proto == PROTO_TCP {
            Proto::Tcp
        } else {
            Proto::Udp
        },
        client,
        vip,
        rs,
        state: if proto == PROTO_TCP {
            TcpState::from_u8(state).name()
        } else {
            "UDP"
        },
        expires_s: left_ms.max(0) as u32 / 1000,
    }
}
