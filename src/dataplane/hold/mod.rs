//! Packets held while their next hop resolves.
//!
//! A packet the core cannot send yet because its next hop's MAC is unknown
//! ([`Verdict::Hold`]) is not dropped: the worker keeps it here while the
//! control thread resolves the neighbor, at most [`HOLD_PER_NEIGHBOR`] per
//! next hop and [`HOLD_SLOTS`] in all, for at most [`HOLD_NS`]. At every
//! housekeeping tick [`HoldArea::release`] processes again the packets
//! whose neighbor the pipeline's view now knows and sends them on; those
//! that waited too long are dropped. A fixed array: nothing allocates.
//!
//! The SYN proxy holds here too ([`Verdict::Wait`]): a client's data that
//! arrives before its real server answered waits, keyed by its
//! connection, at most [`HOLD_PER_CONN`] per connection and for at
//! most [`HOLD_NS`]; it is processed again at every tick until its
//! connection is spliced (then forwarded) or gone (then dropped).
//!
//! Generic over [`PacketBuf`]: the worker loop holds DPDK mbufs, the unit
//! tests hold `VecBuf`s. The area counts what happens to the packets
//! itself ([`HoldCount`]); the worker publishes those counters.

use crate::counters::{counter_enum, Counts};
use crate::dataplane::arrival::Arrival;
use crate::dataplane::contract::Pipeline;
use crate::dataplane::verdict::Verdict;
use crate::net::buf::PacketBuf;

/// Packets held per worker.
pub const HOLD_SLOTS: usize = 128;
/// Held packets per unresolved next hop.
pub const HOLD_PER_NEIGHBOR: usize = 4;
/// Held packets per SYN proxy connection waiting for its server: a
/// client's initial window (RFC 6928: ten segments), sent right after
/// its ACK.
pub const HOLD_PER_CONN: usize = 10;
/// How long a packet waits for its neighbor (ARP retries every second).
pub const HOLD_NS: u64 = 3_000_000_000;

counter_enum! {
    /// What happened to packets that waited for their next hop.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum HoldCount {
        /// Held while their next hop resolves.
        Held: count = "held",
        /// Processed again once the neighbor was known, and sent on.
        Released: count = "held_released",
        /// Not held: too many for their next hop, or the area full.
        Overflow: drop = "held_overflow",
        /// The neighbor did not resolve in time.
        Expired: drop = "held_expired",
    }
}

/// The hold area's counters.
pub type HoldCounts = Counts<HoldCount, { HoldCount::COUNT }>;

struct Held<B> {
    buf: B,
    /// The next hop it waits for (or, with `conn`, the connection record).
    ip: u32,
    /// Waits for a SYN proxy connection, not for a neighbor.
    conn: bool,
    /// The port it was received on (it is processed again as from there).
    port: u16,
    deadline: u64,
}

/// A fixed array of held packets (see the module docs).
pub struct HoldArea<B> {
    slots: [Option<Held<B>>; HOLD_SLOTS],
    n: usize,
    counts: HoldCounts,
}

impl<B: PacketBuf> Default for HoldArea<B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<B: PacketBuf> HoldArea<B> {
    /// An empty area.
    pub fn new() -> Self {
        HoldArea {
            slots: std::array::from_fn(|_| None),
            n: 0,
            counts: HoldCounts::new(),
        }
    }

    /// Packets held now.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// What happened to held packets so far.
    pub fn counts(&self) -> &HoldCounts {
        &self.counts
    }

    /// Keep `buf`, received on `port`, until next hop `ip` is resolved, for
    /// at most [`HOLD_NS`] from `now`. When the area is full or `ip` has
    /// [`HOLD_PER_NEIGHBOR`] packets waiting already, `buf` is dropped
    /// (counted as overflow).
    pub fn hold(&mut self, buf: B, ip: u32, port: u16, now: u64) {
        self.put(buf, ip, false, port, now)
    }

    /// Keep `buf`, received on `port`, while SYN proxy connection `conn`
    /// waits for its real server, for at most [`HOLD_NS`] from `now`
    /// (overflow as for [`Self::hold`]).
    pub fn wait(&mut self, buf: B, conn: u32, port: u16, now: u64) {
        self.put(buf, conn, true, port, now)
    }

    fn put(&mut self, buf: B, ip: u32, conn: bool, port: u16, now: u64) {
        if self.n >= HOLD_SLOTS
            || self
                .slots
                .iter()
                .flatten()
                .filter(|h| h.ip == ip && h.conn == conn)
                .count()
                >= if conn {
                    HOLD_PER_CONN
                } else {
                    HOLD_PER_NEIGHBOR
                }
        {
            self.counts[HoldCount::Overflow] += 1;
            return;
        }
        if let Some(slot) = self.slots.iter_mut().find(|s| s.is_none()) {
            *slot = Some(Held {
                buf,
                ip,
                conn,
                port,
                deadline: now + HOLD_NS,
            });
            self.n += 1;
            self.counts[HoldCount::Held] += 1;
        } else {
            self.counts[HoldCount::Overflow] += 1;
        }
    }

    /// Release what can go: every held packet whose next hop `pipe` now
    /// knows ([`Pipeline::resolved`]) is processed again as received
    /// ([`Pipeline::process`]) and handed with its verdict to `send`; one
    /// whose next hop is still unknown after its deadline is dropped. A
    /// packet that is unresolved again when processed (the route now
    /// points elsewhere) goes back to its slot with its first deadline.
    pub fn release<P: Pipeline>(
        &mut self,
        pipe: &mut P,
        now: u64,
        mut send: impl FnMut(B, Verdict),
    ) {
        for slot in self.slots.iter_mut() {
            let Some(h) = slot.as_ref() else {
                continue;
            };
            // a waiting SYN proxy packet is tried again at every tick
            let ready = h.conn || pipe.resolved(h.ip);
            if !ready && now < h.deadline {
                continue;
            }
            let Some(mut h) = slot.take() else {
                continue;
            };
            self.n -= 1;
            if !ready {
                self.counts[HoldCount::Expired] += 1;
                continue; // dropped
            }
            match pipe.process(&mut h.buf, Arrival::wire(h.port, now)) {
                Verdict::Hold(ip) if now < h.deadline => {
                    (h.ip, h.conn) = (ip, false);
                    *slot = Some(h);
                    self.n += 1;
                }
                Verdict::Wait(c) if now < h.deadline => {
                    (h.ip, h.conn) = (c, true);
                    *slot = Some(h);
                    self.n += 1;
                }
                Verdict::Hold(_) | Verdict::Wait(_) => self.counts[HoldCount::Expired] += 1,
                v => {
                    self.counts[HoldCount::Released] += 1;
                    send(h.buf, v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
