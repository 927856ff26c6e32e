//! dirigo: an LVS-style Layer-4 director.
//!
//! The crate is split so that everything that decides what happens to a
//! packet is sans-IO and testable without DPDK:
//!
//! * [`net`] — wire views, checksums, classify, ARP/ICMP, neighbors, routes.
//! * [`lb`]  — services, real servers, schedulers, connection tables, xmit.
//! * [`ctl`] — control-plane protocol, ipvsadm-compatible CLI, config.
//! * [`counters`] — counter enums declared once (names, count, drop or not).
//! * [`kernel`] — kernel interfaces and named namespaces over netlink.
//! * [`health`] — health checks (keepalived's semantics).
//! * `pmd`   — the only driver: DPDK EAL, mempools, ports, mbuf bursts;
//!   and `pmd::mem`, prefetch and transparent huge pages (hints the core
//!   may use).
//! * [`version`] — what `--version` says: crate, git commit, DPDK.
//! * [`cli`] — the programs' command lines (clap), shared by the binaries
//!   and the man page and completion generator.
//!
//! `unsafe` is denied everywhere but in `pmd`.

#![deny(unsafe_code)]

pub mod cli;
pub mod clock;
pub mod counters;
pub mod ctl;
pub mod daemon;
pub mod dataplane;
pub mod health;
pub mod kernel;
pub mod lb;
pub mod net;
#[allow(unsafe_code)]
pub mod pmd;
pub mod version;
