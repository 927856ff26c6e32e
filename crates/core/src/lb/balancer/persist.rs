//! Persistence (`-p TIMEOUT [-M NETMASK]`) inside the worker: the glue
//! between [`Balancer`] and its [`PersistTable`].
//!
//! * Template key: service = [`template_svc`] of the service's [`SlotId`]
//!   (slot and generation, so a reused service slot never inherits its
//!   predecessor's templates), client = `client_addr & netmask`.
//! * Template value: [`template_dest`] of the real server's [`SlotId`]. A
//!   lookup is honoured only while that exact server (slot and generation)
//!   is still in the service's current snapshot and not overloaded; a
//!   quiesced (weight 0) server keeps its persistent clients, as in IPVS.
//!   A template naming a removed server is a miss (dropped on the spot when
//!   no connection is attached, otherwise re-pointed by the next attach).
//! * A connection that attached gets [`F_PERSIST`] and the service's
//!   current 4-bit netmask tag in its `flags`; when it ends (expiry on
//!   packet or sweep, reuse, eviction, `expire_nodest_conn`) it detaches
//!   with the key recomputed from its service slot and client address.
//! * Netmask change of a live service: its templates are dropped and the
//!   tag bumped, so connections attached under the old mask do not detach
//!   templates of the new one.
//!
//! Per lcore: templates are this worker's. The integrator must steer every
//! packet of one client (for `-M`, of one masked client network) to the
//! same worker, or persistence holds only per worker.

use super::{dest_load, Balancer};
use crate::lb::conn::{Conn, Conn6};
use crate::lb::ids::SlotId;
use crate::lb::persist::{client_key, client_key6, PersistTable};
use crate::lb::snapshot::{Dest, Service, Snapshot};

/// `Conn::flags` bit: the connection is attached to a persistence template.
pub const F_PERSIST: u8 = 8;
/// `Conn::flags` bits holding the netmask tag the connection attached under.
const TAG_SHIFT: u32 = 4;
pub(super) const TAG_BITS: u8 = 0xF0;

const NS_PER_S: u64 = 1_000_000_000;

/// The template service key of a service: slot (16 bits, services are at
/// most 65536) and low 16 bits of its generation.
#[inline]
pub fn template_svc(id: SlotId) -> u32 {
    (id.slot & 0xffff) | (id.gen << 16)
}

/// The template value naming a real server: generation and slot.
#[inline]
pub fn template_dest(id: SlotId) -> u64 {
    ((id.gen as u64) << 32) | id.slot as u64
}

/// Inverse of [`template_dest`].
#[inline]
pub fn template_dest_id(v: u64) -> SlotId {
    SlotId {
        slot: v as u32,
        gen: (v >> 32) as u32,
    }
}

/// What the worker remembers per service slot to detach connections
/// without a snapshot (sweep) and to notice netmask changes.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PersistCfg {
    /// [`template_svc`] of the slot's current service.
    key: u32,
    /// Netmask connections of this slot attach under (an IPv6 service:
    /// its prefix length).
    mask: u32,
    /// The IPv6 prefix length connections of this slot attach under.
    prefix6: u8,
    /// Bumped (mod 16) at each netmask change.
    tag: u8,
    /// The slot has been seen at all.
    known: bool,
    /// The service has been persistent under `key` (templates may exist).
    persistent: bool,
}

/// A connection ended: detach it from its template, if it attached.
#[inline]
pub(super) fn detach_conn(persist: &mut PersistTable, cfgs: &[PersistCfg], c: &Conn, now_ns: u64) {
    if c.flags & F_PERSIST == 0 {
        return;
    }
    let Some(cfg) = cfgs.get(c.svc as usize) else {
        return;
    };
    if (c.flags & TAG_BITS) >> TAG_SHIFT != cfg.tag {
        return; // attached under a former netmask: that template is gone
    }
    persist.detach(cfg.key, client_key(c.caddr, cfg.mask), now_ns);
}

/// [`detach_conn`] for an IPv6 connection.
#[inline]
pub(super) fn detach_conn6(
    persist: &mut PersistTable,
    cfgs: &[PersistCfg],
    c: &Conn6,
    now_ns: u64,
) {
    if c.flags & F_PERSIST == 0 {
        return;
    }
    let Some(cfg) = cfgs.get(c.svc as usize) else {
        return;
    };
    if (c.flags & TAG_BITS) >> TAG_SHIFT != cfg.tag {
        return;
    }
    persist.detach(cfg.key, client_key6(c.caddr, cfg.prefix6), now_ns);
}

impl Balancer {
    /// Bring the slot record of `svc` up to date; on a netmask change of a
    /// persistent service drop its templates (O(table), once per change).
    pub(super) fn persist_sync(&mut self, svc: &Service) {
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
        cfg.tag = (cfg.tag + 1) & (TAG_BITS >> TAG_SHIFT);
        cfg.persistent = true;
        if had {
            self.persist.remove_service(key);
        }
    }

    /// Sync every service of a new snapshot (at burst boundaries).
    pub(super) fn persist_sync_all(&mut self, snap: &Snapshot) {
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
    pub(super) fn persist_pick<'s>(
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
    pub(super) fn persist_attach(
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
    pub(super) fn persist_attach_bits(
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
        Some(F_PERSIST | (tag << TAG_SHIFT))
    }
}
