//! dirigo's control protocol, shared by the daemon and the tools: no DPDK,
//! no async runtime.
//!
//! * [`proto`] — request/response envelopes, [`proto::Request`],
//!   [`proto::Response`], error codes; each verb defined once;
//! * [`view`] — the listings' payload types the daemon fills;
//! * [`client`] — [`client::Client`] and socket discovery;
//! * [`adm`] — ipvsadm's command language (dirigoadm's parsing and
//!   formatting; the daemon's state file is written in it);
//! * [`table`] — dirigoctl's human tables;
//! * [`cli`] — the programs' command lines (clap), shared by the binaries
//!   and the man page and completion generator;
//! * [`version`] — what `--version` says (crate version and commit).

#![deny(unsafe_code)]

pub mod adm;
pub mod cli;
pub mod client;
pub mod proto;
pub mod table;
pub mod version;
pub mod view;
