//! The engine: each job's cadence, job replacement keeping the schedules
//! of unchanged jobs, the report queue, and a thousand jobs at once.

use super::super::engine::{first_delay, Engine, Job, JobKey, Report};
use super::super::spec::Probe;
use super::{job, servers};
use std::collections::HashMap;
use std::time::{Duration, Instant};

const MS: Duration = Duration::from_millis(1);

fn sleep_until(t: Instant) {
    if let Some(d) = t.checked_duration_since(Instant::now()) {
        std::thread::sleep(d);
    }
}

/// The report times of each job.
fn times(reports: &[Report]) -> HashMap<JobKey, Vec<Instant>> {
    let mut by_key: HashMap<JobKey, Vec<Instant>> = HashMap::new();
    for r in reports {
        assert!(r.outcome.ok, "{r:?}");
        by_key.entry(r.key.clone()).or_default().push(r.at);
    }
    by_key
}

/// How far `t` is from the nearest tick of a schedule with ticks every
/// `interval` through `base` (either way).
fn phase_error(t: Instant, base: Instant, interval: Duration) -> Duration {
    let i = interval.as_nanos() as i128;
    let d = if t >= base {
        (t - base).as_nanos() as i128
    } else {
        -((base - t).as_nanos() as i128)
    };
    let r = d.rem_euclid(i);
    Duration::from_nanos(r.min(i - r) as u64)
}

/// Ticks of a schedule starting at `first`, every `interval`, in
/// `[first, until]`.
fn ticks_until(first: Instant, interval: Duration, until: Instant) -> usize {
    match until.checked_duration_since(first) {
        None => 0,
        Some(d) => (d.as_nanos() / interval.as_nanos()) as usize + 1,
    }
}

#[track_caller]
fn on_schedule(what: &str, times: &[Instant], first: Instant, interval: Duration, until: Instant) {
    let tol = 25 * MS;
    for (i, &t) in times.iter().enumerate() {
        let e = phase_error(t, first, interval);
        assert!(e < tol, "{what}: report {i} is {e:?} off its schedule");
        assert!(t + tol >= first, "{what}: report {i} before its first tick");
    }
    let want = ticks_until(first, interval, until);
    assert!(
        times.len().abs_diff(want) <= 1,
        "{what}: {} reports, {want} ticks due",
        times.len()
    );
    for w in times.windows(2) {
        assert!(
            w[1] - w[0] > interval - tol,
            "{what}: two reports {:?} apart",
            w[1] - w[0]
        );
    }
}

#[test]
fn three_jobs_report_every_interval() {
    let up = servers::tcp();
    let e = Engine::start(None).unwrap();
    let interval = 100 * MS;
    let jobs: Vec<Job> = (1..=3).map(|n| job(Probe::Tcp, up, 100, 1000, n)).collect();
    let t0 = Instant::now();
    e.set_jobs(jobs.clone());
    assert_eq!(e.running(), 3);
    let end = t0 + 1050 * MS;
    sleep_until(end);
    let by_key = times(&e.drain());
    assert_eq!(by_key.len(), 3);
    for j in &jobs {
        let first = t0 + first_delay(&j.key, interval);
        let t = &by_key[&j.key];
        on_schedule(&format!("job {}", j.key.rs.port), t, first, interval, end);
        assert!(t.len() >= 9, "{}", t.len());
    }
    assert_eq!(e.lost(), 0);
    e.stop();
}

#[test]
fn replacing_jobs_keeps_unchanged_schedules() {
    let up = servers::tcp();
    let e = Engine::start(None).unwrap();
    let interval = 100 * MS;
    let [a, b, c, d]: [Job; 4] =
        std::array::from_fn(|n| job(Probe::Tcp, up, 100, 1000, n as u16 + 1));
    let t1 = Instant::now();
    e.set_jobs(vec![a.clone(), b.clone(), c.clone()]);
    assert_eq!(e.running(), 3);
    // half an interval off t1's phase: a job restarted now would tick half
    // an interval away from its old schedule
    sleep_until(t1 + 550 * MS);
    let mut b2 = b.clone();
    b2.spec.timeout = 900 * MS; // changed: restarts
    let t2 = Instant::now();
    e.set_jobs(vec![b2.clone(), d.clone(), a.clone()]);
    let t3 = Instant::now();
    assert_eq!(e.running(), 3);
    let end = t2 + 600 * MS;
    sleep_until(end);
    let by_key = times(&e.drain());

    // a: unchanged, on its first schedule all along, no burst
    let ta = &by_key[&a.key];
    on_schedule("a", ta, t1 + first_delay(&a.key, interval), interval, end);
    assert!(ta.iter().filter(|&&t| t > t2).count() >= 5);

    // b: changed, so restarted: its old schedule before, a new one after
    let tb = &by_key[&b.key];
    let (before, after): (Vec<Instant>, Vec<Instant>) = tb.iter().partition(|&&t| t < t2);
    on_schedule(
        "b before",
        &before,
        t1 + first_delay(&b.key, interval),
        interval,
        t2,
    );
    on_schedule(
        "b after",
        &after,
        t2 + first_delay(&b.key, interval),
        interval,
        end,
    );
    // ... and the two differ by half an interval: the check above can tell
    assert!(phase_error(t2, t1, interval) > 40 * MS);

    // c: removed, nothing after
    let tc = &by_key[&c.key];
    assert!(tc.len() >= 4, "{}", tc.len());
    assert!(tc.iter().all(|&t| t <= t3), "c reported after its removal");

    // d: new, from t2 on
    let td = &by_key[&d.key];
    on_schedule("d", td, t2 + first_delay(&d.key, interval), interval, end);
    assert!(td.len() >= 5, "{}", td.len());

    // nothing left: no more reports
    e.set_jobs(Vec::new());
    assert_eq!(e.running(), 0);
    e.drain();
    std::thread::sleep(300 * MS);
    assert_eq!(e.drain(), Vec::new());
    e.stop();
}

#[test]
fn first_checks_are_spread_over_the_interval() {
    let interval = Duration::from_secs(1);
    let mut buckets = [0usize; 10];
    for n in 0..1000 {
        let j = job(Probe::Tcp, "127.0.0.1:80".parse().unwrap(), 1000, 1000, n);
        let d = first_delay(&j.key, interval);
        assert!(d < interval);
        assert_eq!(d, first_delay(&j.key, interval), "not deterministic");
        buckets[(d.as_millis() / 100) as usize] += 1;
    }
    // about 100 in each tenth
    assert!(
        buckets.iter().all(|&b| (50..=150).contains(&b)),
        "{buckets:?}"
    );
}

#[test]
fn a_check_that_overruns_skips_to_the_next_tick() {
    // each check takes 250 ms of a 100 ms interval: one every 300 ms, never
    // two at once, none made up for. Judged on when each check started
    // (its report time less its latency), so a slow fork on a loaded
    // machine cannot move the figures.
    let e = Engine::start(None).unwrap();
    let j = job(
        Probe::Exec {
            command: vec!["sleep".into(), "0.25".into()],
        },
        "127.0.0.1:80".parse().unwrap(),
        100,
        1000,
        1,
    );
    let t0 = Instant::now();
    e.set_jobs(vec![j.clone()]);
    sleep_until(t0 + 1400 * MS);
    let reports: Vec<Report> = e.drain().into_iter().filter(|r| r.key == j.key).collect();
    let span: Vec<(Instant, Instant)> = reports
        .iter()
        .map(|r| {
            assert!(r.outcome.ok, "{r:?}");
            let took = Duration::from_micros(r.outcome.latency_us);
            assert!(took >= 250 * MS, "{took:?}");
            (r.at - took, r.at)
        })
        .collect();
    // made up for, the 100 ms ticks would give a dozen
    assert!((3..=5).contains(&span.len()), "{span:?}");
    let first = t0 + first_delay(&j.key, 100 * MS);
    for (i, &(start, _)) in span.iter().enumerate() {
        // every check starts on a tick of its schedule
        let e = phase_error(start, first, 100 * MS);
        assert!(e < 30 * MS, "check {i} started {e:?} off its schedule");
    }
    for w in span.windows(2) {
        let (prev_end, next_start) = (w[0].1, w[1].0);
        // never two at once, and the next one at the first tick after
        assert!(next_start >= prev_end, "overlap: {w:?}");
        assert!(
            next_start - prev_end < 130 * MS,
            "{:?}",
            next_start - prev_end
        );
    }
}

#[test]
fn a_full_queue_drops_the_oldest_reports() {
    let up = servers::tcp();
    let e = Engine::start_with_queue(None, 5).unwrap();
    e.set_jobs(vec![job(Probe::Tcp, up, 10, 1000, 1)]);
    std::thread::sleep(400 * MS);
    let r = e.drain();
    let now = Instant::now();
    assert_eq!(r.len(), 5);
    assert!(e.lost() >= 20, "{}", e.lost());
    // the newest are kept, oldest first
    assert!(r.windows(2).all(|w| w[0].at < w[1].at));
    assert!(now - r[4].at < 50 * MS, "{:?}", now - r[4].at);
}

#[test]
fn removing_a_job_kills_its_command() {
    let e = Engine::start(None).unwrap();
    let marker = format!("31.{}", std::process::id());
    let mut j = job(
        Probe::Exec {
            command: vec!["sleep".into(), marker.clone()],
        },
        "127.0.0.1:80".parse().unwrap(),
        60_000,
        60_000,
        1,
    );
    j.spec.interval = Duration::from_secs(60);
    // the first check at once: pick the key whose delay is short
    let key_port = (0..10_000)
        .find(|&n| {
            let mut k = j.key.clone();
            k.rs.port = n;
            first_delay(&k, j.spec.interval) < 300 * MS
        })
        .unwrap();
    j.key.rs.port = key_port;
    e.set_jobs(vec![j]);
    let seen = (0..100).any(|_| {
        std::thread::sleep(10 * MS);
        sleeping(&marker)
    });
    assert!(seen, "the check's command did not start");
    e.set_jobs(Vec::new());
    let gone = (0..100).any(|_| {
        std::thread::sleep(10 * MS);
        !sleeping(&marker)
    });
    assert!(gone, "the removed job's command still runs");
    assert_eq!(e.drain(), Vec::new());
}

/// Whether a `sleep MARKER` runs.
fn sleeping(marker: &str) -> bool {
    let want = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| c == want.as_bytes())
            .unwrap_or(false)
    })
}

/// 1000 TCP jobs against one listener at 1 s for 3.5 s: every job checked
/// once per interval (its reports 1 s ± 10% apart), the first checks spread
/// over the first second. Prints the spread and the engine thread's CPU
/// time (`cargo test --lib health::tests::engine::a_thousand -- --nocapture`).
#[test]
fn a_thousand_jobs_each_once_per_interval() {
    let up = servers::tcp();
    let e = Engine::start(None).unwrap();
    let jobs: Vec<Job> = (0..1000)
        .map(|n| job(Probe::Tcp, up, 1000, 1000, n))
        .collect();
    let cpu0 = e.cpu_time();
    let t0 = Instant::now();
    e.set_jobs(jobs.clone());
    assert_eq!(e.running(), 1000);
    let end = t0 + 3500 * MS;
    sleep_until(end);
    let cpu = e.cpu_time().zip(cpu0).map(|(a, b)| a - b);
    let reports = e.drain();
    assert_eq!(e.lost(), 0);
    let by_key = times(&reports);
    assert_eq!(by_key.len(), 1000);
    let (mut min_gap, mut max_gap) = (Duration::MAX, Duration::ZERO);
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for j in &jobs {
        let t = &by_key[&j.key];
        *counts.entry(t.len()).or_default() += 1;
        let first = t0 + first_delay(&j.key, Duration::from_secs(1));
        let due = ticks_until(first, Duration::from_secs(1), end);
        assert!(t.len().abs_diff(due) <= 1, "{} reports, {due} due", t.len());
        assert!(t.len() >= 3, "{}", t.len());
        for w in t.windows(2) {
            min_gap = min_gap.min(w[1] - w[0]);
            max_gap = max_gap.max(w[1] - w[0]);
        }
    }
    // checks per 100 ms over the first second
    let mut tenths = [0usize; 10];
    for r in &reports {
        let i = ((r.at - t0).as_millis() / 100) as usize;
        if i < 10 {
            tenths[i] += 1;
        }
    }
    let latencies: Vec<u64> = {
        let mut l: Vec<u64> = reports.iter().map(|r| r.outcome.latency_us).collect();
        l.sort_unstable();
        l
    };
    println!(
        "1000 jobs at 1 s for 3.5 s: {} reports; reports per job {:?}; gaps between a job's reports {:?}..{:?}; \
         reports per 100 ms in the first second {:?}; latency p50 {} us, p99 {} us, max {} us; engine thread CPU {:?}",
        reports.len(),
        counts,
        min_gap,
        max_gap,
        tenths,
        latencies[latencies.len() / 2],
        latencies[latencies.len() * 99 / 100],
        latencies[latencies.len() - 1],
        cpu,
    );
    assert!(
        min_gap > 900 * MS && max_gap < 1100 * MS,
        "{min_gap:?}..{max_gap:?}"
    );
    assert!(
        tenths.iter().all(|&n| (40..=160).contains(&n)),
        "{tenths:?}"
    );
    e.stop();
}
