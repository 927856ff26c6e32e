//! The crash checkpoint's worker side (`[control] connection_checkpoint_s`,
//! issue 53). The checkpoint thread (`daemon::handoff::checkpoint`) asks
//! for a sweep by raising [`CheckpointLane::want`]; each worker then, at
//! its housekeeping, encodes a bounded slice of its table
//! ([`SLOTS_PER_TICK`] slots) into buffers the thread gave it
//! ([`CheckpointLane::empty`]) and hands the filled ones back
//! ([`CheckpointLane::full`]), until its whole table is swept; then it
//! says so ([`CheckpointLane::done`]). The thread writes the file; the
//! worker never allocates, locks or waits: with no empty buffer it tries
//! again at its next housekeeping (counted as a stall).

use crate::lb::balancer::Balancer;
use crate::lb::handoff::codec::{push_entry, MAX_ENTRY_LEN};
use crate::lb::snapshot::Snapshot;
use crossbeam_queue::ArrayQueue;
use std::sync::atomic::{AtomicU64, Ordering};

/// Table slots a worker examines per housekeeping tick during a sweep
/// (ticks are 1 ms apart: a 1M-connection table, about 1.3M slots over
/// both tables, is swept in about a third of a second).
pub const SLOTS_PER_TICK: u32 = 4096;
/// Bytes in each buffer the thread hands the workers.
pub const CHUNK_BYTES: usize = 256 << 10;
/// Buffers in flight each way per worker.
pub const CHUNKS_IN_FLIGHT: usize = 32;

/// A filled buffer: the sweep it belongs to, its entries' bytes, how many.
pub struct Chunk {
    /// The sweep ([`CheckpointLane::want`]'s value) it was filled for.
    pub epoch: u64,
    /// Entries encoded with `push_entry`.
    pub bytes: Vec<u8>,
    /// How many.
    pub entries: u32,
}

/// One worker's end of the checkpoint.
pub struct CheckpointLane {
    /// Buffers to fill (thread -> worker), empty, of [`CHUNK_BYTES`].
    pub empty: ArrayQueue<Vec<u8>>,
    /// Filled buffers (worker -> thread).
    pub full: ArrayQueue<Chunk>,
    /// The sweep the thread asks for (0: none yet).
    pub want: AtomicU64,
    /// The last sweep this worker finished: every buffer of it is in
    /// `full` before this is stored (release).
    pub done: AtomicU64,
    /// Housekeeping ticks a sweeping worker found no empty buffer, or no
    /// room to hand a full one back.
    pub stalls: AtomicU64,
}

impl Default for CheckpointLane {
    fn default() -> Self {
        CheckpointLane {
            empty: ArrayQueue::new(CHUNKS_IN_FLIGHT),
            full: ArrayQueue::new(CHUNKS_IN_FLIGHT),
            want: AtomicU64::new(0),
            done: AtomicU64::new(0),
            stalls: AtomicU64::new(0),
        }
    }
}

/// A worker's place in the sweep (kept in its pipeline).
#[derive(Default)]
pub struct Sweep {
    /// The sweep under way (or last finished).
    epoch: u64,
    /// Where it goes on from (None: no sweep under way).
    pos: Option<u32>,
    /// The buffer being filled, and its entries.
    cur: Option<(Vec<u8>, u32)>,
}

impl Sweep {
    /// One housekeeping tick of the sweep `lane` asks for: at most
    /// [`SLOTS_PER_TICK`] slots of `lb` (under `snap`, at `now_ns`)
    /// encoded, full buffers handed back, `done` raised at the end.
    /// Nothing when no sweep is asked for.
    pub fn step(&mut self, lane: &CheckpointLane, lb: &Balancer, snap: &Snapshot, now_ns: u64) {
        let want = lane.want.load(Ordering::Acquire);
        if want != self.epoch {
            // a new sweep: from the start, what was half-filled dropped
            self.epoch = want;
            self.pos = Some(0);
            if let Some((b, n)) = &mut self.cur {
                b.clear();
                *n = 0;
            }
        }
        let Some(mut pos) = self.pos else {
            return;
        };
        let mut budget = SLOTS_PER_TICK;
        loop {
            if self.cur.is_none() {
                match lane.empty.pop() {
                    Some(b) => self.cur = Some((b, 0)),
                    None => return self.stall(lane, pos),
                }
            }
            let Some((buf, n)) = self.cur.as_mut() else {
                return;
            };
            let (next, used) = lb.checkpoint_step(snap, now_ns, pos, budget, |e| {
                // never beyond the buffer's capacity: no allocation here
                if buf.capacity() - buf.len() < MAX_ENTRY_LEN {
                    return false;
                }
                push_entry(buf, e);
                *n += 1;
                true
            });
            budget = budget.saturating_sub(used);
            let room = buf.capacity() - buf.len() >= MAX_ENTRY_LEN;
            match next {
                None => {
                    // the sweep is over: the last buffer back, then done
                    if !self.hand_back(lane) {
                        return self.stall(lane, u32::MAX);
                    }
                    self.pos = None;
                    lane.done.store(self.epoch, Ordering::Release);
                    return;
                }
                Some(p) => {
                    pos = p;
                    if !room && !self.hand_back(lane) {
                        return self.stall(lane, pos);
                    }
                    if budget == 0 {
                        self.pos = Some(pos);
                        return;
                    }
                }
            }
        }
    }

    /// Hand the current buffer back; false when the queue is full (it is
    /// kept, to try again).
    fn hand_back(&mut self, lane: &CheckpointLane) -> bool {
        let Some((bytes, entries)) = self.cur.take() else {
            return true;
        };
        let c = Chunk {
            epoch: self.epoch,
            bytes,
            entries,
        };
        match lane.full.push(c) {
            Ok(()) => true,
            Err(c) => {
                self.cur = Some((c.bytes, c.entries));
                false
            }
        }
    }

    /// No buffer to go on with: the next tick goes on from `pos`
    /// (`u32::MAX`: the sweep is over but its last buffer still waits).
    fn stall(&mut self, lane: &CheckpointLane, pos: u32) {
        lane.stalls.fetch_add(1, Ordering::Relaxed);
        self.pos = Some(pos);
    }
}
