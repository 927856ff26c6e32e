//! MAC address values.

/// True for a group (multicast or broadcast) MAC address.
#[inline]
pub fn mac_is_group(m: [u8; 6]) -> bool {
    m[0] & 1 != 0
}

/// The broadcast MAC.
pub const MAC_BROADCAST: [u8; 6] = [0xff; 6];
