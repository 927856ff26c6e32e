//! Start-up: the ports, the initial control state and snapshots built from
//! the configuration, each worker's shared state, and the control socket.

use super::control::state_file::Saved;
use super::control::{ControlState, LbSettings, Net6State};
use super::error::DaemonError;
use super::handler::Ctl;
use super::port::RunningPort;
use crate::clock::now_ns;
use crate::ctl::server::{Handler, Server, ServerConfig, ServerCounters, StopHandle};
use crate::dataplane::rss::ClientOwner;
use crate::dataplane::shared::WorkerShared;
use crate::lb::balancer::{Balancer, BalancerConfig};
use crate::lb::snapshot::{LbIds, Snapshot};
use crate::net::addr::{Ipv4Cidr, Ipv6Cidr};
use crate::net::neigh::{NeighConfig, NeighTable};
use crate::net::route::{RouteTable, StaticRoute};
use crate::net::view::{NetView, PortInfo};
use crate::pmd::mempool::Mempool;
use crate::pmd::port::{Port, PortSetup};
use dirigo_config::Config;
use dirigo_proto::view::MacAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Start the ports described by `cfg`, with RSS as `daemon::rss` plans it
/// for `workers`. Returns them and the workers' owner function when any
/// port hashes on the client address (none: the pipeline's own hash).
pub fn start_ports(
    cfg: &Config,
    workers: u16,
    pool: &Mempool,
) -> Result<(Vec<RunningPort>, Option<Arc<ClientOwner>>), DaemonError> {
    let mut devs = Vec::new();
    for pc in &cfg.ports {
        let perr = |err| DaemonError::Port {
            name: pc.name.clone(),
            err,
        };
        let port = Port::by_name(&pc.device).map_err(perr)?;
        let caps = port.caps().map_err(perr)?;
        devs.push((port, caps));
    }
    let caps: Vec<_> = devs.iter().map(|(_, c)| c.clone()).collect();
    let plan = super::rss::plan_ports(cfg, &caps, workers);
    let mut out = Vec::new();
    for ((pc, (port, _)), pp) in cfg.ports.iter().zip(devs).zip(&plan.ports) {
        let perr = |err| DaemonError::Port {
            name: pc.name.clone(),
            err,
        };
        // A device with fewer RX queues than workers (net_pcap, net_tap
        // without enough queues) is polled by the first workers only; the
        // owner of each flow is then reached through the steering rings.
        let rxq = pp.rx_queues;
        let setup = PortSetup {
            rx_queues: rxq,
            tx_queues: workers,
            rx_desc: pc.rx_desc,
            tx_desc: pc.tx_desc,
            rss: cfg.dataplane.rss,
            tx_csum: cfg.dataplane.tx_checksum_offload,
            promiscuous: false,
        };
        let (rss, tx_csum) = port
            .configure_rss(&setup, pp.rss_hf, &pp.key, pool)
            .map_err(perr)?;
        if let Some(m) = pc.mtu {
            port.set_mtu(m).map_err(perr)?;
        }
        port.start().map_err(perr)?;
        let mut steering = pp.to_string();
        if !pp.reta.is_empty() {
            if let Err(e) = port.set_reta(&pp.reta) {
                // the NIC keeps its own table: packets it puts on another
                // worker's queue are handed over in software, as on a
                // device without RSS
                steering = format!("{steering}; warning: {e}: packets on another worker's queue are steered in software");
            }
        }
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
            steering,
        });
    }
    Ok((out, super::rss::client_owner(&plan)))
}

/// Two lines per started port on stderr: the port, and how its packets
/// reach their owning worker.
pub fn log_ports(ports: &[RunningPort]) {
    for p in ports {
        eprintln!(
            "dirigo: port {} ({}) up: mac {} mtu {} rx-queues {} rss {} tx-csum-offload {}",
            p.name,
            p.device,
            MacAddr(p.mac),
            p.mtu,
            p.rx_queues,
            if p.rss { "on" } else { "off" },
            if p.tx_csum { "on" } else { "off" }
        );
        eprintln!("dirigo: port {}: {}", p.name, p.steering);
        eprintln!(
            "dirigo: port {}: IPv6 link-local {}",
            p.name,
            std::net::Ipv6Addr::from(crate::net::addr::link_local_of(p.mac))
        );
    }
}

/// net_tap gives the kernel side of its tap the DPDK port's own MAC. A
/// tap put into a Linux bridge (the textbook way onto a LAN) lends that
/// MAC to the bridge, whose hosts then send frames with dirigo's own MAC
/// as source: dirigo ignores their ARP as looped and nothing but ping
/// works. So every net_tap data port's kernel side gets its own locally
/// administered MAC at start (logged). A failure is logged, not fatal.
pub fn own_tap_macs(ports: &[RunningPort]) {
    let taps: Vec<(&RunningPort, u32)> = ports
        .iter()
        .filter_map(|p| {
            let c = p.port.caps().ok()?;
            (c.driver == "net_tap" && c.if_index != 0).then_some((p, c.if_index))
        })
        .collect();
    if taps.is_empty() {
        return;
    }
    let mut nl = match crate::kernel::link::Rtnl::open() {
        Ok(nl) => nl,
        Err(e) => {
            eprintln!(
                "dirigo: warning: cannot give the net_tap ports' kernel side their own MAC: {e}"
            );
            return;
        }
    };
    for (p, idx) in taps {
        let mac = crate::kernel::link::locally_administered(p.mac);
        match nl.set_mac(idx, mac) {
            Ok(()) => eprintln!(
                "dirigo: port {} ({}): the tap's kernel side has MAC {} (the port keeps {})",
                p.name,
                p.device,
                MacAddr(mac),
                MacAddr(p.mac)
            ),
            Err(e) => eprintln!(
                "dirigo: warning: port {} ({}): cannot give the tap's kernel side its own MAC: {e}",
                p.name, p.device
            ),
        }
    }
}

/// Build the initial control state and snapshots from the config.
pub fn initial_state(
    cfg: &Config,
    ports: &[RunningPort],
    workers: u32,
) -> Result<(ControlState, NetView, Snapshot), DaemonError> {
    let port_addrs = port_addrs(cfg);
    let port_addrs6 = port_addrs6(cfg, ports);
    let static_routes: Vec<StaticRoute> = cfg
        .routes
        .iter()
        .map(|r| StaticRoute {
            prefix: r.prefix.to_network(),
            via: Some(u32::from(r.via)),
            port: r.port.map(|p| p as u16),
        })
        .collect();
    let (neigh, net6) = neighbors(cfg)?;
    let st = ControlState {
        services: Vec::new(),
        timeouts: cfg.timeouts,
        ids: LbIds::new(4096, 65536),
        epoch: 0,
        port_addrs,
        port_addrs6,
        static_routes,
        neigh,
        net6,
        settings: settings(cfg, workers),
        pending_garp: Vec::new(),
        pending_na6: Vec::new(),
        health: health_state(cfg),
        marks: cfg.marks.clone(),
        marks_saved: !cfg.marks.is_empty(),
        state_file: cfg
            .control
            .state_file
            .as_ref()
            .map(crate::daemon::control::state_file::StateFile::new),
    };
    let view = net_view(cfg, ports, &st)?;
    let empty = Snapshot::empty(&st.ids);
    Ok((st, view, empty))
}

/// The configured IPv4 addresses by port index.
fn port_addrs(cfg: &Config) -> Vec<(u16, Ipv4Cidr)> {
    cfg.ports
        .iter()
        .enumerate()
        .flat_map(|(i, p)| p.addresses.iter().map(move |c| (i as u16, *c)))
        .collect()
}

/// Every port's link-local address first (derived from its MAC), then
/// the configured ones.
fn port_addrs6(cfg: &Config, ports: &[RunningPort]) -> Vec<(u16, Ipv6Cidr)> {
    ports
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let ll = crate::net::addr::link_local_of(p.mac);
            Ipv6Cidr::new(ll, 64).map(|c| (i as u16, c))
        })
        .chain(
            cfg.ports
                .iter()
                .enumerate()
                .flat_map(|(i, p)| p.addresses6.iter().map(move |c| (i as u16, *c))),
        )
        .collect()
}

/// The neighbor tables with the configured static entries, and the IPv6
/// routes.
fn neighbors(cfg: &Config) -> Result<(NeighTable, Net6State), DaemonError> {
    let mut neigh = NeighTable::new(NeighConfig::default());
    let mut net6 = Net6State {
        static_routes: cfg
            .routes6
            .iter()
            .map(|r| crate::net::route6::StaticRoute6 {
                prefix: r.prefix,
                via: Some(u128::from(r.via)),
                port: Some(r.port as u16),
            })
            .collect(),
        neigh: NeighTable::new(NeighConfig::default()),
    };
    for n in &cfg.neighbors {
        let r = match n.ip {
            std::net::IpAddr::V4(a) => neigh.add_static(u32::from(a), n.mac, n.port as u16),
            std::net::IpAddr::V6(a) => net6.neigh.add_static(u128::from(a), n.mac, n.port as u16),
        };
        r.map_err(|e| DaemonError::Other(format!("neighbor {}: {e}", n.ip)))?;
    }
    Ok((neigh, net6))
}

/// The forwarding settings of `[dataplane]` for `workers`.
fn settings(cfg: &Config, workers: u32) -> LbSettings {
    LbSettings {
        tunnel_source: cfg.dataplane.tunnel_source,
        expire_nodest_conn: cfg.dataplane.expire_nodest_conn,
        sloppy_tcp: cfg.dataplane.sloppy_tcp,
        workers,
        mh_table_size: cfg.dataplane.mh_table_size,
        synproxy: cfg.dataplane.synproxy,
        nat64_pool: cfg.dataplane.nat64_pool.clone(),
        snat: cfg.snat.clone(),
    }
}

/// The health checks of the configured services that have them.
fn health_state(cfg: &Config) -> crate::daemon::health::HealthState {
    crate::daemon::health::HealthState {
        services: cfg
            .services
            .iter()
            .filter(|s| s.health.active())
            .map(|s| (s.spec.key, s.health.clone()))
            .collect(),
        ..Default::default()
    }
}

/// The first network view: the ports, the own addresses of the
/// configured services, the routes and the neighbors of `st`.
fn net_view(
    cfg: &Config,
    ports: &[RunningPort],
    st: &ControlState,
) -> Result<NetView, DaemonError> {
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
        .zip(&cfg.ports)
        .map(|(p, c)| PortInfo {
            mac: p.mac,
            mtu: p.mtu,
            kernel: c.kernel_interface.is_some(),
        })
        .collect();
    let routes6 = crate::net::route6::RouteTable6::new(&addrs, &st.net6.static_routes)
        .map_err(|e| DaemonError::Other(format!("IPv6 routes: {e}")))?;
    Ok(NetView::new(
        pinfo.into(),
        Arc::new(addrs),
        Arc::new(routes),
        Arc::new(st.neigh.snapshot()),
    )
    .with_routes6(Arc::new(routes6))
    .with_neigh6(Arc::new(st.net6.neigh.snapshot())))
}

/// A fresh random master secret for a worker's SYN cookies (the clock
/// mixed in should the kernel's generator be unavailable).
fn synproxy_secret() -> [u64; 2] {
    let mut b = [0u8; 16];
    if getrandom::getrandom(&mut b).is_err() {
        let t = now_ns() as u128 * 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835;
        b = t.to_le_bytes();
    }
    [
        u64::from_le_bytes(b[..8].try_into().unwrap_or_default()),
        u64::from_le_bytes(b[8..].try_into().unwrap_or_default()),
    ]
}

/// Connections each way between a worker and the sync thread.
const SYNC_QUEUE: usize = 16384;

/// Each worker's connection core and the counters it publishes.
pub fn workers(
    cfg: &Config,
    lcores: &[u32],
    state: &ControlState,
    nports: usize,
) -> (Vec<Option<Balancer>>, Vec<WorkerShared>) {
    let mut lbs = Vec::new();
    let mut wshared = Vec::new();
    for (i, &l) in lcores.iter().enumerate() {
        let lb = Balancer::new(
            &BalancerConfig {
                conn_capacity: cfg.dataplane.connections_per_worker,
                conn6_capacity: cfg.dataplane.connections6_per_worker,
                worker: i as u32,
                workers: lcores.len() as u32,
                embryonic_grace_ms: cfg.dataplane.embryonic_grace_ms,
                synproxy: cfg.dataplane.synproxy,
                synproxy_secret: synproxy_secret(),
                // FullNAT client_address state off the packet path when
                // the services at start have it (a worker allocates it
                // at its first such snapshot otherwise)
                client_address: state
                    .services
                    .iter()
                    .any(|(s, _)| !s.client_address.is_none()),
                seed: 0x5eed_0000 ^ (i as u32).wrapping_mul(0x9e37_79b9) ^ (now_ns() as u32),
                ..BalancerConfig::default()
            },
            state.ids.dests.capacity(),
            state.ids.services.capacity(),
        );
        let mut lb = lb;
        let mut ws = WorkerShared::new(lb.stats(), nports, l);
        if let Some(s) = &cfg.sync {
            let q = crate::dataplane::shared::WorkerSync::new(SYNC_QUEUE);
            if s.send {
                lb.set_sync(Some((Arc::clone(&q.out), s.policy)));
            }
            ws.sync = Some(q);
        }
        if cfg.control.connection_checkpoint_s.is_some() && cfg.control.handoff_file.is_some() {
            ws.checkpoint = Some(crate::dataplane::checkpoint::CheckpointLane::default());
        }
        wshared.push(ws);
        lbs.push(Some(lb));
    }
    (lbs, wshared)
}

/// Commit the start-up services, validated like any other change: the
/// state file's table when there is one (it replaces the configuration's),
/// else the configuration's. Nothing is written to the state file here.
pub fn commit_services(ctl: &Ctl, cfg: &Config, saved: Option<Saved>) -> Result<(), DaemonError> {
    let mut st = ctl.state.lock().unwrap_or_else(|p| p.into_inner());
    let from_config = || {
        cfg.services
            .iter()
            .map(|s| (s.spec.clone(), s.dests.clone()))
            .collect()
    };
    let loaded = saved.is_some();
    let (services, t) = match saved {
        Some(s) => {
            // the saved mark rules replace the config's, as the services do
            if let Some(m) = s.marks {
                st.marks = m;
                st.marks_saved = true;
            }
            (s.services, s.timeouts)
        }
        None => (from_config(), st.timeouts),
    };
    let file = st.state_file.take();
    let r = st.commit(&ctl.shared, services, t);
    st.state_file = file;
    r.map_err(|e| match &st.state_file {
        Some(f) if loaded => DaemonError::Other(format!(
            "{}: the saved rules are refused: {} (fix or remove the file; docs/OPERATIONS.md, \"The state file\")",
            f.path().display(),
            e.msg
        )),
        _ => DaemonError::Other(format!("config services: {}", e.msg)),
    })?;
    let (services, timeouts) = (st.services.clone(), st.timeouts);
    let marks = st.marks_saved.then(|| st.marks.clone());
    if let Some(f) = &mut st.state_file {
        f.mark_saved(&services, &timeouts, marks.as_deref());
        if loaded {
            eprintln!(
                "dirigo: state file {}: {} service(s) loaded in place of the config's {} (dirigoctl reload applies the config's)",
                f.path().display(),
                services.len(),
                cfg.services.len()
            );
        }
    }
    st.pending_garp.clear();
    st.pending_na6.clear(); // the control loop announces every VIP at start
    Ok(())
}

/// The control socket's server: its stop handle, its thread, its counters.
pub type Serving = (
    StopHandle,
    JoinHandle<std::io::Result<()>>,
    Arc<ServerCounters>,
);

/// Bind the control socket and serve it on its own thread.
pub fn serve(cfg: &Config, ctl: &Arc<Ctl>) -> Result<Serving, DaemonError> {
    let mut scfg = ServerConfig::new(&cfg.control.socket);
    if let Some(g) = &cfg.control.group {
        scfg.group = Some(dirigo_config::group_id(g).map_err(DaemonError::Other)?);
        scfg.mode = 0o660;
    }
    let server = Server::bind(scfg, Arc::clone(ctl) as Arc<dyn Handler>)
        .map_err(|e| DaemonError::Other(format!("control socket {}: {e}", cfg.control.socket)))?;
    let server_stop = server.stop_handle();
    let counters = server.counters();
    let server_thread = std::thread::Builder::new()
        .name("dirigo-ctl".into())
        .spawn(move || server.run())
        .map_err(|e| DaemonError::Other(format!("control thread: {e}")))?;
    Ok((server_stop, server_thread, counters))
}
