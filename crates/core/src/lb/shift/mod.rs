//! Payload changes that move a TCP stream's numbers, built once for the
//! PROXY protocol of FullNAT services (issue 51) and the FTP helper
//! (issue 52). Pure and `Copy`: no allocation, no packet path wired here.
//!
//! * [`seq`] — wrapping sequence-number order (`before`, `after`).
//! * [`adjust`] — [`adjust::SeqAdj`], one direction's changes (the last
//!   `K` kept, as Linux's `nf_ct_seqadj` keeps one), and
//!   [`adjust::Shift`], both directions of a connection: a segment's
//!   sequence number moved by its direction's changes, its acknowledgment
//!   and SACK edges moved back by the other's.
//! * [`once`] — [`once::HeaderInsert`], the state machine that puts a
//!   header (the PROXY protocol's) before the client's first byte exactly
//!   once: on the handshake's last ACK, again on any segment at that
//!   place until the server has acknowledged it.
//! * [`segment`] — the above applied to a `net::wire::tcp::Packet` in
//!   place, with incremental checksums.
//! * [`table`] — [`table::Inserts`], a [`HeaderInsert`] per record of a
//!   connection table.
//! * [`ftp`] — `PORT`, `EPRT`, `227` and `229`: found, rewritten, the
//!   change in length and the data connection to expect.
//! * [`ftp_state`] — the FTP helper's per-worker state: the control
//!   connections' shifts ([`ftp_state::Controls`]) and the expected data
//!   connections ([`ftp_state::Expects`]), both bounded.
//!
//! The headers themselves are wire formats: `net::wire::proxy` (PROXY v1
//! and v2) and `net::wire::toa` (DPVS's TOA option, the MSS clamp).

pub mod adjust;
pub mod ftp;
pub mod ftp_state;
pub mod once;
pub mod segment;
pub mod seq;
pub mod table;

pub use adjust::{Change, Dir, Recorded, SeqAdj, Shift, ShiftError};
pub use once::{ClientSeg, HeaderInsert, Out, Phase};

#[cfg(test)]
mod tests;
