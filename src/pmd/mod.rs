//! The safe DPDK layer — the only place in the `dirigo` crate with `unsafe`
//! (the memory hints of [`mem`] included).
//!
//! * [`eal`] — EAL init/cleanup from an argument list (once per process).
//! * [`mempool`] — packet mbuf pools.
//! * [`mbuf`] — an owned mbuf handle (freed on drop) implementing
//!   [`crate::net::buf::PacketBuf`], and fixed-size bursts.
//! * [`port`] — ethdev configuration, queues, start/stop, MAC, MTU, link,
//!   counters.
//! * [`ring`] — rte_ring of mbufs between lcores.
//! * [`lcore`] — running a closure on each worker lcore; TSC clock.
//! * [`telemetry`] — dirigo's commands in DPDK's telemetry socket.
//! * [`capture`] — the pdump server for `dpdk-dumpcap` / `dpdk-pdump`.
//! * [`mem`] — prefetch, transparent huge pages, one malloc arena.
//! * [`error`] — [`DpdkError`] and the layer's [`Result`] alias.

pub mod capture;
pub mod eal;
pub mod error;
pub mod lcore;
pub mod mbuf;
pub mod mem;
pub mod mempool;
pub mod port;
pub mod ring;
pub mod telemetry;

pub use error::{DpdkError, Result};
