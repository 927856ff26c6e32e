//! The tools' own parts: [`top`], `dirigoctl top`'s live view (sampling,
//! rates, drawing). The programs themselves are `src/bin/dirigoadm.rs` and
//! `src/bin/dirigoctl.rs`; everything they say to a daemon is
//! `dirigo_proto`'s.

#![deny(unsafe_code)]

pub mod top;
