//! What TCP and UDP share: a checksum over the IPv4 pseudo header, and the
//! incremental update NAT makes when it rewrites an address and a port.

use super::field_access::{get, set};
use crate::net::checksum;
use core::ops::Range;

/// Where a transport checksum sits and whether 0 means "none" (UDP).
pub(super) struct L4Checksum {
    /// Byte range of the checksum.
    pub at: Range<usize>,
    /// True when a stored 0 means "no checksum" (and a computed 0 is sent
    /// as 0xffff).
    pub optional: bool,
}

/// The finished checksum of `seg` (the whole segment) under the IPv4 pseudo
/// header, with the checksum field zeroed by the caller.
#[inline]
pub(super) fn checksum(seg: &[u8], src: u32, dst: u32, proto: u8) -> u16 {
    let ph = checksum::pseudo_header_sum(src, dst, proto, seg.len() as u16);
    !checksum::fold(checksum::sum(seg, ph))
}

/// True when the stored checksum of `seg` is right under the pseudo header.
#[inline]
pub(super) fn checksum_ok(seg: &[u8], src: u32, dst: u32, proto: u8) -> bool {
    let ph = checksum::pseudo_header_sum(src, dst, proto, seg.len() as u16);
    checksum::fold(checksum::sum(seg, ph)) == 0xffff
}

/// Set the port at `port_at` and update the checksum for the port and for
/// the pseudo-header address that changed from `old_addr` to `new_addr`
/// (RFC 1624). An optional checksum that is 0 stays 0.
#[inline]
pub(super) fn set_port_update_checksum(
    b: &mut [u8],
    port_at: Range<usize>,
    port: u16,
    old_addr: u32,
    new_addr: u32,
    ck: L4Checksum,
) {
    let old_port = get::<u16>(b, port_at.clone());
    set::<u16>(b, port_at, port);
    let c = get::<u16>(b, ck.at.clone());
    if ck.optional && c == 0 {
        return;
    }
    let mut n = checksum::update16(checksum::update32(c, old_addr, new_addr), old_port, port);
    if ck.optional && n == 0 {
        n = 0xffff;
    }
    set::<u16>(b, ck.at, n);
}
