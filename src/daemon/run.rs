//! The daemon's life: config -> EAL -> ports -> workers + control thread,
//! until SIGINT/SIGTERM; then workers joined, ports stopped, counters
//! printed.

use super::control::ControlState;
use super::error::DaemonError;
use super::port::RunningPort;
use super::{
    announce, control, control_loop, exception, handler, handoff, metrics, notify, startup, sync,
    telemetry,
};
use crate::clock::now_ns;
use crate::ctl::server::{ServerCounters, StopHandle};
use crate::dataplane::pipeline::WorkerPipeline;
use crate::dataplane::rss::ClientOwner;
use crate::dataplane::shared::Shared;
use crate::dataplane::stats::IoCounters;
use crate::dataplane::worker::{self, WorkerIo};
use crate::lb::balancer::Balancer;
use crate::pmd::capture::Pdump;
use crate::pmd::eal::Eal;
use crate::pmd::lcore::{self, TscClock};
use crate::pmd::mempool::Mempool;
use crate::pmd::ring::MbufRing;
use arc_swap::ArcSwap;
use crossbeam_queue::ArrayQueue;
use dirigo_config::Config;
use handler::Ctl;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, Scope};

/// Run the daemon until a signal sets `term` (the caller may set it too).
/// With `[announce]` the VIP routes are withdrawn first and the workers
/// keep forwarding for `drain_ms` before everything stops.
pub fn run(cfg: Config, term: Arc<AtomicBool>) -> Result<(), DaemonError> {
    // what the workers, the exception thread and the control loop stop
    // on: set by the control loop once `term` is set and the drain is over
    let stop = Arc::new(AtomicBool::new(false));
    // bound before anything starts: a port in use stops dirigo at once
    let metrics_bound = cfg.metrics.map(|m| metrics::bind(m.listen)).transpose()?;
    // read before EAL: a corrupt state file stops dirigo at once
    let saved = match &cfg.control.state_file {
        Some(p) => control::state_file::load(p, cfg.timeouts)?,
        None => None,
    };
    // the previous process's connections, read (and removed) before EAL
    let hand = Arc::new(
        handoff::HandoffStats::new(cfg.control.handoff_file.clone())
            .with_checkpoint(cfg.control.connection_checkpoint_s),
    );
    let incoming = (cfg.control.handoff_file.as_deref()).and_then(|p| handoff::read(p, &hand));
    // EAL, ports, rings
    let dp = Dataplane::start(&cfg)?;
    // state and snapshots
    let (state, mut lbs, shared) = shared_state(&cfg, &dp, &stop)?;
    // threads: sync, health, telemetry, control socket, metrics
    let state_file_failed = state.state_file.as_ref().map(|f| f.failed_counter());
    let sync_thread = start_sync(&cfg, &shared, &dp.client_owner, &stop)?;
    let ctl = new_ctl(
        &cfg,
        &dp,
        state,
        state_file_failed,
        &shared,
        &sync_thread,
        &hand,
    )?;
    startup::commit_services(&ctl, &cfg, saved)?;
    let clock = TscClock::new();
    // into the owning workers, before any worker polls a port
    if let Some(inc) = incoming {
        let snap = shared.lb.load_full();
        let nic = dp.client_owner.as_deref();
        handoff::install(&inc, &mut lbs, &snap, nic, clock.now_ns(), &hand);
    }
    ctl.health_start().map_err(DaemonError::Other)?;
    let telemetry = telemetry::start(&ctl)?;
    let (server_stop, server_thread, ctl_counters) = startup::serve(&cfg, &ctl)?;
    let metrics = start_metrics(&cfg, metrics_bound, &ctl, ctl_counters)?;
    log_tools(&dp.eal, dp.capture.is_some());
    // workers, and the control loop on the main lcore
    let lbs = Mutex::new(lbs);
    eprintln!(
        "dirigo: {} worker(s) on lcore(s) {:?}; control socket {}; running (SIGINT/SIGTERM to stop)",
        dp.workers, dp.lcores, cfg.control.socket
    );
    notify::notify("READY=1");
    let worker_fn = |index: usize, _lcore: u32| {
        let lb = lbs.lock().unwrap_or_else(|p| p.into_inner())[index]
            .take()
            .expect("one Balancer per worker");
        let lb = run_worker(&cfg, &dp, &shared, &stop, &clock, index, lb);
        // back for the handoff, once the loop ended
        lbs.lock().unwrap_or_else(|p| p.into_inner())[index] = Some(lb);
    };
    let ctl2 = Arc::clone(&ctl);
    // the crash checkpoint, off the workers (ends with them)
    let checkpoint = match (&cfg.control.handoff_file, &hand.checkpoint) {
        (Some(p), Some(cs)) => Some(
            handoff::checkpoint::start(
                p.into(),
                Arc::clone(&shared),
                Arc::clone(&stop),
                Arc::clone(cs),
            )
            .map_err(|e| DaemonError::Other(format!("checkpoint thread: {e}")))?,
        ),
        _ => None,
    };
    hand.forwarding_starts();
    let res = std::thread::scope(|sc| {
        spawn_exception(sc, &dp, &shared.net, &stop)?;
        let r = lcore::run_workers(&dp.lcores, &worker_fn, || {
            control_loop::run(&ctl2, &dp.pool, &dp.inject_ring, &term, &stop);
        });
        // the exception thread ends with the workers
        stop.store(true, Ordering::Relaxed);
        r.map_err(DaemonError::from)
    });
    // shutdown: the workers stopped; their connections first, the gap
    // in forwarding runs from here
    let stopped = handoff::unix_ns();
    // a checkpoint under way ends first: the handoff replaces it
    if let Some(t) = checkpoint {
        stop.store(true, Ordering::Relaxed);
        let _ = t.join();
    }
    if let (Ok(()), Some(p)) = (&res, &cfg.control.handoff_file) {
        let mut lbs = lbs.into_inner().unwrap_or_else(|p| p.into_inner());
        write_handoff(p, &mut lbs, &shared, clock.now_ns(), stopped);
    }
    stop_threads(&server_stop, server_thread, sync_thread, metrics);
    res?;
    eprintln!("dirigo: stopping");
    // the telemetry commands answer an error from now on
    drop(telemetry);
    notify::notify("STOPPING=1");
    if let Some(x) = &dp.exception {
        exception::close(x);
    }
    stop_ports(&dp.ports, &shared, &dp.steer_lost);
    // after the last burst: pdump's callbacks use the server's counters
    drop(dp.capture);
    drop(ctl);
    drop(dp.exception);
    drop(dp.inject_ring);
    drop(dp.eal);
    Ok(())
}

/// EAL, the started ports and the rings between the threads. The fields
/// are in the order they are dropped (the reverse of their start).
struct Dataplane {
    steer_lost: AtomicU64,
    steer: Vec<MbufRing>,
    rx_queues: Vec<u16>,
    port_ids: Vec<u16>,
    inject_ring: MbufRing,
    exception: Option<Arc<exception::ExceptionPath>>,
    capture: Option<Pdump>,
    client_owner: Option<Arc<ClientOwner>>,
    ports: Vec<RunningPort>,
    pool: Mempool,
    workers: u16,
    lcores: Vec<u32>,
    eal: Eal,
}

impl Dataplane {
    /// Start EAL, the packet pool, the ports, capture, the exception path
    /// and the inject and steering rings.
    fn start(cfg: &Config) -> Result<Dataplane, DaemonError> {
        let eal = Eal::init(&cfg.eal.args).map_err(DaemonError::Eal)?;
        let lcores = lcore::worker_lcores();
        if lcores.is_empty() {
            return Err(DaemonError::Other(
                "no worker lcore: give EAL at least two lcores (e.g. \"-l\", \"0-1\"); the first is the control thread".into(),
            ));
        }
        let workers = lcores.len() as u16;
        let pool = Mempool::with_data_room(
            "dirigo-pkt",
            cfg.dataplane.mbufs,
            256,
            cfg.dataplane.mbuf_data_room,
        )?;
        let (ports, client_owner) = startup::start_ports(cfg, workers, &pool)?;
        // before any worker polls: pdump's callbacks are added on request
        let capture = match cfg.capture.enabled {
            true => Some(Pdump::init()?),
            false => None,
        };
        startup::log_ports(&ports);
        startup::own_tap_macs(&ports);
        let exception = exception::setup(cfg, &ports, &pool)?.map(Arc::new);
        let inject_ring = MbufRing::new("dirigo-inject", 1024, false, true)?;
        let port_ids: Vec<u16> = ports.iter().map(|p| p.port.id()).collect();
        let rx_queues: Vec<u16> = ports.iter().map(|p| p.rx_queues).collect();
        let steer = steer_rings(workers)?;
        let steer_lost = AtomicU64::new(0);
        Ok(Dataplane {
            steer_lost,
            steer,
            rx_queues,
            port_ids,
            inject_ring,
            exception,
            capture,
            client_owner,
            ports,
            pool,
            workers,
            lcores,
            eal,
        })
    }
}

/// One steering ring per worker when there are several (none for one).
fn steer_rings(workers: u16) -> Result<Vec<MbufRing>, DaemonError> {
    let mut steer = Vec::new();
    if workers > 1 {
        for i in 0..workers {
            steer.push(MbufRing::new(
                &format!("dirigo-steer{i}"),
                4096,
                false,
                true,
            )?);
        }
    }
    Ok(steer)
}

/// The control state, each worker's connection core (taken by the
/// worker) and the state shared with the workers.
type SharedState = (ControlState, Vec<Option<Balancer>>, Arc<Shared>);

/// The initial control state, each worker's connection core and the
/// state shared with the workers (the first snapshots in it).
fn shared_state(
    cfg: &Config,
    dp: &Dataplane,
    stop: &Arc<AtomicBool>,
) -> Result<SharedState, DaemonError> {
    let (state, view, empty) = startup::initial_state(cfg, &dp.ports, dp.workers as u32)?;
    let (lbs, wshared) = startup::workers(cfg, &dp.lcores, &state, dp.ports.len());
    let shared = Arc::new(Shared {
        net: Arc::new(ArcSwap::from_pointee(view)),
        lb: Arc::new(ArcSwap::from_pointee(empty)),
        events: ArrayQueue::new(8192),
        workers: wshared,
        stop: Arc::clone(stop),
    });
    Ok((state, lbs, shared))
}

/// The connection sync thread of `[sync]`, logged.
fn start_sync(
    cfg: &Config,
    shared: &Arc<Shared>,
    client_owner: &Option<Arc<ClientOwner>>,
    stop: &Arc<AtomicBool>,
) -> Result<Option<sync::SyncThread>, DaemonError> {
    let Some(s) = &cfg.sync else {
        return Ok(None);
    };
    let netns = cfg.exception.as_ref().and_then(|x| x.netns.clone());
    let t = sync::start(
        s.clone(),
        netns,
        Arc::clone(shared),
        client_owner.clone(),
        Arc::clone(stop),
    )?;
    eprintln!(
        "dirigo: connection sync on {} ({}:{}, syncid {}{}{})",
        s.interface,
        if s.peers.is_empty() {
            s.group.to_string()
        } else {
            format!("{:?}", s.peers)
        },
        s.udp_port,
        s.syncid,
        if s.send { ", sending" } else { "" },
        if s.receive { ", receiving" } else { "" },
    );
    Ok(Some(t))
}

/// The control commands' handler over `state`.
fn new_ctl(
    cfg: &Config,
    dp: &Dataplane,
    state: ControlState,
    state_file_failed: Option<Arc<AtomicU64>>,
    shared: &Arc<Shared>,
    sync_thread: &Option<sync::SyncThread>,
    hand: &Arc<handoff::HandoffStats>,
) -> Result<Arc<Ctl>, DaemonError> {
    Ok(Arc::new(Ctl {
        state_file_failed,
        state: Mutex::new(state),
        shared: Arc::clone(shared),
        ports: dp.ports.clone(),
        config_path: cfg.path.clone(),
        conn_tab_size: cfg.dataplane.connections_per_worker,
        zero: Mutex::new(HashMap::new()),
        rates: Mutex::new(HashMap::new()),
        exception: dp.exception.clone(),
        sync: sync_thread
            .as_ref()
            .map(|t| (t.config.clone(), Arc::clone(&t.stats))),
        health: Mutex::new(handler::HealthEngine {
            netns: cfg.health_netns.clone(),
            engine: None,
        }),
        announce: Mutex::new(announcer(cfg)?),
        handoff: Arc::clone(hand),
    }))
}

/// The metrics endpoint on the socket bound at start, logged.
fn start_metrics(
    cfg: &Config,
    bound: Option<metrics::Bound>,
    ctl: &Arc<Ctl>,
    ctl_counters: Arc<ServerCounters>,
) -> Result<Option<metrics::Endpoint>, DaemonError> {
    let Some(b) = bound else {
        return Ok(None);
    };
    let hist = cfg.metrics.is_some_and(|m| m.burst_histogram);
    let e = metrics::start(b, ctl, ctl_counters, hist)?;
    eprintln!("dirigo: metrics at http://{}/metrics", e.addr);
    Ok(Some(e))
}

/// Write the stopped workers' connections (`lbs`) to the handoff file
/// `path`, logged.
fn write_handoff(
    path: &str,
    lbs: &mut [Option<Balancer>],
    shared: &Shared,
    now_ns: u64,
    stopped: u64,
) {
    let t0 = std::time::Instant::now();
    let snap = shared.lb.load_full();
    match handoff::write(std::path::Path::new(path), lbs, &snap, now_ns, stopped) {
        Ok(n) => eprintln!(
            "dirigo: handoff: {n} entries written to {path} in {} ms",
            t0.elapsed().as_millis()
        ),
        Err(e) => eprintln!(
            "dirigo: handoff: cannot write {path}: {e}; the next dirigo starts without connections"
        ),
    }
}

/// Worker `index`'s pipeline over `lb`, polling until `stop`; the
/// balancer back when it stopped.
fn run_worker(
    cfg: &Config,
    dp: &Dataplane,
    shared: &Arc<Shared>,
    stop: &AtomicBool,
    clock: &TscClock,
    index: usize,
    lb: Balancer,
) -> Balancer {
    let mut pipe = WorkerPipeline::new(shared, index, lb);
    if let Some(o) = &dp.client_owner {
        pipe.set_client_owner(Arc::clone(o));
    }
    let io = WorkerIo {
        ports: &dp.port_ids,
        queue: index as u16,
        inject: if index == 0 {
            Some(&dp.inject_ring)
        } else {
            None
        },
        stop,
        housekeeping_ns: 1_000_000,
        published: &shared.workers[index].io,
        published_hold: &shared.workers[index].hold,
        published_loop: &shared.workers[index].loop_stats,
        burst_histogram: cfg.metrics.is_some_and(|m| m.burst_histogram),
        rx_queues: &dp.rx_queues,
        steer: &dp.steer,
        steer_lost: &dp.steer_lost,
        exception: dp.exception.as_deref().map(|x| worker::Exception {
            ring: &x.ring,
            limits: &x.limits,
            pool: &dp.pool,
        }),
        pool: Some(&dp.pool),
        idle_sleep: cfg.dataplane.idle == dirigo_config::IdleMode::Sleep,
    };
    worker::run(&mut pipe, &io, clock);
    pipe.into_balancer()
}

/// The exception thread, when there is an exception path, in `sc`.
fn spawn_exception<'scope>(
    sc: &'scope Scope<'scope, '_>,
    dp: &'scope Dataplane,
    net: &'scope ArcSwap<crate::net::view::NetView>,
    stop: &'scope AtomicBool,
) -> Result<(), DaemonError> {
    if let Some(x) = dp.exception.as_deref() {
        let (ring, pool) = (&dp.inject_ring, &dp.pool);
        std::thread::Builder::new()
            .name("dirigo-exc".into())
            .spawn_scoped(sc, move || exception::run(x, ring, net, pool, stop))
            .map_err(|e| DaemonError::Other(format!("exception thread: {e}")))?;
    }
    Ok(())
}

/// Stop the control socket's server, then the sync thread and the
/// metrics endpoint, once the workers are done.
fn stop_threads(
    server_stop: &StopHandle,
    server_thread: JoinHandle<std::io::Result<()>>,
    sync_thread: Option<sync::SyncThread>,
    metrics: Option<metrics::Endpoint>,
) {
    server_stop.stop();
    let _ = server_thread.join();
    // the stop flag is set: the sync thread sends what is pending and ends
    if let Some(t) = sync_thread {
        t.join();
    }
    if let Some(m) = metrics {
        m.stop();
    }
}
/// The announcer of `[announce]`, its routes in the exception namespace.
fn announcer(cfg: &Config) -> Result<Option<handler::KernelAnnouncer>, DaemonError> {
    let Some(a) = &cfg.announce else {
        return Ok(None);
    };
    let netns = cfg.exception.as_ref().and_then(|x| x.netns.as_deref());
    let routes = announce::KernelRoutes::new(a.clone(), netns)
        .map_err(|e| DaemonError::Other(format!("[announce]: {e}")))?;
    eprintln!(
        "dirigo: announce: VIP routes through {} (table {}, proto {}{}), drain {} ms at SIGTERM",
        a.interface,
        a.table,
        a.protocol,
        netns.map(|n| format!(", netns {n}")).unwrap_or_default(),
        a.drain.as_millis()
    );
    let an = announce::Announcer::new(a.clone(), routes);
    // the sync thread has not received anything yet: it starts later
    match &cfg.sync {
        Some(s) if s.receive && !a.sync_wait.is_zero() => {
            eprintln!(
                "dirigo: announce: VIPs held back until the other directors' connections \
                 arrived ([sync]), at most {} ms",
                a.sync_wait.as_millis()
            );
            let hold = announce::SyncHold::new(now_ns(), a.sync_wait.as_nanos() as u64, 0);
            Ok(Some(an.with_hold(hold)))
        }
        _ => Ok(Some(an)),
    }
}

/// Say where DPDK's tools reach this process: the telemetry socket (when
/// EAL made one) and capture.
fn log_tools(eal: &Eal, capture: bool) {
    let dir = eal.runtime_dir();
    let sock = dir.join("dpdk_telemetry.v2");
    if sock.exists() {
        eprintln!(
            "dirigo: telemetry socket {} (dpdk-telemetry.py -f {})",
            sock.display(),
            dir.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    if capture {
        eprintln!(
            "dirigo: capture enabled (dpdk-dumpcap --file-prefix {} -i DEVICE)",
            dir.file_name().unwrap_or_default().to_string_lossy()
        );
    }
}

/// Stop and close the ports, printing their counters and the workers'.
fn stop_ports(ports: &[RunningPort], shared: &Shared, steer_lost: &AtomicU64) {
    for (i, p) in ports.iter().enumerate() {
        let _ = p.port.stop();
        let s = p.port.stats();
        let w: IoCounters = shared.workers.iter().map(|w| w.io.port(i)).sum();
        println!(
            "port {} ({}): rx {} pkts {} bytes, tx {} pkts {} bytes, missed {}, rx-errors {}, tx-errors {}, rx-nombuf {}; workers: rx {} tx {} tx-full {}",
            p.name, p.device, s.ipackets, s.ibytes, s.opackets, s.obytes, s.imissed, s.ierrors, s.oerrors, s.rx_nombuf, w.rx, w.tx, w.tx_full
        );
        p.port.close();
    }
    let mut line = String::new();
    for n in shared.counter_totals().iter().filter(|n| n.value > 0) {
        line.push_str(&format!(" {}={}", n.name, n.value));
    }
    println!(
        "pipeline:{line} steer_lost={}",
        steer_lost.load(Ordering::Relaxed)
    );
}
