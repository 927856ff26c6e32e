//! The immutable configuration a worker forwards with.
//!
//! The control thread builds a [`Snapshot`] from
//! [`ServiceSpec`](crate::lb::spec::ServiceSpec)s and
//! [`DestSpec`](crate::lb::spec::DestSpec)s with a [`SnapshotBuilder`]
//! (validating everything), and the integrator publishes it through
//! `arc-swap`; workers load it once per burst. Services and real servers
//! carry stable [`SlotId`](crate::lb::ids::SlotId)s assigned by the
//! long-lived [`LbIds`] (see [`crate::lb::ids`] for the reuse rule), so
//! connections and counters survive edits.
//!
//! Lookups on the fast path ([`Snapshot::service`], [`Snapshot::is_vip`],
//! [`Snapshot::dest_by_slot`]) never allocate: services sit in a small
//! open-addressing table, VIPs in a sorted array, real servers in a
//! slot-indexed array.

mod addr;
mod build;
mod fingerprint;
mod forwarding;
mod group;
mod index;
mod lb_ids;
mod marks;
mod service;

pub use addr::{fold6, v4_bits, v6_bits};
pub use build::{BuildError, SnapshotBuilder};
pub use fingerprint::Fingerprint;
pub use forwarding::{MarkHit, Snapshot};
pub use group::key_text;
pub use lb_ids::LbIds;
pub use service::{Dest, Pin, Service};

#[cfg(test)]
mod tests;
