//! Where an IPv6 packet goes next: the next hop toward an IPv6
//! destination ([`next_hop6`]) and its Ethernet addresses written on the
//! frame ([`set_eth6`]).

use crate::lb::xmit::error::XmitError;
use crate::net::egress::{Egress6, NextHop6, Resolve6};
use crate::net::wire::ethernet;

/// Resolve the next hop toward IPv6 destination `dst`.
#[inline]
pub fn next_hop6(egress: &impl Egress6, dst: u128) -> Result<NextHop6, XmitError> {
    match egress.next_hop6(dst) {
        Resolve6::Ready(nh) => Ok(nh),
        Resolve6::NoRoute => Err(XmitError::NoRoute),
        Resolve6::Unresolved { .. } => Err(XmitError::Unresolved),
    }
}

/// Write the Ethernet addresses for `nh` at the front of frame `d`.
#[inline]
pub fn set_eth6(d: &mut [u8], nh: &NextHop6) -> Result<(), XmitError> {
    ethernet::Frame::new_unchecked(d)
        .set_addrs(&nh.dst_mac, &nh.src_mac)
        .map_err(|_| XmitError::Malformed)
}
