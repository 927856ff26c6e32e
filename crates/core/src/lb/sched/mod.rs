//! Schedulers: pick a real server for a new connection.
//!
//! Split in two so the fast path never allocates:
//! * [`Prepared`] is built by the control thread whenever a service's real
//!   servers or weights change (wrr sequence, Maglev table, ...) and is
//!   published immutably in the snapshot;
//! * [`Cursor`] is the small mutable state each worker keeps per service
//!   (rr position, ...).
//!
//! [`pick`] reads the per-real-server loads the core keeps ([`DestLoad`]).
//!
//! The algorithms follow the Linux IPVS schedulers (`ip_vs_*.c`):
//! * `rr`, `wrr` ([`rr`]): O(1) picks; wrr walks a precomputed copy of the
//!   interleaved sequence `ip_vs_wrr.c` produces (gcd / max-weight stepping);
//! * `lc`, `wlc`, `sed`, `nq`, `fo` ([`least`]): one O(n) scan over the live
//!   loads, IPVS overheads and tie-breaking (first minimum in list order,
//!   compared by cross-multiplication, never division);
//! * `sh`, `dh` ([`hash`]): IPVS's 256-bucket tables and hash functions,
//!   dealt in stable-identity order rather than list order;
//! * `mh` ([`maglev`]): Maglev with a prime table (default 65537) and
//!   permutations derived from a stable per-server identity.
//!
//! Availability: a server with live weight 0 (quiesced) or `overloaded` is
//! never picked for a new connection; when none is available [`pick`] returns
//! `None`. [`pick`] never allocates and never panics, whatever `loads` holds
//! (a `loads` shorter than the prepared list makes the missing servers
//! unavailable).
//!
//! Table-based schedulers (`wrr`, `sh`, `dh`, `mh`) take the weights given to
//! the build: a server built with weight 0 owns no slot. To quiesce a server
//! while keeping its slots (IPVS's `last_weight` behaviour, so re-enabling it
//! remaps nothing), build with its previous weight and publish its live
//! weight 0 in [`DestLoad`].

mod dest;
mod flags;
pub mod hash;
mod kind;
pub mod least;
pub mod maglev;
mod prepared;
pub mod rr;
pub mod tree;

#[cfg(test)]
mod tests;

pub use dest::{DestLoad, Loads, NO_DEST};
pub use flags::SchedFlags;
pub use hash::stable_id;
pub use kind::SchedKind;
pub use maglev::MH_DEFAULT_TABLE_SIZE;
pub use prepared::{pick, pick_with, Cursor, Prepared};
