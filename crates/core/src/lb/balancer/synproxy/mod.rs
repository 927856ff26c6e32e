//! The balancer's side of the SYN proxy ([`crate::lb::synproxy`]): a
//! `--synproxy` service's SYNs answered with cookies, the ACK that proves
//! one opening the connection to a real server, the pending connection
//! until the server's SYN/ACK, and the RSTs when it never comes.
//!
//! Both families: `lane.rs` says what the handshake needs of the IPv4
//! and IPv6 lanes ([`lane::SpLane`]), `handshake.rs` is written once over
//! it, `resets.rs` holds the RSTs the sweep queues (no balancer).

mod handshake;
pub(super) mod lane;
pub(super) mod resets;
