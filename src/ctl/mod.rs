//! The daemon's side of the control plane: [`server`], the Unix socket
//! server and its [`server::Handler`] trait. The rest is shared with the
//! tools and lives in crates of its own, re-exported here under the names
//! the daemon's modules use:
//!
//! * [`proto`], [`view`], [`client`], [`adm`], [`table`] — `dirigo_proto`
//!   (the protocol's vocabulary and listings, the client, ipvsadm's
//!   language, dirigoctl's tables);
//! * [`config`], [`keepalived`] — `dirigo_config` (the TOML file, the
//!   keepalived.conf converter).

pub use dirigo_config as config;
pub use dirigo_config::keepalived;
pub use dirigo_proto::{adm, client, proto, table, view};

pub mod server;
