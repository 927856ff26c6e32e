//! Reshaping the frame around the IP packet: the link header pulled
//! forward ahead of a new outer header ([`pull_link_header`]), Ethernet
//! padding dropped ([`trim_padding`]).

use super::error::XmitError;
use crate::net::buf::PacketBuf;
use crate::net::wire::ethernet;

/// After `shift` bytes were prepended in front of a frame whose IP header
/// was at `l3`: move what follows the link header's addresses (the
/// EtherType, and a VLAN tag before it) back to the front, ahead of the
/// room made for an outer header. The addresses are left for [`set_eth`]
/// (or its IPv6 twin) to write. An untagged frame's two EtherType bytes
/// move as two bytes: `copy_within` with a run-time length is a call into
/// libc's `memmove` (~30 instructions per tunnelled packet).
///
/// [`set_eth`]: super::set_eth
#[inline(always)]
pub fn pull_link_header(d: &mut [u8], l3: usize, shift: usize) {
    let et = ethernet::field::ETHERTYPE;
    let at = et.start;
    if l3 == ethernet::HEADER_LEN {
        if let Some(h) = d.get_mut(..shift + ethernet::HEADER_LEN) {
            // in bounds: `h` is `shift` bytes longer than a header
            let mut two = [0u8; 2];
            two.copy_from_slice(&h[shift + et.start..shift + et.end]);
            h[et].copy_from_slice(&two);
        }
    } else if l3 > at && shift + l3 <= d.len() {
        d.copy_within(shift + at..shift + l3, at);
    }
}

/// Drop Ethernet padding beyond the IP packet.
#[inline]
pub fn trim_padding<B: PacketBuf>(buf: &mut B, l3: usize, ip_len: usize) -> Result<(), XmitError> {
    let end = l3 + ip_len;
    if buf.len() < end {
        return Err(XmitError::Malformed);
    }
    if buf.len() > end && !buf.trim_to(end) {
        return Err(XmitError::Malformed);
    }
    Ok(())
}
