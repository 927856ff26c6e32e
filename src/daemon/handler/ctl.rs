//! [`Ctl`], the daemon's control handle, and what it holds.

use crate::daemon::announce::{Announcer, KernelRoutes};
use crate::daemon::control::ControlState;
use crate::daemon::port::RunningPort;
use crate::dataplane::shared::Shared;
use crate::lb::ids::SlotId;
use crate::lb::stats::TrafficSnapshot;
use dirigo_proto::view::Rate;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The announcer of a running dirigo (its routes in the kernel).
pub type KernelAnnouncer = Announcer<KernelRoutes>;

/// Key of a counter set: (is real server, slot id).
pub type StatKey = (bool, SlotId);

/// Rate estimator state (IPVS-style: a 2 s sample smoothed with weight 1/4).
#[derive(Debug, Default, Clone, Copy)]
pub struct RateEst {
    pub(super) last: TrafficSnapshot,
    /// Smoothed rates.
    pub rate: Rate,
}

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
    pub sync: Option<(dirigo_config::Sync, Arc<crate::daemon::sync::SyncStats>)>,
    /// The VIP routes for a routing daemon (`[announce]`), when on. Taken
    /// before the state's lock when both are.
    pub announce: Mutex<Option<KernelAnnouncer>>,
    /// The connection handoff at start (`[control] handoff_file`).
    pub handoff: Arc<crate::daemon::handoff::HandoffStats>,
}

/// The checker engine and where it runs.
#[derive(Default)]
pub struct HealthEngine {
    /// The namespace checks run in (`None`: dirigo's own).
    pub netns: Option<String>,
    /// The engine, once a server is checked.
    pub engine: Option<crate::health::engine::Engine>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panicking handler thread must not take the control plane down.
    m.lock().unwrap_or_else(|p| p.into_inner())
}
