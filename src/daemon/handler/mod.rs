//! The control socket's request handler: [`Ctl`], shared by the socket
//! server's threads and the control loop, answers each request by topic:
//!
//! * `services` — ipvsadm's mutations, listings, `-Z`, connections, reload,
//!   scheduler table fingerprints;
//! * `network` — ports, addresses, routes, neighbors;
//! * `stats` — per-worker and drop counters, rate estimation;
//! * `health` — health checks and maintenance;
//! * `announce` — the VIP routes for a routing daemon (`dirigoctl vips`).

mod announce;
mod health;
mod network;
mod services;
mod stats;

pub use announce::KernelAnnouncer;
pub use stats::{RateEst, StatKey};

use super::control::{self, ControlState};
use super::RunningPort;
use crate::ctl::proto::{BatchCmd, CtlError, Request, Response};
use crate::ctl::server::Handler;
use crate::ctl::view::VersionInfo;
use crate::dataplane::shared::Shared;
use crate::lb::stats::TrafficSnapshot;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The daemon's control handle, shared by the socket server's threads and
/// the control loop.
pub struct Ctl {
    /// Configured state.
    pub state: Mutex<ControlState>,
    /// What the workers read.
    pub shared: Arc<Shared>,
    /// Running ports.
    pub ports: Vec<RunningPort>,
    /// The config file (for reload).
    pub config_path: String,
    /// Connection table capacity per worker (ipvsadm's size=).
    pub conn_tab_size: u32,
    /// Baselines for `-Z`.
    pub zero: Mutex<HashMap<StatKey, TrafficSnapshot>>,
    /// Rates.
    pub rates: Mutex<HashMap<StatKey, RateEst>>,
    /// The exception path (kernel interfaces), when configured.
    pub exception: Option<Arc<crate::daemon::exception::ExceptionPath>>,
    /// The health-check engine, started with the first checked server.
    pub health: Mutex<HealthEngine>,
    /// The state file's failed writes, when there is one (read without
    /// the state's lock).
    pub state_file_failed: Option<Arc<std::sync::atomic::AtomicU64>>,
    /// Connection sync's settings and counters, when `[sync]` is on.
    pub sync: Option<(
        crate::ctl::config::Sync,
        Arc<crate::daemon::sync::SyncStats>,
    )>,
    /// The VIP routes for a routing daemon (`[announce]`), when on. Taken
    /// before the state's lock when both are.
    pub announce: Mutex<Option<KernelAnnouncer>>,
}

/// The checker engine and where it runs.
#[derive(Default)]
pub struct HealthEngine {
    /// The namespace checks run in (`None`: dirigo's own).
    pub netns: Option<String>,
    /// The engine, once a server is checked.
    pub engine: Option<crate::health::engine::Engine>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panicking handler thread must not take the control plane down.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Handler for Ctl {
    fn handle(&self, req: Request) -> Result<Response, CtlError> {
        match req {
            // `-Z` alone only moves the counters' baselines: no new snapshot.
            Request::Mutate(BatchCmd::Zero { service }) => {
                self.zero(service).map(|_| Response::Done)
            }
            Request::Mutate(c) => self.mutate(&[c]).map(|_| Response::Done),
            Request::RestoreBatch { cmds } => self.mutate(&cmds).map(|_| Response::Done),
            Request::List(opts) => self.list(&opts),
            Request::ListConns { service, limit } => self.conns(service, limit),
            Request::GetTimeouts => Ok(Response::Timeouts(lock(&self.state).timeouts)),
            Request::Ports { xstats } => Ok(self.ports(xstats)),
            Request::Addresses => Ok(self.addresses()),
            Request::AddrAdd {
                port,
                addr,
                prefix_len,
            } => self.addr_add(port, addr, prefix_len),
            Request::AddrDel { port, addr } => self.addr_del(port, addr),
            Request::Routes => Ok(self.routes()),
            Request::Neighbors => Ok(self.neighbors()),
            Request::NeighAdd { port, addr, mac } => self.neigh_add(port, addr, mac),
            Request::NeighFlush { port } => self.neigh_flush(port),
            Request::Lcores => Ok(self.lcores()),
            Request::Drops => Ok(self.drops()),
            Request::Reload => self.reload(),
            Request::Health => Ok(self.health()),
            Request::Sync => Ok(Response::Sync(self.sync_info())),
            Request::HealthSet {
                service,
                dest,
                enable,
            } => self.health_set(service, dest, enable),
            Request::Fingerprint { service } => self.fingerprints(service),
            Request::Vips => Ok(self.vips()),
            Request::Census => self.census(),
            Request::Version => Ok(Response::Version(VersionInfo {
                version: crate::version::VERSION.into(),
                proto: crate::ctl::proto::PROTO_VERSION,
                dpdk: Some(crate::version::dpdk().into()),
                commit: Some(crate::version::COMMIT.into()),
            })),
        }
    }
}
