//! Health checks: keepalived's semantics, built in.
//!
//! * [`spec`] — what a check is (validated from the configuration);
//! * [`state`] — rise and fall: check results -> a server's state (sans-IO);
//! * [`probe`] — one check: TCP connect, HTTP/HTTPS GET (status ranges, a
//!   string in the body, any certificate), UDP answer, ICMP echo, a
//!   command's exit status, an SMTP greeting and HELO ([`smtp`]), a DNS
//!   query ([`dns`]) or a file's integer ([`file`]), under the check's
//!   timeout;
//! * [`engine`] — the checker thread: the jobs' probes run off the data
//!   path, on an async runtime of its own, through kernel sockets in the
//!   exception namespace, each on its schedule; their reports go to the
//!   control loop, which owns the [`state::Tracker`]s and turns state
//!   changes into effective weights and a new snapshot.

pub mod dns;
pub mod engine;
pub mod file;
pub mod net;
pub mod probe;
pub mod smtp;
pub use dirigo_config::check as spec;
pub mod state;

#[cfg(test)]
mod tests;
