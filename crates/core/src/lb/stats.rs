//! Per-lcore counters readable by the control thread without locks.
//!
//! Each worker owns one [`WorkerStats`] (behind an `Arc` the integrator
//! shares with the control thread). Only the owning worker writes it, with
//! `Relaxed` load + store (no read-modify-write, so no locked instruction on
//! x86: it compiles to plain moves); the control thread reads with `Relaxed`
//! loads and sums over workers ([`sum_dest`], [`sum_service`]). A read may
//! see one counter updated and its neighbour not yet — fine for statistics.
//! Arrays are indexed by [`crate::lb::ids::SlotId::slot`]; records are
//! cache-line aligned so workers' and readers' lines never share.

use crate::lb::shift::ftp_state::FtpCount;
use crate::lb::sync::SyncCount;
use crate::lb::synproxy::SynproxyCount;
use crate::lb::verdict::LbDrop;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// Add `n` to a counter only this thread writes.
#[inline]
pub fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

#[inline]
fn add32(c: &AtomicU32, d: i32) {
    c.store(c.load(Relaxed).wrapping_add(d as u32), Relaxed);
}

/// Traffic counters (IPVS `ip_vs_stats`: conns, in/out packets and bytes).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct Traffic {
    /// Generation of the slot these counters belong to.
    pub gen: AtomicU32,
    /// Real server: active connections (ESTABLISHED). Service: unused.
    pub active: AtomicU32,
    /// Real server: inactive connections. Service: unused.
    pub inactive: AtomicU32,
    /// Connections currently referencing this slot (service or server).
    pub live: AtomicU32,
    /// Real server: IPVS overload flag (thresholds), 0 or 1, per worker.
    pub overloaded: AtomicU32,
    /// Connections created.
    pub conns: AtomicU64,
    /// Packets client → server.
    pub pkts_in: AtomicU64,
    /// Packets server → client (NAT only).
    pub pkts_out: AtomicU64,
    /// Bytes client → server (IP length).
    pub bytes_in: AtomicU64,
    /// Bytes server → client.
    pub bytes_out: AtomicU64,
}

impl Traffic {
    /// Start counting for generation `gen` if the record holds another one
    /// (called by the owning worker when it schedules onto the slot).
    #[inline]
    pub fn adopt(&self, gen: u32) {
        if self.gen.load(Relaxed) != gen {
            for c in [
                &self.conns,
                &self.pkts_in,
                &self.pkts_out,
                &self.bytes_in,
                &self.bytes_out,
            ] {
                c.store(0, Relaxed);
            }
            self.gen.store(gen, Relaxed);
        }
    }

    /// Adjust active/inactive/live by deltas (owner only).
    #[inline]
    pub fn adjust(&self, active: i32, inactive: i32, live: i32) {
        if active != 0 {
            add32(&self.active, active);
        }
        if inactive != 0 {
            add32(&self.inactive, inactive);
        }
        if live != 0 {
            add32(&self.live, live);
        }
    }

    /// Count a packet of `bytes` in direction `out`.
    #[inline]
    pub fn packet(&self, out: bool, bytes: u64) {
        if out {
            bump(&self.pkts_out, 1);
            bump(&self.bytes_out, bytes);
        } else {
            bump(&self.pkts_in, 1);
            bump(&self.bytes_in, bytes);
        }
    }
}

/// A summed, plain copy of [`Traffic`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrafficSnapshot {
    /// Active connections.
    pub active: u64,
    /// Inactive connections.
    pub inactive: u64,
    /// Live connections referencing the slot.
    pub live: u64,
    /// Connections created.
    pub conns: u64,
    /// Packets in.
    pub pkts_in: u64,
    /// Packets out.
    pub pkts_out: u64,
    /// Bytes in.
    pub bytes_in: u64,
    /// Bytes out.
    pub bytes_out: u64,
}

/// One worker's counters.
#[derive(Debug)]
pub struct WorkerStats {
    /// Per real-server slot.
    pub dests: Box<[Traffic]>,
    /// Per service slot.
    pub services: Box<[Traffic]>,
    /// Drops by [`LbDrop`] index.
    pub drops: [AtomicU64; LbDrop::COUNT],
    /// Epoch of the last snapshot this worker processed with.
    pub epoch_seen: AtomicU64,
    /// Connections in the table.
    pub conns: AtomicU64,
    /// Embryonic connections evicted to make room.
    pub evicted: AtomicU64,
    /// Connections expired (sweep or lazily on lookup).
    pub expired: AtomicU64,
    /// ICMP fragmentation-needed messages generated (TUN).
    pub icmp_frag_sent: AtomicU64,
    /// What the SYN proxy did, by [`SynproxyCount`].
    pub synproxy: [AtomicU64; SynproxyCount::COUNT],
    /// What connection sync did, by [`SyncCount`].
    pub sync: [AtomicU64; SyncCount::COUNT],
    /// What the FTP helper did, by [`FtpCount`].
    pub ftp: [AtomicU64; FtpCount::COUNT],
    /// Per SNAT rule (by its index, [`crate::lb::snat::MAX_SNAT_RULES`]):
    /// `conns` created, `live` in the table (the rest unused).
    pub snat: Box<[Traffic]>,
    /// SNAT connections in the table, all rules together.
    pub snat_live: AtomicU32,
    /// The most SNAT connections the worker keeps, all rules together
    /// (half its IPv6 table; set once by the balancer).
    pub snat_bound: AtomicU32,
}

impl WorkerStats {
    /// Counters for `dest_slots` real servers and `svc_slots` services.
    pub fn new(dest_slots: u32, svc_slots: u32) -> WorkerStats {
        let mk = |n: u32| {
            (0..n)
                .map(|_| Traffic::default())
                .collect::<Box<[Traffic]>>()
        };
        WorkerStats {
            dests: mk(dest_slots),
            services: mk(svc_slots),
            drops: std::array::from_fn(|_| AtomicU64::new(0)),
            epoch_seen: AtomicU64::new(0),
            conns: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            expired: AtomicU64::new(0),
            icmp_frag_sent: AtomicU64::new(0),
            synproxy: std::array::from_fn(|_| AtomicU64::new(0)),
            sync: std::array::from_fn(|_| AtomicU64::new(0)),
            ftp: std::array::from_fn(|_| AtomicU64::new(0)),
            snat: (0..crate::lb::snat::MAX_SNAT_RULES)
                .map(|_| Traffic::default())
                .collect(),
            snat_live: AtomicU32::new(0),
            snat_bound: AtomicU32::new(0),
        }
    }

    /// SNAT rule `rule`'s connection gone (owner only).
    #[inline]
    pub fn snat_release(&self, rule: usize) {
        if let Some(t) = self.snat.get(rule) {
            t.adjust(0, 0, -1);
            add32(&self.snat_live, -1);
        }
    }

    /// SNAT rule `rule`'s new connection (owner only).
    #[inline]
    pub fn snat_new(&self, rule: usize) {
        if let Some(t) = self.snat.get(rule) {
            bump(&t.conns, 1);
            t.adjust(0, 0, 1);
            add32(&self.snat_live, 1);
        }
    }

    /// The SYN proxy's counters as (name, count).
    pub fn synproxy_counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        SynproxyCount::ALL
            .iter()
            .map(|c| (c.name(), self.synproxy[c.index()].load(Relaxed)))
    }

    /// Connection sync's counters as (name, count).
    pub fn sync_counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        SyncCount::ALL
            .iter()
            .map(|c| (c.name(), self.sync[c.index()].load(Relaxed)))
    }

    /// The FTP helper's counters as (name, count).
    pub fn ftp_counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        FtpCount::ALL
            .iter()
            .map(|c| (c.name(), self.ftp[c.index()].load(Relaxed)))
    }

    /// Drop counters as (name, count).
    pub fn drop_counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        LbDrop::ALL
            .iter()
            .map(|d| (d.name(), self.drops[d.index()].load(Relaxed)))
    }
}

fn sum_of(recs: impl Iterator<Item = Option<(u32, TrafficSnapshot)>>, gen: u32) -> TrafficSnapshot {
    let mut s = TrafficSnapshot::default();
    for (g, t) in recs.flatten() {
        // connections outlive generations; traffic counts only for `gen`
        s.active += t.active;
        s.inactive += t.inactive;
        s.live += t.live;
        if g == gen {
            s.conns += t.conns;
            s.pkts_in += t.pkts_in;
            s.pkts_out += t.pkts_out;
            s.bytes_in += t.bytes_in;
            s.bytes_out += t.bytes_out;
        }
    }
    s
}

fn read(t: &Traffic) -> (u32, TrafficSnapshot) {
    (
        t.gen.load(Relaxed),
        TrafficSnapshot {
            active: t.active.load(Relaxed) as u64,
            inactive: t.inactive.load(Relaxed) as u64,
            live: t.live.load(Relaxed) as u64,
            conns: t.conns.load(Relaxed),
            pkts_in: t.pkts_in.load(Relaxed),
            pkts_out: t.pkts_out.load(Relaxed),
            bytes_in: t.bytes_in.load(Relaxed),
            bytes_out: t.bytes_out.load(Relaxed),
        },
    )
}

/// Sum a real server's counters over workers (`id` from the snapshot).
pub fn sum_dest(workers: &[&WorkerStats], id: crate::lb::ids::SlotId) -> TrafficSnapshot {
    sum_of(
        workers
            .iter()
            .map(|w| w.dests.get(id.slot as usize).map(read)),
        id.gen,
    )
}

/// Sum a service's counters over workers.
pub fn sum_service(workers: &[&WorkerStats], id: crate::lb::ids::SlotId) -> TrafficSnapshot {
    sum_of(
        workers
            .iter()
            .map(|w| w.services.get(id.slot as usize).map(read)),
        id.gen,
    )
}

/// Whether any worker still holds a connection on real-server `slot`
/// (for [`crate::lb::ids::SlotAllocator::reclaim`]).
pub fn dest_in_use(workers: &[&WorkerStats], slot: u32) -> bool {
    workers.iter().any(|w| {
        w.dests
            .get(slot as usize)
            .is_some_and(|t| t.live.load(Relaxed) != 0)
    })
}

/// Whether any worker still holds a connection on service `slot`.
pub fn service_in_use(workers: &[&WorkerStats], slot: u32) -> bool {
    workers.iter().any(|w| {
        w.services
            .get(slot as usize)
            .is_some_and(|t| t.live.load(Relaxed) != 0)
    })
}

/// The smallest snapshot epoch any worker has processed with.
pub fn min_epoch_seen(workers: &[&WorkerStats]) -> u64 {
    workers
        .iter()
        .map(|w| w.epoch_seen.load(Relaxed))
        .min()
        .unwrap_or(u64::MAX)
}
