//! dirigo, the daemon: an LVS-style Layer-4 director on DPDK. It drives
//! the core (`dirigo_core`: [`net`], [`lb`], [`counters`], [`hint`]) from
//! DPDK bursts and serves the control protocol (`dirigo_proto`) that the
//! tools speak; its configuration is `dirigo_config`'s. Its own modules:
//!
//! * `pmd` — the only driver: DPDK EAL, mempools, ports, mbuf bursts, and
//!   `pmd::mem` (one malloc arena);
//! * [`dataplane`] — the worker lcores: bursts through the core's balancer;
//! * [`daemon`] — start-up, the control loop, handlers, exception path,
//!   health state, metrics, telemetry, sync, announce;
//! * [`ctl`] — the control socket's server (and the shared crates under the
//!   names the daemon uses);
//! * [`kernel`] — kernel interfaces and named namespaces over netlink;
//! * [`health`] — health checks (keepalived's semantics);
//! * [`version`] — what `--version` says: crate, git commit, DPDK;
//! * [`clock`] — the control side's deadline wait.
//!
//! `unsafe` is denied everywhere but in `pmd` (and, in the core, its one
//! audited `hint` module).

#![deny(unsafe_code)]

pub use dirigo_core::{counters, hint, lb, net};
pub use dirigo_proto::cli;

pub mod clock;
pub mod ctl;
pub mod daemon;
pub mod dataplane;
pub mod health;
pub mod kernel;
#[allow(unsafe_code)]
pub mod pmd;
pub mod version;
