//! IPv6 direct routing: only the Ethernet addresses change.

use super::route::{next_hop6, set_eth6};
use crate::lb::xmit::error::XmitError;
use crate::net::buf::PacketBuf;
use crate::net::egress::Egress6;

/// Send the frame unchanged to real server `rip`: Ethernet source = the
/// egress port's MAC, destination = the RS's MAC; the hop limit is left
/// as it is. Returns the egress port.
///
/// As IPv4's [`crate::lb::xmit::dr::dr`], nothing here checks that `rip`
/// is on-link: a DR real server off-link would get the frame through its
/// gateway's MAC, so the configuration refuses it (the snapshot builder's
/// on-link test, [`Egress6::on_link6`] for IPv6) and the per-packet path
/// does not ask again.
#[inline(always)]
pub fn dr6<B: PacketBuf>(buf: &mut B, rip: u128, egress: &impl Egress6) -> Result<u16, XmitError> {
    let nh = next_hop6(egress, rip)?;
    set_eth6(buf.data_mut(), &nh)?;
    Ok(nh.port)
}
