//! Where a packet goes next: the next hop toward an IPv4 destination
//! ([`next_hop`]) and its Ethernet addresses written on the frame
//! ([`set_eth`]).

use super::error::XmitError;
use crate::net::egress::{Egress, NextHop, Resolve};
use crate::net::wire::ethernet;

/// Resolve the next hop toward `dst`.
#[inline]
pub fn next_hop(egress: &impl Egress, dst: u32) -> Result<NextHop, XmitError> {
    match egress.next_hop(dst) {
        Resolve::Ready(nh) => Ok(nh),
        Resolve::NoRoute => Err(XmitError::NoRoute),
        Resolve::Unresolved { .. } => Err(XmitError::Unresolved),
    }
}

/// Write the Ethernet addresses for `nh`.
#[inline]
pub fn set_eth(d: &mut [u8], nh: &NextHop) -> Result<(), XmitError> {
    ethernet::Frame::new_unchecked(d)
        .set_addrs(&nh.dst_mac, &nh.src_mac)
        .map_err(|_| XmitError::Malformed)
}
