//! What a worker counts and how the control thread reads it.
//!
//! On the fast path counters are plain integers owned by the worker: the
//! pipeline's [`Counters`] (its own [`Count`] slots plus one per drop
//! reason of classify, ARP, ICMP echo and the IPv6 responder), the hold area's
//! ([`crate::dataplane::hold::HoldCounts`]) and the per-port [`IoCounters`].
//! At housekeeping the worker publishes them to atomics (relaxed stores,
//! single writer) — [`PublishedCounters`] keeps each counter's name and
//! kind beside its value, [`PublishedIo`] keeps each port's [`IoCounters`]
//! — so the control thread reads and sums them without locking a worker.

use crate::counters::{counter_enum, CounterSet, Counts, Named};
use crate::net::arp::ArpIgnore;
use crate::net::classify::NetDrop;
use crate::net::icmp::IcmpIgnore;
use crate::net::nd::NdIgnore;
use std::sync::atomic::{AtomicU64, Ordering};

counter_enum! {
    /// The pipeline's own counters (beside the per-reason arrays of
    /// [`Counters`]).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Count {
        /// ARP requests for our addresses answered.
        ArpReplied: count = "arp_replied",
        /// ARP senders reported to the control thread.
        ArpLearned: count = "arp_learned",
        /// ICMP echo requests answered.
        EchoReplied: count = "echo_replied",
        /// For one of our addresses but nothing answers it.
        LocalOther: drop = "local_other",
        /// IPv4 neither for the core nor for one of our addresses.
        NotForUs: drop = "not_for_us",
        /// Events to the control thread lost to a full queue.
        EventsLost: drop = "events_lost",
        /// Forwarded by the core.
        Forwarded: count = "forwarded",
        /// Dropped by the core (its reasons are the core's counters).
        LbDropped: count = "lb_dropped",
        /// Handed to the worker that owns them.
        SteeredOut: count = "steered_out",
        /// Handed over by another worker.
        SteeredIn: count = "steered_in",
        /// A frame for another host's MAC.
        OtherHost: drop = "other_host",
        /// Copies for the kernel interface lost (more ARP requests for the
        /// port's addresses in one round than the copy slots).
        KernelCopyLost: drop = "kernel_copy_lost",
        /// Frames the kernel interface sent to dirigo itself (to a VIP).
        FromKernel: count = "from_kernel",
        /// ARP frames taken in only to learn (or refresh) their sender:
        /// replies to our requests, others' requests (freed, not
        /// answered). With every other outcome counted, a worker's
        /// received packets add up (docs/OPERATIONS.md, Soak).
        ArpTaken: count = "arp_taken",
        /// IPv6 Neighbour Solicitations for our addresses answered (an NA
        /// sent back).
        NdAdvertised: count = "nd_advertised",
        /// ICMPv6 echo requests answered.
        Echo6Replied: count = "echo6_replied",
        /// IPv6 neighbours reported to the control thread to learn (the
        /// sender of an NS answered, the target of an NA), like
        /// `arp_learned`.
        NdLearned: count = "nd_learned",
        /// Neighbour Advertisements taken in only to learn their target
        /// (freed, not answered): like `arp_taken`, an outcome in the
        /// per-worker packet balance.
        NdTaken: count = "nd_taken",
        /// IPv6 packets dropped because their next hop's MAC was not known
        /// and they could not wait for it: a `Hold6` ticket the worker
        /// redeemed too late (not expected). IPv6 packets wait in the hold
        /// area as IPv4's do, and those it has no room for are counted
        /// there (`held_overflow`).
        Unresolved6: drop = "unresolved6",
    }
}

/// Every counter of one worker's pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// The pipeline's own.
    pub own: Counts<Count, { Count::COUNT }>,
    /// Frames classify dropped, by reason.
    pub net: Counts<NetDrop, { NetDrop::COUNT }>,
    /// ARP packets ignored, by reason.
    pub arp: Counts<ArpIgnore, { ArpIgnore::COUNT }>,
    /// ICMP packets to us not answered, by reason.
    pub icmp: Counts<IcmpIgnore, { IcmpIgnore::COUNT }>,
    /// ICMPv6 messages not answered, by reason.
    pub nd: Counts<NdIgnore, { NdIgnore::COUNT }>,
}

impl CounterSet for Counters {
    fn named(&self) -> impl Iterator<Item = Named> + '_ {
        self.own
            .named()
            .chain(self.net.named())
            .chain(self.arp.named())
            .chain(self.icmp.named())
            .chain(self.nd.named())
    }
}

/// One worker's counters of a [`CounterSet`], as readers see them.
#[derive(Debug)]
pub struct PublishedCounters {
    slots: Box<[Slot]>,
}

#[derive(Debug)]
struct Slot {
    name: &'static str,
    drop: bool,
    value: AtomicU64,
}

impl PublishedCounters {
    /// Slots for the counters of `set` (names and kinds are kept; values
    /// start at zero).
    pub fn new(set: &impl CounterSet) -> Self {
        PublishedCounters {
            slots: set
                .named()
                .map(|n| Slot {
                    name: n.name,
                    drop: n.drop,
                    value: AtomicU64::new(0),
                })
                .collect(),
        }
    }

    /// Publish the values of `set` (the owning worker is the only writer;
    /// `set` is of the kind the slots were made for).
    pub fn publish(&self, set: &impl CounterSet) {
        for (s, n) in self.slots.iter().zip(set.named()) {
            debug_assert_eq!(s.name, n.name, "published into another set's slots");
            s.value.store(n.value, Ordering::Relaxed);
        }
    }

    /// Every counter, in the set's listing order.
    pub fn iter(&self) -> impl Iterator<Item = Named> + '_ {
        self.slots.iter().map(|s| Named {
            name: s.name,
            value: s.value.load(Ordering::Relaxed),
            drop: s.drop,
        })
    }

    /// The counter named `name` (0 when there is none).
    pub fn get(&self, name: &str) -> u64 {
        self.iter().find(|n| n.name == name).map_or(0, |n| n.value)
    }
}

/// Per-port I/O counters a worker keeps.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct IoCounters {
    /// Packets received.
    pub rx: u64,
    /// Packets handed to the driver and accepted.
    pub tx: u64,
    /// Packets the driver refused (TX queue full).
    pub tx_full: u64,
    /// Packets handed to the port's kernel interface (exception ring).
    pub to_kernel: u64,
    /// Packets for the kernel interface over the port's rate limit.
    pub kernel_limited: u64,
    /// Packets for the kernel interface lost to a full exception ring (or
    /// no mbuf for a copy).
    pub kernel_full: u64,
}

impl std::ops::AddAssign for IoCounters {
    fn add_assign(&mut self, o: IoCounters) {
        self.rx += o.rx;
        self.tx += o.tx;
        self.tx_full += o.tx_full;
        self.to_kernel += o.to_kernel;
        self.kernel_limited += o.kernel_limited;
        self.kernel_full += o.kernel_full;
    }
}

impl std::iter::Sum for IoCounters {
    fn sum<I: Iterator<Item = IoCounters>>(it: I) -> IoCounters {
        let mut t = IoCounters::default();
        for c in it {
            t += c;
        }
        t
    }
}

/// One worker's [`IoCounters`] per port, as readers see them.
#[derive(Debug)]
pub struct PublishedIo {
    ports: Box<[IoSlots]>,
}

#[derive(Debug, Default)]
struct IoSlots {
    rx: AtomicU64,
    tx: AtomicU64,
    tx_full: AtomicU64,
    to_kernel: AtomicU64,
    kernel_limited: AtomicU64,
    kernel_full: AtomicU64,
}

impl PublishedIo {
    /// Counters for `ports` ports, all zero.
    pub fn new(ports: usize) -> Self {
        PublishedIo {
            ports: (0..ports).map(|_| IoSlots::default()).collect(),
        }
    }

    /// Publish the counters of ports `0..c.len()` (single writer).
    pub fn publish(&self, c: &[IoCounters]) {
        for (s, c) in self.ports.iter().zip(c) {
            s.rx.store(c.rx, Ordering::Relaxed);
            s.tx.store(c.tx, Ordering::Relaxed);
            s.tx_full.store(c.tx_full, Ordering::Relaxed);
            s.to_kernel.store(c.to_kernel, Ordering::Relaxed);
            s.kernel_limited.store(c.kernel_limited, Ordering::Relaxed);
            s.kernel_full.store(c.kernel_full, Ordering::Relaxed);
        }
    }

    /// Port `i`'s counters (zero for a port it does not have).
    pub fn port(&self, i: usize) -> IoCounters {
        self.ports
            .get(i)
            .map_or(IoCounters::default(), |s| IoCounters {
                rx: s.rx.load(Ordering::Relaxed),
                tx: s.tx.load(Ordering::Relaxed),
                tx_full: s.tx_full.load(Ordering::Relaxed),
                to_kernel: s.to_kernel.load(Ordering::Relaxed),
                kernel_limited: s.kernel_limited.load(Ordering::Relaxed),
                kernel_full: s.kernel_full.load(Ordering::Relaxed),
            })
    }

    /// All ports together.
    pub fn total(&self) -> IoCounters {
        (0..self.ports.len()).map(|i| self.port(i)).sum()
    }
}

/// Buckets of the burst-duration histogram: bucket `i` counts the
/// iterations of the worker loop that carried packets and took
/// (2^(i-1), 2^i] nanoseconds (bucket 0: at most 1 ns); the last one also
/// counts every longer one (it is the histogram's +Inf).
pub const BURST_BUCKETS: usize = 28;

/// The histogram bucket of an iteration of `ns` nanoseconds: the ceiling
/// of its base-2 logarithm (one `lzcnt`), capped at the last bucket.
#[inline(always)]
pub fn burst_bucket(ns: u64) -> usize {
    ((u64::BITS - ns.saturating_sub(1).leading_zeros()) as usize).min(BURST_BUCKETS - 1)
}

/// What the worker loop measures about itself, from the clock it already
/// reads once per iteration: the time of all iterations and of those that
/// carried packets (busy), the burst-duration histogram, and the packets
/// it could not steer. Plain integers in the worker, published at
/// housekeeping ([`PublishedLoop`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopCounters {
    /// Nanoseconds in the loop.
    pub loop_ns: u64,
    /// Nanoseconds of the iterations that carried packets.
    pub busy_ns: u64,
    /// Iterations that carried packets, by duration ([`burst_bucket`]);
    /// only counted when the histogram is on.
    pub bursts: [u64; BURST_BUCKETS],
    /// Their nanoseconds (the histogram's sum).
    pub burst_sum_ns: u64,
    /// Packets lost because the owner's steering ring was full.
    pub steer_lost: u64,
}

impl Default for LoopCounters {
    fn default() -> Self {
        LoopCounters {
            loop_ns: 0,
            busy_ns: 0,
            bursts: [0; BURST_BUCKETS],
            burst_sum_ns: 0,
            steer_lost: 0,
        }
    }
}

impl LoopCounters {
    /// Account one iteration of `ns` nanoseconds; `busy`: it carried
    /// packets; `hist`: the histogram is on. A few adds, one branch or
    /// two, one `lzcnt`: no clock read, nothing per packet.
    #[inline(always)]
    pub fn iteration(&mut self, ns: u64, busy: bool, hist: bool) {
        self.loop_ns = self.loop_ns.wrapping_add(ns);
        if busy {
            self.busy_ns = self.busy_ns.wrapping_add(ns);
            if hist {
                self.bursts[burst_bucket(ns)] += 1;
                self.burst_sum_ns = self.burst_sum_ns.wrapping_add(ns);
            }
        }
    }

    /// Iterations in the histogram.
    pub fn burst_count(&self) -> u64 {
        self.bursts.iter().sum()
    }
}

/// One worker's [`LoopCounters`], as readers see them.
#[derive(Debug)]
pub struct PublishedLoop {
    loop_ns: AtomicU64,
    busy_ns: AtomicU64,
    bursts: [AtomicU64; BURST_BUCKETS],
    burst_sum_ns: AtomicU64,
    steer_lost: AtomicU64,
}

impl Default for PublishedLoop {
    fn default() -> Self {
        PublishedLoop {
            loop_ns: AtomicU64::new(0),
            busy_ns: AtomicU64::new(0),
            bursts: std::array::from_fn(|_| AtomicU64::new(0)),
            burst_sum_ns: AtomicU64::new(0),
            steer_lost: AtomicU64::new(0),
        }
    }
}

impl PublishedLoop {
    /// Publish `c` (single writer: the worker, at housekeeping).
    pub fn publish(&self, c: &LoopCounters) {
        self.loop_ns.store(c.loop_ns, Ordering::Relaxed);
        self.busy_ns.store(c.busy_ns, Ordering::Relaxed);
        for (a, &v) in self.bursts.iter().zip(&c.bursts) {
            a.store(v, Ordering::Relaxed);
        }
        self.burst_sum_ns.store(c.burst_sum_ns, Ordering::Relaxed);
        self.steer_lost.store(c.steer_lost, Ordering::Relaxed);
    }

    /// The last published values.
    pub fn read(&self) -> LoopCounters {
        LoopCounters {
            loop_ns: self.loop_ns.load(Ordering::Relaxed),
            busy_ns: self.busy_ns.load(Ordering::Relaxed),
            bursts: std::array::from_fn(|i| self.bursts[i].load(Ordering::Relaxed)),
            burst_sum_ns: self.burst_sum_ns.load(Ordering::Relaxed),
            steer_lost: self.steer_lost.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipeline_counters_listed_own_then_by_reason() {
        crate::counters::check::<Count>();
        let mut c = Counters::default();
        c.own[Count::OtherHost] += 1;
        c.net[NetDrop::Truncated] += 2;
        c.icmp[IcmpIgnore::BadChecksum] += 3;
        let names: Vec<_> = c.named().map(|n| n.name).collect();
        assert_eq!(
            names.len(),
            Count::COUNT + NetDrop::COUNT + ArpIgnore::COUNT + IcmpIgnore::COUNT + NdIgnore::COUNT
        );
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "a name used twice: {names:?}");
        // the names are the control protocol's: they never change
        assert_eq!(
            names[..Count::COUNT].join(" "),
            "arp_replied arp_learned echo_replied local_other not_for_us events_lost \
             forwarded lb_dropped steered_out steered_in other_host kernel_copy_lost from_kernel \
             arp_taken nd_advertised echo6_replied nd_learned nd_taken unresolved6"
        );
        assert_eq!(&names[Count::COUNT], &"truncated");
        let icmp_end = names.len() - NdIgnore::COUNT;
        assert_eq!(names[icmp_end - 1], "icmp_bad_checksum");
        assert_eq!(names[icmp_end], "icmp6_malformed");
        assert_eq!(names.last(), Some(&"icmp6_other"));
        let drops: Vec<_> = c.named().filter(|n| n.drop).map(|n| n.name).collect();
        assert_eq!(
            drops[..6],
            [
                "local_other",
                "not_for_us",
                "events_lost",
                "other_host",
                "kernel_copy_lost",
                "unresolved6"
            ]
        );
        assert_eq!(
            drops.len(),
            6 + NetDrop::COUNT + ArpIgnore::COUNT + IcmpIgnore::COUNT + NdIgnore::COUNT
        );
    }

    #[test]
    fn publish_and_read() {
        let mut c = Counters::default();
        let p = PublishedCounters::new(&c);
        c.own[Count::Forwarded] = 7;
        c.arp[ArpIgnore::Probe] = 2;
        p.publish(&c);
        assert_eq!(p.get("forwarded"), 7);
        assert_eq!(p.get("arp_probe"), 2);
        assert_eq!(p.get("no_such_counter"), 0);
        assert_eq!(p.iter().collect::<Vec<_>>(), c.named().collect::<Vec<_>>());
    }

    #[test]
    fn io_counters_per_port() {
        let p = PublishedIo::new(2);
        let c = [
            IoCounters {
                rx: 1,
                tx: 2,
                tx_full: 3,
                to_kernel: 4,
                kernel_limited: 5,
                kernel_full: 6,
            },
            IoCounters {
                rx: 10,
                tx: 20,
                tx_full: 30,
                to_kernel: 40,
                kernel_limited: 50,
                kernel_full: 60,
            },
        ];
        p.publish(&c);
        assert_eq!(p.port(1), c[1]);
        assert_eq!(p.port(2), IoCounters::default());
        assert_eq!(
            p.total(),
            IoCounters {
                rx: 11,
                tx: 22,
                tx_full: 33,
                to_kernel: 44,
                kernel_limited: 55,
                kernel_full: 66,
            }
        );
    }

    #[test]
    fn burst_buckets_are_log2_upper_bounds() {
        // bucket i holds (2^(i-1), 2^i] ns
        assert_eq!(burst_bucket(0), 0);
        assert_eq!(burst_bucket(1), 0);
        assert_eq!(burst_bucket(2), 1);
        assert_eq!(burst_bucket(3), 2);
        assert_eq!(burst_bucket(4), 2);
        assert_eq!(burst_bucket(5), 3);
        assert_eq!(burst_bucket(1024), 10);
        assert_eq!(burst_bucket(1025), 11);
        for i in 1..BURST_BUCKETS - 1 {
            let top = 1u64 << i;
            assert_eq!(burst_bucket(top), i, "2^{i}");
            assert_eq!(burst_bucket(top + 1), i + 1, "2^{i}+1");
        }
        assert_eq!(burst_bucket(u64::MAX), BURST_BUCKETS - 1);
        assert_eq!(burst_bucket(1 << 40), BURST_BUCKETS - 1);
    }

    #[test]
    fn loop_counters_busy_idle_and_histogram() {
        let mut c = LoopCounters::default();
        c.iteration(100, false, true);
        c.iteration(1000, true, true);
        c.iteration(3000, true, false); // histogram off: busy, not binned
        c.iteration(70, true, true);
        assert_eq!(c.loop_ns, 4170);
        assert_eq!(c.busy_ns, 4070);
        assert_eq!(c.burst_count(), 2);
        assert_eq!(c.burst_sum_ns, 1070);
        assert_eq!(c.bursts[burst_bucket(1000)], 1);
        assert_eq!(c.bursts[7], 1); // 70 ns: (64, 128]
        c.steer_lost = 3;
        let p = PublishedLoop::default();
        assert_eq!(p.read(), LoopCounters::default());
        p.publish(&c);
        assert_eq!(p.read(), c);
    }
}
