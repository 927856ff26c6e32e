//! The one-line table: IPv4 connection records stored in the hash lines
//! themselves, so that an established packet's lookup reads one cache
//! line (its key, its real server, its state and expiry together) instead
//! of an index line and then a record.
//!
//! The workers' IPv4 table (issue 21's step; IPv6 connections stay in a
//! [`super::ConnTable`] of their own), measured against the index +
//! records table on the same keys in the same run (`dirigo-bench micro
//! --tables`, BENCHMARKS.md).
//!
//! # Layout
//! One 64-byte [`Line`] holds two 32-byte [`Conn`] records. A record's
//! index is `line * 2 + slot`; a slot is free when its record lacks
//! [`F_USED`]. The table has three lines for every four connections of
//! its capacity ([`lines_for`]): at full capacity two slots in three hold
//! a record.
//!
//! A key has two candidate lines: the primary from its hash's high bits
//! (multiply-shift, as the line count is no power of two), the secondary
//! another mix of the hash ([`LineTable::second`]). A lookup compares the
//! key with the records of the primary line, then of the secondary one.
//! There are no signatures: the record's own tuple is the check.
//!
//! # NAT replies
//! A NAT connection's reply tuple (RS -> client) has an entry in the
//! *reply index*: 64-byte buckets of eight (reply tuple hash, forward
//! record index) pairs, one bucket per four connections of capacity (two
//! entries per connection, so at most half full), two candidate buckets
//! per reply tuple. A reply lookup finds its hash there and compares the
//! reply tuple on the forward record: two lines, as in
//! [`super::ConnTable`]. Records and index together: 48 + 16 = 64 bytes
//! per connection of capacity.
//!
//! A packet's direction is not known from its tuple: the caller says which
//! structure to read first ([`LineTable::lookup_rec_from`]): the balancer
//! takes a packet to a VIP for a request and anything else, while the
//! table holds NAT connections, for a reply. Either way both are read
//! before a miss is declared.
//!
//! # Moves
//! When both candidate lines are full, an insert moves records between
//! their two lines (cuckoo displacement, breadth-first, at most
//! [`MAX_DEPTH`] moves) to free a slot. A moved record's index changes: a
//! moved NAT record's reply entry is repointed here, and every move is
//! reported in [`LineInserted::moves`] so that what a caller keeps per
//! record index (the SYN proxy's state) can follow. Reply entries move
//! between their two buckets (one step) without changing what they point
//! at.
//!
//! # Full table and expiry
//! At `capacity` connections an insert evicts an expired or idle embryonic
//! record (as [`super::ConnTable`] judges them): of the key's own two lines
//! first, the one that expires first (its slot takes the new record: no
//! search), else the first the rotating eviction cursor finds within
//! [`EVICT_SCAN`] records. Below capacity, when no slot can be made free
//! in the key's lines, an evictable record there goes.

use super::bucket::second_of;
use super::clock::tick_reached;
use super::limits::{EMBRYONIC_GRACE_MS, EVICT_SCAN};
use super::record::{Conn, F_USED};
use super::table::{Hit, InsertError};
use crate::hint;
use crate::net::meta::{FlowKey, Seed};

/// Records per line.
const SLOTS: usize = 2;

/// Most moves one insert makes to free a slot.
pub const MAX_DEPTH: usize = 3;

/// Lines per connection of capacity: `LINES_NUM / LINES_DEN`.
const LINES_NUM: u64 = 3;
const LINES_DEN: u64 = 4;

/// Reply entries per bucket of the reply index.
const PER_BUCKET: usize = 8;

/// A free reply entry's record index.
const NO_IDX: u32 = u32::MAX;

/// Two records: one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line {
    r: [Conn; SLOTS],
}

/// Eight NAT reply entries, one cache line: the reply tuple's hash and the
/// forward record's index ([`NO_IDX`]: free).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Replies {
    sig: [u32; PER_BUCKET],
    idx: [u32; PER_BUCKET],
}

impl Default for Replies {
    fn default() -> Replies {
        Replies {
            sig: [0; PER_BUCKET],
            idx: [NO_IDX; PER_BUCKET],
        }
    }
}

/// What an insert did: the new connection's record index (or why there is
/// none), the connection it evicted, and the records it moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineInserted {
    /// The new record's index.
    pub result: Result<u32, InsertError>,
    /// A connection evicted to make room.
    pub evicted: Option<Conn>,
    /// `(from, to)` of each record moved, in order (`n` used).
    pub moves: [(u32, u32); 2 * MAX_DEPTH],
    /// Moves used in `moves`.
    pub n: usize,
}

/// What a lookup miss hands to the insert: the key's hash (the insert
/// reads the key's two lines again; they were just read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineProbe {
    hash: u32,
}

impl LineProbe {
    /// The hash of the key this probe is for.
    pub fn hash(&self) -> u32 {
        self.hash
    }
}

/// The one-line table (see the module docs).
pub struct LineTable {
    lines: Vec<Line>,
    replies: Vec<Replies>,
    huge: usize,
    /// `lines.len()` (at least 2).
    nlines: u32,
    /// `replies.len() - 1` (a power of two, at least 2 buckets).
    rmask: u32,
    seed: Seed,
    cap: u32,
    len: u32,
    /// NAT connections (with a reply entry each).
    nat: u32,
    cursor: u32,
    evict_cursor: u32,
    grace: u32,
    /// Records moved to make room, since the table was made.
    moved: u64,
}

#[inline(always)]
fn used(c: &Conn) -> bool {
    c.flags & F_USED != 0
}

/// Whether `c` (in use or not) is the record of `key`.
#[inline(always)]
fn key_of(c: &Conn, key: &FlowKey) -> bool {
    // the address pair and the port pair each as one word (adjacent
    // fields in both structs: one load and one compare each)
    let addrs =
        (c.caddr as u64 | (c.vaddr as u64) << 32) ^ (key.src as u64 | (key.dst as u64) << 32);
    let ports =
        (c.cport as u32 | (c.vport as u32) << 16) ^ (key.sport as u32 | (key.dport as u32) << 16);
    addrs | ports as u64 == 0 && c.proto == key.proto && used(c)
}

/// Whether `key` is the reply tuple of `c`, a NAT record in use.
#[inline(always)]
fn reply_of(c: &Conn, key: &FlowKey) -> bool {
    c.daddr == key.src
        && c.caddr == key.dst
        && c.dport == key.sport
        && c.cport == key.dport
        && c.proto == key.proto
        && used(c)
        && c.is_nat()
}

/// Lines of a table for `capacity` connections: three per four.
pub fn lines_for(capacity: u32) -> u32 {
    let cap = capacity.clamp(1, 1 << 30) as u64;
    (cap * LINES_NUM).div_ceil(LINES_DEN).max(2) as u32
}

/// Reply buckets of a table for `capacity` connections: one per four,
/// a power of two (at least two).
fn buckets_for(capacity: u32) -> u32 {
    let cap = capacity.clamp(1, 1 << 30);
    (cap.next_power_of_two() / 4).max(2)
}

/// [`LineTable::slots`] of a table for `capacity` connections: the bound
/// of its record indices, for what a caller keeps per record.
pub fn slots_for(capacity: u32) -> u32 {
    lines_for(capacity) * SLOTS as u32
}

impl LineTable {
    /// A table for `capacity` connections (1 ..= 2^30), hashing with `seed`.
    pub fn new(capacity: u32, seed: u32) -> LineTable {
        Self::with_lines(capacity, seed, lines_for(capacity))
    }

    /// [`Self::new`] with `lines` lines (at least 2) instead of
    /// [`lines_for`]'s: for measuring what the line count buys.
    pub fn with_lines(capacity: u32, seed: u32, lines: u32) -> LineTable {
        let cap = capacity.clamp(1, 1 << 30);
        let n = lines.clamp(2, 1 << 30) as usize;
        let mut v: Vec<Line> = Vec::with_capacity(n);
        let mut huge = hint::advise_hugepages(&v);
        v.resize(n, Line::default());
        let nb = buckets_for(cap) as usize;
        let mut r: Vec<Replies> = Vec::with_capacity(nb);
        huge += hint::advise_hugepages(&r);
        r.resize(nb, Replies::default());
        LineTable {
            lines: v,
            replies: r,
            huge,
            nlines: n as u32,
            rmask: (nb - 1) as u32,
            seed: Seed::new(seed),
            cap,
            len: 0,
            nat: 0,
            cursor: 0,
            evict_cursor: 0,
            grace: EMBRYONIC_GRACE_MS,
            moved: 0,
        }
    }

    /// How long (ms) an embryonic connection is safe from eviction (see
    /// [`super::ConnTable::set_embryonic_grace`]).
    pub fn set_embryonic_grace(&mut self, ms: u32) {
        self.grace = ms.min(super::limits::MAX_EMBRYONIC_GRACE_MS);
    }

    /// Connections in the table.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the table holds NAT connections (whose replies a lookup
    /// may be for).
    #[inline(always)]
    pub fn has_replies(&self) -> bool {
        self.nat != 0
    }

    /// Maximum connections.
    pub fn capacity(&self) -> u32 {
        self.cap
    }

    /// Bytes allocated (lines and reply index).
    pub fn memory_bytes(&self) -> usize {
        self.lines.len() * std::mem::size_of::<Line>()
            + self.replies.len() * std::mem::size_of::<Replies>()
    }

    /// The hash of `key` (the same as [`super::ConnTable::hash`] with the
    /// same seed).
    #[inline]
    pub fn hash(&self, key: &FlowKey) -> u32 {
        key.hash_with(self.seed)
    }

    /// The primary line of `hash`.
    #[inline(always)]
    fn first(&self, hash: u32) -> u32 {
        ((hash as u64 * self.nlines as u64) >> 32) as u32
    }

    /// The secondary line of `hash` whose primary is `l1`: another mix of
    /// the hash's bits, never `l1`.
    #[inline]
    fn second(&self, hash: u32, l1: u32) -> u32 {
        let x = hash.rotate_left(13).wrapping_mul(0x9e37_79b1);
        let alt = (((x ^ (x >> 15)) as u64 * (self.nlines - 1) as u64) >> 32) as u32;
        let l2 = l1 + 1 + alt;
        if l2 >= self.nlines {
            l2 - self.nlines
        } else {
            l2
        }
    }

    #[inline]
    fn pair(&self, hash: u32) -> [u32; 2] {
        let l1 = self.first(hash);
        [l1, self.second(hash, l1)]
    }

    /// The two reply buckets of a reply tuple's hash.
    #[inline]
    fn rpair(&self, sig: u32) -> [u32; 2] {
        let b1 = sig & self.rmask;
        [b1, second_of(sig, b1, self.rmask)]
    }

    #[inline(always)]
    fn rec(&self, idx: u32) -> Option<&Conn> {
        self.lines
            .get((idx >> 1) as usize)
            .map(|l| &l.r[idx as usize & 1])
    }

    #[inline(always)]
    fn rec_mut(&mut self, idx: u32) -> Option<&mut Conn> {
        self.lines
            .get_mut((idx >> 1) as usize)
            .map(|l| &mut l.r[idx as usize & 1])
    }

    /// First stage of a burst lookup: prefetch both candidate lines (no
    /// second stage: a second stage that read the first line to decide
    /// whether to prefetch the second stalled on lines not yet arrived, and
    /// measured slower in the daemon, BENCHMARKS.md, twentieth session).
    #[inline(always)]
    pub fn touch(&self, hash: u32) {
        for l in self.pair(hash) {
            hint::prefetch_at(&self.lines, l as usize);
        }
    }

    /// First stage of a burst lookup expected to be a NAT reply: prefetch
    /// the primary reply bucket.
    #[inline(always)]
    pub fn touch_reply(&self, hash: u32) {
        if let Some(b) = self.replies.get((hash & self.rmask) as usize) {
            hint::prefetch(b);
        }
    }

    /// Second stage of an expected reply: once the primary reply bucket is
    /// in, prefetch the forward record its entry names, or the secondary
    /// bucket.
    #[inline(always)]
    pub fn touch_more_reply(&self, hash: u32) {
        let b1 = hash & self.rmask;
        let Some(b) = self.replies.get(b1 as usize) else {
            return;
        };
        for i in 0..PER_BUCKET {
            if b.sig[i] == hash && b.idx[i] != NO_IDX {
                if let Some(l) = self.lines.get((b.idx[i] >> 1) as usize) {
                    hint::prefetch(l);
                }
                return;
            }
        }
        if let Some(b) = self.replies.get(second_of(hash, b1, self.rmask) as usize) {
            hint::prefetch(b);
        }
    }

    /// The record of request tuple `key` in line `l`: its index and itself.
    #[inline(always)]
    fn find_in(&self, l: u32, key: &FlowKey) -> Option<(Hit, &Conn)> {
        let line = self.lines.get(l as usize)?;
        for (s, c) in line.r.iter().enumerate() {
            if key_of(c, key) {
                let idx = l << 1 | s as u32;
                return Some((Hit { idx, reply: false }, c));
            }
        }
        None
    }

    /// The request tuple `key` (hash `hash`) in its two lines.
    #[inline(always)]
    fn find_request(&self, key: &FlowKey, hash: u32) -> Option<(Hit, &Conn)> {
        let l1 = self.first(hash);
        match self.find_in(l1, key) {
            Some(f) => Some(f),
            None => self.find_in(self.second(hash, l1), key),
        }
    }

    /// The forward record whose reply tuple is `key` (hash `hash`), named
    /// by an entry of reply bucket `b`.
    #[inline(always)]
    fn reply_in(&self, b: u32, key: &FlowKey, hash: u32) -> Option<(Hit, &Conn)> {
        let r = self.replies.get(b as usize)?;
        for i in 0..PER_BUCKET {
            if r.sig[i] == hash && r.idx[i] != NO_IDX {
                let fwd = r.idx[i];
                if let Some(c) = self.rec(fwd).filter(|c| reply_of(c, key)) {
                    return Some((
                        Hit {
                            idx: fwd,
                            reply: true,
                        },
                        c,
                    ));
                }
            }
        }
        None
    }

    /// The reply tuple `key` (hash `hash`) in the reply index.
    #[inline(always)]
    fn find_reply(&self, key: &FlowKey, hash: u32) -> Option<(Hit, &Conn)> {
        if self.nat == 0 {
            return None;
        }
        let b1 = hash & self.rmask;
        match self.reply_in(b1, key, hash) {
            Some(f) => Some(f),
            None => self.reply_in(second_of(hash, b1, self.rmask), key, hash),
        }
    }

    /// Look up `key` whose [`Self::hash`] is `hash`: the connection's
    /// record index and whether `key` is its reply tuple, with the record.
    /// Reads the lines first, then the reply index.
    #[inline(always)]
    pub fn lookup_rec(&self, key: &FlowKey, hash: u32) -> Option<(Hit, &Conn)> {
        self.lookup_rec_from(key, hash, false)
    }

    /// [`Self::lookup_rec`] reading the reply index first when `reply`
    /// (the caller expects a NAT reply).
    #[inline(always)]
    pub fn lookup_rec_from(&self, key: &FlowKey, hash: u32, reply: bool) -> Option<(Hit, &Conn)> {
        if reply {
            match self.find_reply(key, hash) {
                Some(f) => Some(f),
                None => self.find_request(key, hash),
            }
        } else {
            match self.find_request(key, hash) {
                Some(f) => Some(f),
                None => self.find_reply(key, hash),
            }
        }
    }

    /// Look up `key`.
    pub fn lookup(&self, key: &FlowKey) -> Option<Hit> {
        self.lookup_rec(key, self.hash(key)).map(|(h, _)| h)
    }

    /// [`Self::lookup_rec_from`], or on a miss what the insert needs
    /// ([`LineProbe`]).
    #[inline(always)]
    pub fn lookup_probe_rec(
        &self,
        key: &FlowKey,
        hash: u32,
        reply: bool,
    ) -> Result<(Hit, &Conn), LineProbe> {
        self.lookup_rec_from(key, hash, reply)
            .ok_or(LineProbe { hash })
    }

    /// The probe of a key whose hash is `hash`.
    #[inline]
    pub fn unprobed(&self, hash: u32) -> LineProbe {
        LineProbe { hash }
    }

    /// [`Self::insert_hashed`] with a lookup's probe.
    #[inline]
    pub fn insert_probed(&mut self, conn: Conn, probe: LineProbe, now: u32) -> LineInserted {
        self.insert_hashed(conn, probe.hash, now)
    }

    /// Records moved to make room so far.
    pub fn moved(&self) -> u64 {
        self.moved
    }

    /// Record indices run from 0 to this (exclusive): two per line.
    pub fn slots(&self) -> u32 {
        self.nlines * SLOTS as u32
    }

    /// Bytes of the table advised to transparent huge pages.
    pub fn huge_bytes(&self) -> usize {
        self.huge
    }

    /// The connection record at `idx`, mutable. Do not change its tuples.
    #[inline]
    pub fn get_mut(&mut self, idx: u32) -> Option<&mut Conn> {
        self.rec_mut(idx).filter(|c| used(c))
    }

    /// Store what a forwarded packet changes in record `idx`.
    #[inline(always)]
    pub fn set_hot(&mut self, idx: u32, state: u8, flags: u8, expires: u32) {
        if let Some(c) = self.rec_mut(idx) {
            c.state = state;
            c.flags = flags;
            c.expires = expires;
        }
    }

    /// The connection record at `idx`, if in use.
    pub fn get(&self, idx: u32) -> Option<&Conn> {
        self.rec(idx).filter(|c| used(c))
    }

    /// Store a new expiry in record `idx`.
    #[inline(always)]
    pub fn set_expires(&mut self, idx: u32, expires: u32) {
        if let Some(c) = self.rec_mut(idx) {
            c.expires = expires;
        }
    }

    /// The first free slot of line `l`.
    #[inline]
    fn free_in(&self, l: u32) -> Option<u32> {
        let line = self.lines.get(l as usize)?;
        (0..SLOTS as u32)
            .find(|&s| !used(&line.r[s as usize]))
            .map(|s| l << 1 | s)
    }

    /// Examine up to `budget` lines (two records each: a budget of the
    /// capacity examines the whole table, as [`super::ConnTable::sweep`]'s
    /// does) from the rotating cursor and remove the connections expired
    /// at `now`, calling `f` with each and its record index.
    pub fn sweep(&mut self, now: u32, budget: u32, mut f: impl FnMut(u32, &Conn)) -> u32 {
        let n = self.slots();
        let mut removed = 0;
        for _ in 0..budget.saturating_mul(SLOTS as u32).min(n) {
            let idx = self.cursor;
            self.cursor = if idx + 1 >= n { 0 } else { idx + 1 };
            if self.get(idx).is_some_and(|c| tick_reached(now, c.expires)) {
                if let Some(c) = self.remove(idx) {
                    f(idx, &c);
                    removed += 1;
                }
            }
        }
        removed
    }

    /// Every connection in use.
    pub fn iter(&self) -> impl Iterator<Item = &Conn> + '_ {
        self.lines
            .iter()
            .flat_map(|l| l.r.iter())
            .filter(|c| used(c))
    }

    /// How many connections sit in their primary line (a measure of how
    /// often a lookup reads one line only).
    pub fn in_primary(&self) -> u32 {
        let mut n = 0;
        for (l, line) in self.lines.iter().enumerate() {
            for c in &line.r {
                if used(c) && self.first(self.placed_by(c)) == l as u32 {
                    n += 1;
                }
            }
        }
        n
    }
}

mod place;
#[cfg(test)]
mod tests;
