//! The connection handoff: what an outgoing dirigo hands to the next one
//! so that a restart or an upgrade breaks no connection (issue 53).
//!
//! The outgoing process collects every worker's connections (IPv4 and
//! IPv6, with their NAT64 leg and SYN proxy state) and persistence
//! templates after its workers stopped, and [`codec::encode`]s them; the
//! next process [`codec::decode`]s the file and installs each entry into
//! the worker that owns it before its ports forward
//! ([`crate::lb::balancer::Balancer::install_handoff`]).
//!
//! Nothing is trusted: a file with another magic or [`VERSION`], a
//! checksum that does not match or a length that does not add up is
//! refused whole ([`FileRefusal`]); an entry naming a service or real
//! server this configuration does not have, or translation state this
//! process cannot keep, is refused alone ([`HandoffCount`]).
//!
//! Entries carry no slot numbers and no clock: services and real servers
//! by their keys (protocol, VIP, port; address, port), timers as the
//! milliseconds they had left.
//!
//! **The version rule**: [`VERSION`] is bumped whenever the byte layout
//! or the meaning of a field changes; a process reads only its own
//! version, so an upgrade across a bump starts empty (as before the
//! handoff existed), never with a misread translation.

pub mod codec;
mod entry;

pub use entry::{
    ConnEntry, Entry, FileRefusal, HandoffCount, Header, TemplateEntry, MAGIC, VERSION,
};

#[cfg(test)]
mod tests;
