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

/// The mark of the fwmark service real server slot `dest` is in (0: a
/// service of a protocol, an address and a port, or none).
fn fwmark_of(snap: &Snapshot, dest: u32) -> u32 {
    snap.dest_by_slot(dest)
        .map_or(0, |(s, _)| s.spec.key.fwmark)
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
        cip: 0,
        insert: None,
        fwmark: 0,
        sp,
    }
}

impl Balancer {
    /// Every live connection of this worker (IPv4, then IPv6, with their
    /// NAT64 and FullNAT legs and SYN proxy state) and every persistence
    /// template without connections (under `snap`, the snapshot the worker
    /// last forwarded with), as handoff entries handed to `out`. Returns
    /// how many were handed out.
    pub fn handoff_export(&self, snap: &Snapshot, now_ns: u64, mut out: impl FnMut(&Entry)) -> u64 {
        let mut n = 0;
        for idx in 0..self.export_slots() {
            if let Some(e) = self.export_slot(snap, now_ns, idx) {
                out(&e);
                n += 1;
            }
        }
        n
    }

    /// One slice of a sweep of the same entries while the worker runs (the
    /// crash checkpoint's, at housekeeping): from position `pos`, at most
    /// `budget` slots (IPv4 records, then IPv6, then templates), each entry
    /// handed to `out`, which answers false when it has no room for it.
    /// Returns where to go on from (`None`: the sweep is over) and the
    /// slots examined. Reads only; no allocation.
    pub fn checkpoint_step(
        &self,
        snap: &Snapshot,
        now_ns: u64,
        pos: u32,
        budget: u32,
        mut out: impl FnMut(&Entry) -> bool,
    ) -> (Option<u32>, u32) {
        let end = self.export_slots();
        let mut idx = pos;
        while idx < end && idx - pos < budget {
            if let Some(e) = self.export_slot(snap, now_ns, idx) {
                if !out(&e) {
                    return (Some(idx), idx - pos);
                }
            }
            idx += 1;
        }
        ((idx < end).then_some(idx), idx - pos)
    }

    /// The positions of a sweep: the IPv4 table's slots, the IPv6
    /// table's, the templates'.
    fn export_slots(&self) -> u32 {
        let n = self.table.slots() as u64 + self.table6.capacity() as u64;
        (n + self.persist.capacity() as u64).min(u32::MAX as u64) as u32
    }

    /// The entry at sweep position `idx`, if a live one is there.
    fn export_slot(&self, snap: &Snapshot, now_ns: u64, idx: u32) -> Option<Entry> {
        let now = tick_of(now_ns);
        let sp = self.sp.as_ref();
        let cap4 = self.table.slots();
        let cap6 = self.table6.capacity();
        if idx < cap4 {
            let c = self.table.get(idx)?;
            let l = left(c.expires, now)?;
            let aux = (c.flags & F_SYNPROXY != 0)
                .then(|| sp.and_then(|s| s.aux(idx)).copied())
                .flatten();
            let mut e = conn_entry(c, false, l, (0, 0, 0), aux);
            e.fwmark = fwmark_of(snap, c.dest);
            return Some(Entry::Conn(e));
        }
        let i6 = idx - cap4;
        if i6 < cap6 {
            let c = self.table6.get(i6)?;
            if crate::lb::snat::rule_of(c.svc, c.dest).is_some() {
                // SNAT's: no service to install it under (not handed over)
                return None;
            }
            let l = left(c.expires, now)?;
            let aux = (c.flags & F_SYNPROXY != 0)
                .then(|| sp.and_then(|s| s.lane::<V6>().aux(i6)).copied())
                .flatten();
            let leg = (c.ext.laddr4, c.ext.lport, c.ext.laddr6());
            let mut e = conn_entry(c, true, l, leg, aux);
            e.fwmark = fwmark_of(snap, c.dest);
            if c.ext.cip != 0 {
                // FullNAT's client address: where its header stands (a
                // record without its state is not handed over half)
                let h = self.cip.as_ref().and_then(|s| s.get(i6))?;
                e.cip = c.ext.cip;
                e.insert = Some((h.at(), h.len(), h.phase().number()));
            }
            return Some(Entry::Conn(e));
        }
        let t = self.persist.slot_info((i6 - cap6) as usize)?;
        if t.refs != 0 {
            return None; // comes back with its connections
        }
        let l = t.expires.checked_sub(now_ns).filter(|&l| l > 0)?;
        let want = template_dest_id(t.dest);
        let (s, d) = snap
            .dest_by_slot(want.slot)
            .filter(|(s, d)| d.id == want && template_svc(s.id) == t.svc)?;
        Some(Entry::Template(TemplateEntry {
            v6: s.spec.key.vip.is_ipv6(),
            proto: s.spec.key.proto.number(),
            vip: ip_bits(s.spec.key.vip),
            vport: s.spec.key.port,
            client: t.client,
            daddr: ip_bits(d.key.addr),
            dport: d.key.port,
            left_ms: (l / 1_000_000).min(u32::MAX as u64) as u32,
            fwmark: s.spec.key.fwmark,
        }))
    }
}
