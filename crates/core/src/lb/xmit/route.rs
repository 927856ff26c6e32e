//! Where a packet goes next, for either family: the next hop toward a
//! destination ([`next_hop`]) and its Ethernet addresses written on the
//! frame ([`set_eth`]).

use super::error::XmitError;
use crate::net::egress::{EgressTo, NextHopOf, ResolveOf};
use crate::net::family::{Addr, Family};
use crate::net::wire::ethernet;

/// Resolve the next hop toward `dst`.
#[inline]
pub fn next_hop<A: Addr>(
    egress: &impl EgressTo<A>,
    dst: A,
) -> Result<NextHopOf<A::Family>, XmitError> {
    match egress.resolve(dst) {
        ResolveOf::Ready(nh) => Ok(nh),
        ResolveOf::NoRoute => Err(XmitError::NoRoute),
        ResolveOf::Unresolved { .. } => Err(XmitError::Unresolved),
    }
}

/// Write the Ethernet addresses for `nh`.
#[inline]
pub fn set_eth<F: Family>(d: &mut [u8], nh: &NextHopOf<F>) -> Result<(), XmitError> {
    ethernet::Frame::new_unchecked(d)
        .set_addrs(&nh.dst_mac, &nh.src_mac)
        .map_err(|_| XmitError::Malformed)
}
