//! ARP responder and builders (sans-IO).
//!
//! [`arp_input`] answers requests for our port addresses and VIPs by
//! rewriting the received frame in place into the reply (one frame in, the
//! same frame out, VLAN tag kept) and reports senders to learn. The builders
//! write ARP requests and gratuitous ARPs for the control thread.

use crate::net::addr::OwnAddrs;
use crate::net::classify::is_martian_src;
use crate::net::wire::{arp, ethernet, mac_is_group, MAC_BROADCAST};

/// An (IP, MAC) pair seen as the sender of an ARP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpSender {
    /// Sender IPv4 (host order).
    pub ip: u32,
    /// Sender MAC.
    pub mac: [u8; 6],
}

crate::counters::counter_enum! {
    /// Why an ARP packet was ignored.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum ArpIgnore {
        /// Not an Ethernet/IPv4 ARP packet, or truncated.
        Malformed: drop = "arp_malformed",
        /// Operation neither request nor reply.
        UnknownOp: drop = "arp_unknown_op",
        /// Sender MAC is a group address.
        BadSenderMac: drop = "arp_bad_sender_mac",
        /// Sender MAC is our own port's (a looped frame).
        Looped: drop = "arp_looped",
        /// Sender IP is multicast, broadcast, loopback or class E.
        BadSenderIp: drop = "arp_bad_sender_ip",
        /// Someone else claims one of our addresses or VIPs (log it: a VIP that
        /// a real server answers ARP for breaks DR).
        AddressConflict: drop = "arp_address_conflict",
        /// An address probe (sender IP 0.0.0.0) for an address not ours.
        Probe: drop = "arp_probe",
    }
}

/// What to do after [`arp_input`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArpAction {
    /// The frame now holds our reply: transmit it on the receiving port.
    /// `learn` is the requester (None for an address probe from 0.0.0.0);
    /// pass it to [`crate::net::neigh::NeighTable::learn`] with `create = true`.
    Reply {
        /// The requester, to learn.
        learn: Option<ArpSender>,
        /// The address asked for (one of our port addresses or VIPs).
        target: u32,
    },
    /// Not a request for us: learn the sender (frame unchanged; free it).
    /// `create` is true for a reply addressed to one of our addresses
    /// (an answer to our request); otherwise only update an existing entry.
    Learn {
        /// The sender.
        sender: ArpSender,
        /// Whether a new neighbor entry may be created.
        create: bool,
        /// Whether it is an ARP reply (the kernel interface sees those).
        reply: bool,
    },
    /// Nothing to do (frame unchanged; free it).
    Ignore(ArpIgnore),
}

/// Handle a received ARP frame (starting at the Ethernet header) that
/// arrived on a port with MAC `port_mac`. Requests for any of `addrs`'
/// port addresses or VIPs are rewritten in place into the reply, from
/// `port_mac`. Never panics, never allocates.
pub fn arp_input(frame: &mut [u8], port_mac: [u8; 6], addrs: &OwnAddrs) -> ArpAction {
    let Ok(eth) = ethernet::Frame::new_checked(&*frame) else {
        return ArpAction::Ignore(ArpIgnore::Malformed);
    };
    let off = eth.header_len();
    if eth.ethertype() != ethernet::ethertype::ARP {
        return ArpAction::Ignore(ArpIgnore::Malformed);
    }
    let Some(body) = frame.get_mut(off..) else {
        return ArpAction::Ignore(ArpIgnore::Malformed);
    };
    let Ok(mut pkt) = arp::Packet::new_checked(body) else {
        return ArpAction::Ignore(ArpIgnore::Malformed);
    };
    let op = pkt.operation();
    let sender = ArpSender {
        ip: pkt.sender_ip(),
        mac: pkt.sender_mac(),
    };
    let target = pkt.target_ip();
    if op != arp::OP_REQUEST && op != arp::OP_REPLY {
        return ArpAction::Ignore(ArpIgnore::UnknownOp);
    }
    if mac_is_group(sender.mac) || sender.mac == [0; 6] {
        return ArpAction::Ignore(ArpIgnore::BadSenderMac);
    }
    if sender.mac == port_mac {
        return ArpAction::Ignore(ArpIgnore::Looped);
    }
    if sender.ip != 0 && is_martian_src(sender.ip) {
        return ArpAction::Ignore(ArpIgnore::BadSenderIp);
    }
    if addrs.is_local(sender.ip) {
        return ArpAction::Ignore(ArpIgnore::AddressConflict);
    }
    let for_us = addrs.is_local(target);
    if op == arp::OP_REQUEST && for_us {
        pkt.set_operation(arp::OP_REPLY);
        pkt.set_target_mac(sender.mac);
        pkt.set_target_ip(sender.ip);
        pkt.set_sender_mac(port_mac);
        pkt.set_sender_ip(target);
        let mut eth = ethernet::Frame::new_unchecked(&mut *frame);
        eth.set_dst(sender.mac);
        eth.set_src(port_mac);
        let learn = (sender.ip != 0).then_some(sender);
        return ArpAction::Reply { learn, target };
    }
    if sender.ip == 0 {
        return ArpAction::Ignore(ArpIgnore::Probe);
    }
    ArpAction::Learn {
        sender,
        create: op == arp::OP_REPLY && for_us,
        reply: op == arp::OP_REPLY,
    }
}

/// Length of an untagged Ethernet + ARP frame. (NICs pad it to the 60-byte
/// minimum; pad yourself if the driver does not.)
pub const ARP_FRAME_LEN: usize = ethernet::HEADER_LEN + arp::PACKET_LEN;

fn build(
    buf: &mut [u8],
    src_mac: [u8; 6],
    src_ip: u32,
    target_mac: [u8; 6],
    target_ip: u32,
) -> Option<usize> {
    build_op(
        buf,
        arp::OP_REQUEST,
        MAC_BROADCAST,
        src_mac,
        src_ip,
        target_mac,
        target_ip,
    )
}

fn build_op(
    buf: &mut [u8],
    op: u16,
    dst: [u8; 6],
    src_mac: [u8; 6],
    src_ip: u32,
    target_mac: [u8; 6],
    target_ip: u32,
) -> Option<usize> {
    let out = buf.get_mut(..ARP_FRAME_LEN)?;
    let mut eth = ethernet::Frame::new_unchecked(&mut *out);
    eth.set_dst(dst);
    eth.set_src(src_mac);
    eth.set_outer_ethertype(ethernet::ethertype::ARP);
    let mut p = arp::Packet::new_unchecked(out.get_mut(ethernet::HEADER_LEN..)?);
    p.set_ethernet_ipv4();
    p.set_operation(op);
    p.set_sender_mac(src_mac);
    p.set_sender_ip(src_ip);
    p.set_target_mac(target_mac);
    p.set_target_ip(target_ip);
    Some(ARP_FRAME_LEN)
}

/// Write a broadcast "who-has `target_ip` tell `src_ip`" into `buf`.
/// Returns the frame length (42), or None when `buf` is shorter.
pub fn build_request(
    buf: &mut [u8],
    src_mac: [u8; 6],
    src_ip: u32,
    target_ip: u32,
) -> Option<usize> {
    build(buf, src_mac, src_ip, [0; 6], target_ip)
}

/// Write "`ip` is-at `mac`" to `to_mac`/`to_ip` (a unicast reply) into
/// `buf`. Returns 42, or None when `buf` is shorter.
pub fn build_reply(
    buf: &mut [u8],
    mac: [u8; 6],
    ip: u32,
    to_mac: [u8; 6],
    to_ip: u32,
) -> Option<usize> {
    build_op(buf, arp::OP_REPLY, to_mac, mac, ip, to_mac, to_ip)
}

/// The sender and target of an ARP request in `frame` (untagged), if it
/// is one: `((sender mac, sender ip), target ip)`.
pub fn request_of(frame: &[u8]) -> Option<(([u8; 6], u32), u32)> {
    let eth = ethernet::Frame::new_checked(frame).ok()?;
    if eth.ethertype() != ethernet::ethertype::ARP {
        return None;
    }
    let p = arp::Packet::new_checked(eth.payload()).ok()?;
    (p.operation() == arp::OP_REQUEST).then(|| ((p.sender_mac(), p.sender_ip()), p.target_ip()))
}

/// Write a gratuitous ARP (an RFC 5227 announcement: a broadcast request
/// with sender and target IP both `ip`) into `buf`. Returns 42, or None
/// when `buf` is shorter.
pub fn build_gratuitous(buf: &mut [u8], src_mac: [u8; 6], ip: u32) -> Option<usize> {
    build(buf, src_mac, ip, [0; 6], ip)
}

#[cfg(test)]
mod tests;
