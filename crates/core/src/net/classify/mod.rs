//! First look at a received frame: ARP, a validated IPv4 packet, an ICMPv6
//! message for the IPv6 responder, or a drop with a countable reason.
//!
//! [`classify`] reads at most the Ethernet, IPv4 and L4 headers (plus the
//! quoted header of an ICMP error; for IPv6 the fixed header and the
//! bounded extension-header walk), never allocates and never panics on any
//! input. The common IPv6 packet (untagged, TCP or UDP right behind the
//! fixed header) has a fast path of its own (`fast::classify_fast6`);
//! extension headers, ICMPv6 and every IPv6 drop take the slow path. It verifies the IPv4 header checksum but not TCP/UDP checksums
//! (a director passes those through unchanged or updates them incrementally).
//!
//! TTL: only TTL 0 is dropped here ([`NetDrop::TtlExpired`]). A packet with
//! TTL 1 addressed to one of our addresses or VIPs is valid (the last hop of
//! a traceroute, a `ping -t 1` from the same segment) and LVS forwarding does
//! not decrement TTL; a path that does decrement checks `meta.ttl <= 1`.

mod addr_class;
mod dispatch;
mod fast;
mod ipv4_dst;
pub mod ipv6;
mod slow;
mod verdict;

pub use addr_class::{is_link_local_multicast, is_martian_src, is_not_unicast_dst};
pub use dispatch::{classify, classify_into, classify_into_fast, Placed};
pub use fast::{classify_fast6_into, peek_key6};
pub use ipv4_dst::{ipv4_dst, ipv6_dst, is_link_local_multicast6};
pub use verdict::{Classified, NetDrop};

#[cfg(test)]
mod tests;
