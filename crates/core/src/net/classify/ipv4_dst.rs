//! The IPv4 destination of a frame, whatever classify decided about it.

use crate::net::wire::{ethernet, ipv4};

/// The IPv4 destination of a frame whose Ethernet (+ one VLAN tag) and
/// IPv4 headers are sound, whatever classify decided about the rest: the
/// pipeline asks it about the few drops the kernel interface may still
/// want (link-local multicast, a protocol dirigo does not speak to one of
/// its addresses). `None` for anything else.
pub fn ipv4_dst(frame: &[u8]) -> Option<u32> {
    let eth = ethernet::Frame::new_checked(frame).ok()?;
    if eth.ethertype() != ethernet::ethertype::IPV4 {
        return None;
    }
    let ip = ipv4::Packet::new_checked(eth.payload()).ok()?;
    ip.verify_checksum().then(|| ip.dst())
}
