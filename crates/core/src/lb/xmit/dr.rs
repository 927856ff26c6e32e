//! Direct routing: only the Ethernet addresses change.

use super::error::XmitError;
use super::route::{next_hop, set_eth};
use crate::net::buf::PacketBuf;
use crate::net::egress::EgressTo;
use crate::net::family::Addr;
use crate::net::wire::ethernet;

/// Send the frame unchanged to real server `rip` (host order, either
/// family): Ethernet source = egress MAC, destination = the RS's MAC.
/// Returns the egress port.
#[inline(always)]
pub fn dr<A: Addr, B: PacketBuf>(
    buf: &mut B,
    rip: A,
    egress: &impl EgressTo<A>,
) -> Result<u16, XmitError> {
    // a ready next hop: its 12 address bytes in one copy
    if let Some(e) = egress.ready(rip) {
        let h = buf
            .data_mut()
            .get_mut(ethernet::field::DST.start..ethernet::field::SRC.end)
            .ok_or(XmitError::Malformed)?;
        h.copy_from_slice(&e.macs);
        return Ok(e.port);
    }
    let nh = next_hop(egress, rip)?;
    set_eth(buf.data_mut(), &nh)?;
    Ok(nh.port)
}
