//! NAT64's sub-machine: an IPv6 client's connection to an IPv4 real
//! server leaves from an address of the NAT64 pool and a source port this
//! worker owns ([`Nat64Ports`]), and its IPv4 replies (and ICMPv4 errors
//! about its requests) come back here ([`Balancer::nat64_reply`]) to be
//! translated to IPv6. The records are IPv6's (`v6.rs`), with the pool
//! address and port in `laddr4`/`lport`.

//!
//! `ports.rs` holds the ports (no balancer); `reply.rs` the balancer's side.

pub(super) mod ports;
mod reply;
