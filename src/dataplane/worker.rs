//! The DPDK worker loop: rx burst per port -> pipeline -> tx burst per port.
//!
//! One worker per worker lcore; worker `i` owns RX queue `i` and TX queue
//! `i` of every port, so no queue is shared. Worker 0 also transmits the
//! packets the control thread builds (ARP requests, gratuitous ARP) from a
//! ring, since the control thread owns no TX queue; so do the frames the
//! ports' kernel interfaces send (the exception path), which the control
//! side's exception thread puts on the same ring. Packets for the kernel
//! interfaces leave the other way on the exception ring. Packets waiting
//! for their next hop's MAC wait in the worker's [`HoldArea`]. With
//! `[dataplane] idle = "sleep"` a worker that finds nothing to do naps
//! between rounds ([`super::idle::Backoff`]).

use super::arrival::Arrival;
use super::contract::Pipeline;
use super::exception::TokenBucket;
use super::hold::HoldArea;
use super::idle::Backoff;
use super::stats::{IoCounters, LoopCounters, PublishedCounters, PublishedIo, PublishedLoop};
use super::verdict::{Hop, Verdict};
use crate::net::buf::PacketBuf;
use crate::pmd::lcore::TscClock;
use crate::pmd::mbuf::{Burst, Mbuf, BURST};
use crate::pmd::mempool::Mempool;
use crate::pmd::ring::MbufRing;
use std::sync::atomic::{AtomicBool, Ordering};

/// Maximum ports a worker drives.
pub const MAX_PORTS: usize = 8;

/// On the inject ring, a port index with this bit means "received on
/// that port, for the pipeline" (a frame the kernel sent to dirigo
/// itself) rather than "transmit on that port".
pub const TO_PIPELINE: u16 = 0x8000;

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
    /// Where the hold area's counters are published.
    pub published_hold: &'a PublishedCounters,
    /// Where the loop's own counters (busy time, burst durations,
    /// steering losses) are published.
    pub published_loop: &'a PublishedLoop,
    /// Keep the burst-duration histogram (`[metrics] burst_histogram`).
    pub burst_histogram: bool,
    /// RX queues each port has (a worker whose queue index is beyond polls
    /// nothing there).
    pub rx_queues: &'a [u16],
    /// Every worker's steering ring, by worker index (packets another worker
    /// owns are handed over here); empty with one worker.
    pub steer: &'a [MbufRing],
    /// Packets lost because the owner's steering ring was full.
    pub steer_lost: &'a std::sync::atomic::AtomicU64,
    /// The exception path: packets for the ports' kernel interfaces go on
    /// this ring (multi-producer; the control side's exception thread
    /// consumes it), each port's through its rate limit. `None`: no port
    /// has a kernel interface.
    pub exception: Option<Exception<'a>>,
    /// Where frames the pipeline generates itself get their mbufs (the
    /// SYN proxy's timeout RSTs); None: they are not sent.
    pub pool: Option<&'a Mempool>,
    /// `[dataplane] idle = "sleep"`: nap after a run of empty rounds
    /// instead of polling all the time.
    pub idle_sleep: bool,
}

/// The worker's end of the exception path.
#[derive(Clone, Copy)]
pub struct Exception<'a> {
    /// Where packets for the kernel go (mbuf port = dirigo port index).
    pub ring: &'a MbufRing,
    /// Each port's limit, by port index (a fresh bucket per worker).
    pub limits: &'a [TokenBucket],
    /// Where the copies of answered frames are allocated.
    pub pool: &'a Mempool,
}

/// Where packets go once the pipeline has decided: a TX burst per port
/// (flushed when full and at the end of every round), the owner's steering
/// ring, or nowhere (freed).
struct Out<'a, 'io> {
    io: &'a WorkerIo<'io>,
    tx: [Burst; MAX_PORTS],
    counters: [IoCounters; MAX_PORTS],
    nports: usize,
    steer_lost: u64,
    /// Each port's exception rate limit.
    limits: [TokenBucket; MAX_PORTS],
    /// The time of the current round.
    now: u64,
}

impl Out<'_, '_> {
    /// Send `m` where `v` says; a drop (or a hold that reaches here) frees it.
    #[inline(always)]
    fn send(&mut self, m: Mbuf, v: Verdict) {
        match v {
            Verdict::Tx(o) => self.tx(o as usize, m),
            Verdict::Steer(w) => match self.io.steer.get(w as usize) {
                Some(r) => {
                    if r.enqueue(m).is_err() {
                        self.steer_lost += 1;
                    }
                }
                None => self.steer_lost += 1,
            },
            Verdict::Kernel(p) => self.kernel(p as usize, m),
            Verdict::Drop | Verdict::Hold(_) | Verdict::Hold6(_) | Verdict::Wait(_) => {}
        }
    }

    /// Hand `m` (received on port index `p`) to the exception path, within
    /// the port's rate limit; over it, or with the ring full, it is freed
    /// and counted.
    #[cold]
    fn kernel(&mut self, p: usize, mut m: Mbuf) {
        let (Some(x), Some(c)) = (self.io.exception, self.counters.get_mut(p)) else {
            return; // no exception path: the pipeline never asks (freed)
        };
        if !self.limits[p].take(self.now) {
            c.kernel_limited += 1;
            return;
        }
        m.set_port(p as u16);
        match x.ring.enqueue(m) {
            Ok(()) => c.to_kernel += 1,
            Err(_) => c.kernel_full += 1,
        }
    }

    /// Copies of answered frames (ARP requests for a port's address) for
    /// the kernel: each in a fresh mbuf, then as [`Out::kernel`].
    #[cold]
    fn kernel_copy(&mut self, p: u16, frame: &[u8]) {
        let Some(x) = self.io.exception else {
            return;
        };
        let Some(mut m) = x.pool.alloc() else {
            if let Some(c) = self.counters.get_mut(p as usize) {
                c.kernel_full += 1;
            }
            return;
        };
        if m.append(frame.len()) {
            m.data_mut().copy_from_slice(frame);
            self.kernel(p as usize, m);
        }
    }

    /// Queue `m` for transmission on port index `o`.
    /// A frame the pipeline built itself: copied into a new mbuf and sent
    /// on port `p` (a pool without mbufs counts as a full TX).
    #[cold]
    fn generated(&mut self, pool: &Mempool, p: usize, frame: &[u8]) {
        let Some(mut m) = pool.alloc() else {
            if let Some(c) = self.counters.get_mut(p) {
                c.tx_full += 1;
            }
            return;
        };
        if m.append(frame.len()) {
            m.data_mut().copy_from_slice(frame);
            self.tx(p, m);
        }
    }

    #[inline(always)]
    fn tx(&mut self, o: usize, m: Mbuf) {
        if o >= self.nports {
            return; // freed: a pipeline bug guard
        }
        if self.tx[o].is_full() {
            self.flush(o);
        }
        let _ = self.tx[o].push(m);
    }

    /// Transmit all of `burst` on port index `o` (`o < nports`), after
    /// what is queued there already (so the port's order is kept).
    #[inline]
    fn tx_burst(&mut self, o: usize, burst: &mut Burst) {
        self.flush(o);
        let (sent, dropped) = burst.tx(self.io.ports[o], self.io.queue);
        self.counters[o].tx += sent as u64;
        self.counters[o].tx_full += dropped as u64;
    }

    #[inline]
    fn flush(&mut self, o: usize) {
        let b = &mut self.tx[o];
        if b.is_empty() {
            return;
        }
        let (sent, dropped) = b.tx(self.io.ports[o], self.io.queue);
        self.counters[o].tx += sent as u64;
        self.counters[o].tx_full += dropped as u64;
    }

    fn flush_all(&mut self) {
        for o in 0..self.nports {
            self.flush(o);
        }
    }

    /// Add the steering losses to the shared count (and to the worker's
    /// own, `lc`).
    fn publish_steer_lost(&mut self, lc: &mut LoopCounters) {
        if self.steer_lost > 0 {
            lc.steer_lost += self.steer_lost;
            self.io
                .steer_lost
                .fetch_add(self.steer_lost, Ordering::Relaxed);
            self.steer_lost = 0;
        }
    }

    /// Publish the I/O counters.
    fn publish(&self) {
        self.io.published.publish(&self.counters[..self.nports]);
    }
}

/// Act on the verdicts of a burst: `bufs` drained in order with
/// `verdicts`, each packet received on port index `port_of(packet)`. The
/// tickets of `Hold6` verdicts are redeemed with `pipe`, before it
/// processes another burst.
#[inline(always)]
fn deliver<P: Pipeline>(
    bufs: &mut Burst,
    verdicts: &[Verdict; BURST],
    port_of: impl Fn(&Mbuf) -> u16,
    out: &mut Out<'_, '_>,
    hold: &mut HoldArea<Mbuf>,
    pipe: &mut P,
    now: u64,
) {
    for (m, &v) in bufs.drain().zip(verdicts) {
        match v {
            Verdict::Hold(ip) => {
                let port = port_of(&m);
                hold.hold(m, Hop::V4(ip), port, now);
            }
            Verdict::Hold6(t) => {
                let port = port_of(&m);
                hold.hold6(pipe, m, t, port, now);
            }
            Verdict::Wait(c) => {
                let port = port_of(&m);
                hold.wait(m, c, port, now);
            }
            v => out.send(m, v),
        }
    }
}

/// What the loop's rounds share besides the pipeline: where packets go,
/// the receive burst, the hold area and the port index of a ring's mbuf.
struct Rounds<'a, 'io> {
    io: &'a WorkerIo<'io>,
    out: Out<'a, 'io>,
    rx: Burst,
    hold: HoldArea<Mbuf>,
    /// DPDK port id -> dirigo port index, for packets handed over by rings.
    index_of: [u16; 256],
    nports: usize,
}

impl<'a, 'io> Rounds<'a, 'io> {
    fn new(io: &'a WorkerIo<'io>) -> Self {
        let nports = io.ports.len().min(MAX_PORTS);
        let mut index_of = [u16::MAX; 256];
        for (i, &pid) in io.ports.iter().enumerate().take(nports) {
            index_of[pid as usize & 0xff] = i as u16;
        }
        Rounds {
            io,
            out: Out {
                io,
                tx: std::array::from_fn(|_| Burst::new()),
                counters: [IoCounters::default(); MAX_PORTS],
                nports,
                steer_lost: 0,
                limits: std::array::from_fn(|i| {
                    io.exception
                        .and_then(|x| x.limits.get(i).copied())
                        .unwrap_or(TokenBucket::new(0, 0))
                }),
                now: 0,
            },
            rx: Burst::new(),
            hold: HoldArea::new(),
            index_of,
            nports,
        }
    }

    /// Each port's receive queue: a burst each through the pipeline, then
    /// out. Whether any packet came.
    #[inline(always)]
    fn receive<P: Pipeline>(&mut self, pipe: &mut P, now: u64) -> bool {
        let mut busy = false;
        for p in 0..self.nports {
            if self.io.queue >= self.io.rx_queues.get(p).copied().unwrap_or(1) {
                continue;
            }
            let n = self.rx.rx(self.io.ports[p], self.io.queue);
            if n == 0 {
                continue;
            }
            busy = true;
            self.out.counters[p].rx += n as u64;
            let mut verdicts = [Verdict::Drop; BURST];
            let at = Arrival::wire(p as u16, now);
            match pipe.process_burst(self.rx.as_mut_slice(), at, &mut verdicts[..n]) {
                // every packet out of one port (the common established
                // burst): to the driver as received, no verdict looked at
                Some(o) if (o as usize) < self.nports => {
                    self.out.tx_burst(o as usize, &mut self.rx)
                }
                _ => deliver(
                    &mut self.rx,
                    &verdicts,
                    |_| p as u16,
                    &mut self.out,
                    &mut self.hold,
                    pipe,
                    now,
                ),
            }
        }
        busy
    }

    /// What other workers handed over (this worker's steering ring): the
    /// burst path too, in runs of one receiving port (a packet's port
    /// index: its mbuf port). Whether any packet came.
    #[inline(always)]
    fn steered<P: Pipeline>(&mut self, pipe: &mut P, now: u64) -> bool {
        let Some(ring) = self.io.steer.get(self.io.queue as usize) else {
            return false;
        };
        if ring.dequeue(&mut self.rx) == 0 {
            return false;
        }
        let index_of = &self.index_of;
        let port_of = |m: &Mbuf| index_of[m.port() as usize & 0xff];
        let mut verdicts = [Verdict::Drop; BURST];
        let pkts = self.rx.as_mut_slice();
        let n = pkts.len().min(BURST);
        // one run of one port (the common case: everything the others
        // handed over came in on the client port) answers like a received
        // burst
        let mut one = None;
        let mut start = 0;
        while start < n {
            let p = port_of(&pkts[start]);
            let mut end = start + 1;
            while end < n && port_of(&pkts[end]) == p {
                end += 1;
            }
            if (p as usize) < self.nports {
                let all = pipe.process_burst(
                    &mut pkts[start..end],
                    Arrival::steered(p, now),
                    &mut verdicts[start..end],
                );
                one = all.filter(|_| start == 0 && end == n);
            } // else: an unknown port, dropped (Verdict::Drop)
            start = end;
        }
        match one {
            Some(o) if (o as usize) < self.nports => self.out.tx_burst(o as usize, &mut self.rx),
            _ => deliver(
                &mut self.rx,
                &verdicts,
                port_of,
                &mut self.out,
                &mut self.hold,
                pipe,
                now,
            ),
        }
        true
    }

    /// The inject ring (worker 0): frames the control side sends out (ARP
    /// requests, gratuitous ARP, the kernel interfaces' frames), and the
    /// kernel's frames to dirigo itself, which go through the pipeline.
    /// Whether any frame came.
    fn injected<P: Pipeline>(&mut self, pipe: &mut P, ring: &MbufRing, now: u64) -> bool {
        let mut b = Burst::new();
        if ring.dequeue(&mut b) == 0 {
            return false;
        }
        for mut m in b.drain() {
            let p = m.port();
            if p & TO_PIPELINE != 0 {
                let p = p & !TO_PIPELINE;
                let Some(&pid) = self.io.ports.get(p as usize) else {
                    continue; // freed
                };
                m.set_port(pid);
                match pipe.process(&mut m, Arrival::kernel(p, now)) {
                    Verdict::Hold(ip) => self.hold.hold(m, Hop::V4(ip), p, now),
                    Verdict::Hold6(t) => self.hold.hold6(pipe, m, t, p, now),
                    Verdict::Wait(c) => self.hold.wait(m, c, p, now),
                    v => self.out.send(m, v),
                }
            } else if !m.is_empty() {
                self.out.tx(p as usize, m);
            }
        }
        true
    }

    /// Off the per-packet path, every `housekeeping_ns`: held packets
    /// released, the pipeline's own (expiry, counters), the frames it
    /// generated, everything published.
    fn housekeeping<P: Pipeline>(&mut self, pipe: &mut P, now: u64, lc: &mut LoopCounters) {
        let out = &mut self.out;
        if !self.hold.is_empty() {
            self.hold.release(pipe, now, |m, v| out.send(m, v));
        }
        self.out.publish_steer_lost(lc);
        pipe.housekeeping(now);
        if let Some(pool) = self.io.pool {
            let out = &mut self.out;
            pipe.drain_generated(&mut |p, f| out.generated(pool, p as usize, f));
        }
        self.publish(lc);
    }

    /// Publish the I/O, hold-area and loop counters.
    fn publish(&mut self, lc: &mut LoopCounters) {
        self.out.publish();
        self.io.published_hold.publish(self.hold.counts());
        self.out.publish_steer_lost(lc);
        self.io.published_loop.publish(lc);
    }
}

/// Run the loop until `io.stop` is set. Returns the I/O counters. Each
/// round: the ports' receive queues, what other workers handed over, every
/// 8th round the inject ring, the kernel copies, the TX bursts flushed;
/// housekeeping when due; with `idle = "sleep"` a nap after empty rounds.
#[inline(never)] // one call per worker; scripts/callgrind-daemon.sh counts from it
pub fn run<P: Pipeline>(
    pipe: &mut P,
    io: &WorkerIo<'_>,
    clock: &TscClock,
) -> [IoCounters; MAX_PORTS] {
    let mut r = Rounds::new(io);
    let mut next_hk = 0u64;
    let mut iter: u32 = 0;
    // Busy time and burst durations come from the clock read each
    // iteration already: an iteration lasts from its `now` to the next
    // one's, and is busy when it carried packets.
    let mut lc = LoopCounters::default();
    let hist = io.burst_histogram;
    let mut prev = clock.now_ns();
    let mut busy = false;
    // `idle = "poll"`: None, one predictable branch per round.
    let mut backoff = io.idle_sleep.then(Backoff::new);
    loop {
        // Checking the flag every 64 iterations keeps the shared cache line
        // out of the loop's way.
        iter = iter.wrapping_add(1);
        if iter % 64 == 0 && io.stop.load(Ordering::Relaxed) {
            break;
        }
        let now = clock.now_ns();
        lc.iteration(now.saturating_sub(prev), busy, hist);
        prev = now;
        r.out.now = now;
        pipe.begin_burst(now);
        busy = r.receive(pipe, now);
        busy |= r.steered(pipe, now);
        // Control packets (ARP, GARP) are rare: look every 8th round.
        if let Some(ring) = io.inject.filter(|_| iter % 8 == 0) {
            busy |= r.injected(pipe, ring, now);
        }
        if io.exception.is_some() {
            let out = &mut r.out;
            pipe.drain_kernel_copies(&mut |p, f| out.kernel_copy(p, f));
        }
        r.out.flush_all();
        if now >= next_hk {
            r.housekeeping(pipe, now, &mut lc);
            next_hk = now + io.housekeeping_ns;
        }
        if let Some(b) = backoff.as_mut() {
            let ns = b.after_round(busy, next_hk.saturating_sub(clock.now_ns()));
            if ns > 0 {
                // counted as idle: this round carried nothing, and its
                // span (to the next round's clock reading) includes the nap
                crate::clock::nap(std::time::Duration::from_nanos(ns));
                // look at the inject ring in the next round (it is read
                // every 8th), and at the stop flag every 8 naps
                iter |= 7;
            }
        }
    }
    pipe.housekeeping(clock.now_ns());
    r.publish(&mut lc);
    r.out.counters
}
