//! The per-lcore driver: one [`Balancer`] per worker lcore owns a
//! connection table, scheduler cursors, counters and an ICMP rate limiter;
//! nothing in it is shared-writable.
//!
//! Per packet ([`Balancer::process`]):
//! 1. ICMP errors quoting a tracked connection are forwarded (DR/TUN: to
//!    its RS) or translated (NAT, both directions); untracked ones and every
//!    other ICMP are [`LbVerdict::NotForUs`] (the stack answers echo).
//! 2. A TCP/UDP packet matching a connection (client→VIP tuple, or for NAT
//!    the RS→client tuple) updates its state and timer and is forwarded.
//!    A connection found expired is expired on the spot (and the packet
//!    treated as new). A SYN hitting a TIME_WAIT/CLOSE connection expires
//!    it and schedules anew (IPVS `conn_reuse_mode` 1).
//! 3. Otherwise, for a service: TCP needs a SYN without RST (IPVS without
//!    sloppy_tcp) else [`LbDrop::NotTracked`]. A persistent service (`-p`)
//!    first asks its template for the client (see below); otherwise
//!    [`crate::lb::sched::pick`] chooses with the live per-RS loads of this
//!    lcore (weight 0 and overloaded servers are never picked; existing
//!    connections to them continue). The connection is inserted and the
//!    packet forwarded.
//! 4. TCP/UDP to a VIP on another port: [`LbDrop::NotAService`]; anything
//!    else: [`LbVerdict::NotForUs`].
//!
//! A packet to forward whose next hop's MAC is not known yet is returned
//! unchanged as [`LbVerdict::Unresolved`] with that next hop: not a drop,
//! the caller requests resolution, holds the packet and processes it again.
//!
//! Removed real servers: connections keep their RIP/port/method, so they
//! continue to be forwarded unless the snapshot's `expire_nodest_conn` is
//! set, in which case the next packet of such a connection is dropped
//! ([`LbDrop::DestRemoved`]) and the connection expired (IPVS semantics).
//!
//! Thresholds (IPVS): a server is marked overloaded when its
//! active+inactive count reaches `upper`; the mark is cleared when the count
//! drops below `lower` (or below 3/4 of `upper` when `lower` is 0). Counts
//! and thresholds are this lcore's (see `SnapshotBuilder::threshold_divisor`);
//! the mark is re-evaluated when the server is considered for a new
//! connection rather than at each connection's end.
//!
//! Persistence (`-p TIMEOUT [-M NETMASK]`, IPVS templates): each worker
//! owns a [`PersistTable`] keyed by (service, client address & netmask).
//! A template sends a new connection of its client to the same real server
//! as long as that server is still in the service and not overloaded — a
//! quiesced (weight 0) server keeps its persistent clients; a removed one
//! loses them. Every connection created on a persistent service attaches
//! to the template, which never expires while connections are attached and
//! outlives the last one by the persistence timeout. A full template table
//! schedules without persistence ([`crate::lb::persist::PersistStats::full`]).
//! Templates are per worker: the integrator must steer all packets of one
//! client address (for `-M`, of one masked network) to the same worker.
//! Details in `persist.rs`.
//!
//! Time: `now` is nanoseconds from any monotonic origin (injected, so tests
//! control it); the table keeps millisecond ticks.
//!
//! The rooms: `machine.rs` holds the [`Balancer`] and what every path
//! shares; `burst.rs` the entries and what a burst shares ([`BurstCtx`]);
//! `packet.rs` the per-packet state machine of IPv4, `forward.rs` and
//! `new_conn.rs` what it does with a known and with a new connection,
//! `established.rs` its shortcuts, `icmp.rs` ICMP errors; `v6.rs` IPv6's.
//! The sub-machines the balancer owns each have their own: the SYN proxy
//! (`synproxy.rs`, over [`crate::lb::synproxy`]), connection sync
//! (`sync.rs`), NAT64's ports and replies (`nat64.rs`), IPv4 FullNAT
//! (`fullnat.rs`, over NAT64's ports and reply path), persistence
//! templates (`persist.rs`), one-packet scheduling (`ops.rs`), the load
//! schedulers' winner trees
//! (`trees.rs`, `load.rs`); `listing.rs` answers the control plane.

mod burst;
mod burst6;
mod client_addr;
mod established;
mod forward;
mod ftp;
mod fullnat;
mod fullnat6;
mod handoff;
mod icmp;
mod lane;
mod listing;
mod load;
mod machine;
mod nat64;
mod new_conn;
mod ops;
mod packet;
mod persist;
mod snat;
mod sync;
mod synproxy;
mod trees;
mod v6;

pub use crate::lb::verdict::{BalancerConfig, ConnEntry, LbDrop, LbVerdict};
pub use burst::{lookup_key, BurstCtx, Prepared, Selected, TOUCH_LAG};
pub use listing::Census;
pub use machine::Balancer;
pub use persist::keys::{template_dest, template_dest_id, template_svc, F_PERSIST};
pub use v6::lookup_key6;

#[cfg(test)]
mod tests;
