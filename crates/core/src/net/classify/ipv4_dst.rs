//! The IPv4 or IPv6 destination of a frame, whatever classify decided
//! about it.

use crate::net::wire::{ethernet, ipv4, ipv6};

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

/// The IPv6 destination of a frame whose Ethernet (+ one VLAN tag) and
/// IPv6 fixed headers are sound, whatever classify decided about the rest
/// (as [`ipv4_dst`]: the drops the kernel interface may still want, and
/// the ICMPv6 the responder leaves to it). `None` for anything else.
pub fn ipv6_dst(frame: &[u8]) -> Option<u128> {
    let eth = ethernet::Frame::new_checked(frame).ok()?;
    if eth.ethertype() != ethernet::ethertype::IPV6 {
        return None;
    }
    ipv6::Packet::new_checked(eth.payload())
        .ok()
        .map(|ip| ip.dst())
}

/// Whether `dst` is an IPv6 multicast group of link-local scope
/// (ff02::/16, or ff12::/16 and the other flag values): what routing
/// protocols (OSPFv3 ff02::5/6, RIPng ff02::9, VRRP ff02::12) send to.
#[inline]
pub fn is_link_local_multicast6(dst: u128) -> bool {
    (dst >> 112) as u16 & 0xff0f == 0xff02
}
