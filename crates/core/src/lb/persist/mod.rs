//! Persistence templates (ipvsadm `-p TIMEOUT [-M NETMASK]`).
//!
//! IPVS keeps, per persistent service, a "template" connection keyed by the
//! client address under the persistence netmask: while it lives, every new
//! connection from that client (network) to the service goes to the same
//! real server. [`PersistTable`] is dirigo's version: one per worker lcore,
//! preallocated at a fixed capacity, never allocating afterwards.
//!
//! Lifetime, following IPVS (`ip_vs_sched_persist`, `ip_vs_conn_expire`):
//! * a new connection that uses a template [`attach`](PersistTable::attach)es
//!   to it: its reference count goes up and it expires no earlier than
//!   `now + timeout`;
//! * a template never expires while connections are attached (IPVS re-arms
//!   the timer of a template that still controls connections);
//! * when a connection ends it [`detach`](PersistTable::detach)es: the
//!   template then lives at least `timeout` longer — it outlives its last
//!   connection by the timeout;
//! * expiry is lazy on lookup and amortized by [`expire`](PersistTable::expire)
//!   with a work budget.
//!
//! The reference count counts connections attached under the key, whichever
//! server they went to: if the caller re-points a template (its server was
//! removed or is unusable), older connections still attached keep it alive.
//!
//! A removed real server loses its templates ([`remove_dest`]); a quiesced
//! one keeps them (IPVS without `expire_quiescent_template`) — the caller
//! decides which to call.
//!
//! Layout: buckets of [`BUCKET`] entries; a key may live in either of two
//! buckets chosen by a seeded hash, and goes to the emptier one. An insert
//! whose two buckets are full (after reclaiming expired entries there)
//! fails with [`PersistFull`] and is counted in [`PersistStats::full`]; the
//! caller then schedules the connection without persistence. The usable
//! capacity is therefore a little below [`capacity`](PersistTable::capacity):
//! with the 25% headroom [`PersistTable::with_capacity`] adds, inserts start
//! failing only near the requested count.
//!
//! Per lcore: each worker owns its table (`Balancer` holds one), so
//! persistence holds across the connections that reach the same worker.
//! The integrator makes all connections of one client address land on the
//! same worker (RSS / steering by source address only for persistent
//! services; with `-M` coarser than /32, by the masked source address, or
//! clients of one network may be bound per worker).
//!
//! [`remove_dest`]: PersistTable::remove_dest

use crate::lb::sched::hash::hash_seeded;

/// Entries per bucket.
pub const BUCKET: usize = 4;

/// The client key under a persistence netmask (`addr & netmask`, host order).
#[inline]
pub fn client_key(addr: u32, netmask: u32) -> u32 {
    addr & netmask
}

/// The client key of an IPv6 client under a persistence prefix length:
/// the masked address folded to 32 bits
/// ([`crate::lb::snapshot::fold6`]). Two networks that fold alike share
/// their templates: both stay sticky (each always finds the same key),
/// only their real server is the same one.
#[inline]
pub fn client_key6(addr: u128, prefix: u8) -> u32 {
    crate::lb::snapshot::fold6(addr & mask6(prefix))
}

/// The IPv6 netmask of a prefix length (0..=128).
#[inline]
pub fn mask6(prefix: u8) -> u128 {
    match prefix {
        0 => 0,
        p if p >= 128 => u128::MAX,
        p => !(u128::MAX >> p),
    }
}

/// An insert found no room (both candidate buckets hold live templates).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("persistence table full")]
pub struct PersistFull;

/// Counters of a [`PersistTable`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PersistStats {
    /// Templates created.
    pub inserted: u64,
    /// Templates re-pointed to another server by [`PersistTable::attach`].
    pub replaced: u64,
    /// Templates that expired (lazily or by [`PersistTable::expire`]).
    pub expired: u64,
    /// Templates removed explicitly (key, server or service removal).
    pub removed: u64,
    /// Inserts refused for lack of room.
    pub full: u64,
}

/// A template as seen from outside (listing, tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TemplateInfo {
    /// Service id.
    pub svc: u32,
    /// Masked client address.
    pub client: u32,
    /// Real server (stable id or index, as the caller chose).
    pub dest: u64,
    /// Connections attached.
    pub refs: u32,
    /// Expiry time (same clock as `now`); meaningless while `refs > 0`.
    pub expires: u64,
    /// The persistence timeout.
    pub timeout: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    used: bool,
    svc: u32,
    client: u32,
    refs: u32,
    dest: u64,
    expires: u64,
    timeout: u64,
}

impl Slot {
    #[inline]
    fn dead(&self, now: u64) -> bool {
        self.refs == 0 && now >= self.expires
    }

    fn info(&self) -> TemplateInfo {
        TemplateInfo {
            svc: self.svc,
            client: self.client,
            dest: self.dest,
            refs: self.refs,
            expires: self.expires,
            timeout: self.timeout,
        }
    }
}

/// A fixed-capacity table of persistence templates (one per worker).
#[derive(Debug)]
pub struct PersistTable {
    slots: Box<[Slot]>,
    bucket_mask: usize,
    seed: u64,
    len: usize,
    sweep: usize,
    stats: PersistStats,
}

impl PersistTable {
    /// A table for about `n` templates (25% headroom, rounded up to a power
    /// of two buckets), with a fixed hash seed.
    pub fn with_capacity(n: usize) -> PersistTable {
        PersistTable::with_capacity_seed(n, 0x0070_6572_7369_7374)
    }

    /// As [`PersistTable::with_capacity`] with a hash seed (use a random
    /// one in production so clients cannot aim at buckets).
    pub fn with_capacity_seed(n: usize, seed: u64) -> PersistTable {
        let want = n.max(1).saturating_add(n / 4);
        let buckets = want.div_ceil(BUCKET).next_power_of_two().max(2);
        PersistTable {
            slots: vec![Slot::default(); buckets * BUCKET].into_boxed_slice(),
            bucket_mask: buckets - 1,
            seed,
            len: 0,
            sweep: 0,
            stats: PersistStats::default(),
        }
    }

    /// Number of entries (the absolute maximum of templates).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Templates stored (including expired ones not yet reclaimed).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no template is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The counters.
    pub fn stats(&self) -> PersistStats {
        self.stats
    }

    /// First slot of the two candidate buckets of a key.
    #[inline]
    fn buckets(&self, svc: u32, client: u32) -> [usize; 2] {
        let h = hash_seeded(((svc as u64) << 32) | client as u64, self.seed);
        let b1 = h as usize & self.bucket_mask;
        let mut b2 = (h >> 32) as usize & self.bucket_mask;
        if b2 == b1 {
            b2 = b1 ^ 1;
        }
        [b1 * BUCKET, b2 * BUCKET]
    }

    #[inline]
    fn find(&self, svc: u32, client: u32) -> Option<usize> {
        for start in self.buckets(svc, client) {
            for i in start..start + BUCKET {
                let s = self.slots.get(i)?;
                if s.used && s.svc == svc && s.client == client {
                    return Some(i);
                }
            }
        }
        None
    }

    fn clear(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i) {
            if s.used {
                *s = Slot::default();
                self.len -= 1;
            }
        }
    }

    /// The live template of `(svc, client)`: its server, or `None`. Does not
    /// refresh it ([`PersistTable::attach`] does); an expired one found here
    /// is reclaimed.
    #[inline]
    pub fn lookup(&mut self, svc: u32, client: u32, now: u64) -> Option<u64> {
        let i = self.find(svc, client)?;
        let s = *self.slots.get(i)?;
        if s.dead(now) {
            self.clear(i);
            self.stats.expired += 1;
            return None;
        }
        Some(s.dest)
    }

    /// The template of `(svc, client)`, live or not, without side effects.
    pub fn get(&self, svc: u32, client: u32) -> Option<TemplateInfo> {
        self.find(svc, client)
            .and_then(|i| self.slots.get(i))
            .map(Slot::info)
    }

    /// A new connection from `client` to `svc` goes to `dest` under this
    /// template: create it, or refresh it (re-pointing it to `dest` if it
    /// named another server). Attaches the connection (reference + 1) and
    /// pushes expiry to at least `now + timeout`.
    pub fn attach(
        &mut self,
        svc: u32,
        client: u32,
        dest: u64,
        timeout: u64,
        now: u64,
    ) -> Result<(), PersistFull> {
        let expires = now.saturating_add(timeout);
        if let Some(i) = self.find(svc, client) {
            if let Some(s) = self.slots.get_mut(i) {
                if s.dead(now) {
                    s.expires = expires;
                } else {
                    s.expires = s.expires.max(expires);
                }
                if s.dest != dest {
                    s.dest = dest;
                    self.stats.replaced += 1;
                }
                s.refs = s.refs.saturating_add(1);
                s.timeout = timeout;
                return Ok(());
            }
        }
        let Some(i) = self.free_slot(svc, client, now) else {
            self.stats.full += 1;
            return Err(PersistFull);
        };
        if let Some(s) = self.slots.get_mut(i) {
            *s = Slot {
                used: true,
                svc,
                client,
                refs: 1,
                dest,
                expires,
                timeout,
            };
            self.len += 1;
            self.stats.inserted += 1;
        }
        Ok(())
    }

    /// A free slot in the emptier candidate bucket, reclaiming expired
    /// templates of both buckets on the way.
    fn free_slot(&mut self, svc: u32, client: u32, now: u64) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None; // (used count, first free)
        for start in self.buckets(svc, client) {
            let mut used = 0;
            let mut free = None;
            for i in start..start + BUCKET {
                let Some(s) = self.slots.get(i) else {
                    continue;
                };
                if s.used && s.dead(now) {
                    self.clear(i);
                    self.stats.expired += 1;
                }
                if self.slots.get(i).is_some_and(|s| s.used) {
                    used += 1;
                } else if free.is_none() {
                    free = Some(i);
                }
            }
            if let Some(f) = free {
                if best.is_none_or(|b| used < b.0) {
                    best = Some((used, f));
                }
            }
        }
        best.map(|b| b.1)
    }

    /// A connection attached to `(svc, client)` ended: reference - 1, and
    /// the template lives at least `timeout` from now. Returns whether a
    /// live template was found (an expired one is reclaimed, not revived).
    pub fn detach(&mut self, svc: u32, client: u32, now: u64) -> bool {
        let Some(i) = self.find(svc, client) else {
            return false;
        };
        let Some(s) = self.slots.get_mut(i) else {
            return false;
        };
        if s.dead(now) {
            // Nothing attached and expired: stray detach, do not revive it.
            self.clear(i);
            self.stats.expired += 1;
            return false;
        }
        s.refs = s.refs.saturating_sub(1);
        s.expires = s.expires.max(now.saturating_add(s.timeout));
        true
    }

    /// Refresh `(svc, client)` (expiry at least `now + timeout`) without
    /// attaching a connection. Returns whether a live template was found.
    pub fn touch(&mut self, svc: u32, client: u32, now: u64) -> bool {
        if self.lookup(svc, client, now).is_none() {
            return false;
        }
        let Some(s) = self.find(svc, client).and_then(|i| self.slots.get_mut(i)) else {
            return false;
        };
        s.expires = s.expires.max(now.saturating_add(s.timeout));
        true
    }

    /// Drop the template of `(svc, client)` (e.g. its server is no longer
    /// usable). Returns whether one was there.
    pub fn remove(&mut self, svc: u32, client: u32) -> bool {
        match self.find(svc, client) {
            Some(i) => {
                self.clear(i);
                self.stats.removed += 1;
                true
            }
            None => false,
        }
    }

    /// Drop every template matching `f`; O(capacity).
    fn remove_where(&mut self, f: impl Fn(&Slot) -> bool) -> usize {
        let mut n = 0;
        for i in 0..self.slots.len() {
            if self.slots.get(i).is_some_and(|s| s.used && f(s)) {
                self.clear(i);
                n += 1;
            }
        }
        self.stats.removed += n as u64;
        n
    }

    /// A real server was removed: drop all its templates (a quiesced server
    /// keeps them; do not call this for it). O(capacity): a control event,
    /// not per packet. Returns how many were dropped.
    pub fn remove_dest(&mut self, dest: u64) -> usize {
        self.remove_where(|s| s.dest == dest)
    }

    /// A service was removed: drop all its templates. O(capacity).
    pub fn remove_service(&mut self, svc: u32) -> usize {
        self.remove_where(|s| s.svc == svc)
    }

    /// Reclaim expired templates, examining at most `budget` entries from
    /// where the previous call stopped (a full sweep takes
    /// `capacity / budget` calls). Returns how many expired.
    pub fn expire(&mut self, now: u64, budget: usize) -> usize {
        let cap = self.slots.len();
        let mut n = 0;
        for _ in 0..budget.min(cap) {
            let i = self.sweep;
            self.sweep = if i + 1 >= cap { 0 } else { i + 1 };
            if self.slots.get(i).is_some_and(|s| s.used && s.dead(now)) {
                self.clear(i);
                n += 1;
            }
        }
        self.stats.expired += n as u64;
        n
    }

    /// The template in slot `i`, if one is stored there (`i` below
    /// [`PersistTable::capacity`]; for sweeps a slice at a time).
    pub fn slot_info(&self, i: usize) -> Option<TemplateInfo> {
        self.slots.get(i).filter(|s| s.used).map(Slot::info)
    }

    /// Every stored template (for listings; O(capacity)).
    pub fn iter(&self) -> impl Iterator<Item = TemplateInfo> + '_ {
        self.slots.iter().filter(|s| s.used).map(Slot::info)
    }
}

#[cfg(test)]
mod tests;
