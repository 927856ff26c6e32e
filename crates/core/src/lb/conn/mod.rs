//! The index + records connection table: preallocated, never allocates
//! after [`ConnTable::new`], one 32-byte [`Conn`] record per connection
//! plus a bucketized open-addressing index. The workers keep IPv6
//! connections in it; their IPv4 table is the one-line table
//! ([`lines::LineTable`]), which shares [`Conn`], the eviction rules and
//! [`second_of`] with it.
//!
//! The table is generic over its record ([`Record`]): IPv4 connections are
//! [`Conn`] (the default, 64 bytes per connection in all), IPv6 ones
//! [`Conn6`] (in `v6.rs`: 96-byte records, 128 bytes per connection), each
//! in a table of its own so the IPv4 layout stays as it is.
//!
//! # Layout and memory per connection
//! * Records: `capacity` × 32 bytes (`#[repr(C, align(32))]`, two per cache
//!   line, never straddling one); the free list is threaded through the
//!   free records themselves (their `caddr` holds the next free index).
//! * Index: buckets of 8 slots, each bucket one 64-byte cache line holding 8
//!   32-bit signatures and 8 32-bit record references (bit 31 = the NAT reply
//!   direction). The index has `4 × capacity` slots rounded up to a power of
//!   two, i.e. 32 bytes per connection when `capacity` is a power of two.
//!
//! So a tracked connection costs 32 (record) + 32 (index share) = 64 bytes
//! (counted exactly by [`ConnTable::memory_bytes`] for a power-of-two
//! capacity). A DR/TUN connection uses one index slot, a NAT
//! connection two (request tuple client→VIP and reply tuple RIP→client); at
//! most 50% of index slots are ever used.
//!
//! # Lookup
//! Bucketized cuckoo hashing: a key has two candidate buckets derived from
//! its 32-bit hash (stored as the slot's signature, so either bucket of a
//! resident entry can be recomputed), a primary and a secondary. Inserts
//! go to the primary bucket when it has room, else to the secondary, else
//! one resident entry is displaced to its other bucket (one level, bounded
//! work). The index is at most half full, so nearly every entry sits in its
//! primary bucket and a lookup usually reads one index line plus the
//! record (at most two index lines). No tombstones: deletions just clear
//! the slot because lookups always scan both buckets when the primary has
//! no match. A miss has thus read both buckets: [`ConnTable::lookup_probe`]
//! returns what it saw ([`Probe`]) and [`ConnTable::insert_probed`] places
//! the new entry from it, exactly where [`ConnTable::insert`] would,
//! without hashing or scanning again (insertion and removal live in
//! `insert.rs`).
//!
//! A burst lookup runs in stages, so that the cache misses of a whole burst
//! overlap instead of following one another: [`ConnTable::touch`]
//! prefetches every key's primary bucket (the pipeline does it while it
//! classifies the burst), [`ConnTable::touch_records`] prefetches the
//! first record whose signature matches there (or the secondary bucket when
//! none does), and the lookups follow a few packets behind
//! (prefetch: [`crate::hint::prefetch`]).
//!
//! Records and buckets are advised to transparent huge pages
//! ([`crate::hint::advise_hugepages`]): with 4 KiB pages every random
//! lookup in a large table also missed the TLB.
//!
//! # Full table
//! When the record pool is exhausted, the insert scans at most
//! [`EVICT_SCAN`] records from a rotating eviction cursor for one that is
//! already expired or an embryonic TCP connection (SYN_RECV / SYN_SENT /
//! SYNACK) idle for at least [`EMBRYONIC_GRACE_MS`] (a handshake in progress
//! is never broken), and evicts the first it finds; otherwise the new flow is refused
//! ([`InsertError::Full`]) and the cursor has moved on, so the next insert
//! looks further. The scan is sequential: with a table full of SYN-flood
//! entries it finds a victim in the first record or two, instead of reading
//! every record of a key's buckets at random. When instead a key's two
//! index buckets are full (rare: the index is at most half full), the
//! victim is chosen among the records those buckets reference: an expired
//! one, else the embryonic one that expires first. ESTABLISHED and other
//! non-embryonic connections are never evicted, so a SYN flood cannot push
//! out real traffic. The caller counts evictions and refusals.
//!
//! # Clock and expiry
//! Times are a wrapping `u32` millisecond tick (`now_ns / 1_000_000`);
//! comparisons use wrapping differences, so timeouts must stay below 2^31 ms
//! ([`crate::lb::state::MAX_TIMEOUT_S`]). Expiry is amortized:
//! [`ConnTable::sweep`] examines `budget` records from a rotating cursor per
//! call, and the worker checks the expiry of every record a lookup finds and
//! expires it at once, so no packet ever uses an expired connection; an
//! idle expired connection keeps counting as inactive until the sweep
//! reaches it (the daemon sweeps the whole table about once a second).

use crate::hint;
use crate::lb::spec::Method;
use crate::net::meta::FlowKey;

/// One tracked connection (32 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Conn {
    /// Client address.
    pub caddr: u32,
    /// Virtual address.
    pub vaddr: u32,
    /// Real server address.
    pub daddr: u32,
    /// Real server slot ([`crate::lb::ids::SlotId::slot`]).
    pub dest: u32,
    /// Expiry time (ms tick).
    pub expires: u32,
    /// Client port.
    pub cport: u16,
    /// Virtual port.
    pub vport: u16,
    /// Real server port.
    pub dport: u16,
    /// Service slot.
    pub svc: u16,
    /// IP protocol.
    pub proto: u8,
    /// [`crate::lb::state::TcpState`] as u8 (NONE for UDP).
    pub state: u8,
    /// `F_*` flags.
    pub flags: u8,
    /// Forwarding method.
    pub method: Method,
}

/// Record in use.
pub const F_USED: u8 = 1;
/// End of the free-record list.
const NO_FREE: u32 = u32::MAX;
/// No reply seen yet (IPVS `IP_VS_CONN_F_NOOUTPUT`): judge input with the
/// input-only table.
pub const F_NOOUTPUT: u8 = 2;
/// Counted as active (ESTABLISHED) in the real server's counters.
pub const F_ACTIVE: u8 = 4;
/// Opened by the SYN proxy: its segments are translated (see
/// [`crate::lb::synproxy`]).
pub const F_SYNPROXY: u8 = 8;
/// Opened by the SYN proxy and waiting for the real server's SYN/ACK.
pub const F_SP_PENDING: u8 = 16;
/// Installed from another director's sync message and not yet used here
/// (see [`crate::lb::sync`]).
pub const F_SYNCED: u8 = 32;

impl Conn {
    /// The client → VIP tuple.
    #[inline]
    pub fn in_key(&self) -> FlowKey {
        FlowKey {
            src: self.caddr,
            dst: self.vaddr,
            sport: self.cport,
            dport: self.vport,
            proto: self.proto,
        }
    }
    /// The RS → client tuple (NAT replies).
    #[inline]
    pub fn out_key(&self) -> FlowKey {
        FlowKey {
            src: self.daddr,
            dst: self.caddr,
            sport: self.dport,
            dport: self.cport,
            proto: self.proto,
        }
    }
    /// Whether this is a NAT connection (indexed by both tuples).
    #[inline]
    pub fn is_nat(&self) -> bool {
        self.method == Method::Nat
    }
}

/// A tuple the table indexes: compared whole, hashed with the table's seed.
pub trait TableKey: Copy + Eq {
    /// The 32-bit hash (signature and bucket choice).
    fn hash(&self, seed: u32) -> u32;
}

impl TableKey for FlowKey {
    #[inline(always)]
    fn hash(&self, seed: u32) -> u32 {
        FlowKey::hash(self, seed)
    }
}

/// What the table needs of a record: its tuples, the fields eviction,
/// expiry and the free list use, and a `u32` to thread the free list
/// through while the record is free.
pub trait Record: Copy + Default {
    /// The tuple type.
    type Key: TableKey;
    /// The client -> VIP tuple.
    fn in_key(&self) -> Self::Key;
    /// The RS -> client tuple (NAT replies).
    fn out_key(&self) -> Self::Key;
    /// Whether `key` is this record's tuple in the direction a slot
    /// names (`reply`: [`Self::out_key`], else [`Self::in_key`]). The
    /// branch comes first, so each side compares fixed fields (no tuple
    /// is assembled from fields chosen per direction).
    #[inline(always)]
    fn key_is(&self, key: &Self::Key, reply: bool) -> bool {
        if reply {
            self.out_key() == *key
        } else {
            self.in_key() == *key
        }
    }
    /// Indexed by both tuples (NAT).
    fn is_nat(&self) -> bool;
    /// `F_*` flags.
    fn flags(&self) -> u8;
    /// Set the `F_*` flags.
    fn set_flags(&mut self, f: u8);
    /// Expiry (ms tick).
    fn expires(&self) -> u32;
    /// IP protocol.
    fn proto(&self) -> u8;
    /// TCP state as u8.
    fn state(&self) -> u8;
    /// What a forwarded packet changes: state, flags, expiry.
    fn set_hot(&mut self, state: u8, flags: u8, expires: u32);
    /// Set the expiry (ms tick) only.
    fn set_expires(&mut self, expires: u32);
    /// The next free record, while this one is free.
    fn next_free(&self) -> u32;
    /// A free record whose next free record is `next`.
    fn set_next_free(&mut self, next: u32);
    /// Prefetch what a lookup reads of the record (its cache line).
    #[inline(always)]
    fn prefetch(&self) {
        hint::prefetch(self);
    }
}

impl Record for Conn {
    type Key = FlowKey;
    #[inline(always)]
    fn in_key(&self) -> FlowKey {
        Conn::in_key(self)
    }
    #[inline(always)]
    fn out_key(&self) -> FlowKey {
        Conn::out_key(self)
    }
    #[inline(always)]
    fn is_nat(&self) -> bool {
        Conn::is_nat(self)
    }
    #[inline(always)]
    fn flags(&self) -> u8 {
        self.flags
    }
    #[inline(always)]
    fn set_flags(&mut self, f: u8) {
        self.flags = f;
    }
    #[inline(always)]
    fn expires(&self) -> u32 {
        self.expires
    }
    #[inline(always)]
    fn proto(&self) -> u8 {
        self.proto
    }
    #[inline(always)]
    fn state(&self) -> u8 {
        self.state
    }
    #[inline(always)]
    fn set_hot(&mut self, state: u8, flags: u8, expires: u32) {
        self.state = state;
        self.flags = flags;
        self.expires = expires;
    }
    #[inline(always)]
    fn set_expires(&mut self, expires: u32) {
        self.expires = expires;
    }
    #[inline(always)]
    fn next_free(&self) -> u32 {
        self.caddr
    }
    #[inline(always)]
    fn set_next_free(&mut self, next: u32) {
        self.caddr = next;
    }
}

/// True when `t` is at or after `deadline` (wrapping ms ticks).
#[inline]
pub fn tick_reached(t: u32, deadline: u32) -> bool {
    (t.wrapping_sub(deadline) as i32) >= 0
}

/// Nanoseconds to the table's millisecond tick.
#[inline]
pub fn tick_of(now_ns: u64) -> u32 {
    (now_ns / 1_000_000) as u32
}

/// Records the eviction scan of a full table examines at most per insert.
pub const EVICT_SCAN: u32 = 64;

/// How long an embryonic TCP connection is safe from eviction after its
/// last packet (ms): the time a legitimate handshake has to complete. A
/// connection evicted between the client's SYN and its ACK is lost for good:
/// the client believes it is established (the real server answered), but
/// its ACK and everything after find no connection (`not_tracked`), and the
/// real server never completes the handshake. Under a flood that fills the
/// table faster than this, new flows are refused (`table_full`, the client
/// retries its SYN) rather than handshakes in progress being broken. Two
/// seconds cover a real server slowed by the flood itself plus one lost
/// SYN/ACK (retransmitted after 1 s).
pub const EMBRYONIC_GRACE_MS: u32 = 2000;

/// The longest grace accepted (an embryonic connection's own timeout is 60 s).
pub const MAX_EMBRYONIC_GRACE_MS: u32 = 60_000;

/// The second of a hash's two candidate buckets (or lines), in a table of
/// `mask + 1`, whose first is `first`: another mix of the hash's bits, and
/// never `first`.
#[inline]
pub(super) fn second_of(hash: u32, first: u32, mask: u32) -> u32 {
    let x = hash.rotate_left(13).wrapping_mul(0x9e37_79b1);
    let b = (x ^ (x >> 15)) & mask;
    if b == first {
        first ^ 1
    } else {
        b
    }
}

const SLOTS: usize = 8;
const EMPTY: u32 = u32::MAX;
const REPLY: u32 = 1 << 31;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Bucket {
    sig: [u32; SLOTS],
    idx: [u32; SLOTS],
}

const EMPTY_BUCKET: Bucket = Bucket {
    sig: [0; SLOTS],
    idx: [EMPTY; SLOTS],
};

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
    recs: Vec<R>,
    /// Head of the free-record list, threaded through the free records'
    /// `caddr` fields (no separate array: 64 bytes per connection in all).
    free_head: u32,
    buckets: Vec<Bucket>,
    /// Bytes of `recs` + `buckets` advised to transparent huge pages.
    huge: usize,
    mask: u32,
    seed: u32,
    cursor: u32,
    /// Where the eviction scan of a full table goes on.
    evict_cursor: u32,
    /// The next eviction candidate whose in-key hash the scan computed
    /// (to prefetch its buckets) and that hash, so that evicting it does
    /// not hash it again; `NO_FREE` when none. Cleared when that record
    /// is removed (only then can its key change).
    victim_hint: (u32, u32),
    len: u32,
    /// How long an embryonic connection is safe from eviction (ms).
    grace: u32,
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
            seed,
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
    fn pop_free(&mut self) -> Option<u32> {
        let idx = self.free_head;
        let next = self.recs.get(idx as usize)?.next_free();
        self.free_head = next;
        Some(idx)
    }

    /// Put a record (not in use) back on the free list.
    #[inline]
    fn push_free(&mut self, idx: u32) {
        if let Some(r) = self.recs.get_mut(idx as usize) {
            r.set_flags(0);
            r.set_next_free(self.free_head);
            self.free_head = idx;
        }
    }

    /// The hash of `key` for this table.
    #[inline]
    pub fn hash(&self, key: &R::Key) -> u32 {
        key.hash(self.seed)
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
    fn pair(&self, hash: u32) -> [u32; 2] {
        let b1 = hash & self.mask;
        [b1, self.second(hash, b1)]
    }

    /// The secondary bucket of `hash`, whose primary is `b1` (never `b1`).
    #[inline]
    fn second(&self, hash: u32, b1: u32) -> u32 {
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

mod evict;
mod insert;
pub mod lines;
mod v6;
pub use insert::Probe;
use insert::{NO_SLOT, UNKNOWN_SLOT};
pub use v6::{mapped, Conn6, FlowKey6};

#[cfg(test)]
mod tests;
