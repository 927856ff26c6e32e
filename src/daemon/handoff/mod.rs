//! The connection handoff between two dirigo processes (`[control]
//! handoff_file`, issue 53): a stopping dirigo writes every worker's
//! connections after its workers stopped ([`write`]); the next one reads
//! the file before EAL ([`read`]), removes it so that it is used once,
//! and installs each entry into the worker that owns its client
//! ([`install`]) before the workers start, so before its ports forward.
//! The format and its checks are the core's ([`crate::lb::handoff`]).
//!
//! A file refused whole (magic, version, length, checksum, an unreadable
//! entry) is one log line and one count; an entry refused alone is
//! counted by its reason ([`HandoffCount`]), and one line sums them up.
//! Either way dirigo starts with what it could install.

use crate::dataplane::pipeline::{owner6, owner_with, steer_mask, steer_mask6};
use crate::dataplane::rss::ClientOwner;
use crate::lb::balancer::Balancer;
use crate::lb::handoff::codec::{decode, header_for, push_entry, CONN_LEN};
use crate::lb::handoff::{Entry, HandoffCount};
use crate::lb::snapshot::Snapshot;
use dirigo_proto::view::{HandoffInfo, NamedCounter};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What this process knows of its handoff, for `dirigoctl handoff` and
/// the metrics.
#[derive(Debug)]
pub struct HandoffStats {
    file: Option<String>,
    counts: [AtomicU64; HandoffCount::COUNT],
    outcome: Mutex<String>,
    /// The old process's stop (Unix ns), once a file was installed.
    stopped_unix_ns: AtomicU64,
    /// The gap (ms), `u64::MAX` until the workers started after an
    /// installed file.
    gap_ms: AtomicU64,
    /// The crash checkpoint's, when configured.
    pub checkpoint: Option<Arc<checkpoint::CheckpointStats>>,
}

impl HandoffStats {
    /// Nothing read yet, for `file` (`None`: no handoff configured).
    pub fn new(file: Option<String>) -> HandoffStats {
        HandoffStats {
            file,
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
            outcome: Mutex::new("none".into()),
            stopped_unix_ns: AtomicU64::new(0),
            gap_ms: AtomicU64::new(u64::MAX),
            checkpoint: None,
        }
    }

    /// With the crash checkpoint every `period_s` seconds.
    pub fn with_checkpoint(mut self, period_s: Option<u32>) -> HandoffStats {
        self.checkpoint = period_s.map(|p| Arc::new(checkpoint::CheckpointStats::new(p)));
        self
    }

    /// Add `n` to counter `c`.
    pub fn bump(&self, c: HandoffCount, n: u64) {
        self.counts[c.index()].fetch_add(n, Relaxed);
    }

    /// Counter `c`.
    pub fn get(&self, c: HandoffCount) -> u64 {
        self.counts[c.index()].load(Relaxed)
    }

    fn set_outcome(&self, s: String) {
        *self.outcome.lock().unwrap_or_else(|p| p.into_inner()) = s;
    }

    /// The gap in forwarding (ms), once known.
    pub fn gap_ms(&self) -> Option<u64> {
        Some(self.gap_ms.load(Relaxed)).filter(|&g| g != u64::MAX)
    }

    /// The workers start now: the gap since the old process stopped.
    pub fn forwarding_starts(&self) {
        let stopped = self.stopped_unix_ns.load(Relaxed);
        if stopped == 0 {
            return;
        }
        let gap = unix_ns().saturating_sub(stopped) / 1_000_000;
        self.gap_ms.store(gap, Relaxed);
        eprintln!("dirigo: handoff: forwarding again {gap} ms after the previous dirigo stopped");
    }

    /// The view `dirigoctl handoff` and the metrics show.
    pub fn info(&self) -> HandoffInfo {
        HandoffInfo {
            file: self.file.clone(),
            outcome: self
                .outcome
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            gap_ms: self.gap_ms(),
            counters: HandoffCount::ALL
                .iter()
                .map(|c| NamedCounter {
                    name: c.name().into(),
                    value: self.get(*c),
                })
                .collect(),
            checkpoint: self.checkpoint.as_ref().map(|c| c.info()),
        }
    }
}

/// A handoff file read at start and checked whole.
pub struct Incoming {
    bytes: Vec<u8>,
}

/// Read the handoff file at `path` and remove it (it is used once,
/// whatever becomes of it). `None` when there is none, or when it is
/// refused whole: then one line says why and the reason is counted.
pub fn read(path: &str, stats: &HandoffStats) -> Option<Incoming> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            eprintln!("dirigo: handoff: cannot read {path}: {e}; starting without connections");
            stats.set_outcome(format!("unreadable: {e}"));
            return None;
        }
    };
    if let Err(e) = std::fs::remove_file(path) {
        eprintln!("dirigo: handoff: cannot remove {path} after reading it: {e}");
    }
    match decode(&bytes) {
        Ok(d) => {
            stats.bump(HandoffCount::Written, d.header.entries);
            stats
                .stopped_unix_ns
                .store(d.header.stopped_unix_ns.max(1), Relaxed);
            Some(Incoming { bytes })
        }
        Err(why) => {
            stats.bump(why.count(), 1);
            stats.set_outcome(format!("refused: {why}"));
            eprintln!(
                "dirigo: handoff: {path} refused whole ({why}); starting without the previous process's connections"
            );
            None
        }
    }
}

/// Install `inc`'s entries into the workers' balancers `lbs` under
/// `snap` (this process's first snapshot), each into the worker that
/// owns its client (`nic`: the ports' RSS owner function, else dirigo's
/// own steering), at `now_ns` on the workers' clock. Counted by outcome;
/// one line sums it up.
pub fn install(
    inc: &Incoming,
    lbs: &mut [Option<Balancer>],
    snap: &Snapshot,
    nic: Option<&ClientOwner>,
    now_ns: u64,
    stats: &HandoffStats,
) {
    let t0 = Instant::now();
    let Ok(d) = decode(&inc.bytes) else {
        return; // checked by `read`
    };
    let (mask, mask6) = (steer_mask(snap), steer_mask6(snap));
    let workers = lbs.len().max(1) as u32;
    // the timers ran on while no dirigo ran (wall clock; a clock set
    // backwards counts as no time)
    let since = unix_ns().saturating_sub(d.header.stopped_unix_ns) / 1_000_000;
    let since = since.min(u32::MAX as u64) as u32;
    // the worker that owns an entry's client: the steering the pipeline
    // uses (None: an IPv6 template, which keeps its client folded)
    let owner = |e: &Entry| match e {
        Entry::Conn(c) if !c.ipv4_client() => Some(owner6(c.caddr & mask6, workers)),
        Entry::Conn(c) => Some(owner_with(nic, c.caddr as u32, mask, workers)),
        Entry::Template(t) if t.v6 => None,
        Entry::Template(t) => Some(owner_with(nic, t.client, mask, workers)),
    };
    // one thread per worker, each installing its own entries (the
    // balancers are independent; the workers do not run yet)
    let per_worker: Vec<[u64; HandoffCount::COUNT]> = std::thread::scope(|sc| {
        let threads: Vec<_> = lbs
            .iter_mut()
            .enumerate()
            .map(|(w, lb)| {
                let owner = &owner;
                sc.spawn(move || {
                    let mut counts = [0u64; HandoffCount::COUNT];
                    for mut e in d.entries() {
                        let o = owner(&e);
                        // what no worker owns is counted by the first
                        let mine = match o {
                            Some(o) if o < workers => o as usize == w,
                            _ => w == 0,
                        };
                        if !mine {
                            continue;
                        }
                        match &mut e {
                            Entry::Conn(c) => c.left_ms = c.left_ms.saturating_sub(since),
                            Entry::Template(t) => t.left_ms = t.left_ms.saturating_sub(since),
                        }
                        let got = match (o, lb.as_mut()) {
                            (Some(_), Some(lb)) => lb.install_handoff(snap, &e, now_ns),
                            _ => HandoffCount::Unsupported,
                        };
                        counts[got.index()] += 1;
                    }
                    counts
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap_or([0; HandoffCount::COUNT]))
            .collect()
    });
    let mut counts = [0u64; HandoffCount::COUNT];
    for c in &per_worker {
        for (sum, n) in counts.iter_mut().zip(c) {
            *sum += n;
        }
    }
    for c in HandoffCount::ALL {
        stats.bump(c, counts[c.index()]);
    }
    let refused: Vec<String> = HandoffCount::ALL
        .iter()
        .filter(|c| c.is_drop() && counts[c.index()] > 0)
        .map(|c| format!("{} {}", counts[c.index()], c.name()))
        .collect();
    let installed = counts[HandoffCount::Installed.index()];
    let templates = counts[HandoffCount::TemplatesInstalled.index()];
    stats.set_outcome(if refused.is_empty() {
        "installed".into()
    } else {
        format!("installed, {} refused", refused.len())
    });
    eprintln!(
        "dirigo: handoff: {installed} connection(s) and {templates} template(s) installed of {} entries in {} ms{}",
        d.header.entries,
        t0.elapsed().as_millis(),
        if refused.is_empty() {
            String::new()
        } else {
            format!("; refused: {}", refused.join(", "))
        }
    );
}

/// Write every worker's connections (`lbs`, the workers stopped) under
/// `snap` at `now_ns` on their clock to `path`, with the moment
/// forwarding stopped (`stopped_unix_ns`). Each worker's table is encoded
/// by a thread of its own (the workers have stopped: they are idle cores);
/// the header is computed over the parts. Returns the entries written.
pub fn write(
    path: &Path,
    lbs: &mut [Option<Balancer>],
    snap: &Snapshot,
    now_ns: u64,
    stopped_unix_ns: u64,
) -> std::io::Result<u64> {
    let parts: Vec<(Vec<u8>, u64)> = std::thread::scope(|sc| {
        let threads: Vec<_> = lbs
            .iter_mut()
            .flatten()
            .map(|lb| {
                sc.spawn(move || {
                    let lb = &*lb;
                    let conns = (lb.table().len() + lb.table6().len()) as usize;
                    let mut buf = Vec::with_capacity(conns.saturating_mul(CONN_LEN));
                    let n = lb.handoff_export(snap, now_ns, |e| push_entry(&mut buf, e));
                    (buf, n)
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap_or_default())
            .collect()
    });
    let n = parts.iter().map(|p| p.1).sum();
    let bodies: Vec<&[u8]> = parts.iter().map(|p| &p.0[..]).collect();
    let header = header_for(&bodies, n, stopped_unix_ns);
    let mut all = vec![&header[..]];
    all.extend(bodies.iter().copied());
    write_unsynced(path, &all)?;
    Ok(n)
}

pub mod checkpoint;
mod file;

pub use file::unix_ns;
use file::write_unsynced;
#[cfg(test)]
mod tests;
