//! Direct routing: only the Ethernet addresses change.

use super::{next_hop, set_eth, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::egress::Egress;

/// Send the frame unchanged to real server `rip` (host order): Ethernet
/// source = egress MAC, destination = the RS's MAC. Returns the egress port.
#[inline(always)]
pub fn dr<B: PacketBuf>(buf: &mut B, rip: u32, egress: &impl Egress) -> Result<u16, XmitError> {
    let nh = next_hop(egress, rip)?;
    set_eth(buf.data_mut(), &nh)?;
    Ok(nh.port)
}
