//! The one-line table: IPv4 connection records stored in the hash lines
//! themselves, so that an established packet's lookup reads one cache
//! line (its key, its real server, its state and expiry together) instead
//! of an index line and then a record.
//!
//! Not yet the workers' table: [`super::ConnTable`] is. This is the step
//! issue 21 names, built whole enough to be measured against it on the same
//! keys in the same run (`dirigo-bench table`, BENCHMARKS.md) before the
//! balancer moves over.
//!
//! # Layout
//! One 64-byte [`Line`] holds two 32-byte [`Conn`] records; the table has
//! `capacity` lines rounded up to a power of two, i.e. 64 bytes per
//! connection, as [`super::ConnTable`]'s record + index. A record's index
//! is `line * 2 + slot`. A slot is free when its record lacks [`F_USED`].
//!
//! A key has two candidate lines (the primary from its hash's low bits, the
//! secondary from [`second`]); a lookup compares the key with the records
//! of the primary line, then of the secondary one. There are no signatures:
//! the record's own tuple is the check. With at most one slot in two used
//! (DR and TUN), nearly every record sits in its primary line.
//!
//! # NAT replies
//! A NAT connection's reply tuple gets an entry in a *stub slot*: a slot
//! of one of the reply tuple's own two lines, marked [`STUB_STATE`] (and
//! protocol 0, so no tuple's lookup takes it for a record), holding up to
//! three (reply tuple hash, forward record index) entries. A lookup that
//! finds no record with its tuple in a line checks that line's stub slots
//! for its hash and compares the reply tuple on the forward record the
//! entry names, which it reads from its own line (two lines per reply, as
//! before). Stub slots do not move.
//!
//! The cost: a NAT connection takes a record slot and a reply entry, and
//! the entries of a stub slot must share a line, so at a million
//! connections most stub slots hold one entry and NAT takes nearly two
//! slots per connection. At the 1M scenarios' capacity (1,048,576) the
//! table places about 99.5% of a million NAT connections, where
//! [`super::ConnTable`] places them all (`dirigo-bench micro --tables`):
//! why the workers do not use this table yet.
//!
//! # Moves
//! When both candidate lines are full, an insert moves records between
//! their two lines (cuckoo displacement, breadth-first, at most
//! [`MAX_DEPTH`] moves) to free a slot. A moved record's index changes: a
//! moved NAT record's reply entry is repointed here, and every move is
//! reported in [`LineInserted::moves`] so that what a caller keeps per
//! record index (the SYN proxy's state) can follow. Five moves instead of
//! three place 99.86% of the million NAT connections instead of 99.5%, but
//! cost new connections 40% more time (searches that fail explore twice
//! the depth).
//!
//! # Full table and expiry
//! As [`super::ConnTable`]: at `capacity` connections an insert first
//! evicts the first expired or idle embryonic record the rotating eviction
//! cursor finds within [`EVICT_SCAN`] records; when no slot can be made
//! free in the key's lines, an evictable record there goes.

use super::{tick_reached, Conn, Hit, InsertError, EMBRYONIC_GRACE_MS, EVICT_SCAN, F_USED};
use crate::mem;
use crate::net::meta::FlowKey;

/// [`Conn::state`] of a stub slot (NAT reply entries).
pub const STUB_STATE: u8 = 0xff;

/// Records per line.
const SLOTS: usize = 2;

/// Most moves one insert makes to free a slot.
pub const MAX_DEPTH: usize = 3;

/// Two records: one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line {
    r: [Conn; SLOTS],
}

/// What an insert did: the new connection's record index (or why there is
/// none), the connection it evicted, and the forward records it moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineInserted {
    /// The new record's index.
    pub result: Result<u32, InsertError>,
    /// A connection evicted to make room.
    pub evicted: Option<Conn>,
    /// `(from, to)` of each forward record moved, in order (`n` used).
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
    huge: usize,
    mask: u32,
    seed: u32,
    cap: u32,
    len: u32,
    cursor: u32,
    evict_cursor: u32,
    grace: u32,
    /// Records moved to make room, since the table was made.
    moved: u64,
}

fn is_stub(c: &Conn) -> bool {
    c.state == STUB_STATE
}

fn used(c: &Conn) -> bool {
    c.flags & F_USED != 0
}

/// Reply entries per stub slot.
const PER_STUB: usize = 3;
/// An empty reply entry's record index.
const NO_IDX: u32 = u32::MAX;

/// A stub slot with no entry yet: protocol 0, so that no tuple's lookup
/// ever takes it for a record.
fn empty_stub() -> Conn {
    Conn {
        caddr: 0,
        vaddr: NO_IDX,
        daddr: 0,
        dest: NO_IDX,
        expires: 0,
        cport: (NO_IDX >> 16) as u16,
        vport: NO_IDX as u16,
        proto: 0,
        state: STUB_STATE,
        flags: F_USED,
        ..Conn::default()
    }
}

/// Reply entry `i` of stub slot `c`: (the reply tuple's hash, the forward
/// record's index), laid over the record's fields.
#[inline(always)]
fn entry(c: &Conn, i: usize) -> (u32, u32) {
    match i {
        0 => (c.caddr, c.vaddr),
        1 => (c.daddr, c.dest),
        _ => (c.expires, (c.cport as u32) << 16 | c.vport as u32),
    }
}

/// Set reply entry `i` of stub slot `c`.
#[inline]
fn set_entry(c: &mut Conn, i: usize, sig: u32, idx: u32) {
    match i {
        0 => (c.caddr, c.vaddr) = (sig, idx),
        1 => (c.daddr, c.dest) = (sig, idx),
        _ => {
            c.expires = sig;
            (c.cport, c.vport) = ((idx >> 16) as u16, idx as u16);
        }
    }
}

/// Whether `c` (in use or not) is the record of `key`.
#[inline(always)]
fn key_of(c: &Conn, key: &FlowKey) -> bool {
    c.caddr == key.src
        && c.vaddr == key.dst
        && c.cport == key.sport
        && c.vport == key.dport
        && c.proto == key.proto
        && used(c)
}

/// Lines of a table for `capacity` connections.
fn lines_for(capacity: u32) -> usize {
    (capacity.clamp(1, 1 << 30) as usize)
        .next_power_of_two()
        .max(2)
}

/// [`LineTable::slots`] of a table for `capacity` connections: the bound
/// of its record indices, for what a caller keeps per record.
pub fn slots_for(capacity: u32) -> u32 {
    (lines_for(capacity) * SLOTS) as u32
}

impl LineTable {
    /// A table for `capacity` connections (1 ..= 2^30), hashing with `seed`.
    pub fn new(capacity: u32, seed: u32) -> LineTable {
        let cap = capacity.clamp(1, 1 << 30);
        let n = lines_for(cap);
        let mut lines: Vec<Line> = Vec::with_capacity(n);
        let huge = mem::advise_hugepages(&lines);
        lines.resize(n, Line::default());
        LineTable {
            lines,
            huge,
            mask: (n - 1) as u32,
            seed,
            cap,
            len: 0,
            cursor: 0,
            evict_cursor: 0,
            grace: EMBRYONIC_GRACE_MS,
            moved: 0,
        }
    }

    /// How long (ms) an embryonic connection is safe from eviction (see
    /// [`super::ConnTable::set_embryonic_grace`]).
    pub fn set_embryonic_grace(&mut self, ms: u32) {
        self.grace = ms.min(super::MAX_EMBRYONIC_GRACE_MS);
    }

    /// Connections in the table (stubs not counted).
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Maximum connections.
    pub fn capacity(&self) -> u32 {
        self.cap
    }

    /// Bytes allocated.
    pub fn memory_bytes(&self) -> usize {
        self.lines.len() * std::mem::size_of::<Line>()
    }

    /// The hash of `key` (the same as [`super::ConnTable::hash`] with the
    /// same seed).
    #[inline]
    pub fn hash(&self, key: &FlowKey) -> u32 {
        key.hash(self.seed)
    }

    /// The secondary line of `hash` whose primary is `l1` (never `l1`).
    #[inline]
    fn second(&self, hash: u32, l1: u32) -> u32 {
        super::second_of(hash, l1, self.mask)
    }

    #[inline]
    fn pair(&self, hash: u32) -> [u32; 2] {
        let l1 = hash & self.mask;
        [l1, self.second(hash, l1)]
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

    /// First stage of a burst lookup: prefetch the primary line.
    #[inline]
    pub fn touch(&self, hash: u32) {
        if let Some(l) = self.lines.get((hash & self.mask) as usize) {
            mem::prefetch(l);
        }
    }

    /// Second stage: once the primary line is in, prefetch what the lookup
    /// will read beyond it: the secondary line when the key is not in the
    /// primary, the forward record's line when the key is a stub's.
    #[inline(always)]
    pub fn touch_more(&self, key: &FlowKey, hash: u32) {
        let l1 = hash & self.mask;
        let Some(line) = self.lines.get(l1 as usize) else {
            return;
        };
        for c in &line.r {
            // client address and port only: enough to tell, for a
            // prefetch (a false match leaves the secondary line to the
            // lookup itself)
            if c.caddr == key.src && c.cport == key.sport && used(c) {
                return;
            }
            if is_stub(c) && used(c) {
                for i in 0..PER_STUB {
                    let (sig, fwd) = entry(c, i);
                    if sig == hash && fwd != NO_IDX {
                        if let Some(l) = self.lines.get((fwd >> 1) as usize) {
                            mem::prefetch(l);
                        }
                        return;
                    }
                }
            }
        }
        if let Some(l) = self.lines.get(self.second(hash, l1) as usize) {
            mem::prefetch(l);
        }
    }

    /// `key` in line `l`: a record with its tuple (its index and itself),
    /// or a stub entry for it (the forward record's index and record, the
    /// reply tuple checked on that record).
    #[inline(always)]
    fn find_in(&self, l: u32, key: &FlowKey, hash: u32) -> Option<(Hit, &Conn)> {
        let line = self.lines.get(l as usize)?;
        for (s, c) in line.r.iter().enumerate() {
            if key_of(c, key) {
                let idx = l << 1 | s as u32;
                return Some((Hit { idx, reply: false }, c));
            }
        }
        for c in &line.r {
            if is_stub(c) && used(c) {
                if let Some(h) = self.stub_hit(c, key, hash) {
                    return Some(h);
                }
            }
        }
        None
    }

    /// The entry of stub slot `c` for reply tuple `key` (hash `hash`).
    #[cold]
    fn stub_hit(&self, c: &Conn, key: &FlowKey, hash: u32) -> Option<(Hit, &Conn)> {
        (0..PER_STUB).find_map(|i| {
            let (sig, fwd) = entry(c, i);
            if sig != hash || fwd == NO_IDX {
                return None;
            }
            let r = self.rec(fwd).filter(|r| used(r) && r.is_nat())?;
            (r.out_key() == *key).then_some((
                Hit {
                    idx: fwd,
                    reply: true,
                },
                r,
            ))
        })
    }

    /// Look up `key` whose [`Self::hash`] is `hash`: the connection's
    /// record index and whether `key` is its reply tuple, with the record.
    #[inline(always)]
    pub fn lookup_rec(&self, key: &FlowKey, hash: u32) -> Option<(Hit, &Conn)> {
        let l1 = hash & self.mask;
        match self.find_in(l1, key, hash) {
            Some(f) => Some(f),
            None => self.find_in(self.second(hash, l1), key, hash),
        }
    }

    /// Look up `key`.
    pub fn lookup(&self, key: &FlowKey) -> Option<Hit> {
        self.lookup_rec(key, self.hash(key)).map(|(h, _)| h)
    }

    /// [`Self::lookup_rec`], or on a miss what the insert needs
    /// ([`LineProbe`]): the API of [`super::ConnTable::lookup_probe_rec`].
    #[inline(always)]
    pub fn lookup_probe_rec(&self, key: &FlowKey, hash: u32) -> Result<(Hit, &Conn), LineProbe> {
        self.lookup_rec(key, hash).ok_or(LineProbe { hash })
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

    /// The second stage of a burst lookup ([`Self::touch_more`]).
    #[inline(always)]
    pub fn touch_records(&self, key: &FlowKey, hash: u32) {
        self.touch_more(key, hash)
    }

    /// Records (connections and stubs) moved to make room so far.
    pub fn moved(&self) -> u64 {
        self.moved
    }

    /// Record indices run from 0 to this (exclusive): two per line.
    pub fn slots(&self) -> u32 {
        self.lines.len() as u32 * SLOTS as u32
    }

    /// Bytes of the table advised to transparent huge pages.
    pub fn huge_bytes(&self) -> usize {
        self.huge
    }

    /// The connection record at `idx`, mutable. Do not change its tuples.
    #[inline]
    pub fn get_mut(&mut self, idx: u32) -> Option<&mut Conn> {
        self.rec_mut(idx).filter(|c| used(c) && !is_stub(c))
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

    /// The connection record at `idx` (not a stub), if in use.
    pub fn get(&self, idx: u32) -> Option<&Conn> {
        self.rec(idx).filter(|c| used(c) && !is_stub(c))
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
        let n = self.lines.len() as u32 * SLOTS as u32;
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
            .filter(|c| used(c) && !is_stub(c))
    }

    /// How many connections sit in their primary line (a measure of how
    /// often a lookup reads one line only).
    pub fn in_primary(&self) -> u32 {
        let mut n = 0;
        for (l, line) in self.lines.iter().enumerate() {
            for c in &line.r {
                if used(c) && !is_stub(c) && self.placed_by(c) & self.mask == l as u32 {
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
