//! The crash checkpoint (`[control] connection_checkpoint_s`, issue 53): a
//! thread of its own, never a worker, writes the workers' connections to
//! the handoff file every period, in the handoff's own format, so that
//! the dirigo started after a SIGKILL or a crash installs what the last
//! checkpoint saw, as it installs a handoff.
//!
//! Each period the thread gives every worker empty buffers and asks for a
//! sweep ([`CheckpointLane`]); the workers encode their tables a slice
//! at a time at their housekeeping (`dataplane::checkpoint`) and hand the
//! buffers back; once every worker has finished, the thread computes the
//! header over the buffers and replaces the file (a temporary file
//! renamed over it, as the handoff's). A clean stop's handoff is written
//! after this thread has ended, so it always replaces the last
//! checkpoint.

use super::file::{unix_ns, write_unsynced};
use crate::dataplane::checkpoint::{CheckpointLane, Chunk, CHUNKS_IN_FLIGHT, CHUNK_BYTES};
use crate::dataplane::shared::Shared;
use crate::lb::handoff::codec::header_for;
use dirigo_proto::view::CheckpointInfo;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the checkpoint has done, for `dirigoctl handoff` and the metrics.
#[derive(Debug)]
pub struct CheckpointStats {
    period_s: u32,
    written: AtomicU64,
    failed: AtomicU64,
    stalls: AtomicU64,
    last_entries: AtomicU64,
    last_bytes: AtomicU64,
    last_ms: AtomicU64,
    /// Unix ns of the last one written (0: none yet).
    last_unix_ns: AtomicU64,
}

impl CheckpointStats {
    /// None written yet, every `period_s` seconds.
    pub fn new(period_s: u32) -> CheckpointStats {
        CheckpointStats {
            period_s,
            written: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            stalls: AtomicU64::new(0),
            last_entries: AtomicU64::new(0),
            last_bytes: AtomicU64::new(0),
            last_ms: AtomicU64::new(0),
            last_unix_ns: AtomicU64::new(0),
        }
    }

    /// The view.
    pub fn info(&self) -> CheckpointInfo {
        let last = self.last_unix_ns.load(Relaxed);
        CheckpointInfo {
            period_s: self.period_s,
            written: self.written.load(Relaxed),
            failed: self.failed.load(Relaxed),
            stalls: self.stalls.load(Relaxed),
            last_entries: self.last_entries.load(Relaxed),
            last_bytes: self.last_bytes.load(Relaxed),
            last_ms: self.last_ms.load(Relaxed),
            age_s: (last != 0).then(|| unix_ns().saturating_sub(last) / 1_000_000_000),
        }
    }

    /// The period.
    pub fn period(&self) -> Duration {
        Duration::from_secs(self.period_s.max(1) as u64)
    }
}

/// Start the checkpoint thread for `path`, over the lanes of `shared`'s
/// workers, until `stop` is set; what it does goes to `stats`.
pub fn start(
    path: PathBuf,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    stats: Arc<CheckpointStats>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("dirigo-checkpoint".into())
        .spawn(move || run(&path, &shared, &stop, &stats))
}

fn run(path: &std::path::Path, shared: &Shared, stop: &AtomicBool, cs: &CheckpointStats) {
    let lanes: Vec<&CheckpointLane> = shared
        .workers
        .iter()
        .filter_map(|w| w.checkpoint.as_ref())
        .collect();
    let (mut epoch, mut failing) = (0u64, false);
    let mut next = Instant::now() + cs.period();
    loop {
        // the period, in slices short enough to stop promptly
        loop {
            if stop.load(Relaxed) {
                return;
            }
            let now = Instant::now();
            if now >= next {
                break;
            }
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
        }
        next = (next + cs.period()).max(Instant::now());
        epoch += 1;
        let t0 = Instant::now();
        let Some(chunks) = sweep(&lanes, epoch, stop) else {
            return; // stopping: the handoff comes next
        };
        let stalls = lanes.iter().map(|l| l.stalls.load(Relaxed)).sum();
        cs.stalls.store(stalls, Relaxed);
        let entries: u64 = chunks.iter().map(|c| c.entries as u64).sum();
        let parts: Vec<&[u8]> = chunks.iter().map(|c| &c.bytes[..]).collect();
        let header = header_for(&parts, entries, unix_ns());
        let mut all = vec![&header[..]];
        all.extend(parts.iter().copied());
        let bytes: u64 = all.iter().map(|p| p.len() as u64).sum();
        match write_unsynced(path, &all) {
            Ok(()) => {
                let ms = t0.elapsed().as_millis() as u64;
                cs.written.fetch_add(1, Relaxed);
                cs.last_entries.store(entries, Relaxed);
                cs.last_bytes.store(bytes, Relaxed);
                cs.last_ms.store(ms, Relaxed);
                cs.last_unix_ns.store(unix_ns(), Relaxed);
                if std::mem::take(&mut failing) {
                    eprintln!(
                        "dirigo: checkpoint: written again to {} ({entries} entries)",
                        path.display()
                    );
                }
            }
            Err(e) => {
                cs.failed.fetch_add(1, Relaxed);
                // one line when it starts failing, one when it recovers
                if !std::mem::replace(&mut failing, true) {
                    eprintln!("dirigo: checkpoint: cannot write {}: {e}", path.display());
                }
            }
        }
    }
}

/// One sweep of every lane: buffers handed out, the sweep asked for, the
/// filled buffers gathered until every worker has finished. `None` when
/// `stop` is set first.
pub(super) fn sweep(
    lanes: &[&CheckpointLane],
    epoch: u64,
    stop: &AtomicBool,
) -> Option<Vec<Chunk>> {
    for l in lanes {
        refill(l);
        l.want.store(epoch, std::sync::atomic::Ordering::Release);
    }
    let mut got = Vec::new();
    loop {
        let mut all_done = true;
        for l in lanes {
            // done first: every buffer of a finished sweep is queued by then
            let done = l.done.load(std::sync::atomic::Ordering::Acquire) == epoch;
            while let Some(c) = l.full.pop() {
                if c.epoch == epoch {
                    got.push(c);
                }
            }
            refill(l);
            all_done &= done;
        }
        if all_done {
            return Some(got);
        }
        if stop.load(Relaxed) {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Top `l`'s empty buffers up.
fn refill(l: &CheckpointLane) {
    while l.empty.len() < CHUNKS_IN_FLIGHT {
        if l.empty.push(Vec::with_capacity(CHUNK_BYTES)).is_err() {
            break;
        }
    }
}
