//! The worker's connections as `ipvsadm -L -n -c` lists them, and its
//! census: every way of counting them, taken at one moment.

use super::machine::Balancer;
use crate::lb::conn::{tick_of, Record, F_ACTIVE};
use crate::lb::snat::rule_of;
use crate::lb::spec::{Method, Proto};
use crate::lb::state::TcpState;
use crate::lb::verdict::ConnEntry;
use crate::net::meta::PROTO_TCP;
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6};
use std::sync::atomic::Ordering::Relaxed;

/// A worker's connections counted every way at one moment (between two
/// bursts, by the worker itself), so that the counts can be compared
/// exactly while connections still expire: a reading of the published
/// gauges and a walk made at two moments differ by what ended between
/// them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// The tables' own counts (IPv4 + IPv6).
    pub entries: u64,
    /// Records in use, found by walking both tables (what `-L -c` lists).
    pub walked: u64,
    /// Walked records flagged active (ESTABLISHED).
    pub walked_active: u64,
    /// The published connection gauge (what `lcores` and the metrics say).
    pub gauge: u64,
    /// Active connections over every real-server slot's counters, those
    /// of removed servers too.
    pub active: u64,
    /// Inactive connections over every real-server slot's counters.
    pub inactive: u64,
}

impl Census {
    /// Whether every count agrees: entries, walk, gauge, the counters'
    /// active + inactive, and the active ones by flag and by counter.
    pub fn consistent(&self) -> bool {
        self.entries == self.walked
            && self.gauge == self.entries
            && self.active + self.inactive == self.entries
            && self.walked_active == self.active
    }
}

impl Balancer {
    /// Connections for `ipvsadm -L -n -c`, at time `now` (ns). Iterating
    /// scans the whole table: call it when the control side asks, between
    /// bursts (collecting into a `Vec` allocates, off the fast path).
    pub fn conns(&self, now: u64) -> impl Iterator<Item = ConnEntry> + '_ {
        self.conns4(now).chain(self.conns6(now))
    }

    /// Count the connections every way ([`Census`]). Walks both tables:
    /// call it between bursts, when the control side asks.
    pub fn census(&self) -> Census {
        let mut walked = 0;
        let mut walked_active = 0;
        let flags = self
            .table
            .iter()
            .map(|c| c.flags)
            .chain(self.table6.iter().map(|c| c.flags()));
        for f in flags {
            walked += 1;
            walked_active += u64::from(f & F_ACTIVE != 0);
        }
        let (mut active, mut inactive) = self.stats.dests.iter().fold((0, 0), |(a, i), t| {
            (
                a + u64::from(t.active.load(Relaxed)),
                i + u64::from(t.inactive.load(Relaxed)),
            )
        });
        // SNAT's connections have no real server: their rules' counter
        // stands for one (the active ones by flag)
        let snat = self.stats.snat_live.load(Relaxed);
        if snat != 0 {
            let snat_active = self
                .table6
                .iter()
                .filter(|c| rule_of(c.svc, c.dest).is_some() && c.flags & F_ACTIVE != 0)
                .count() as u64;
            active += snat_active;
            inactive += u64::from(snat).saturating_sub(snat_active);
        }
        Census {
            entries: u64::from(self.table.len()) + u64::from(self.table6.len()),
            walked,
            walked_active,
            gauge: self.stats.conns.load(Relaxed),
            active,
            inactive,
        }
    }

    fn conns6(&self, now: u64) -> impl Iterator<Item = ConnEntry> + '_ {
        let now = tick_of(now);
        self.table6.iter().map(move |c| {
            // an IPv4 FullNAT connection's addresses are IPv4's, mapped
            let v4 = c.method == Method::FullNat && c.ext.laddr4 != 0;
            let sa = move |a: u128, p: u16| {
                if v4 {
                    SocketAddr::V4(SocketAddrV4::new((a as u32).into(), p))
                } else {
                    SocketAddr::V6(SocketAddrV6::new(a.into(), p, 0, 0))
                }
            };
            entry(
                c.proto,
                c.state,
                sa(c.caddr, c.cport),
                sa(c.vaddr, c.vport),
                sa(c.daddr, c.dport),
                c.expires.wrapping_sub(now) as i32,
            )
        })
    }

    fn conns4(&self, now: u64) -> impl Iterator<Item = ConnEntry> + '_ {
        let now = tick_of(now);
        self.table.iter().map(move |c| {
            let sa = |a: u32, p: u16| SocketAddr::V4(SocketAddrV4::new(a.into(), p));
            entry(
                c.proto,
                c.state,
                sa(c.caddr, c.cport),
                sa(c.vaddr, c.vport),
                sa(c.daddr, c.dport),
                c.expires.wrapping_sub(now) as i32,
            )
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
