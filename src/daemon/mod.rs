//! The `dirigo` daemon: config -> EAL -> ports -> workers + control thread,
//! until SIGINT/SIGTERM; then workers joined, ports stopped, counters printed.

pub mod control;
pub mod handler;

use crate::ctl::config::Config;
use crate::ctl::server::{Handler, Server, ServerConfig};
use crate::dataplane::pipeline::Dirigo;
use crate::dataplane::shared::{Event, Shared, WorkerShared};
use crate::dataplane::stats::IoCounters;
use crate::dataplane::worker::{self, WorkerIo};
use crate::lb::snapshot::{LbIds, Snapshot};
use crate::lb::worker::{LbWorker, LbWorkerConfig};
use crate::net::addr::Ipv4Cidr;
use crate::net::buf::PacketBuf;
use crate::net::neigh::{NeighConfig, NeighTable, ResolveAction};
use crate::net::route::{RouteTable, StaticRoute};
use crate::net::view::{NetView, PortInfo};
use crate::pmd::eal::Eal;
use crate::pmd::lcore::{self, TscClock};
use crate::pmd::mempool::Mempool;
use crate::pmd::port::{Port, PortSetup};
use crate::pmd::ring::MbufRing;
use arc_swap::ArcSwap;
use control::{ControlState, LbSettings};
use crossbeam_queue::ArrayQueue;
use handler::Ctl;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

/// A start-up or run-time failure, printed as one line.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] crate::ctl::config::ConfigError),
    /// EAL could not start.
    #[error("EAL init failed: {0} (are hugepages reserved? run scripts/setup-hugepages.sh as root; is another DPDK process using the same --file-prefix?)")]
    Eal(crate::pmd::DpdkError),
    /// A port could not be found or set up.
    #[error("port '{name}': {err}")]
    Port {
        /// The port's name in the config.
        name: String,
        /// What failed.
        err: crate::pmd::DpdkError,
    },
    /// Another DPDK failure.
    #[error("{0}")]
    Dpdk(#[from] crate::pmd::DpdkError),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// One configured, started port.
#[derive(Debug, Clone)]
pub struct RunningPort {
    /// Config name.
    pub name: String,
    /// DPDK device name.
    pub device: String,
    /// The ethdev.
    pub port: Port,
    /// Its MAC.
    pub mac: [u8; 6],
    /// Its MTU.
    pub mtu: u16,
    /// RSS enabled.
    pub rss: bool,
    /// TX checksum offload enabled.
    pub tx_csum: bool,
    /// RX queues configured.
    pub rx_queues: u16,
}

/// Start EAL and the ports described by `cfg`.
pub fn start_ports(
    cfg: &Config,
    workers: u16,
    pool: &Mempool,
) -> Result<Vec<RunningPort>, DaemonError> {
    let mut out = Vec::new();
    for pc in &cfg.ports {
        let perr = |err| DaemonError::Port {
            name: pc.name.clone(),
            err,
        };
        let port = Port::by_name(&pc.device).map_err(perr)?;
        // A device with fewer RX queues than workers (net_pcap, net_tap
        // without enough queues) is polled by the first workers only; the
        // owner of each flow is then reached through the steering rings.
        let caps = port.caps().map_err(perr)?;
        let rxq = workers.min(caps.max_rx_queues.max(1));
        let setup = PortSetup {
            rx_queues: rxq,
            tx_queues: workers,
            rx_desc: pc.rx_desc,
            tx_desc: pc.tx_desc,
            rss: cfg.dataplane.rss,
            tx_csum: cfg.dataplane.tx_checksum_offload,
            promiscuous: false,
        };
        let (rss, tx_csum) = port.configure(&setup, pool).map_err(perr)?;
        if let Some(m) = pc.mtu {
            port.set_mtu(m).map_err(perr)?;
        }
        port.start().map_err(perr)?;
        let mac = port.mac().map_err(perr)?;
        let mtu = port.mtu().unwrap_or(1500);
        out.push(RunningPort {
            rx_queues: rxq,
            name: pc.name.clone(),
            device: pc.device.clone(),
            port,
            mac,
            mtu,
            rss,
            tx_csum,
        });
    }
    Ok(out)
}

fn mac_str(m: &[u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// Monotonic nanoseconds for the control thread (neighbor aging).
pub fn now_ns() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

/// Allocate an mbuf holding `frame` (padded to 60 bytes) for `port` and
/// queue it for worker 0 to transmit. Counted as lost when the pool or the
/// ring is full.
fn inject(pool: &Mempool, ring: &MbufRing, port: u16, frame: &[u8]) -> bool {
    let Some(mut m) = pool.alloc() else {
        return false;
    };
    let len = frame.len().max(60);
    if !m.append(len) {
        return false;
    }
    let d = m.data_mut();
    d[..frame.len()].copy_from_slice(frame);
    d[frame.len()..].fill(0);
    m.set_port(port);
    ring.enqueue(m).is_ok()
}

/// Build the initial control state and snapshots from the config.
fn initial_state(
    cfg: &Config,
    ports: &[RunningPort],
    workers: u32,
) -> Result<(ControlState, NetView, Snapshot), DaemonError> {
    let mut port_addrs = Vec::new();
    for (i, p) in cfg.ports.iter().enumerate() {
        for c in &p.addresses {
            let cidr = Ipv4Cidr::new(u32::from(c.addr), c.len)
                .ok_or_else(|| DaemonError::Other(format!("port '{}': bad address {c}", p.name)))?;
            port_addrs.push((i as u16, cidr));
        }
    }
    let static_routes: Vec<StaticRoute> = cfg
        .routes
        .iter()
        .map(|r| StaticRoute {
            prefix: Ipv4Cidr::new(u32::from(r.prefix.addr), r.prefix.len)
                .expect("validated prefix")
                .to_network(),
            via: Some(u32::from(r.via)),
            port: r.port.map(|p| p as u16),
        })
        .collect();
    let mut neigh = NeighTable::new(NeighConfig::default());
    for n in &cfg.neighbors {
        neigh
            .add_static(u32::from(n.ip), n.mac, n.port as u16)
            .map_err(|e| DaemonError::Other(format!("neighbor {}: {e}", n.ip)))?;
    }
    let st = ControlState {
        services: Vec::new(),
        timeouts: cfg.timeouts,
        ids: LbIds::new(4096, 65536),
        epoch: 0,
        port_addrs,
        static_routes,
        neigh,
        settings: LbSettings {
            tunnel_source: cfg.dataplane.tunnel_source,
            expire_nodest_conn: cfg.dataplane.expire_nodest_conn,
            workers,
            mh_table_size: cfg.dataplane.mh_table_size,
        },
        pending_garp: Vec::new(),
    };
    let services: Vec<_> = cfg
        .services
        .iter()
        .map(|s| (s.spec.clone(), s.dests.clone()))
        .collect();
    let addrs = st.own_addrs(&services);
    let routes = RouteTable::new(&addrs, &st.static_routes)
        .map_err(|e| DaemonError::Other(format!("routes: {e}")))?;
    let pinfo: Vec<PortInfo> = ports
        .iter()
        .map(|p| PortInfo {
            mac: p.mac,
            mtu: p.mtu,
        })
        .collect();
    let view = NetView::new(
        pinfo.into(),
        Arc::new(addrs),
        Arc::new(routes),
        Arc::new(st.neigh.snapshot()),
    );
    let empty = Snapshot::empty(&st.ids);
    Ok((st, view, empty))
}

/// Run the daemon until a signal. `stop` may also be set by the caller.
pub fn run(cfg: Config, stop: Arc<AtomicBool>) -> Result<(), DaemonError> {
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
    let ports = start_ports(&cfg, workers, &pool)?;
    for p in &ports {
        eprintln!(
            "dirigo: port {} ({}) up: mac {} mtu {} rx-queues {} rss {} tx-csum-offload {}",
            p.name,
            p.device,
            mac_str(&p.mac),
            p.mtu,
            p.rx_queues,
            if p.rss { "on" } else { "off" },
            if p.tx_csum { "on" } else { "off" }
        );
    }
    let inject_ring = MbufRing::new("dirigo-inject", 1024, false, true)?;
    let port_ids: Vec<u16> = ports.iter().map(|p| p.port.id()).collect();
    let rx_queues: Vec<u16> = ports.iter().map(|p| p.rx_queues).collect();
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
    let steer_lost = std::sync::atomic::AtomicU64::new(0);

    let (state, view, empty) = initial_state(&cfg, &ports, workers as u32)?;
    let mut lbs: Vec<Option<LbWorker>> = Vec::new();
    let mut wshared = Vec::new();
    for (i, &l) in lcores.iter().enumerate() {
        let lb = LbWorker::new(
            &LbWorkerConfig {
                conn_capacity: cfg.dataplane.connections_per_worker,
                seed: 0x5eed_0000 ^ (i as u32).wrapping_mul(0x9e37_79b9) ^ (now_ns() as u32),
                ..LbWorkerConfig::default()
            },
            state.ids.dests.capacity(),
            state.ids.services.capacity(),
        );
        wshared.push(WorkerShared::new(lb.stats(), ports.len(), l));
        lbs.push(Some(lb));
    }
    let shared = Arc::new(Shared {
        net: Arc::new(ArcSwap::from_pointee(view)),
        lb: Arc::new(ArcSwap::from_pointee(empty)),
        events: ArrayQueue::new(8192),
        workers: wshared,
        stop: Arc::clone(&stop),
    });
    let ctl = Arc::new(Ctl {
        state: Mutex::new(state),
        shared: Arc::clone(&shared),
        ports: ports.clone(),
        config_path: cfg.path.clone(),
        conn_tab_size: cfg.dataplane.connections_per_worker,
        zero: Mutex::new(HashMap::new()),
        rates: Mutex::new(HashMap::new()),
    });
    // Start-up services, validated like any other change.
    {
        let mut st = ctl.state.lock().unwrap_or_else(|p| p.into_inner());
        let services: Vec<_> = cfg
            .services
            .iter()
            .map(|s| (s.spec.clone(), s.dests.clone()))
            .collect();
        let t = st.timeouts;
        st.commit(&shared, services, t)
            .map_err(|e| DaemonError::Other(format!("config services: {}", e.msg)))?;
        st.pending_garp.clear();
    }
    let mut scfg = ServerConfig::new(&cfg.control.socket);
    if let Some(g) = &cfg.control.group {
        scfg.group = Some(group_id(g)?);
        scfg.mode = 0o660;
    }
    let server = Server::bind(scfg, Arc::clone(&ctl) as Arc<dyn Handler>)
        .map_err(|e| DaemonError::Other(format!("control socket {}: {e}", cfg.control.socket)))?;
    let server_stop = server.stop_handle();
    let server_thread = std::thread::Builder::new()
        .name("dirigo-ctl".into())
        .spawn(move || server.run())
        .map_err(|e| DaemonError::Other(format!("control thread: {e}")))?;

    let clock = TscClock::new();
    let lbs = Mutex::new(lbs);
    eprintln!(
        "dirigo: {} worker(s) on lcore(s) {:?}; control socket {}; running (SIGINT/SIGTERM to stop)",
        workers, lcores, cfg.control.socket
    );

    let worker_fn = |index: usize, _lcore: u32| {
        let lb = lbs.lock().unwrap_or_else(|p| p.into_inner())[index]
            .take()
            .expect("one LbWorker per worker");
        let mut pipe = Dirigo::new(&shared, index, lb);
        let io = WorkerIo {
            ports: &port_ids,
            queue: index as u16,
            inject: if index == 0 { Some(&inject_ring) } else { None },
            stop: &stop,
            housekeeping_ns: 1_000_000,
            published: &shared.workers[index].io,
            published_hold: &shared.workers[index].hold,
            rx_queues: &rx_queues,
            steer: &steer,
            steer_lost: &steer_lost,
        };
        worker::run(&mut pipe, &io, &clock);
    };
    let ctl2 = Arc::clone(&ctl);
    let res = lcore::run_workers(&lcores, &worker_fn, || {
        control_loop(&ctl2, &pool, &inject_ring, &stop);
    });
    server_stop.stop();
    let _ = server_thread.join();
    res?;

    eprintln!("dirigo: stopping");
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
    drop(inject_ring);
    drop(eal);
    Ok(())
}

fn group_id(name: &str) -> Result<u32, DaemonError> {
    if let Ok(n) = name.parse::<u32>() {
        return Ok(n);
    }
    let text = std::fs::read_to_string("/etc/group").unwrap_or_default();
    text.lines()
        .find_map(|l| {
            let mut f = l.split(':');
            (f.next() == Some(name)).then(|| f.nth(1).and_then(|g| g.parse().ok()))?
        })
        .ok_or_else(|| DaemonError::Other(format!("control group '{name}' not found")))
}

/// The main lcore's loop: worker events, ARP resolution and aging,
/// gratuitous ARP, rate estimation, slot reclaim.
fn control_loop(ctl: &Ctl, pool: &Mempool, ring: &MbufRing, stop: &AtomicBool) {
    let mut buf = [0u8; 64];
    let mut probes = Vec::new();
    let mut last_est = std::time::Instant::now();
    // Gratuitous ARP for every own address and VIP at start.
    {
        let st = ctl.state.lock().unwrap_or_else(|p| p.into_inner());
        let addrs = st.own_addrs(&st.services);
        for (p, _) in ctl.ports.iter().enumerate() {
            let mac = ctl.ports[p].mac;
            for a in addrs
                .port_addrs()
                .iter()
                .map(|a| a.cidr.addr)
                .chain(addrs.vips().iter().copied())
            {
                if let Some(n) = crate::net::arp::build_gratuitous(&mut buf, mac, a) {
                    inject(pool, ring, p as u16, &buf[..n]);
                }
            }
        }
    }
    while !stop.load(Ordering::Relaxed) {
        let now = now_ns();
        let mut st = ctl.state.lock().unwrap_or_else(|p| p.into_inner());
        let net = ctl.shared.net.load_full();
        let mut sends: Vec<(u16, u32)> = Vec::new();
        while let Some(ev) = ctl.shared.events.pop() {
            match ev {
                Event::Learn {
                    ip,
                    mac,
                    port,
                    create,
                } => {
                    st.neigh.learn(ip, mac, port, now, create);
                }
                Event::Resolve { ip, port } => {
                    if let ResolveAction::SendRequest { port } = st.neigh.resolve(ip, port, now) {
                        sends.push((port, ip));
                    }
                }
            }
        }
        probes.clear();
        st.neigh.tick(now, &mut probes);
        sends.extend(probes.iter().map(|p| (p.port, p.ip)));
        for (port, ip) in sends {
            let (Some(pi), Some(src)) = (net.port(port), net.addrs().source_for(port, ip)) else {
                continue;
            };
            if let Some(n) = crate::net::arp::build_request(&mut buf, pi.mac, src, ip) {
                inject(pool, ring, port, &buf[..n]);
            }
        }
        st.publish_neigh(&ctl.shared);
        let garp: Vec<u32> = std::mem::take(&mut st.pending_garp);
        for a in garp {
            for (p, rp) in ctl.ports.iter().enumerate() {
                if let Some(n) = crate::net::arp::build_gratuitous(&mut buf, rp.mac, a) {
                    inject(pool, ring, p as u16, &buf[..n]);
                }
            }
        }
        // Free slots of removed services/real servers once no worker can
        // still use them.
        let ws: Vec<&crate::lb::stats::WorkerStats> =
            ctl.shared.workers.iter().map(|w| &*w.lb).collect();
        let min_epoch = crate::lb::stats::min_epoch_seen(&ws);
        st.ids
            .dests
            .reclaim(min_epoch, |s| crate::lb::stats::dest_in_use(&ws, s));
        st.ids
            .services
            .reclaim(min_epoch, |s| crate::lb::stats::service_in_use(&ws, s));
        drop(st);
        let el = last_est.elapsed();
        if el >= Duration::from_secs(2) {
            ctl.estimate(el.as_secs_f64());
            last_est = std::time::Instant::now();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
