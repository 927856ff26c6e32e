//! Control plane: protocol, socket server, ipvsadm-compatible client logic.
//!
//! * [`proto`] — request/response envelopes, [`proto::Request`],
//!   [`proto::Response`], error codes;
//! * [`view`] — listing payload types the daemon fills;
//! * [`server`] — the Unix socket server and the [`server::Handler`] trait;
//! * [`client`] — [`client::Client`] and socket discovery;
//! * [`adm`] — dirigoadm's ipvsadm-compatible parsing and formatting;
//! * [`table`] — dirigoctl's human tables;
//! * [`config`] — the daemon's TOML configuration file;
//! * [`keepalived`] — `dirigoctl keepalived-convert`: keepalived.conf's
//!   virtual servers as dirigo's `[[service]]` TOML;
//! * [`top`] — `dirigoctl top`: the live view (sampling, rates, drawing).

pub mod adm;
pub mod client;
pub mod config;
pub mod keepalived;
pub mod proto;
pub mod server;
pub mod table;
pub mod top;
pub mod view;
