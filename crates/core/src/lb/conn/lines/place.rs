//! Placing records in the one-line table: the search for room (cuckoo
//! moves), NAT reply entries, inserts, removals and evictions.

use super::*;

impl LineTable {
    /// The hash a resident record was placed by (its request tuple's).
    #[inline]
    pub(super) fn placed_by(&self, c: &Conn) -> u32 {
        FlowKey {
            src: c.caddr,
            dst: c.vaddr,
            sport: c.cport,
            dport: c.vport,
            proto: c.proto,
        }
        .hash_with(self.seed)
    }

    /// A free slot in one of the lines of `hash`, moving residents to
    /// their other lines when both are full (breadth-first, at most
    /// [`MAX_DEPTH`] moves, each recorded in `moves`). None: no slot within
    /// that many moves.
    fn make_room(&mut self, hash: u32, moves: &mut Moves) -> Option<u32> {
        let [l1, l2] = self.pair(hash);
        if let Some(s) = self.free_in(l1).or_else(|| self.free_in(l2)) {
            return Some(s);
        }
        // breadth-first over (slot, parent): the queue holds slots whose
        // record would move; a path ends at a slot whose record's other
        // line has room
        const Q: usize = 2 * SLOTS * ((1 << MAX_DEPTH) - 1);
        const ROOT: u16 = u16::MAX;
        let mut q = [Step::default(); Q];
        let mut n = 0;
        for l in [l1, l2] {
            for s in 0..SLOTS as u32 {
                q[n] = Step {
                    slot: l << 1 | s,
                    parent: ROOT,
                    depth: 1,
                };
                n += 1;
            }
        }
        let mut head = 0;
        while head < n {
            let Step { slot, depth, .. } = q[head];
            let c = *self.rec(slot)?;
            {
                let [a, b] = self.pair(self.placed_by(&c));
                let other = if a == slot >> 1 { b } else { a };
                if let Some(dst) = self.free_in(other) {
                    // move along the path, from its end back to the root
                    let (mut to, mut at) = (dst, head);
                    loop {
                        let Step {
                            slot: from, parent, ..
                        } = q[at];
                        self.relocate(from, to, moves);
                        if parent == ROOT {
                            return Some(from);
                        }
                        to = from;
                        at = parent as usize;
                    }
                }
                if (depth as usize) < MAX_DEPTH {
                    for s in 0..SLOTS as u32 {
                        let next = other << 1 | s;
                        // a path never passes a slot twice
                        let mut up = head;
                        let mut on_path = false;
                        loop {
                            if q[up].slot == next {
                                on_path = true;
                                break;
                            }
                            match q[up].parent {
                                ROOT => break,
                                p => up = p as usize,
                            }
                        }
                        if n < Q && !on_path {
                            q[n] = Step {
                                slot: next,
                                parent: head as u16,
                                depth: depth + 1,
                            };
                            n += 1;
                        }
                    }
                }
            }
            head += 1;
        }
        None
    }

    /// Move the record at `from` to the free slot `to`.
    fn relocate(&mut self, from: u32, to: u32, moves: &mut Moves) {
        let Some(c) = self.rec(from).copied() else {
            return;
        };
        if let Some(r) = self.rec_mut(to) {
            *r = c;
        }
        if let Some(r) = self.rec_mut(from) {
            r.flags = 0;
        }
        self.moved += 1;
        if c.is_nat() {
            if let Some((b, i)) = self.reply_entry(&c, from) {
                if let Some(r) = self.replies.get_mut(b as usize) {
                    r.idx[i] = to;
                }
            }
        }
        moves.push(from, to);
    }

    /// Where the reply entry of NAT record `c`, stored at `fwd`, is: its
    /// bucket and its position there.
    fn reply_entry(&self, c: &Conn, fwd: u32) -> Option<(u32, usize)> {
        let sig = self.hash(&c.out_key());
        self.rpair(sig).into_iter().find_map(|b| {
            let r = self.replies.get(b as usize)?;
            (0..PER_BUCKET)
                .find(|&i| r.sig[i] == sig && r.idx[i] == fwd)
                .map(|i| (b, i))
        })
    }

    /// A free entry of reply bucket `b`.
    fn free_entry(&self, b: u32) -> Option<usize> {
        let r = self.replies.get(b as usize)?;
        (0..PER_BUCKET).find(|&i| r.idx[i] == NO_IDX)
    }

    /// Add the reply entry (`sig`, `fwd`): in a free entry of one of the
    /// buckets of `sig`, else in one freed by moving an entry there to its
    /// other bucket. False: both buckets and all their entries' other
    /// buckets are full (at most half the entries are ever used).
    fn add_reply(&mut self, sig: u32, fwd: u32) -> bool {
        let pair = self.rpair(sig);
        let at = pair
            .into_iter()
            .find_map(|b| self.free_entry(b).map(|i| (b, i)))
            .or_else(|| {
                pair.into_iter().find_map(|b| {
                    let r = *self.replies.get(b as usize)?;
                    (0..PER_BUCKET).find_map(|i| {
                        let [x, y] = self.rpair(r.sig[i]);
                        let other = if x == b { y } else { x };
                        let j = self.free_entry(other)?;
                        let o = self.replies.get_mut(other as usize)?;
                        (o.sig[j], o.idx[j]) = (r.sig[i], r.idx[i]);
                        Some((b, i))
                    })
                })
            });
        let Some((b, i)) = at else {
            return false;
        };
        if let Some(r) = self.replies.get_mut(b as usize) {
            (r.sig[i], r.idx[i]) = (sig, fwd);
        }
        true
    }

    /// Insert `conn` (a tuple not in the table; its flags get [`F_USED`]),
    /// `now` being the ms tick. A NAT connection also gets its reply entry.
    pub fn insert(&mut self, conn: Conn, now: u32) -> LineInserted {
        let h = self.hash(&conn.in_key());
        self.insert_hashed(conn, h, now)
    }

    /// [`Self::insert`] of a `conn` whose tuple's [`Self::hash`] is `hash`
    /// (a lookup just computed it).
    pub fn insert_hashed(&mut self, mut conn: Conn, hash: u32, now: u32) -> LineInserted {
        debug_assert_eq!(hash, self.hash(&conn.in_key()), "hash of another key");
        conn.flags |= F_USED;
        let mut moves = Moves::default();
        let mut evicted = None;
        let result = self.insert_inner(conn, hash, now, &mut moves, &mut evicted);
        LineInserted {
            result,
            evicted,
            moves: moves.m,
            n: moves.n,
        }
    }

    fn insert_inner(
        &mut self,
        conn: Conn,
        h: u32,
        now: u32,
        moves: &mut Moves,
        evicted: &mut Option<Conn>,
    ) -> Result<u32, InsertError> {
        let at = if self.len >= self.cap {
            // full: an evictable record of the key's own lines first (its
            // slot is the new record's, no search), else the cursor's
            match self.local_victim(h, now) {
                Some(v) => {
                    *evicted = self.remove(v);
                    v
                }
                None => {
                    let v = self.scan_victim(now).ok_or(InsertError::Full)?;
                    *evicted = self.remove(v);
                    self.make_room(h, moves).ok_or(InsertError::Full)?
                }
            }
        } else {
            match self.make_room(h, moves) {
                Some(s) => s,
                None => self.evict_for(h, now, moves, evicted)?,
            }
        };
        if let Some(r) = self.rec_mut(at) {
            *r = conn;
        }
        self.len += 1;
        if conn.is_nat() {
            if !self.add_reply(self.hash(&conn.out_key()), at) {
                self.remove(at);
                return Err(InsertError::Full);
            }
            self.nat += 1;
        }
        Ok(at)
    }

    /// Remove the connection at `idx` (and its reply entry), returning it.
    pub fn remove(&mut self, idx: u32) -> Option<Conn> {
        let c = *self.get(idx)?;
        if c.is_nat() {
            if let Some((b, i)) = self.reply_entry(&c, idx) {
                if let Some(r) = self.replies.get_mut(b as usize) {
                    r.idx[i] = NO_IDX;
                }
                self.nat -= 1;
            }
        }
        if let Some(r) = self.rec_mut(idx) {
            r.flags = 0;
        }
        self.len -= 1;
        Some(c)
    }

    /// Whether a full table may evict `c` (see [`super::ConnTable`]).
    fn evictable(&self, c: &Conn, now: u32) -> bool {
        use crate::lb::state::{TcpState, TimeoutTable};
        if !used(c) {
            return false;
        }
        if tick_reached(now, c.expires) {
            return true;
        }
        if c.proto != crate::net::meta::PROTO_TCP {
            return false;
        }
        let s = TcpState::from_u8(c.state);
        if !s.is_embryonic() {
            return false;
        }
        let timeout = TimeoutTable::DEFAULT_TCP_S
            .get(s as usize)
            .map_or(0, |t| t.saturating_mul(1000));
        tick_reached(
            now,
            c.expires.wrapping_sub(timeout).wrapping_add(self.grace),
        )
    }

    /// The next evictable record within [`EVICT_SCAN`] slots of the
    /// rotating cursor.
    fn scan_victim(&mut self, now: u32) -> Option<u32> {
        let n = self.slots();
        for _ in 0..(EVICT_SCAN * SLOTS as u32).min(n) {
            let idx = self.evict_cursor;
            self.evict_cursor = if idx + 1 >= n { 0 } else { idx + 1 };
            if self.rec(idx).is_some_and(|c| self.evictable(c, now)) {
                return Some(idx);
            }
        }
        None
    }

    /// The evictable record of the lines of `hash` that expires first.
    fn local_victim(&self, hash: u32, now: u32) -> Option<u32> {
        let mut best: Option<(u32, u32)> = None;
        for l in self.pair(hash) {
            for s in 0..SLOTS as u32 {
                let i = l << 1 | s;
                if let Some(c) = self.rec(i).filter(|c| self.evictable(c, now)) {
                    if best.is_none_or(|(_, e)| (c.expires.wrapping_sub(e) as i32) < 0) {
                        best = Some((i, c.expires));
                    }
                }
            }
        }
        best.map(|(i, _)| i)
    }

    /// Both lines of `hash` full and no move frees a slot: evict the
    /// evictable record there that expires first (at most one eviction per
    /// insert) and answer its slot.
    fn evict_for(
        &mut self,
        hash: u32,
        now: u32,
        moves: &mut Moves,
        evicted: &mut Option<Conn>,
    ) -> Result<u32, InsertError> {
        if evicted.is_some() {
            return Err(InsertError::Full);
        }
        let v = self.local_victim(hash, now).ok_or(InsertError::Full)?;
        *evicted = self.remove(v);
        self.make_room(hash, moves).ok_or(InsertError::Full)
    }
}

/// A slot of the breadth-first search for room ([`LineTable::make_room`]).
#[derive(Clone, Copy, Default)]
struct Step {
    slot: u32,
    parent: u16,
    depth: u8,
}

/// The forward records one insert moved.
#[derive(Default)]
struct Moves {
    m: [(u32, u32); 2 * MAX_DEPTH],
    n: usize,
}

impl Moves {
    fn push(&mut self, from: u32, to: u32) {
        // an insert makes room at most twice (before and after an
        // eviction in its lines), each within MAX_DEPTH moves
        debug_assert!(self.n < self.m.len(), "more moves than one insert makes");
        if let Some(e) = self.m.get_mut(self.n) {
            *e = (from, to);
            self.n += 1;
        }
    }
}
