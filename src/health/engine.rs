//! The checker thread: every job's probe runs on its schedule, off the data
//! path, on a thread of its own with a single-threaded async runtime (in
//! the exception namespace when one is given), and each check's
//! [`Outcome`] is queued as a [`Report`] for the control loop, which owns
//! the rise/fall [`super::state::Tracker`]s and turns state changes into
//! weights.
//!
//! Schedule: a job's checks start every `spec.interval` from its first one,
//! which falls within one interval of the job's start at a point given by a
//! hash of its key ([`first_delay`]), so a thousand jobs started at once are
//! spread over the interval. A check never overlaps the next one: a check
//! that overran its tick makes the job skip to the next tick. After a
//! failure, a check with a `retry_delay` is retried that soon instead,
//! until `fall` failures in a row (keepalived's `delay_before_retry`);
//! then, and after a success, the schedule goes on. Replacing the
//! job set keeps the schedule of every job that did not change.
//!
//! Reports wait in a bounded queue ([`REPORT_QUEUE`] by default); when it
//! is full the oldest report is dropped and counted ([`Engine::lost`]): the
//! freshest results are the ones that matter to rise and fall.

use super::probe::Prober;
use super::state::Outcome;
use crate::kernel::netns::Netns;
use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc as std_mpsc, Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub use dirigo_config::check::{Job, JobKey};

/// How many reports wait for [`Engine::drain`] before the oldest are
/// dropped.
pub const REPORT_QUEUE: usize = 16 * 1024;

/// The shortest interval a job runs at (a zero interval would spin).
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);

/// One check's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// Which check.
    pub key: JobKey,
    /// What it found.
    pub outcome: Outcome,
    /// When it finished.
    pub at: Instant,
}

/// The checker thread (stopped by [`Engine::stop`] or when dropped).
pub struct Engine {
    thread: Option<JoinHandle<()>>,
    commands: mpsc::UnboundedSender<Command>,
    reports: Arc<Reports>,
    running: Arc<AtomicUsize>,
    tid: Arc<OnceLock<u32>>,
}

/// What the engine thread is told.
enum Command {
    /// Replace the job set, then answer.
    SetJobs(Vec<Job>, std_mpsc::SyncSender<()>),
    /// Stop every job and the thread.
    Stop,
}

/// The bounded queue of reports, dropping the oldest.
struct Reports {
    queue: Mutex<VecDeque<Report>>,
    capacity: usize,
    lost: AtomicU64,
}

impl Reports {
    fn push(&self, report: Report) {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        while queue.len() >= self.capacity {
            queue.pop_front();
            self.lost.fetch_add(1, Ordering::Relaxed);
        }
        queue.push_back(report);
    }
}

/// Where a new job's first check falls after its start: a point within one
/// interval given by a hash of its key (the same for the same key and
/// interval, on every run).
pub fn first_delay(key: &JobKey, interval: Duration) -> Duration {
    let interval = interval.max(MIN_INTERVAL);
    // DefaultHasher::new() has fixed keys: the same spread on every run.
    let mut h = DefaultHasher::new();
    key.hash(&mut h);
    let ns = u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(h.finish() % ns)
}

impl Engine {
    /// Start the checker thread with a report queue of [`REPORT_QUEUE`].
    /// When `netns` is given the thread enters that namespace before it
    /// creates its runtime, so every socket and every command of a check
    /// lives there. An error when the thread, the namespace or the runtime
    /// cannot be had.
    pub fn start(netns: Option<&Netns>) -> Result<Engine, String> {
        Engine::start_with_queue(netns, REPORT_QUEUE)
    }

    /// [`Engine::start`] with a report queue of `capacity` (at least 1).
    pub fn start_with_queue(netns: Option<&Netns>, capacity: usize) -> Result<Engine, String> {
        let netns = netns
            .map(Netns::try_clone)
            .transpose()
            .map_err(|e| e.to_string())?;
        let reports = Arc::new(Reports {
            queue: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
            lost: AtomicU64::new(0),
        });
        let running = Arc::new(AtomicUsize::new(0));
        let tid = Arc::new(OnceLock::new());
        let (commands, rx) = mpsc::unbounded_channel();
        let (ready_tx, ready_rx) = std_mpsc::sync_channel(1);
        let thread = {
            let reports = reports.clone();
            let running = running.clone();
            let tid = tid.clone();
            std::thread::Builder::new()
                .name("dirigo-health".into())
                .spawn(move || {
                    if let Some(id) = thread_id() {
                        let _ = tid.set(id);
                    }
                    let runtime = netns
                        .as_ref()
                        .map_or(Ok(()), |ns| ns.enter_current_thread())
                        .map_err(|e| e.to_string())
                        .and_then(|()| {
                            tokio::runtime::Builder::new_current_thread()
                                .enable_all()
                                .build()
                                .map_err(|e| format!("cannot build the runtime: {e}"))
                        });
                    let runtime = match runtime {
                        Ok(rt) => {
                            let _ = ready_tx.send(Ok(()));
                            rt
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    runtime.block_on(serve(rx, reports, running));
                    // Dropping the runtime drops every job's task: sockets
                    // close, exec process groups are killed.
                })
                .map_err(|e| format!("cannot start the health-check thread: {e}"))?
        };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Engine {
                thread: Some(thread),
                commands,
                reports,
                running,
                tid,
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err("the health-check thread ended at its start".to_string())
            }
        }
    }

    /// Replace the job set and return once the engine has applied it. A
    /// job equal to a running one (same key, spec, target, bind and
    /// placeholders) keeps its schedule; a new or changed one starts (its
    /// first check after [`first_delay`]); one no longer listed stops (its
    /// check in progress is abandoned, an exec's process group killed).
    /// Of two jobs with one key the last counts. Nothing happens once the
    /// engine has stopped.
    pub fn set_jobs(&self, jobs: Vec<Job>) {
        let (done, applied) = std_mpsc::sync_channel(1);
        if self.commands.send(Command::SetJobs(jobs, done)).is_ok() {
            let _ = applied.recv();
        }
    }

    /// The reports so far, oldest first, without blocking.
    pub fn drain(&self) -> Vec<Report> {
        let mut queue = self.reports.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.drain(..).collect()
    }

    /// Reports dropped because the queue was full (the oldest go first).
    pub fn lost(&self) -> u64 {
        self.reports.lost.load(Ordering::Relaxed)
    }

    /// Jobs running now.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::Relaxed)
    }

    /// CPU time the checker thread has used (user + system), from
    /// `/proc/self/task/TID/stat`; `None` when it cannot be read.
    pub fn cpu_time(&self) -> Option<Duration> {
        let tid = self.tid.get()?;
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
        // after "pid (comm) ": state is field 3, utime 14, stime 15
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        // /proc counts in USER_HZ, which is 100 on Linux
        Some(Duration::from_millis((utime + stime) * 10))
    }

    /// Stop every job and the thread, and wait for it.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = self.commands.send(Command::Stop);
            let _ = thread.join();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The calling thread's id (from `/proc/thread-self`, `PID/task/TID`).
fn thread_id() -> Option<u32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// The engine thread's loop: apply commands until told to stop (or the
/// [`Engine`] is gone).
async fn serve(
    mut commands: mpsc::UnboundedReceiver<Command>,
    reports: Arc<Reports>,
    running: Arc<AtomicUsize>,
) {
    let prober = Arc::new(Prober::new());
    let mut tasks: HashMap<JobKey, (Job, tokio::task::JoinHandle<()>)> = HashMap::new();
    while let Some(command) = commands.recv().await {
        match command {
            Command::SetJobs(jobs, done) => {
                let mut next: HashMap<JobKey, Job> =
                    jobs.into_iter().map(|j| (j.key.clone(), j)).collect();
                tasks.retain(|key, (job, task)| {
                    // an unchanged job that is still running keeps its task
                    if next.get(key) == Some(job) && !task.is_finished() {
                        next.remove(key);
                        true
                    } else {
                        task.abort();
                        false
                    }
                });
                for (key, job) in next {
                    let task = tokio::spawn(run_job(job.clone(), prober.clone(), reports.clone()));
                    tasks.insert(key, (job, task));
                }
                running.store(tasks.len(), Ordering::Relaxed);
                let _ = done.send(());
            }
            Command::Stop => break,
        }
    }
    for (_, (_, task)) in tasks.drain() {
        task.abort();
    }
    running.store(0, Ordering::Relaxed);
}

/// One job, for ever: wait for its tick, check, report. Ticks fall every
/// interval from the first one; after a check that overran, the next check
/// waits for the next tick to come (none is made up for).
async fn run_job(job: Job, prober: Arc<Prober>, reports: Arc<Reports>) {
    let interval = job.spec.interval.max(MIN_INTERVAL);
    let first = tokio::time::Instant::now() + first_delay(&job.key, interval);
    let mut tick = first;
    let mut failed = 0u32;
    loop {
        tokio::time::sleep_until(tick).await;
        let outcome = prober.run(&job).await;
        failed = if outcome.ok {
            0
        } else {
            failed.saturating_add(1)
        };
        reports.push(Report {
            key: job.key.clone(),
            outcome,
            at: Instant::now(),
        });
        let now = tokio::time::Instant::now();
        tick = match retry_at(&job.spec, failed, now) {
            Some(at) => at,
            None => next_tick(first, interval, now),
        };
    }
}

/// When a check that failed `failed` times in a row is retried: after
/// `retry_delay` while fewer than `fall` failed (keepalived's
/// `delay_before_retry` between its `retry` attempts); `None`: at the
/// next tick of the schedule.
pub fn retry_at(
    spec: &dirigo_config::check::CheckSpec,
    failed: u32,
    now: tokio::time::Instant,
) -> Option<tokio::time::Instant> {
    let delay = spec.retry_delay?;
    (failed > 0 && failed < spec.fall).then(|| now + delay.max(MIN_INTERVAL))
}

/// The first tick after `now` of a schedule that ticks every `interval`
/// from `first`.
fn next_tick(
    first: tokio::time::Instant,
    interval: Duration,
    now: tokio::time::Instant,
) -> tokio::time::Instant {
    let Some(since) = now.checked_duration_since(first) else {
        return first;
    };
    let n = since.as_nanos() / interval.as_nanos() + 1;
    match u32::try_from(n) {
        Ok(n) => first + interval * n,
        // beyond 4 billion ticks: from now on
        Err(_) => now + interval,
    }
}
