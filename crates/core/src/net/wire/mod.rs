//! Zero-copy views of the headers dirigo parses and rewrites, in the style of
//! smoltcp's `wire` module.
//!
//! Each view wraps a buffer `T: AsRef<[u8]>`. `new_checked` validates every
//! length the accessors rely on, so that after it succeeds no accessor can
//! panic; `new_unchecked` skips the checks and is meant for buffers the caller
//! built itself. Setters exist only where `T: AsMut<[u8]>`. Byte ranges live in
//! each module's `field` module, and only here: code outside `wire` reads and
//! writes headers through the views. Multi-byte integers are returned in host
//! order; IPv4 addresses are host-order `u32` like [`crate::net::meta`], and
//! IPv6 addresses host-order `u128` for the same reasons: one load and a byte
//! swap to read, compared and hashed as plain integers on the per-packet path,
//! prefixes tested with a mask and a shift, the checksum words taken with
//! shifts, and `std::net::Ipv6Addr::from(u128)` / `u128::from(Ipv6Addr)` free
//! at the edges (config, logs).
//!
//! Rewriting a forwarded packet keeps its checksums right incrementally
//! (RFC 1624): `ipv4::Packet::set_{ttl,src,dst}_update_checksum`,
//! `{tcp,udp}::Packet::set_{src,dst}_port_update_checksum` (which also
//! account for the pseudo-header address NAT changed),
//! `icmp::Packet::set_type_code_update_checksum`. Headers dirigo builds
//! itself come from `ipv4::Repr::emit`, `tcp::Repr::emit` and the views'
//! setters.
//!
//! IPv6 (`ipv6`, `ipv6ext`, `icmpv6`, `ndp`) follows the same rules. The
//! fixed header and its extension headers are apart: `ipv6ext::walk` finds
//! the upper layer in a bounded number of steps (or says why not, a
//! fragment among the reasons), and the upper layers' checksums take the
//! IPv6 pseudo header from `checksum::pseudo_header_sum_v6`. `ndp::Solicit`
//! and `ndp::Advert` validate and emit whole Neighbour Discovery packets.
//!
//! The views share their plumbing: `view!` declares the struct and its
//! constructors, `accessors!` the plain getter/setter pairs of a field table,
//! and `get`/`set` read and write one big-endian field without panicking.
//! Code that checked a frame's length once and reads it as a fixed-size
//! array (the classify fast path, NAT's fixed-header rewrite) uses
//! `be16_at`, `be32_at`, `le32_at` and `be128_at` at offsets from the
//! `field` tables, whose bounds checks fold away.

//! `proxy` (the PROXY protocol's v1 and v2 headers) and `toa` (DPVS's TOA
//! option, the MSS clamp) are what a FullNAT service adds to a client's
//! stream; `lb::shift` moves the sequence numbers around them.

// The macros come first: the header modules after them use them.
#[macro_use]
mod macros;

mod array_read;
mod check;
mod error;
mod field_access;
mod mac;

pub(crate) use array_read::{be128_at, be16_at, be32_at, le32_at};
pub use error::WireError;
pub(crate) use field_access::{get, set};
pub use mac::{mac_is_group, MAC_BROADCAST};

pub mod arp;
pub mod ethernet;
pub mod gre;
pub mod gue;
pub mod icmp;
pub mod icmpv6;
pub mod ipv4;
pub mod ipv6;
pub mod ipv6ext;
pub mod ipvs_sync;
mod l4;
pub mod ndp;
pub mod proxy;
pub mod tcp;
pub mod tcpopt;
pub mod toa;
pub mod udp;

#[cfg(test)]
mod tests;
