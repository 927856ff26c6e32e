//! The balancer's side of persistence: a service slot's record kept up
//! to date with the snapshot, the pick a template makes, the attach of a
//! new connection.

use super::keys::{
    template_dest, template_dest_id, template_svc, PersistCfg, NS_PER_S, TAGS, TAG_BITS, TAG_SHIFT,
};
use crate::lb::balancer::load::dest_load;
use crate::lb::balancer::machine::Balancer;
use crate::lb::persist::client_key;
use crate::lb::snapshot::{Dest, Service, Snapshot};

impl Balancer {
    /// Bring the slot record of `svc` up to date; on a netmask change of a
    /// persistent service drop its templates (O(table), once per change).
    pub(in crate::lb::balancer) fn persist_sync(&mut self, svc: &Service) {
        let Some(cfg) = self.pcfg.get_mut(svc.id.slot as usize) else {
            return;
        };
        let key = template_svc(svc.id);
        let (mask, prefix6) = if svc.spec.key.vip.is_ipv6() {
            (u32::from(svc.spec.prefix6), svc.spec.prefix6)
        } else {
            (u32::from(svc.spec.netmask), 128)
        };
        let persistent = svc.spec.persistent.is_some();
        if !cfg.known || cfg.key != key {
            // First sight, or the slot was reused: no connection of the
            // former owner is left (slot reuse rule), its templates never
            // match the new key and expire on their own.
            *cfg = PersistCfg {
                key,
                mask,
                prefix6,
                tag: cfg.tag,
                known: true,
                persistent,
            };
            return;
        }
        if !persistent || cfg.mask == mask {
            // Persistence switched off keeps the mask so that attached
            // connections still detach; their templates then expire.
            cfg.persistent |= persistent;
            return;
        }
        let had = cfg.persistent;
        cfg.mask = mask;
        cfg.prefix6 = prefix6;
        cfg.tag = (cfg.tag + 1) % TAGS;
        cfg.persistent = true;
        if had {
            self.persist.remove_service(key);
        }
    }

    /// Sync every service of a new snapshot (at burst boundaries).
    pub(in crate::lb::balancer) fn persist_sync_all(&mut self, snap: &Snapshot) {
        if self.persist_epoch == Some(snap.epoch) {
            return;
        }
        self.persist_epoch = Some(snap.epoch);
        for svc in snap.services() {
            self.persist_sync(svc);
        }
    }

    /// The real server the template of (`svc`, `client`) binds to, when it
    /// is still usable; `None` means: schedule.
    #[inline]
    pub(in crate::lb::balancer) fn persist_pick<'s>(
        &mut self,
        snap: &'s Snapshot,
        svc: &Service,
        client: u32,
        now_ns: u64,
    ) -> Option<&'s Dest> {
        svc.spec.persistent?;
        let tsvc = template_svc(svc.id);
        let ckey = client_key(client, u32::from(svc.spec.netmask));
        let want = template_dest_id(self.persist.lookup(tsvc, ckey, now_ns)?);
        let found = snap
            .dest_by_slot(want.slot)
            .filter(|(s, d)| s.id == svc.id && d.id == want);
        let Some((_, d)) = found else {
            // The server was removed: a miss. Drop the template unless
            // connections still hold it (then the next attach re-points it).
            if self.persist.get(tsvc, ckey).is_some_and(|t| t.refs == 0) {
                self.persist.remove(tsvc, ckey);
            }
            return None;
        };
        let overloaded = self
            .stats
            .dests
            .get(d.id.slot as usize)
            .is_some_and(|t| dest_load(t, d.weight, d.upper, d.lower).overloaded);
        if overloaded {
            return None;
        }
        Some(d)
    }

    /// Connection `idx` of persistent service `svc` went to `d`: create or
    /// refresh the template and attach the connection to it. When the table
    /// is full the connection simply stays unattached (counted in
    /// [`crate::lb::persist::PersistStats::full`]).
    pub(in crate::lb::balancer) fn persist_attach(
        &mut self,
        svc: &Service,
        client: u32,
        d: &Dest,
        idx: u32,
        now_ns: u64,
    ) {
        if let Some(bits) = self.persist_attach_bits(svc, client, d, now_ns) {
            if let Some(c) = self.table.get_mut(idx) {
                c.flags = (c.flags & !TAG_BITS) | bits;
            }
        }
    }

    /// The template part of [`Self::persist_attach`] for client key
    /// `client` (IPv4: the address, masked here; IPv6: [`client_key6`]):
    /// the flag bits the connection's record takes, None when it stays
    /// unattached.
    pub(in crate::lb::balancer) fn persist_attach_bits(
        &mut self,
        svc: &Service,
        client: u32,
        d: &Dest,
        now_ns: u64,
    ) -> Option<u8> {
        let timeout_s = svc.spec.persistent?;
        self.persist_sync(svc);
        let tag = self.pcfg.get(svc.id.slot as usize).map(|c| c.tag)?;
        let tsvc = template_svc(svc.id);
        let ckey = client_key(client, u32::from(svc.spec.netmask));
        let timeout = timeout_s as u64 * NS_PER_S;
        self.persist
            .attach(tsvc, ckey, template_dest(d.id), timeout, now_ns)
            .ok()?;
        Some((tag + 1) << TAG_SHIFT)
    }
}
