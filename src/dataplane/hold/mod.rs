//! Packets held while their next hop resolves.
//!
//! A packet the core cannot send yet because its next hop's MAC is unknown
//! ([`Verdict::Hold`] for an IPv4 next hop, [`Verdict::Hold6`] for an IPv6
//! one) is not dropped: the worker keeps it here while the control thread
//! resolves the neighbor (ARP, or Neighbour Discovery), at most
//! [`HOLD_PER_NEIGHBOR`] per next hop and [`HOLD_SLOTS`] in all, for at
//! most [`HOLD_NS`]. Both families share the slots, the bounds and the
//! counters; a packet is keyed by its next hop's address ([`Hop`]: an IPv4
//! and an IPv6 next hop are different keys). At every housekeeping tick
//! [`HoldArea::release`] processes again the packets whose neighbor the
//! pipeline's view now knows and sends them on; those that waited too
//! long are dropped. A fixed array: nothing allocates.
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
use crate::dataplane::verdict::{Hop, Verdict};
use crate::net::buf::PacketBuf;

/// Packets held per worker.
pub const HOLD_SLOTS: usize = 128;
/// Held packets per unresolved next hop.
pub const HOLD_PER_NEIGHBOR: usize = 4;
/// Held packets per SYN proxy connection waiting for its server: a
/// client's initial window (RFC 6928: ten segments), sent right after
/// its ACK.
pub const HOLD_PER_CONN: usize = 10;
/// How long a packet waits for its neighbor (ARP and Neighbour
/// Discovery retry every second).
pub const HOLD_NS: u64 = 3_000_000_000;

counter_enum! {
    /// What happened to packets that waited for their next hop.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum HoldCount {
        /// Held while their next hop resolves.
        Held: count = "held",
        /// Processed again once the neighbor was known, and sent on.
        Released: count = "held_released",
        /// Not held: too many for their next hop (or connection), or the
        /// area full.
        Overflow: drop = "held_overflow",
        /// The neighbor did not resolve in time.
        Expired: drop = "held_expired",
    }
}

/// The hold area's counters.
pub type HoldCounts = Counts<HoldCount, { HoldCount::COUNT }>;

/// What a held packet waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    /// Its next hop's MAC.
    Hop(Hop),
    /// Its SYN proxy connection (the record) to be spliced.
    Conn(u32),
}

struct Held<B> {
    buf: B,
    key: Key,
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

    /// Keep `buf`, received on `port`, until next hop `hop` is resolved,
    /// for at most [`HOLD_NS`] from `now`. When the area is full or `hop`
    /// has [`HOLD_PER_NEIGHBOR`] packets waiting already, `buf` is dropped
    /// (counted as overflow).
    pub fn hold(&mut self, buf: B, hop: Hop, port: u16, now: u64) {
        self.put(buf, Key::Hop(hop), port, now)
    }

    /// [`Self::hold`] for a [`Verdict::Hold6`]: its next hop is the IPv6
    /// address `pipe` gave it `ticket` for. A ticket `pipe` no longer
    /// knows drops `buf` (`pipe` counted it).
    pub fn hold6<P: Pipeline>(&mut self, pipe: &mut P, buf: B, ticket: u32, port: u16, now: u64) {
        if let Some(ip) = pipe.hop6(ticket) {
            self.hold(buf, Hop::V6(ip), port, now)
        }
    }

    /// Keep `buf`, received on `port`, while SYN proxy connection `conn`
    /// waits for its real server, for at most [`HOLD_NS`] from `now`
    /// (overflow as for [`Self::hold`]).
    pub fn wait(&mut self, buf: B, conn: u32, port: u16, now: u64) {
        self.put(buf, Key::Conn(conn), port, now)
    }

    fn put(&mut self, buf: B, key: Key, port: u16, now: u64) {
        let most = match key {
            Key::Hop(_) => HOLD_PER_NEIGHBOR,
            Key::Conn(_) => HOLD_PER_CONN,
        };
        if self.n >= HOLD_SLOTS
            || self.slots.iter().flatten().filter(|h| h.key == key).count() >= most
        {
            self.counts[HoldCount::Overflow] += 1;
            return;
        }
        if let Some(slot) = self.slots.iter_mut().find(|s| s.is_none()) {
            *slot = Some(Held {
                buf,
                key,
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
            let ready = match h.key {
                Key::Hop(hop) => pipe.resolved(hop),
                // a waiting SYN proxy packet is tried again at every tick
                Key::Conn(_) => true,
            };
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
            // what the packet waits for now (Ok), or where it goes (Err)
            let next = match pipe.process(&mut h.buf, Arrival::wire(h.port, now)) {
                Verdict::Hold(ip) => Ok(Key::Hop(Hop::V4(ip))),
                // redeemed at once, so good (else dropped: `pipe` counted it)
                Verdict::Hold6(t) => pipe
                    .hop6(t)
                    .map(|ip| Key::Hop(Hop::V6(ip)))
                    .ok_or(Verdict::Drop),
                Verdict::Wait(c) => Ok(Key::Conn(c)),
                v => Err(v),
            };
            match next {
                Ok(key) if now < h.deadline => {
                    h.key = key;
                    *slot = Some(h);
                    self.n += 1;
                }
                Ok(_) => self.counts[HoldCount::Expired] += 1,
                Err(v) => {
                    self.counts[HoldCount::Released] += 1;
                    send(h.buf, v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
