//! A stopped worker's connections and persistence templates as handoff
//! entries (after the worker loop ended, never while it forwards).

use crate::lb::balancer::machine::Balancer;
use crate::lb::balancer::persist::keys::{template_dest_id, template_svc};
use crate::lb::conn::{tick_of, ConnOf, F_SYNPROXY};
use crate::lb::handoff::{ConnEntry, Entry, TemplateEntry};
use crate::lb::snapshot::Snapshot;
use crate::lb::synproxy::Aux;
use crate::net::family::V6;

/// An address as the entries keep it (IPv4 in the low 32 bits).
pub(super) fn ip_bits(a: std::net::IpAddr) -> u128 {
    match a {
        std::net::IpAddr::V4(a) => u32::from(a) as u128,
        std::net::IpAddr::V6(a) => u128::from(a),
    }
}

/// The milliseconds a timer at tick `expires` has left at tick `now`
/// (None: run out).
fn left(expires: u32, now: u32) -> Option<u32> {
    let l = expires.wrapping_sub(now) as i32;
    (l > 0).then_some(l as u32)
}

/// A record as an entry, with what it has left and its SYN proxy state.
fn conn_entry<A: Copy + Into<u128>, X>(
    c: &ConnOf<A, X>,
    v6: bool,
    left_ms: u32,
    leg: (u32, u16, u128),
    sp: Option<Aux>,
) -> ConnEntry {
    ConnEntry {
        v6,
        proto: c.proto,
        state: c.state,
        flags: c.flags,
        method: c.method,
        caddr: c.caddr.into(),
        vaddr: c.vaddr.into(),
        daddr: c.daddr.into(),
        cport: c.cport,
        vport: c.vport,
        dport: c.dport,
        left_ms,
        nat64: (leg.0, leg.1),
        laddr6: leg.2,
        sp,
    }
}

impl Balancer {
    /// Every live connection of this worker (IPv4, then IPv6, with their
    /// NAT64 legs and SYN proxy state) and every persistence template
    /// without connections (under `snap`, the snapshot the worker last
    /// forwarded with), as handoff entries handed to `out`. Returns how
    /// many were handed out.
    pub fn handoff_export(&self, snap: &Snapshot, now_ns: u64, mut out: impl FnMut(&Entry)) -> u64 {
        let now = tick_of(now_ns);
        let mut n = 0;
        let sp = self.sp.as_ref();
        for idx in 0..self.table.slots() {
            let Some(c) = self.table.get(idx) else {
                continue;
            };
            let Some(l) = left(c.expires, now) else {
                continue;
            };
            let aux = (c.flags & F_SYNPROXY != 0)
                .then(|| sp.and_then(|s| s.aux(idx)).copied())
                .flatten();
            out(&Entry::Conn(conn_entry(c, false, l, (0, 0, 0), aux)));
            n += 1;
        }
        for idx in 0..self.table6.capacity() {
            let Some(c) = self.table6.get(idx) else {
                continue;
            };
            let Some(l) = left(c.expires, now) else {
                continue;
            };
            let aux = (c.flags & F_SYNPROXY != 0)
                .then(|| sp.and_then(|s| s.lane::<V6>().aux(idx)).copied())
                .flatten();
            let leg = (c.ext.laddr4, c.ext.lport, c.ext.laddr6());
            out(&Entry::Conn(conn_entry(c, true, l, leg, aux)));
            n += 1;
        }
        for t in self.persist.iter().filter(|t| t.refs == 0) {
            let Some(l) = t.expires.checked_sub(now_ns).filter(|&l| l > 0) else {
                continue;
            };
            let want = template_dest_id(t.dest);
            let Some((s, d)) = snap
                .dest_by_slot(want.slot)
                .filter(|(s, d)| d.id == want && template_svc(s.id) == t.svc)
            else {
                continue;
            };
            let v6 = s.spec.key.vip.is_ipv6();
            out(&Entry::Template(TemplateEntry {
                v6,
                proto: s.spec.key.proto.number(),
                vip: ip_bits(s.spec.key.vip),
                vport: s.spec.key.port,
                client: t.client,
                daddr: ip_bits(d.key.addr),
                dport: d.key.port,
                left_ms: (l / 1_000_000).min(u32::MAX as u64) as u32,
            }));
            n += 1;
        }
        n
    }
}
