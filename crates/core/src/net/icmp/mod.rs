//! ICMP echo responder (in place).
//!
//! The one ICMP error dirigo generates, "fragmentation needed" for a TUN
//! packet with DF set, is built by `lb::xmit::icmp::frag_needed` and
//! rate-limited by the worker's `lb::xmit::TokenBucket`.

use crate::net::addr::OwnAddrs;
use crate::net::meta::{PacketMeta, PROTO_ICMP};
use crate::net::wire::{ethernet, icmp, ipv4, mac_is_group};

/// TTL of the echo replies dirigo sends.
pub const REPLY_TTL: u8 = 64;

crate::counters::counter_enum! {
    /// Why an ICMP packet was not answered.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum IcmpIgnore {
        /// Headers do not match the meta (not ICMP, truncated).
        Malformed: drop = "icmp_malformed",
        /// Not an echo request (echo replies, errors and other types are left
        /// to the caller).
        NotEchoRequest: drop = "icmp_not_echo_request",
        /// Destination is not one of our addresses or VIPs.
        NotForUs: drop = "icmp_not_for_us",
        /// Sent to a group MAC (broadcast/multicast ping).
        NotUnicast: drop = "icmp_not_unicast",
        /// ICMP checksum wrong.
        BadChecksum: drop = "icmp_bad_checksum",
    }
}

/// Outcome of [`echo_input`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcmpAction {
    /// The frame now holds the echo reply: transmit it on the receiving port.
    Reply,
    /// Not answered; frame unchanged.
    Ignore(IcmpIgnore),
}

/// Answer an ICMP echo request addressed to one of `addrs`' addresses or
/// VIPs by rewriting `frame` in place: MACs swapped, IPs swapped, TTL 64,
/// type 0, both checksums fixed (IP options and Ethernet padding are kept).
/// `meta` is what [`crate::net::classify::classify`] returned for the
/// frame. Never panics, never allocates; the work is one checksum pass over
/// the ICMP message.
pub fn echo_input(frame: &mut [u8], meta: &PacketMeta, addrs: &OwnAddrs) -> IcmpAction {
    match echo_inner(frame, meta, addrs) {
        Ok(()) => IcmpAction::Reply,
        Err(r) => IcmpAction::Ignore(r),
    }
}

fn echo_inner(frame: &mut [u8], meta: &PacketMeta, addrs: &OwnAddrs) -> Result<(), IcmpIgnore> {
    let l3 = meta.l3_off as usize;
    let l3_end = l3 + meta.ip_len as usize;
    let l4 = meta.l4_off as usize;
    if meta.key.proto != PROTO_ICMP {
        return Err(IcmpIgnore::Malformed);
    }
    {
        let eth = ethernet::Frame::new_checked(&*frame).map_err(|_| IcmpIgnore::Malformed)?;
        if eth.header_len() != l3 {
            return Err(IcmpIgnore::Malformed);
        }
        if mac_is_group(eth.dst()) {
            return Err(IcmpIgnore::NotUnicast);
        }
    }
    let ip_bytes = frame.get(l3..l3_end).ok_or(IcmpIgnore::Malformed)?;
    let ip = ipv4::Packet::new_checked(ip_bytes).map_err(|_| IcmpIgnore::Malformed)?;
    if l3 + ip.header_len() != l4 || ip.protocol() != PROTO_ICMP {
        return Err(IcmpIgnore::Malformed);
    }
    let msg = icmp::Packet::new_checked(ip.payload()).map_err(|_| IcmpIgnore::Malformed)?;
    if msg.msg_type() != icmp::msg_type::ECHO_REQUEST {
        return Err(IcmpIgnore::NotEchoRequest);
    }
    let (src, dst) = (ip.src(), ip.dst());
    if !addrs.is_local(dst) {
        return Err(IcmpIgnore::NotForUs);
    }
    if !msg.verify_checksum() {
        return Err(IcmpIgnore::BadChecksum);
    }

    // ICMP: type 8 -> 0, incremental checksum over the type/code word.
    let code = msg.code();
    let icmp_bytes = frame.get_mut(l4..l3_end).ok_or(IcmpIgnore::Malformed)?;
    icmp::Packet::new_unchecked(icmp_bytes)
        .set_type_code_update_checksum(icmp::msg_type::ECHO_REPLY, code);

    let ip_bytes = frame.get_mut(l3..l3_end).ok_or(IcmpIgnore::Malformed)?;
    let mut ip = ipv4::Packet::new_unchecked(ip_bytes);
    ip.set_src(dst);
    ip.set_dst(src);
    ip.set_ttl(REPLY_TTL);
    ip.fill_checksum();

    ethernet::Frame::new_unchecked(frame).swap_macs();
    Ok(())
}

#[cfg(test)]
mod tests;
