//! Sans-IO load-balancing core: services, real servers, schedulers,
//! connection tables, forwarding (DR, TUN, NAT).
//!
//! * [`spec`] — the operator's model (ipvsadm's services and real servers).
//! * [`snapshot`] — the immutable, validated configuration workers read;
//!   [`ids`] gives services and real servers stable slots across snapshots.
//! * [`balancer`] — one lcore's load balancer ([`balancer::Balancer`]): lookup,
//!   scheduling, state, forwarding, expiry; [`verdict`] its outputs.
//! * [`conn`] — the preallocated per-lcore connection table.
//! * [`state`] — IPVS TCP state tables and timeouts.
//! * [`xmit`] — in-place DR / TUN / NAT rewriting and ICMP generation.
//! * [`stats`] — per-lcore counters the control thread reads without locks.
//! * [`sched`] — schedulers.
//! * [`persist`] — persistence templates (`-p`, `-M`).
//! * [`synproxy`] — SYN cookies and the sequence translation of NAT
//!   services with `--synproxy`.
//! * [`shift`] — payload changes that move a TCP stream's numbers (the
//!   PROXY protocol's header inserted once, the FTP helper's rewrites):
//!   the sequence/acknowledgment shift of both directions.
//! * [`snat`] — `[[snat]]` rules: the real servers' own connections
//!   masqueraded through a pool address (FullNAT's records and rewrite,
//!   the destination left as it was).
//! * [`sync`] — connection sync with other directors (what a worker sends
//!   and installs; the IPVS messages are `net::wire::ipvs_sync`).

pub mod balancer;
pub mod conn;
pub mod group;
pub mod handoff;
pub mod ids;
pub mod mark;
pub mod persist;
pub mod sched;
pub mod shift;
pub mod snapshot;
pub mod snat;
pub mod spec;
pub mod state;
pub mod stats;
pub mod sync;
pub mod synproxy;
/// Test helpers (a fake egress, etherparse-built frames) for the core's
/// tests and, with the `testutil` feature, the daemon's.
#[cfg(any(test, feature = "testutil"))]
pub mod testutil;
pub mod tunnel;
pub mod verdict;
pub mod xmit;
