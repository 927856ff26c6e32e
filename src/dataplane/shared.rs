//! What the control thread and the workers share: snapshots behind
//! arc-swap (workers read them once per burst, never lock), lock-free
//! queues for events from workers (ARP learning, resolution requests) and
//! mailboxes for the rare requests the control thread makes of a worker.

use crate::counters::Named;
use crate::dataplane::hold::HoldCounts;
use crate::dataplane::stats::{Counters, PublishedCounters, PublishedIo, PublishedLoop};
use crate::lb::balancer::{Census, ConnEntry};
use crate::lb::snapshot::Snapshot;
use crate::lb::stats::WorkerStats;
use crate::lb::sync::SyncQueue;
use crate::net::view::NetView;
use arc_swap::ArcSwap;
use crossbeam_queue::ArrayQueue;
use std::borrow::Cow;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::SyncSender;
use std::sync::Arc;

/// An event a worker reports to the control thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// An ARP sender seen on `port` (`create`: add an entry if none).
    Learn {
        /// Sender IP.
        ip: u32,
        /// Sender MAC.
        mac: [u8; 6],
        /// Port it arrived on.
        port: u16,
        /// Whether an unknown IP gets an entry.
        create: bool,
    },
    /// An IPv6 neighbour seen on `port` (the sender of an NS for one of
    /// our addresses, the target of an NA; `create`: add an entry if none).
    Learn6 {
        /// Its address.
        ip: u128,
        /// Its MAC.
        mac: [u8; 6],
        /// Port it arrived on.
        port: u16,
        /// Whether an unknown address gets an entry.
        create: bool,
    },
    /// A packet waits for the MAC of `ip` on `port`.
    Resolve {
        /// Next-hop IP.
        ip: u32,
        /// Egress port.
        port: u16,
    },
    /// An IPv6 packet waits for the MAC of its next hop `ip` on `port` (the
    /// control thread solicits it; the worker holds the packet meanwhile).
    Resolve6 {
        /// Next-hop IPv6 address.
        ip: u128,
        /// Egress port.
        port: u16,
    },
    /// ARP frames with `port`'s own MAC as sender arrived (a looped frame:
    /// a bridge that took the port's MAC, a switch loop). At most one a
    /// second per port and worker; the control side warns.
    Looped {
        /// The port.
        port: u16,
    },
}

/// A request for a worker's connection list and its census.
pub struct ConnRequest {
    /// At most this many entries (0: the census only).
    pub limit: usize,
    /// Where to send them.
    pub reply: SyncSender<ConnWalk>,
}

/// A worker's answer to a [`ConnRequest`]: its connections and its
/// [`Census`], both taken at one moment between two bursts.
pub struct ConnWalk {
    /// The connections (at most the request's limit).
    pub list: Vec<ConnEntry>,
    /// Every count of them, at the same moment.
    pub census: Census,
}

/// What one worker exposes.
pub struct WorkerShared {
    /// The balancing core's counters (written by the worker only).
    pub lb: Arc<WorkerStats>,
    /// Pipeline counters ([`Counters`]).
    pub counters: PublishedCounters,
    /// Hold-area counters ([`HoldCounts`], published by the worker loop).
    pub hold: PublishedCounters,
    /// Port I/O counters.
    pub io: PublishedIo,
    /// The loop's own: busy time, burst durations, steering losses.
    pub loop_stats: PublishedLoop,
    /// Connection-list requests.
    pub conn_requests: ArrayQueue<ConnRequest>,
    /// The lcore it runs on.
    pub lcore: u32,
    /// Connection sync: what the worker sends (its balancer pushes, the
    /// sync thread pops) and what it installs (the sync thread pushes
    /// other directors' connections it owns, the worker pops at
    /// housekeeping). `None` without `[sync]`.
    pub sync: Option<WorkerSync>,
    /// The crash checkpoint's buffers and sweeps (`[control]
    /// connection_checkpoint_s`); `None` without it.
    pub checkpoint: Option<crate::dataplane::checkpoint::CheckpointLane>,
}

/// One worker's two sync queues (bounded; full = counted loss).
pub struct WorkerSync {
    /// Worker -> sync thread.
    pub out: Arc<SyncQueue>,
    /// Sync thread -> worker.
    pub inbound: SyncQueue,
    /// Set by the sync thread when another director started: the worker
    /// sends its whole table again (a bounded slice per housekeeping tick).
    pub resend: AtomicBool,
}

impl WorkerSync {
    /// Queues of `capacity` connections each way.
    pub fn new(capacity: usize) -> WorkerSync {
        WorkerSync {
            out: Arc::new(SyncQueue::new(capacity)),
            inbound: SyncQueue::new(capacity),
            resend: AtomicBool::new(false),
        }
    }
}

impl WorkerShared {
    /// What a worker with the core counters `lb`, driving `ports` ports on
    /// lcore `lcore`, publishes.
    pub fn new(lb: Arc<WorkerStats>, ports: usize, lcore: u32) -> Self {
        WorkerShared {
            lb,
            counters: PublishedCounters::new(&Counters::default()),
            hold: PublishedCounters::new(&HoldCounts::new()),
            io: PublishedIo::new(ports),
            loop_stats: PublishedLoop::default(),
            conn_requests: ArrayQueue::new(4),
            lcore,
            sync: None,
            checkpoint: None,
        }
    }

    /// The worker's data-plane counters, in listing order: the
    /// pipeline's, then the hold area's.
    pub fn counters(&self) -> impl Iterator<Item = Named> + '_ {
        self.counters.iter().chain(self.hold.iter())
    }

    /// What the worker dropped, by reason: the data plane's drop counters,
    /// then the core's reasons (`lb_<reason>`). Port TX losses are not in
    /// it (see [`Shared::drops`]).
    pub fn drops(&self) -> impl Iterator<Item = (Cow<'static, str>, u64)> + '_ {
        let own = self
            .counters()
            .filter(|n| n.drop)
            .map(|n| (Cow::Borrowed(n.name), n.value));
        let lb = self
            .lb
            .drop_counts()
            .map(|(name, n)| (Cow::Owned(format!("lb_{name}")), n));
        own.chain(lb)
    }

    /// Packets the worker dropped, all reasons together.
    pub fn dropped(&self) -> u64 {
        self.drops().map(|(_, n)| n).sum()
    }
}

/// State shared by the control thread and all workers.
pub struct Shared {
    /// Addresses, routes, neighbors, ports.
    pub net: Arc<ArcSwap<NetView>>,
    /// Services and real servers.
    pub lb: Arc<ArcSwap<Snapshot>>,
    /// Worker -> control events (bounded; full = counted drop).
    pub events: ArrayQueue<Event>,
    /// One per worker.
    pub workers: Vec<WorkerShared>,
    /// Set to stop everything.
    pub stop: Arc<AtomicBool>,
}

impl Shared {
    /// The workers' data-plane counters summed, in listing order.
    pub fn counter_totals(&self) -> Vec<Named> {
        sum_by_position(
            self.workers
                .iter()
                .map(|w| w.counters().map(|n| (n, n.value))),
        )
        .into_iter()
        .map(|(n, value)| Named { value, ..n })
        .collect()
    }

    /// `dirigoctl drops`: every reason a packet is dropped for, summed over
    /// the workers — the data plane's reasons, the core's (`lb_<reason>`),
    /// then per port (`port_names` in port index order): TX queue full
    /// (`tx_full_<name>`) and the exception path's losses on the worker
    /// side (`kernel_rate_limited_<name>`, `kernel_ring_full_<name>`).
    pub fn drops(&self, port_names: &[&str]) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = sum_by_position(self.workers.iter().map(|w| w.drops()))
            .into_iter()
            .map(|(name, n)| (name.into_owned(), n))
            .collect();
        for (i, name) in port_names.iter().enumerate() {
            let io: crate::dataplane::stats::IoCounters =
                self.workers.iter().map(|w| w.io.port(i)).sum();
            v.push((format!("tx_full_{name}"), io.tx_full));
            v.push((format!("kernel_rate_limited_{name}"), io.kernel_limited));
            v.push((format!("kernel_ring_full_{name}"), io.kernel_full));
        }
        v
    }
}

/// Sum lists of `(key, count)` that all have the same keys in the same
/// order (every worker publishes the same counters); the first list's keys.
fn sum_by_position<K, I>(lists: impl Iterator<Item = I>) -> Vec<(K, u64)>
where
    I: Iterator<Item = (K, u64)>,
{
    let mut tot: Vec<(K, u64)> = Vec::new();
    for (w, list) in lists.enumerate() {
        for (i, (k, n)) in list.enumerate() {
            match tot.get_mut(i) {
                Some(t) if w > 0 => t.1 += n,
                _ => tot.push((k, n)),
            }
        }
    }
    tot
}
