//! Zero-copy views of the headers dirigo parses and rewrites, in the style of
//! smoltcp's `wire` module.
//!
//! Each view wraps a buffer `T: AsRef<[u8]>`. `new_checked` validates every
//! length the accessors rely on, so that after it succeeds no accessor can
//! panic; `new_unchecked` skips the checks and is meant for buffers the caller
//! built itself. Setters exist only where `T: AsMut<[u8]>`. Byte ranges live in
//! each module's `field` module. Multi-byte integers are returned in host
//! order; IPv4 addresses are host-order `u32` like [`crate::net::meta`].

pub mod arp;
pub mod ethernet;
pub mod icmp;
pub mod ipv4;
pub mod tcp;
pub mod udp;

/// Why a buffer could not be viewed as a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The buffer is shorter than the header (or than a length it states).
    Truncated,
    /// IPv4 version field is not 4.
    BadVersion,
    /// A header-length field is below the minimum (IHL < 5, TCP offset < 5).
    BadHeaderLen,
    /// A total-length field is inconsistent (below the header length or
    /// beyond the buffer).
    BadTotalLen,
    /// Fields describe a format dirigo does not handle (e.g. non-Ethernet/IPv4 ARP).
    Unsupported,
}

/// Read a big-endian u16 at `at`; callers guarantee `at + 2 <= b.len()`
/// through `new_checked`, and a short buffer yields 0 rather than a panic.
#[inline]
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(s) => u16::from_be_bytes([s[0], s[1]]),
        None => 0,
    }
}

/// Read a big-endian u32 at `at` (0 when out of range, never panics).
#[inline]
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(s) => u32::from_be_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

/// Read 6 bytes at `at` as a MAC (zeros when out of range, never panics).
#[inline]
pub(crate) fn mac_at(b: &[u8], at: usize) -> [u8; 6] {
    let mut m = [0u8; 6];
    if let Some(s) = b.get(at..at + 6) {
        m.copy_from_slice(s);
    }
    m
}

/// Write `v` big-endian at `at` (no-op when out of range).
#[inline]
pub(crate) fn put16(b: &mut [u8], at: usize, v: u16) {
    if let Some(s) = b.get_mut(at..at + 2) {
        s.copy_from_slice(&v.to_be_bytes());
    }
}

/// Write `v` big-endian at `at` (no-op when out of range).
#[inline]
pub(crate) fn put32(b: &mut [u8], at: usize, v: u32) {
    if let Some(s) = b.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_be_bytes());
    }
}

/// Write a MAC at `at` (no-op when out of range).
#[inline]
pub(crate) fn put_mac(b: &mut [u8], at: usize, m: [u8; 6]) {
    if let Some(s) = b.get_mut(at..at + 6) {
        s.copy_from_slice(&m);
    }
}

/// True for a group (multicast or broadcast) MAC address.
#[inline]
pub fn mac_is_group(m: [u8; 6]) -> bool {
    m[0] & 1 != 0
}

/// The broadcast MAC.
pub const MAC_BROADCAST: [u8; 6] = [0xff; 6];
