//! Control plane: protocol, socket server, ipvsadm-compatible client logic.
pub mod config;
