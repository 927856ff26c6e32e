//! Health checks: keepalived's semantics, built in.
//!
//! * [`spec`] — what a check is (validated from the configuration);
//! * [`state`] — rise and fall: check results -> a server's state (sans-IO);
//! * `engine` — the checker thread: probes (TCP, HTTP/HTTPS, UDP, ICMP,
//!   exec) run off the data path, through kernel sockets in the exception
//!   namespace, on each job's schedule; results go to the control loop,
//!   which turns state changes into effective weights and a new snapshot.

pub mod spec;
pub mod state;
