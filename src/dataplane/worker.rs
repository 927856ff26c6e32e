//! The DPDK worker loop: rx burst per port -> pipeline -> tx burst per port.
//!
//! One worker per worker lcore; worker `i` owns RX queue `i` and TX queue
//! `i` of every port, so no queue is shared. Worker 0 also transmits the
//! packets the control thread builds (ARP requests, gratuitous ARP) from a
//! ring, since the control thread owns no TX queue.

use super::stats::{IoCounters, PublishedIo};
use super::{HoldEvent, Pipeline, Verdict};
use crate::net::buf::PacketBuf;
use crate::pmd::lcore::TscClock;
use crate::pmd::mbuf::{Burst, Mbuf, BURST};
use crate::pmd::ring::MbufRing;
use std::sync::atomic::{AtomicBool, Ordering};

/// Maximum ports a worker drives.
pub const MAX_PORTS: usize = 8;

/// What a worker needs besides its pipeline.
pub struct WorkerIo<'a> {
    /// DPDK port ids, by dirigo port index.
    pub ports: &'a [u16],
    /// This worker's queue on every port.
    pub queue: u16,
    /// Packets from the control thread to transmit (worker 0 only).
    pub inject: Option<&'a MbufRing>,
    /// Set to stop the loop.
    pub stop: &'a AtomicBool,
    /// Housekeeping period in nanoseconds.
    pub housekeeping_ns: u64,
    /// Where the I/O counters are published.
    pub published: &'a PublishedIo,
    /// RX queues each port has (a worker whose queue index is beyond polls
    /// nothing there).
    pub rx_queues: &'a [u16],
    /// Every worker's steering ring, by worker index (packets another worker
    /// owns are handed over here); empty with one worker.
    pub steer: &'a [MbufRing],
    /// Packets lost because the owner's steering ring was full.
    pub steer_lost: &'a std::sync::atomic::AtomicU64,
}

/// Packets held while their next hop resolves: at most [`HOLD_SLOTS`] per
/// worker and [`HOLD_PER_NEIGHBOR`] per next hop, for at most [`HOLD_NS`].
pub const HOLD_SLOTS: usize = 64;
/// Held packets per unresolved next hop.
pub const HOLD_PER_NEIGHBOR: usize = 4;
/// How long a packet waits for its neighbor (ARP retries every second).
pub const HOLD_NS: u64 = 3_000_000_000;

struct Held {
    m: Mbuf,
    ip: u32,
    port: u16,
    deadline: u64,
}

/// A fixed array of held packets (no allocation).
struct HoldArea {
    slots: [Option<Held>; HOLD_SLOTS],
    n: usize,
}

impl HoldArea {
    fn new() -> Self {
        HoldArea {
            slots: std::array::from_fn(|_| None),
            n: 0,
        }
    }

    fn hold(&mut self, m: Mbuf, ip: u32, port: u16, now: u64) -> HoldEvent {
        if self.n >= HOLD_SLOTS {
            return HoldEvent::Overflow;
        }
        let same = self.slots.iter().flatten().filter(|h| h.ip == ip).count();
        if same >= HOLD_PER_NEIGHBOR {
            return HoldEvent::Overflow;
        }
        if let Some(slot) = self.slots.iter_mut().find(|s| s.is_none()) {
            *slot = Some(Held {
                m,
                ip,
                port,
                deadline: now + HOLD_NS,
            });
            self.n += 1;
            return HoldEvent::Held;
        }
        HoldEvent::Overflow
    }
}

/// Send `m` where the verdict says; returns a hold event to count.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn dispatch(
    v: Verdict,
    m: Mbuf,
    io: &WorkerIo<'_>,
    tx: &mut [Burst],
    counters: &mut [IoCounters],
    steer_lost: &mut u64,
    hold: &mut HoldArea,
    port: u16,
    now: u64,
) -> Option<HoldEvent> {
    match v {
        Verdict::Hold(ip) => return Some(hold.hold(m, ip, port, now)),
        Verdict::Tx(out) => {
            let o = out as usize;
            if o >= tx.len() {
                return None; // freed: a pipeline bug guard
            }
            if tx[o].is_full() {
                flush(&mut tx[o], io.ports[o], io.queue, &mut counters[o]);
            }
            let _ = tx[o].push(m);
        }
        Verdict::Drop => {}
        Verdict::Steer(w) => match io.steer.get(w as usize) {
            Some(r) => {
                if r.enqueue(m).is_err() {
                    *steer_lost += 1;
                }
            }
            None => *steer_lost += 1,
        },
    }
    None
}

/// Release held packets whose neighbor is now known; drop expired ones.
#[allow(clippy::too_many_arguments)]
fn release<P: Pipeline>(
    pipe: &mut P,
    hold: &mut HoldArea,
    io: &WorkerIo<'_>,
    tx: &mut [Burst],
    counters: &mut [IoCounters],
    steer_lost: &mut u64,
    now: u64,
) {
    for i in 0..HOLD_SLOTS {
        let Some(h) = hold.slots[i].as_ref() else {
            continue;
        };
        let ready = h.ip == 0 || pipe.resolved(h.ip);
        if !ready && now < h.deadline {
            continue;
        }
        let Some(mut h) = hold.slots[i].take() else {
            continue;
        };
        hold.n -= 1;
        if !ready {
            pipe.note_hold(HoldEvent::Expired);
            continue; // freed
        }
        let v = match pipe.process(&mut h.m, h.port, now) {
            Verdict::Hold(ip) if now < h.deadline => {
                // still waiting: back in its slot with its first deadline
                h.ip = ip;
                hold.slots[i] = Some(h);
                hold.n += 1;
                continue;
            }
            Verdict::Hold(_) => {
                pipe.note_hold(HoldEvent::Expired);
                continue;
            }
            v => v,
        };
        pipe.note_hold(HoldEvent::Released);
        // `v` is not a Hold here (handled above), so `hold` stays as it is
        let _ = dispatch(v, h.m, io, tx, counters, steer_lost, hold, h.port, now);
    }
}

/// Run the loop until `io.stop` is set. Returns the I/O counters.
pub fn run<P: Pipeline>(
    pipe: &mut P,
    io: &WorkerIo<'_>,
    clock: &TscClock,
) -> [IoCounters; MAX_PORTS] {
    let nports = io.ports.len().min(MAX_PORTS);
    let mut counters = [IoCounters::default(); MAX_PORTS];
    let mut tx: [Burst; MAX_PORTS] = std::array::from_fn(|_| Burst::new());
    let mut rx = Burst::new();
    let mut next_hk = 0u64;
    let mut iter: u32 = 0;
    let mut steer_lost = 0u64;
    // DPDK port id -> dirigo port index, for packets handed over by rings.
    let mut index_of = [u16::MAX; 256];
    for (i, &pid) in io.ports.iter().enumerate().take(nports) {
        index_of[pid as usize & 0xff] = i as u16;
    }
    let my_ring = io.steer.get(io.queue as usize);
    let mut hold = HoldArea::new();
    loop {
        // Checking the flag every 64 iterations keeps the shared cache line
        // out of the loop's way.
        iter = iter.wrapping_add(1);
        if iter % 64 == 0 && io.stop.load(Ordering::Relaxed) {
            break;
        }
        let now = clock.now_ns();
        pipe.begin_burst(now);
        for p in 0..nports {
            if io.queue >= io.rx_queues.get(p).copied().unwrap_or(1) {
                continue;
            }
            let n = rx.rx(io.ports[p], io.queue);
            if n == 0 {
                continue;
            }
            counters[p].rx += n as u64;
            let mut verdicts = [Verdict::Drop; BURST];
            pipe.process_burst(rx.as_mut_slice(), p as u16, now, &mut verdicts[..n]);
            for (m, v) in rx.drain().zip(verdicts) {
                if let Some(e) = dispatch(
                    v,
                    m,
                    io,
                    &mut tx[..nports],
                    &mut counters[..nports],
                    &mut steer_lost,
                    &mut hold,
                    p as u16,
                    now,
                ) {
                    pipe.note_hold(e);
                }
            }
        }
        if let Some(ring) = my_ring {
            if ring.dequeue(&mut rx) > 0 {
                // handed-over packets take the burst path too, in runs of
                // one receiving port (a packet's port index: its mbuf port)
                let port_of = |m: &Mbuf| index_of[m.port() as usize & 0xff];
                let mut verdicts = [Verdict::Drop; BURST];
                let pkts = rx.as_mut_slice();
                let n = pkts.len().min(BURST);
                let mut start = 0;
                while start < n {
                    let p = port_of(&pkts[start]);
                    let mut end = start + 1;
                    while end < n && port_of(&pkts[end]) == p {
                        end += 1;
                    }
                    if (p as usize) < nports {
                        pipe.process_steered_burst(
                            &mut pkts[start..end],
                            p,
                            now,
                            &mut verdicts[start..end],
                        );
                    } // else: an unknown port, dropped (Verdict::Drop)
                    start = end;
                }
                for (m, v) in rx.drain().zip(verdicts) {
                    let p = port_of(&m);
                    if let Some(e) = dispatch(
                        v,
                        m,
                        io,
                        &mut tx[..nports],
                        &mut counters[..nports],
                        &mut steer_lost,
                        &mut hold,
                        p,
                        now,
                    ) {
                        pipe.note_hold(e);
                    }
                }
            }
        }
        // Control packets (ARP, GARP) are rare: look every 8th round.
        if let Some(ring) = io.inject.filter(|_| iter % 8 == 0) {
            let mut b = Burst::new();
            if ring.dequeue(&mut b) > 0 {
                for m in b.drain() {
                    let o = m.port() as usize;
                    if o >= nports || m.is_empty() {
                        continue;
                    }
                    if tx[o].is_full() {
                        flush(&mut tx[o], io.ports[o], io.queue, &mut counters[o]);
                    }
                    let _ = tx[o].push(m);
                }
            }
        }
        for o in 0..nports {
            flush(&mut tx[o], io.ports[o], io.queue, &mut counters[o]);
        }
        if now >= next_hk {
            if hold.n > 0 {
                release(
                    pipe,
                    &mut hold,
                    io,
                    &mut tx[..nports],
                    &mut counters[..nports],
                    &mut steer_lost,
                    now,
                );
            }
            if steer_lost > 0 {
                io.steer_lost
                    .fetch_add(steer_lost, std::sync::atomic::Ordering::Relaxed);
                steer_lost = 0;
            }
            pipe.housekeeping(now);
            io.published.publish(&counters[..nports]);
            next_hk = now + io.housekeeping_ns;
        }
    }
    pipe.housekeeping(clock.now_ns());
    io.published.publish(&counters[..nports]);
    counters
}

#[inline]
fn flush(b: &mut Burst, port: u16, queue: u16, c: &mut IoCounters) {
    if b.is_empty() {
        return;
    }
    let (sent, dropped) = b.tx(port, queue);
    c.tx += sent as u64;
    c.tx_full += dropped as u64;
}
