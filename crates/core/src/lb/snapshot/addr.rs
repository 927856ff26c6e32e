//! Addresses as a snapshot keeps them: host-order bits of either family,
//! and IPv6 folded to 32 bits.

use std::net::IpAddr;

/// An IPv4 address's host-order bits; 0 for IPv6.
#[inline]
pub fn v4_bits(a: IpAddr) -> u32 {
    match a {
        IpAddr::V4(v) => u32::from(v),
        IpAddr::V6(_) => 0,
    }
}

/// An IPv6 address's host-order bits; 0 for IPv4.
#[inline]
pub fn v6_bits(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(_) => 0,
        IpAddr::V6(v) => u128::from(v),
    }
}

/// An IPv6 address folded to 32 bits (scheduler hashes, stable identities).
#[inline]
pub fn fold6(a: u128) -> u32 {
    (a as u32) ^ ((a >> 32) as u32) ^ ((a >> 64) as u32) ^ ((a >> 96) as u32)
}
