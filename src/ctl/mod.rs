//! The daemon's side of the control plane: [`server`], the Unix socket
//! server and its [`server::Handler`] trait. The rest is shared with the
//! tools and lives in crates of its own, which the daemon names directly:
//! `dirigo_proto` (the protocol's vocabulary and listings, the client,
//! ipvsadm's language, dirigoctl's tables) and `dirigo_config` (the TOML
//! file, the keepalived.conf converter).

pub mod server;
