//! The index + records table itself ([`ConnTable`]): construction,
//! lookups (staged for bursts), record access, the sweep; and what its
//! lookups and inserts return.

use super::bucket::{second_of, Bucket, EMPTY, EMPTY_BUCKET, REPLY, SLOTS};
use super::clock::tick_reached;
use super::limits::{EMBRYONIC_GRACE_MS, MAX_EMBRYONIC_GRACE_MS};
use super::probe::{Probe, NO_SLOT, UNKNOWN_SLOT};
use super::record::{Conn, Record, TableKey, F_USED};
use crate::hint;
use crate::net::meta::Seed;

/// End of the free-record list.
pub(super) const NO_FREE: u32 = u32::MAX;

/// A lookup hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Record index.
    pub idx: u32,
    /// Matched by the reply (RS → client) tuple.
    pub reply: bool,
}

/// Why an insert failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertError {
    /// No free record or index slot and nothing evictable.
    Full,
}

/// Outcome of an insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inserted<R = Conn> {
    /// The new record's index, or why there is none.
    pub result: Result<u32, InsertError>,
    /// A connection evicted to make room (its counters must be released),
    /// possibly even when `result` is an error.
    pub evicted: Option<R>,
}

/// The per-lcore connection table (see the module docs).
pub struct ConnTable<R: Record = Conn> {
    pub(super) recs: Vec<R>,
    /// Head of the free-record list, threaded through the free records'
    /// `caddr` fields (no separate array: 64 bytes per connection in all).
    pub(super) free_head: u32,
    pub(super) buckets: Vec<Bucket>,
    /// Bytes of `recs` + `buckets` advised to transparent huge pages.
    huge: usize,
    pub(super) mask: u32,
    seed: Seed,
    cursor: u32,
    /// Where the eviction scan of a full table goes on.
    pub(super) evict_cursor: u32,
    /// The next eviction candidate whose in-key hash the scan computed
    /// (to prefetch its buckets) and that hash, so that evicting it does
    /// not hash it again; `NO_FREE` when none. Cleared when that record
    /// is removed (only then can its key change).
    pub(super) victim_hint: (u32, u32),
    pub(super) len: u32,
    /// How long an embryonic connection is safe from eviction (ms).
    pub(super) grace: u32,
}

impl<R: Record> ConnTable<R> {
    /// A table for `capacity` connections (1 ..= 2^30), hashing with `seed`.
    /// All memory is allocated here.
    pub fn new(capacity: u32, seed: u32) -> Self {
        let cap = capacity.clamp(1, 1 << 30);
        let nbuckets = ((cap as usize * 4).div_ceil(SLOTS))
            .next_power_of_two()
            .max(2);
        // Reserve first, advise huge pages, then write: pages faulted in
        // before the advice would stay 4 KiB.
        let mut recs: Vec<R> = Vec::with_capacity(cap as usize);
        let mut buckets = Vec::with_capacity(nbuckets);
        let huge = hint::advise_hugepages(&recs) + hint::advise_hugepages(&buckets);
        recs.extend((0..cap).map(|i| {
            let mut r = R::default();
            r.set_next_free(if i + 1 < cap { i + 1 } else { NO_FREE });
            r
        }));
        buckets.resize(nbuckets, EMPTY_BUCKET);
        Self {
            recs,
            free_head: 0,
            huge,
            buckets,
            mask: (nbuckets - 1) as u32,
            seed: Seed::new(seed),
            cursor: 0,
            evict_cursor: 0,
            victim_hint: (NO_FREE, 0),
            len: 0,
            grace: EMBRYONIC_GRACE_MS,
        }
    }

    /// How long (ms, at most [`MAX_EMBRYONIC_GRACE_MS`]) an embryonic
    /// connection without a packet is safe from eviction when the table is
    /// full; 0 makes every embryonic connection evictable at once (a
    /// handshake in progress can then be lost to a flood).
    pub fn set_embryonic_grace(&mut self, ms: u32) {
        self.grace = ms.min(MAX_EMBRYONIC_GRACE_MS);
    }

    /// Connections in the table.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Maximum connections.
    pub fn capacity(&self) -> u32 {
        self.recs.len() as u32
    }

    /// Bytes allocated for records and index (the free list lives inside
    /// the free records).
    pub fn memory_bytes(&self) -> usize {
        self.recs.len() * std::mem::size_of::<R>()
            + self.buckets.len() * std::mem::size_of::<Bucket>()
    }

    /// Bytes of the table advised to transparent huge pages (0 when the
    /// kernel's THP setting is `never` or the table is under 2 MiB).
    pub fn huge_bytes(&self) -> usize {
        self.huge
    }

    /// Take a free record off the list.
    #[inline]
    pub(super) fn pop_free(&mut self) -> Option<u32> {
        let idx = self.free_head;
        let next = self.recs.get(idx as usize)?.next_free();
        self.free_head = next;
        Some(idx)
    }

    /// Put a record (not in use) back on the free list.
    #[inline]
    pub(super) fn push_free(&mut self, idx: u32) {
        if let Some(r) = self.recs.get_mut(idx as usize) {
            r.set_flags(0);
            r.set_next_free(self.free_head);
            self.free_head = idx;
        }
    }

    /// The hash of `key` for this table.
    #[inline]
    pub fn hash(&self, key: &R::Key) -> u32 {
        key.hash_with(self.seed)
    }

    /// First stage of a burst lookup: prefetch the primary bucket of
    /// `hash` (where inserts put an entry whenever it has room).
    #[inline]
    pub fn touch(&self, hash: u32) {
        if let Some(k) = self.buckets.get((hash & self.mask) as usize) {
            hint::prefetch(k);
        }
    }

    /// Second stage of a burst lookup: once [`Self::touch`] has brought the
    /// primary bucket in, prefetch the first record whose signature matches
    /// there, or, when none does, the secondary bucket (the entry was
    /// displaced, or this is a new flow). The record misses of a whole burst
    /// then overlap too.
    #[inline(always)]
    pub fn touch_records(&self, hash: u32) {
        let b1 = hash & self.mask;
        let Some(bucket) = self.buckets.get(b1 as usize) else {
            return;
        };
        // the first match only: two entries with one signature in a
        // bucket are rare, and the lookup still finds the second
        for i in 0..SLOTS {
            // the signature first: it rarely matches, so most slots cost
            // one compare
            if bucket.sig[i] != hash {
                continue;
            }
            let r = bucket.idx[i];
            if r != EMPTY {
                if let Some(c) = self.recs.get((r & !REPLY) as usize) {
                    c.prefetch();
                    return;
                }
            }
        }
        if let Some(k) = self.buckets.get(self.second(hash, b1) as usize) {
            hint::prefetch(k);
        }
    }

    /// Look up `key` whose [`Self::hash`] is `hash`.
    #[inline(always)]
    pub fn lookup_hashed(&self, key: &R::Key, hash: u32) -> Option<Hit> {
        // the secondary bucket (and its address) only when the primary has
        // no match: rare, inserts prefer the primary
        let b1 = hash & self.mask;
        match self.scan_bucket(b1, key, hash) {
            Some((h, _)) => Some(h),
            None => self
                .scan_bucket(self.second(hash, b1), key, hash)
                .map(|(h, _)| h),
        }
    }

    /// [`Self::lookup_hashed`], and on a miss what the insert of `key`
    /// needs ([`Probe`]): both buckets were read anyway, so noting their
    /// first free slot costs little. A hit costs what
    /// [`Self::lookup_hashed`] costs.
    #[inline(always)]
    pub fn lookup_probe(&self, key: &R::Key, hash: u32) -> Result<Hit, Probe> {
        self.lookup_probe_rec(key, hash).map(|(h, _)| h)
    }

    /// [`Self::lookup_probe`] returning a hit's record too: the lookup
    /// has just compared its key, so the caller need not index (and check)
    /// it again.
    #[inline(always)]
    pub fn lookup_probe_rec(&self, key: &R::Key, hash: u32) -> Result<(Hit, &R), Probe> {
        let b1 = hash & self.mask;
        if let Some(h) = self.scan_bucket(b1, key, hash) {
            return Ok(h);
        }
        let b2 = self.second(hash, b1);
        if let Some(h) = self.scan_bucket(b2, key, hash) {
            return Ok(h);
        }
        let free = match self.free_in(b1) {
            Some(i) => i as u32,
            None => self
                .free_in(b2)
                .map_or(NO_SLOT, |i| SLOTS as u32 + i as u32),
        };
        Err(Probe { hash, b2, free })
    }

    /// A probe for `hash` that knows nothing of its buckets (the insert
    /// looks for a slot itself), for a key whose hash is known but whose
    /// lookup did not end in a miss just before.
    #[inline]
    pub fn unprobed(&self, hash: u32) -> Probe {
        Probe {
            hash,
            b2: self.second(hash, hash & self.mask),
            free: UNKNOWN_SLOT,
        }
    }

    /// Look `key` up in bucket `b` only (a freed slot keeps its stale
    /// signature, so a slot matches only with a reference and a signature;
    /// a record a slot refers to is in use).
    #[inline(always)]
    fn scan_bucket(&self, b: u32, key: &R::Key, hash: u32) -> Option<(Hit, &R)> {
        let bucket = self.buckets.get(b as usize)?;
        for i in 0..SLOTS {
            // the signature first: it rarely matches, so most slots cost
            // one compare
            if bucket.sig[i] != hash {
                continue;
            }
            let r = bucket.idx[i];
            if r == EMPTY {
                continue;
            }
            let reply = r & REPLY != 0;
            let idx = r & !REPLY;
            if let Some(c) = self.recs.get(idx as usize) {
                if c.key_is(key, reply) {
                    return Some((Hit { idx, reply }, c));
                }
            }
        }
        None
    }

    /// Look up `key`.
    #[inline]
    pub fn lookup(&self, key: &R::Key) -> Option<Hit> {
        self.lookup_hashed(key, self.hash(key))
    }

    /// The record at `idx`.
    #[inline]
    pub fn get(&self, idx: u32) -> Option<&R> {
        self.recs
            .get(idx as usize)
            .filter(|c| c.flags() & F_USED != 0)
    }

    /// The record at `idx`, mutable. Do not change its tuples.
    #[inline]
    pub fn get_mut(&mut self, idx: u32) -> Option<&mut R> {
        self.recs
            .get_mut(idx as usize)
            .filter(|c| c.flags() & F_USED != 0)
    }

    /// Store what a forwarded packet changes in record `idx` (in use): its
    /// state, flags and expiry, in one bounds-checked write.
    #[inline(always)]
    pub fn set_hot(&mut self, idx: u32, state: u8, flags: u8, expires: u32) {
        if let Some(m) = self.recs.get_mut(idx as usize) {
            m.set_hot(state, flags, expires);
        }
    }

    /// Store only a new expiry in record `idx` (in use): an established
    /// connection's ACK changes nothing else.
    #[inline(always)]
    pub fn set_expires(&mut self, idx: u32, expires: u32) {
        if let Some(m) = self.recs.get_mut(idx as usize) {
            m.set_expires(expires);
        }
    }

    /// The two candidate buckets of a hash (distinct).
    #[inline]
    pub(super) fn pair(&self, hash: u32) -> [u32; 2] {
        let b1 = hash & self.mask;
        [b1, self.second(hash, b1)]
    }

    /// The secondary bucket of `hash`, whose primary is `b1` (never `b1`).
    #[inline]
    pub(super) fn second(&self, hash: u32, b1: u32) -> u32 {
        second_of(hash, b1, self.mask)
    }

    /// Examine up to `budget` records from the rotating cursor and remove
    /// those expired at `now` (ms tick), calling `f` with each and its
    /// record index. Returns the number removed.
    pub fn sweep(&mut self, now: u32, budget: u32, mut f: impl FnMut(u32, &R)) -> u32 {
        let n = self.recs.len() as u32;
        let mut removed = 0;
        for _ in 0..budget.min(n) {
            let idx = self.cursor;
            self.cursor = if idx + 1 >= n { 0 } else { idx + 1 };
            let expired = self
                .get(idx)
                .is_some_and(|c| tick_reached(now, c.expires()));
            if expired {
                if let Some(c) = self.remove(idx) {
                    f(idx, &c);
                    removed += 1;
                }
            }
        }
        removed
    }

    /// Every connection in use (for listings; not for the fast path).
    pub fn iter(&self) -> impl Iterator<Item = &R> + '_ {
        self.recs.iter().filter(|c| c.flags() & F_USED != 0)
    }
}
