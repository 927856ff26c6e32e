//! The per-lcore connection table: preallocated, never allocates after
//! [`ConnTable::new`], one 32-byte [`Conn`] record per connection plus a
//! bucketized open-addressing index.
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
//! no match.
//!
//! A burst lookup runs in stages, so that the cache misses of a whole burst
//! overlap instead of following one another: [`ConnTable::touch`]
//! prefetches every key's primary bucket (the pipeline does it while it
//! classifies the burst), [`ConnTable::touch_records`] prefetches the
//! first record whose signature matches there (or the secondary bucket when
//! none does), and the lookups follow a few packets behind
//! (prefetch: [`crate::mem::prefetch`]).
//!
//! Records and buckets are advised to transparent huge pages
//! ([`crate::mem::advise_hugepages`]): with 4 KiB pages every random
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

use crate::lb::spec::Method;
use crate::mem;
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
pub struct Inserted {
    /// The new record's index, or why there is none.
    pub result: Result<u32, InsertError>,
    /// A connection evicted to make room (its counters must be released),
    /// possibly even when `result` is an error.
    pub evicted: Option<Conn>,
}

/// What a lookup miss learned about its key's buckets, for the insert
/// that follows ([`ConnTable::lookup_probe`], [`ConnTable::insert_probed`]):
/// the key's hash, its secondary bucket and the first free slot the insert
/// would take, so the insert neither hashes the key again nor scans its
/// buckets again. Valid until the table changes (other than by that
/// insert's own eviction, which the insert accounts for); a probe for
/// another key would misplace the entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    hash: u32,
    b2: u32,
    /// Rank of the first free slot: `i` for slot `i` of the primary bucket,
    /// `SLOTS + i` of the secondary, [`NO_SLOT`] for none (the insert then
    /// displaces, as [`ConnTable::insert`] does), [`UNKNOWN_SLOT`] when
    /// not scanned ([`ConnTable::unprobed`]).
    free: u32,
}

/// [`Probe::free`] when both buckets are full.
const NO_SLOT: u32 = 2 * SLOTS as u32;
/// [`Probe::free`] when the buckets were not scanned.
const UNKNOWN_SLOT: u32 = u32::MAX;

impl Probe {
    /// The hash of the key this probe is for.
    #[inline]
    pub fn hash(&self) -> u32 {
        self.hash
    }
}

/// The [`Probe::free`] rank of slot `freed` for a key whose buckets are
/// `b1` and `b2` ([`NO_SLOT`] for none or another bucket).
#[inline]
fn rank_in(freed: Option<(u32, usize)>, b1: u32, b2: u32) -> u32 {
    match freed {
        Some((b, i)) if b == b1 => i as u32,
        Some((b, i)) if b == b2 => SLOTS as u32 + i as u32,
        _ => NO_SLOT,
    }
}

/// The per-lcore connection table (see the module docs).
pub struct ConnTable {
    recs: Vec<Conn>,
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

impl ConnTable {
    /// A table for `capacity` connections (1 ..= 2^30), hashing with `seed`.
    /// All memory is allocated here.
    pub fn new(capacity: u32, seed: u32) -> ConnTable {
        let cap = capacity.clamp(1, 1 << 30);
        let nbuckets = ((cap as usize * 4).div_ceil(SLOTS))
            .next_power_of_two()
            .max(2);
        // Reserve first, advise huge pages, then write: pages faulted in
        // before the advice would stay 4 KiB.
        let mut recs = Vec::with_capacity(cap as usize);
        let mut buckets = Vec::with_capacity(nbuckets);
        let huge = mem::advise_hugepages(&recs) + mem::advise_hugepages(&buckets);
        recs.extend((0..cap).map(|i| Conn {
            caddr: if i + 1 < cap { i + 1 } else { NO_FREE },
            ..Conn::default()
        }));
        buckets.resize(nbuckets, EMPTY_BUCKET);
        ConnTable {
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
        self.recs.len() * std::mem::size_of::<Conn>()
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
        let next = self.recs.get(idx as usize)?.caddr;
        self.free_head = next;
        Some(idx)
    }

    /// Put a record (not in use) back on the free list.
    #[inline]
    fn push_free(&mut self, idx: u32) {
        if let Some(r) = self.recs.get_mut(idx as usize) {
            r.flags = 0;
            r.caddr = self.free_head;
            self.free_head = idx;
        }
    }

    /// The hash of `key` for this table.
    #[inline]
    pub fn hash(&self, key: &FlowKey) -> u32 {
        key.hash(self.seed)
    }

    /// First stage of a burst lookup: prefetch the primary bucket of
    /// `hash` (where inserts put an entry whenever it has room).
    #[inline]
    pub fn touch(&self, hash: u32) {
        if let Some(k) = self.buckets.get((hash & self.mask) as usize) {
            mem::prefetch(k);
        }
    }

    /// Second stage of a burst lookup: once [`Self::touch`] has brought the
    /// primary bucket in, prefetch the first record whose signature matches
    /// there, or, when none does, the secondary bucket (the entry was
    /// displaced, or this is a new flow). The record misses of a whole burst
    /// then overlap too.
    #[inline]
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
                    mem::prefetch(c);
                    return;
                }
            }
        }
        if let Some(k) = self.buckets.get(self.second(hash, b1) as usize) {
            mem::prefetch(k);
        }
    }

    /// Look up `key` whose [`Self::hash`] is `hash`.
    #[inline(always)]
    pub fn lookup_hashed(&self, key: &FlowKey, hash: u32) -> Option<Hit> {
        // the secondary bucket (and its address) only when the primary has
        // no match: rare, inserts prefer the primary
        let b1 = hash & self.mask;
        match self.scan_bucket(b1, key, hash) {
            Some(h) => Some(h),
            None => self.scan_bucket(self.second(hash, b1), key, hash),
        }
    }

    /// [`Self::lookup_hashed`], and on a miss what the insert of `key`
    /// needs ([`Probe`]): both buckets were read anyway, so noting their
    /// first free slot costs little. A hit costs what
    /// [`Self::lookup_hashed`] costs.
    #[inline(always)]
    pub fn lookup_probe(&self, key: &FlowKey, hash: u32) -> Result<Hit, Probe> {
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
    /// signature, so a slot matches only with a reference and a signature).
    #[inline(always)]
    fn scan_bucket(&self, b: u32, key: &FlowKey, hash: u32) -> Option<Hit> {
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
                let k = if reply { c.out_key() } else { c.in_key() };
                if k == *key {
                    return Some(Hit { idx, reply });
                }
            }
        }
        None
    }

    /// Look up `key`.
    #[inline]
    pub fn lookup(&self, key: &FlowKey) -> Option<Hit> {
        self.lookup_hashed(key, self.hash(key))
    }

    /// The record at `idx`.
    #[inline]
    pub fn get(&self, idx: u32) -> Option<&Conn> {
        self.recs
            .get(idx as usize)
            .filter(|c| c.flags & F_USED != 0)
    }

    /// The record at `idx`, mutable. Do not change its tuples.
    #[inline]
    pub fn get_mut(&mut self, idx: u32) -> Option<&mut Conn> {
        self.recs
            .get_mut(idx as usize)
            .filter(|c| c.flags & F_USED != 0)
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
        let x = hash.rotate_left(13).wrapping_mul(0x9e37_79b1);
        let b2 = (x ^ (x >> 15)) & self.mask;
        if b2 == b1 {
            b1 ^ 1
        } else {
            b2
        }
    }

    fn free_in(&self, b: u32) -> Option<usize> {
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
    fn free_slot(&mut self, hash: u32) -> Option<(u32, usize)> {
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
    pub fn insert(&mut self, conn: Conn, now: u32) -> Inserted {
        let h = self.hash(&conn.in_key());
        self.insert_probed(conn, self.unprobed(h), now)
    }

    /// [`Self::insert`] of a `conn` whose in-key ([`Conn::in_key`]) was just
    /// looked up with [`Self::lookup_probe`] and missed, `probe` being
    /// what that lookup returned (or [`Self::unprobed`] with the in-key's
    /// [`Self::hash`]): the same outcome and the same placement as
    /// [`Self::insert`], without hashing the key or scanning its buckets
    /// again.
    pub fn insert_probed(&mut self, mut conn: Conn, probe: Probe, now: u32) -> Inserted {
        debug_assert_eq!(
            probe.hash,
            self.hash(&conn.in_key()),
            "probe of another key"
        );
        conn.flags |= F_USED;
        let mut evicted = None;
        let result = self.insert_inner(conn, probe, now, &mut evicted);
        Inserted { result, evicted }
    }

    fn insert_inner(
        &mut self,
        conn: Conn,
        probe: Probe,
        now: u32,
        evicted: &mut Option<Conn>,
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
    fn take(&mut self, idx: u32, known: Option<u32>) -> Option<(Conn, [Option<(u32, usize)>; 2])> {
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
            r.flags = 0;
        }
        self.len -= 1;
        Some((c, [freed_in, freed_out]))
    }

    /// Remove the record at `idx`, returning it (None if not in use).
    pub fn remove(&mut self, idx: u32) -> Option<Conn> {
        let (c, _) = self.take(idx, None)?;
        self.push_free(idx);
        Some(c)
    }

    /// Examine up to `budget` records from the rotating cursor and remove
    /// those expired at `now` (ms tick), calling `f` with each and its
    /// record index. Returns the number removed.
    pub fn sweep(&mut self, now: u32, budget: u32, mut f: impl FnMut(u32, &Conn)) -> u32 {
        let n = self.recs.len() as u32;
        let mut removed = 0;
        for _ in 0..budget.min(n) {
            let idx = self.cursor;
            self.cursor = if idx + 1 >= n { 0 } else { idx + 1 };
            let expired = self.get(idx).is_some_and(|c| tick_reached(now, c.expires));
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
    pub fn iter(&self) -> impl Iterator<Item = &Conn> + '_ {
        self.recs.iter().filter(|c| c.flags & F_USED != 0)
    }
}

mod evict;

#[cfg(test)]
mod tests;
