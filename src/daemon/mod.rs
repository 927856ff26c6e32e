//! The `dirigo` daemon: config -> EAL -> ports -> workers + control thread,
//! until SIGINT/SIGTERM; then workers joined, ports stopped, counters printed.
//!
//! * [`startup`] — ports, the initial state and snapshots, workers' shared
//!   state, the control socket;
//! * [`control_loop`] — the main lcore's loop (ARP, aging, reclaim, rates);
//! * [`control`] — the control state and how a change is committed (and
//!   saved to the state file);
//! * [`exception`] — the ports' kernel interfaces and the thread that
//!   feeds them;
//! * [`handler`] — the control socket's requests, by topic;
//! * [`metrics`] — the Prometheus endpoint (its own thread).
//! * [`telemetry`] — dirigo's commands in DPDK's telemetry socket.
//! * [`notify`] — systemd's readiness notifications.
//! * [`announce`] — the VIP routes a routing daemon announces over BGP,
//!   withdrawn first at SIGTERM.
//!
//! The daemon's `run` is in `run.rs`; `error` and `port` hold what its
//! parts share ([`DaemonError`], [`RunningPort`]).

pub mod announce;
pub mod control;
pub mod control_loop;
pub mod error;
pub mod exception;
pub mod handler;
pub mod handoff;
pub mod health;
pub mod metrics;
pub mod notify;
pub mod port;
pub mod rss;
mod run;
pub mod startup;
pub mod sync;
pub mod telemetry;

pub use error::DaemonError;
pub use port::RunningPort;
pub use run::run;
