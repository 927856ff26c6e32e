//! Forwarding: rewrite a packet in place for DR, TUN, NAT or FullNAT.
//!
//! Every function takes the frame (a [`PacketBuf`]) and the
//! [`crate::net::meta::PacketMeta`] classify produced, checks every offset
//! it touches, and returns the egress port or an [`XmitError`]. Headers are
//! read and written through the `net::wire` views (their incremental
//! checksum setters and `ipv4::Repr::emit`), never at raw offsets; the views
//! are made with `new_unchecked` over sub-slices whose bounds were checked
//! here against the metadata classify validated. Nothing here allocates. A
//! VLAN tag on the incoming frame is left in place (the egress side owns
//! VLAN policy).
//!
//! TTL: like IPVS, DR and TUN do not decrement the TTL (the packet is
//! "delivered locally" and re-sent; the TUN outer TTL copies the inner);
//! NAT decrements it in both directions (IPVS NAT traffic is routed by
//! `ip_forward`), and a packet arriving with TTL <= 1 is dropped with
//! [`XmitError::TtlExceeded`] (no ICMP time-exceeded is generated).
//!
//! [`PacketBuf`]: crate::net::buf::PacketBuf

pub mod dr;
pub mod encap;
mod error;
mod frame;
pub mod fullnat;
pub mod grow;
pub mod icmp;
pub mod nat;
mod quote;
mod route;
mod token_bucket;
pub mod tun;
pub mod v6;

#[cfg(test)]
mod tests;

pub use error::XmitError;
pub use frame::{pull_link_header, trim_padding};
pub use route::{next_hop, set_eth};
pub use token_bucket::TokenBucket;
