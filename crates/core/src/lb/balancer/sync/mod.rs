//! The balancer's side of connection sync (see [`crate::lb::sync`]): the
//! check on every forwarded packet of whether its connection is worth
//! sending, and the install of received connections at housekeeping.
//!
//! `out.rs` holds the sender (no balancer); `install.rs` the balancer's side.

mod install;
pub(super) mod out;
