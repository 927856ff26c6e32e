//! Sans-IO network layer: packet bytes in, decisions out. Never calls DPDK.

pub mod addr;
pub mod arp;
pub mod buf;
pub mod checksum;
pub mod classify;
pub mod egress;
pub mod family;
pub mod icmp;
pub mod meta;
pub mod nd;
pub mod neigh;
pub mod route;
pub mod route6;
pub mod view;
pub mod wire;
