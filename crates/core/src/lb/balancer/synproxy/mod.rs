//! The balancer's side of the SYN proxy ([`crate::lb::synproxy`]): a
//! `--synproxy` service's SYNs answered with cookies, the ACK that proves
//! one opening the connection to a real server, the pending connection
//! until the server's SYN/ACK, and the RSTs when it never comes.
//!
//! `resets.rs` holds the RSTs the sweep queues (no balancer); `handshake.rs` the balancer's side.

mod handshake;
pub(super) mod resets;
