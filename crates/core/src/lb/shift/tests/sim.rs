//! Both endpoints of one direction of a TCP stream, for the simulations:
//! a sender that numbers its own bytes and checks every acknowledgment it
//! gets, and a receiver that checks every byte it gets against the stream
//! it must end with. Offsets are from the first byte after the SYN.

/// Changes of a stream: (offset, old length, new bytes).
pub type Changes = Vec<(usize, usize, Vec<u8>)>;

/// What one direction's bytes become through the middlebox: the sender's
/// stream, the changes made to it (offset, old length, new bytes; sorted,
/// apart), the receiver's stream, and for each receiver offset the sender
/// offset an acknowledgment there stands for.
pub struct Stream {
    pub orig: Vec<u8>,
    pub changes: Changes,
    pub new: Vec<u8>,
    pub orig_of_new: Vec<usize>,
}

impl Stream {
    pub fn new(orig: Vec<u8>, changes: Changes) -> Stream {
        let mut new = Vec::new();
        let mut orig_of_new = Vec::new();
        let mut i = 0;
        for (off, old, bytes) in &changes {
            while i < *off {
                orig_of_new.push(i);
                new.push(orig[i]);
                i += 1;
            }
            // inside the new bytes: the old ones in proportion, at most all
            for k in 0..bytes.len() {
                orig_of_new.push(off + k.min(*old));
            }
            new.extend_from_slice(bytes);
            i += old;
        }
        while i < orig.len() {
            orig_of_new.push(i);
            new.push(orig[i]);
            i += 1;
        }
        orig_of_new.push(orig.len());
        Stream {
            orig,
            changes,
            new,
            orig_of_new,
        }
    }

    /// The end of a segment starting at `a` of at most `len` bytes, moved
    /// past a changed region it would cut (a helper rewrites whole lines
    /// only).
    pub fn cut(&self, a: usize, len: usize) -> usize {
        let mut b = (a + len).min(self.orig.len());
        for (off, old, _) in &self.changes {
            if *off < b && b < off + old {
                b = off + old;
            }
        }
        b
    }

    /// The sender offset an acknowledgment (or SACK edge) at receiver
    /// offset `p` stands for, when the sender has sent `[0, sent)`.
    ///
    /// `orig_of_new` is ambiguous at a change that leaves no bytes (a
    /// line rewritten to nothing): the receiver offset where the removed
    /// bytes were is both their start and their end in the sender's
    /// space, and `orig_of_new` gives the end. That is right only once
    /// the removed bytes have been sent (and so rewritten and recorded by
    /// the middlebox); before that, the receiver having everything up to
    /// there has exactly the sender's bytes before the change, and an
    /// acknowledgment past them would name bytes never sent.
    pub fn orig_of_ack(&self, p: usize, sent: usize) -> usize {
        let mut x = self.orig_of_new[p];
        for (off, old, bytes) in self.changes.iter().rev() {
            if bytes.is_empty() && off + old == x && x > sent {
                x = *off;
            }
        }
        x
    }

    /// The receiver's offset of the sender's `x` (a segment boundary).
    pub fn new_of_orig(&self, x: usize) -> usize {
        let mut d = 0i64;
        for (off, old, bytes) in &self.changes {
            if *off < x {
                d += bytes.len() as i64 - *old as i64;
            }
        }
        (x as i64 + d) as usize
    }
}

/// Sequence number of offset `off` of a stream after `isn`.
pub fn seq_of(isn: u32, off: usize) -> u32 {
    isn.wrapping_add(1).wrapping_add(off as u32)
}

/// Offset of sequence number `seq` of a stream after `isn` (negative:
/// before the first byte).
pub fn off_of(isn: u32, seq: u32) -> i64 {
    seq.wrapping_sub(isn.wrapping_add(1)) as i32 as i64
}

pub struct Sender {
    pub isn: u32,
    pub len: usize,
    pub una: usize,
    pub nxt: usize,
    /// Segments sent (start, end), for exact retransmissions.
    pub sent: Vec<(usize, usize)>,
}

impl Sender {
    pub fn new(isn: u32, len: usize) -> Sender {
        Sender {
            isn,
            len,
            una: 0,
            nxt: 0,
            sent: Vec::new(),
        }
    }

    /// An acknowledgment: it must name a byte this sender has sent, and
    /// be exactly `want` (the oracle's).
    pub fn ack(&mut self, ack: u32, want: usize) -> Result<(), String> {
        let off = off_of(self.isn, ack);
        if off < 0 || off as usize > self.nxt {
            return Err(format!("ack at {off} outside 0..={}", self.nxt));
        }
        if off as usize != want {
            return Err(format!("ack at {off}, the receiver has {want}"));
        }
        self.una = self.una.max(want);
        Ok(())
    }

    /// A SACK block: within what was sent, not empty, and exactly `want`.
    pub fn sack(&self, l: u32, r: u32, want: (usize, usize)) -> Result<(), String> {
        let (l, r) = (off_of(self.isn, l), off_of(self.isn, r));
        if l < 0 || r as usize > self.nxt || l > r {
            return Err(format!("SACK {l}..{r} outside 0..={}", self.nxt));
        }
        if (l as usize, r as usize) != want {
            return Err(format!("SACK {l}..{r}, the receiver has {want:?}"));
        }
        Ok(())
    }
}

pub struct Receiver {
    pub isn: u32,
    pub want: Vec<u8>,
    got: Vec<bool>,
    pub nxt: usize,
}

impl Receiver {
    pub fn new(isn: u32, want: Vec<u8>) -> Receiver {
        let got = vec![false; want.len()];
        Receiver {
            isn,
            want,
            got,
            nxt: 0,
        }
    }

    /// A segment: every byte must be the stream's at its place.
    pub fn take(&mut self, seq: u32, data: &[u8]) -> Result<(), String> {
        let at = off_of(self.isn, seq);
        for (i, &b) in data.iter().enumerate() {
            let p = at + i as i64;
            if p < 0 || p as usize >= self.want.len() {
                return Err(format!(
                    "byte at {p}, outside the stream of {}",
                    self.want.len()
                ));
            }
            if self.want[p as usize] != b {
                return Err(format!(
                    "byte at {p} is {b}, the stream has {}",
                    self.want[p as usize]
                ));
            }
            self.got[p as usize] = true;
        }
        while self.nxt < self.want.len() && self.got[self.nxt] {
            self.nxt += 1;
        }
        Ok(())
    }

    pub fn ack(&self) -> u32 {
        seq_of(self.isn, self.nxt)
    }

    /// The first block received above the acknowledgment, as offsets.
    pub fn sack_block(&self) -> Option<(usize, usize)> {
        let l = (self.nxt..self.want.len()).find(|&i| self.got[i])?;
        let r = (l..self.want.len())
            .find(|&i| !self.got[i])
            .unwrap_or(self.want.len());
        Some((l, r))
    }

    pub fn done(&self) -> bool {
        self.nxt == self.want.len()
    }
}
