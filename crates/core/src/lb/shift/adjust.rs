//! The sequence shift of one connection: what changed in the length of
//! each direction's byte stream, and how every later segment's numbers
//! move with it.
//!
//! A middlebox that changes a stream's length (a PROXY header inserted
//! before the client's first byte, an FTP `PORT` line rewritten with an
//! address of another length) leaves the two endpoints with different
//! views of one direction's sequence space: the sender numbers the bytes
//! it wrote, the receiver the bytes it got. From then on, every segment
//! of that direction has its sequence number moved by the change, and
//! every segment of the other direction has its acknowledgment number
//! and SACK edges moved back.
//!
//! Linux keeps, per direction, the position of the last change and the
//! offsets before and after it (`struct nf_ct_seqadj`). [`SeqAdj`] keeps
//! the last `K` changes (a fixed array, `Copy`, no allocation): each its
//! position in the sender's space, its old and new lengths and the
//! cumulative offset after it. A segment of `K` changes ago is still
//! mapped exactly; an older one gets the offset before the oldest change
//! kept, as Linux gives the offset before the last one.
//!
//! The rules, for one direction (positions in the sender's space, a
//! change replacing `old_len` bytes at `pos` by `new_len` bytes):
//! * a segment that starts at or before `pos` keeps the offset before the
//!   change: it holds the changed bytes (and is rewritten again by whoever
//!   changed them: a retransmission) or comes before them;
//! * a segment that starts after `pos` takes the offset after it (one
//!   starting inside the replaced bytes cannot be mapped exactly and is
//!   mapped as the bytes after them, as Linux does);
//! * an acknowledgment (or SACK edge) at or past the end of the new bytes
//!   moves back by the offset after; one inside them acknowledges the
//!   old bytes in proportion, at most all of them (an inserted header
//!   acknowledged alone acknowledges nothing of the sender's); one at or
//!   before their start moves back by the offset before.

use super::seq::{add, after, at_or_after, before, sub};

/// One change of a direction's stream: `old_len` bytes at sequence number
/// `pos` of the sender's space became `new_len` bytes (an insertion has
/// `old_len` 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    /// Sequence number, in the sender's space, of the first byte changed
    /// (of the byte the insertion goes before).
    pub pos: u32,
    /// Bytes the sender wrote there.
    pub old_len: u16,
    /// Bytes the receiver gets instead.
    pub new_len: u16,
}

impl Change {
    /// What the change adds to the stream's length (negative: removes).
    #[inline]
    pub fn delta(&self) -> i32 {
        self.new_len as i32 - self.old_len as i32
    }
}

/// What [`SeqAdj::record`] did with a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// A change after every one kept: recorded.
    New,
    /// A change already recorded (the same position and lengths: a
    /// retransmitted segment rewritten again): nothing to do.
    Repeat,
    /// A change of no length: nothing to shift, nothing recorded.
    NoShift,
}

/// Why [`SeqAdj::record`] refused a change: the stream cannot be mapped
/// consistently (the caller should leave the segment unchanged, or drop
/// it, and count it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftError {
    /// At the position of a change kept, with other lengths: a segment
    /// rewritten differently the second time.
    Conflict,
    /// Before the last change and not one of those kept (a retransmission
    /// older than the changes remembered), or inside the bytes the last
    /// change replaced.
    Stale,
}

impl ShiftError {
    /// The drop-counter-style name.
    pub fn name(self) -> &'static str {
        match self {
            ShiftError::Conflict => "shift_conflict",
            ShiftError::Stale => "shift_stale",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    pos: u32,
    /// The cumulative offset of the bytes after this change.
    after: i32,
    old_len: u16,
    new_len: u16,
}

const EMPTY: Entry = Entry {
    pos: 0,
    after: 0,
    old_len: 0,
    new_len: 0,
};

/// The shift of one direction: the last `K` changes (`K` >= 1). 12 bytes
/// per change and 8 more (`SeqAdj<1>` is 20 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqAdj<const K: usize> {
    e: [Entry; K],
    /// The offset before the oldest change kept (the cumulative offset of
    /// the changes forgotten).
    base: i32,
    n: u8,
}

impl<const K: usize> Default for SeqAdj<K> {
    fn default() -> Self {
        Self::NONE
    }
}

impl<const K: usize> SeqAdj<K> {
    const CHECK: () = assert!(K >= 1 && K <= 255);

    /// No change.
    pub const NONE: Self = {
        #[allow(clippy::let_unit_value)]
        let () = Self::CHECK;
        SeqAdj {
            e: [EMPTY; K],
            base: 0,
            n: 0,
        }
    };

    /// True when nothing moves (no change, or changes that cancel out and
    /// are all forgotten).
    #[inline]
    pub fn is_identity(&self) -> bool {
        self.n == 0 && self.base == 0
    }

    /// How many changes are kept.
    #[inline]
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// True when no change is kept.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The offset of the bytes after every change recorded.
    #[inline]
    pub fn offset(&self) -> i32 {
        self.after_of(self.n as usize)
    }

    /// The offset after the first `i` kept changes.
    #[inline]
    fn after_of(&self, i: usize) -> i32 {
        match i.checked_sub(1).and_then(|j| self.e.get(j)) {
            Some(e) => e.after,
            None => self.base,
        }
    }

    /// Record a change. A change after the last one is kept (the oldest
    /// is forgotten when `K` are kept); the same change again is a
    /// repeat; a change of no length is nothing to record; anything else
    /// is refused.
    pub fn record(&mut self, c: Change) -> Result<Recorded, ShiftError> {
        // a change of no length moves nothing, wherever it is
        if c.delta() == 0 {
            return Ok(Recorded::NoShift);
        }
        let n = self.n as usize;
        let kept = self.e.get(..n).unwrap_or(&[]);
        if let Some(last) = kept.last() {
            if !after(c.pos, last.pos) {
                return match kept.iter().rev().find(|e| e.pos == c.pos) {
                    Some(e) if e.old_len == c.old_len && e.new_len == c.new_len => {
                        Ok(Recorded::Repeat)
                    }
                    Some(_) => Err(ShiftError::Conflict),
                    None => Err(ShiftError::Stale),
                };
            }
            if before(c.pos, last.pos.wrapping_add(last.old_len as u32)) {
                return Err(ShiftError::Stale);
            }
        }
        let after = self.offset().wrapping_add(c.delta());
        let mut n = n;
        if n == K {
            self.base = self.e[0].after;
            self.e.copy_within(1.., 0);
            n -= 1;
        }
        self.e[n] = Entry {
            pos: c.pos,
            after,
            old_len: c.old_len,
            new_len: c.new_len,
        };
        self.n = (n + 1) as u8;
        Ok(Recorded::New)
    }

    /// The sequence number the receiver sees for a segment the sender
    /// numbered `seq`.
    #[inline]
    pub fn seq(&self, seq: u32) -> u32 {
        let kept = self.e.get(..self.n as usize).unwrap_or(&[]);
        for e in kept.iter().rev() {
            if after(seq, e.pos) {
                return add(seq, e.after);
            }
        }
        add(seq, self.base)
    }

    /// The sender's sequence number for an acknowledgment (or a SACK
    /// edge) the receiver sent as `ack`.
    #[inline]
    pub fn ack(&self, ack: u32) -> u32 {
        let n = self.n as usize;
        for i in (0..n).rev() {
            let e = self.e[i];
            let start = add(e.pos, self.after_of(i));
            let end = start.wrapping_add(e.new_len as u32);
            if at_or_after(ack, end) {
                return sub(ack, e.after);
            }
            if after(ack, start) {
                let into = ack.wrapping_sub(start).min(e.old_len as u32);
                return e.pos.wrapping_add(into);
            }
        }
        sub(ack, self.base)
    }
}

/// A direction of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Client to server (the direction of the connection's first SYN).
    Orig = 0,
    /// Server to client.
    Reply = 1,
}

impl Dir {
    /// The other direction.
    #[inline]
    pub fn other(self) -> Dir {
        match self {
            Dir::Orig => Dir::Reply,
            Dir::Reply => Dir::Orig,
        }
    }
}

/// The shift of a connection, both directions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shift<const K: usize> {
    d: [SeqAdj<K>; 2],
}

impl<const K: usize> Shift<K> {
    /// No change either way.
    pub const NONE: Self = Shift {
        d: [SeqAdj::NONE; 2],
    };

    /// One direction's shift.
    #[inline]
    pub fn dir(&self, d: Dir) -> &SeqAdj<K> {
        &self.d[d as usize]
    }

    /// Record a change of the stream sent in direction `d`.
    #[inline]
    pub fn record(&mut self, d: Dir, c: Change) -> Result<Recorded, ShiftError> {
        self.d[d as usize].record(c)
    }

    /// True when no number moves either way.
    #[inline]
    pub fn is_identity(&self) -> bool {
        self.d[0].is_identity() && self.d[1].is_identity()
    }

    /// The sequence number of a segment sent in direction `d`.
    #[inline]
    pub fn seq(&self, d: Dir, seq: u32) -> u32 {
        self.d[d as usize].seq(seq)
    }

    /// The acknowledgment number (or a SACK edge) of a segment sent in
    /// direction `d`: it names the other direction's bytes.
    #[inline]
    pub fn ack(&self, d: Dir, ack: u32) -> u32 {
        self.d[d.other() as usize].ack(ack)
    }
}
