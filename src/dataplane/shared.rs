//! What the control thread and the workers share: snapshots behind
//! arc-swap (workers read them once per burst, never lock), lock-free
//! queues for events from workers (ARP learning, resolution requests) and
//! mailboxes for the rare requests the control thread makes of a worker.

use crate::dataplane::stats::PublishedCounters;
use crate::lb::snapshot::Snapshot;
use crate::lb::stats::WorkerStats;
use crate::lb::worker::ConnInfo;
use crate::net::view::NetView;
use arc_swap::ArcSwap;
use crossbeam_queue::ArrayQueue;
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
    /// A packet waits for the MAC of `ip` on `port`.
    Resolve {
        /// Next-hop IP.
        ip: u32,
        /// Egress port.
        port: u16,
    },
}

/// A request for a worker's connection list.
pub struct ConnRequest {
    /// At most this many entries.
    pub limit: usize,
    /// Where to send them.
    pub reply: SyncSender<Vec<ConnInfo>>,
}

/// What one worker exposes.
pub struct WorkerShared {
    /// The balancing core's counters (written by the worker only).
    pub lb: Arc<WorkerStats>,
    /// Pipeline counters (see `pipeline::counter_names`).
    pub counters: PublishedCounters,
    /// Port I/O counters: rx, tx, tx_full per port.
    pub io: PublishedCounters,
    /// Connection-list requests.
    pub conn_requests: ArrayQueue<ConnRequest>,
    /// The lcore it runs on.
    pub lcore: u32,
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
