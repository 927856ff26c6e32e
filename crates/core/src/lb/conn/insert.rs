//! Inserting and removing connections: the free slot for a key (with one
//! level of cuckoo displacement), the insert placed by what a lookup miss
//! learned ([`Probe`]), and the unlinking of a removed or evicted record.

use super::bucket::{EMPTY, REPLY, SLOTS};
use super::probe::{Probe, NO_SLOT, UNKNOWN_SLOT};
use super::record::{Record, F_USED};
use super::table::{ConnTable, InsertError, Inserted, NO_FREE};

/// An index slot: (bucket, position in it).
type Slot = (u32, usize);

/// The [`Probe::free`] rank of slot `freed` for a key whose buckets are
/// `b1` and `b2` ([`NO_SLOT`] for none or another bucket).
#[inline]
fn rank_in(freed: Option<Slot>, b1: u32, b2: u32) -> u32 {
    match freed {
        Some((b, i)) if b == b1 => i as u32,
        Some((b, i)) if b == b2 => SLOTS as u32 + i as u32,
        _ => NO_SLOT,
    }
}

impl<R: Record> ConnTable<R> {
    pub(super) fn free_in(&self, b: u32) -> Option<usize> {
        self.buckets
            .get(b as usize)?
            .idx
            .iter()
            .position(|r| *r == EMPTY)
    }

    /// A free slot for `hash`: in its primary bucket if it has room (so
    /// that a lookup usually needs that one cache line only), else in its
    /// secondary bucket, else after moving one resident entry of either
    /// bucket to its own other bucket (one level of cuckoo displacement;
    /// bounded work).
    pub(super) fn free_slot(&mut self, hash: u32) -> Option<(u32, usize)> {
        let [b1, b2] = self.pair(hash);
        for b in [b1, b2] {
            if let Some(i) = self.free_in(b) {
                return Some((b, i));
            }
        }
        for b in [b1, b2] {
            for i in 0..SLOTS {
                let (sig, r) = match self.buckets.get(b as usize) {
                    Some(k) => (k.sig[i], k.idx[i]),
                    None => return None,
                };
                let [o1, o2] = self.pair(sig);
                let other = if o1 == b { o2 } else { o1 };
                if let Some(j) = self.free_in(other) {
                    let ob = &mut self.buckets[other as usize];
                    ob.sig[j] = sig;
                    ob.idx[j] = r;
                    self.buckets[b as usize].idx[i] = EMPTY;
                    return Some((b, i));
                }
            }
        }
        None
    }

    /// Insert `conn` (its `flags` get [`F_USED`]). NAT connections are also
    /// indexed by their reply tuple. `now` is the ms tick (for eviction).
    /// At most one connection is evicted; it is reported even when the
    /// insert still fails, so the caller can release its counters.
    pub fn insert(&mut self, conn: R, now: u32) -> Inserted<R> {
        let h = self.hash(&conn.in_key());
        self.insert_probed(conn, self.unprobed(h), now)
    }

    /// [`Self::insert`] of a `conn` whose in-key ([`Record::in_key`]) was just
    /// looked up with [`Self::lookup_probe`] and missed, `probe` being
    /// what that lookup returned (or [`Self::unprobed`] with the in-key's
    /// [`Self::hash`]): the same outcome and the same placement as
    /// [`Self::insert`], without hashing the key or scanning its buckets
    /// again.
    pub fn insert_probed(&mut self, mut conn: R, probe: Probe, now: u32) -> Inserted<R> {
        debug_assert_eq!(
            probe.hash,
            self.hash(&conn.in_key()),
            "probe of another key"
        );
        conn.set_flags(conn.flags() | F_USED);
        let mut evicted = None;
        let result = self.insert_inner(conn, probe, now, &mut evicted);
        Inserted { result, evicted }
    }

    fn insert_inner(
        &mut self,
        conn: R,
        probe: Probe,
        now: u32,
        evicted: &mut Option<R>,
    ) -> Result<u32, InsertError> {
        let h_in = probe.hash;
        let b1 = h_in & self.mask;
        let mut free = probe.free;
        let idx = if self.free_head == NO_FREE {
            // evict, and take the victim's record (what removing it and
            // popping the free list would give)
            let (v, known) = self.scan_victim(now).ok_or(InsertError::Full)?;
            let (c, [freed_in, freed_out]) = self.take(v, known).ok_or(InsertError::Full)?;
            *evicted = Some(c);
            if free != UNKNOWN_SLOT {
                // a slot the victim freed in the key's buckets may come
                // before the probe's (free_slot takes the first)
                free = free
                    .min(rank_in(freed_in, b1, probe.b2))
                    .min(rank_in(freed_out, b1, probe.b2));
            }
            v
        } else {
            self.pop_free().ok_or(InsertError::Full)?
        };
        let probed = match free {
            f if f < SLOTS as u32 => Some((b1, f as usize)),
            f if f < NO_SLOT => Some((probe.b2, (f - SLOTS as u32) as usize)),
            _ => None,
        };
        // a probe's slot is trusted only while still free
        let probed = probed.filter(|&(b, i)| {
            self.buckets
                .get(b as usize)
                .is_some_and(|k| k.idx[i % SLOTS] == EMPTY)
        });
        let slot_in = match probed.or_else(|| self.free_slot(h_in)) {
            Some(s) => Ok(s),
            None => self.evict_for(h_in, now, evicted),
        };
        let Ok((b1, i1)) = slot_in else {
            self.push_free(idx);
            return Err(InsertError::Full);
        };
        self.buckets[b1 as usize].sig[i1] = h_in;
        self.buckets[b1 as usize].idx[i1] = idx;
        if conn.is_nat() {
            let h = self.hash(&conn.out_key());
            let slot_out = match self.free_slot(h) {
                Some(s) => Ok(s),
                None => self.evict_for(h, now, evicted),
            };
            let Ok((b2, i2)) = slot_out else {
                self.unlink(h_in, idx);
                self.push_free(idx);
                return Err(InsertError::Full);
            };
            self.buckets[b2 as usize].sig[i2] = h;
            self.buckets[b2 as usize].idx[i2] = idx | REPLY;
        }
        self.recs[idx as usize] = conn;
        self.len += 1;
        Ok(idx)
    }

    /// Clear the slot referencing `r` among the buckets of `hash` (the
    /// primary first; the secondary's address only when needed) and say
    /// which it was.
    #[inline]
    fn unlink(&mut self, hash: u32, r: u32) -> Option<(u32, usize)> {
        let b1 = hash & self.mask;
        if let Some(i) = self.clear_ref(b1, r) {
            return Some((b1, i));
        }
        let b2 = self.second(hash, b1);
        self.clear_ref(b2, r).map(|i| (b2, i))
    }

    #[inline]
    fn clear_ref(&mut self, b: u32, r: u32) -> Option<usize> {
        let bucket = self.buckets.get_mut(b as usize)?;
        let i = bucket.idx.iter().position(|x| *x == r)?;
        bucket.idx[i] = EMPTY;
        Some(i)
    }

    /// Unlink the record at `idx` from the index and take it out of the
    /// table without putting it on the free list: the record and the index
    /// slots it freed (in-key, and for NAT reply-key). None if not in use.
    /// `known` is its in-key hash when the caller has it.
    #[inline(always)]
    fn take(&mut self, idx: u32, known: Option<u32>) -> Option<(R, [Option<Slot>; 2])> {
        let c = *self.get(idx)?;
        let h = match known {
            Some(h) => h,
            None => self.hash(&c.in_key()),
        };
        if self.victim_hint.0 == idx {
            // its key may change once it is free
            self.victim_hint.0 = NO_FREE;
        }
        let freed_in = self.unlink(h, idx);
        let freed_out = if c.is_nat() {
            let h = self.hash(&c.out_key());
            self.unlink(h, idx | REPLY)
        } else {
            None
        };
        if let Some(r) = self.recs.get_mut(idx as usize) {
            r.set_flags(0);
        }
        self.len -= 1;
        Some((c, [freed_in, freed_out]))
    }

    /// Remove the record at `idx`, returning it (None if not in use).
    pub fn remove(&mut self, idx: u32) -> Option<R> {
        let (c, _) = self.take(idx, None)?;
        self.push_free(idx);
        Some(c)
    }
}
