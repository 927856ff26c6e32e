//! IPv6 responder (sans-IO): Neighbour Solicitations for the ports' IPv6
//! addresses and ICMPv6 echo requests to them, answered in place.
//!
//! [`nd_input`] takes the frame and the offsets classify found
//! ([`crate::net::classify::Classified::Icmpv6`]) and rewrites the frame into
//! the answer, on the port it arrived on, VLAN tag kept:
//!
//! - a Neighbour Solicitation (validated as RFC 4861 §7.1.1 asks) whose
//!   target is one of the arriving port's IPv6 addresses (its link-local
//!   one included), sent to the target or to its solicited-node group,
//!   becomes a Neighbour Advertisement (§7.2.4): solicited and override,
//!   with the port's MAC as target link-layer address, to the asker's
//!   address and MAC (its source link-layer option, else the frame's
//!   source). A duplicate address detection probe (source ::) for one of
//!   our addresses is answered to all-nodes (ff02::1), unsolicited: the
//!   address is taken.
//! - an echo request to one of the port's addresses (or a global address
//!   of another port: only link-local addresses are tied to their link)
//!   becomes the echo reply: addresses and MACs swapped, hop limit 64, type
//!   129 with the checksum updated.
//!
//! - a Neighbour Advertisement (validated as §7.1.2 asks) with a target
//!   link-layer address option tells the caller what to learn
//!   ([`NdAction::Learn`]): the answer to one of the control thread's
//!   solicitations, or an unsolicited update of a neighbour already known.
//!   An NS answered also teaches its sender's address and MAC (§7.2.3).
//!
//! Everything else ICMPv6 is counted and left to the caller to drop:
//! router solicitations and advertisements, MLD, errors, echo to addresses
//! not ours. Never panics, never allocates; the work is one checksum pass.

use crate::net::addr::OwnAddrs;
use crate::net::buf::PacketBuf;
use crate::net::wire::icmpv6::{self, msg_type};
use crate::net::wire::ndp::{self, Advert, NdpError, Solicit};
use crate::net::wire::{ethernet, ipv6, mac_is_group};

/// Hop limit of the echo replies dirigo sends.
pub const REPLY_HOP_LIMIT: u8 = 64;

/// Length of the IPv6 packet of the NA dirigo answers with: the fixed
/// header, the 24-byte message and a target link-layer address option.
pub const NA_PACKET_LEN: usize = ipv6::HEADER_LEN + ndp::MESSAGE_LEN + ndp::LL_OPTION_LEN;

crate::counters::counter_enum! {
    /// Why an ICMPv6 message was not answered.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum NdIgnore {
        /// The offsets do not describe an ICMPv6 message in an IPv6 packet.
        Malformed: drop = "icmp6_malformed",
        /// ICMPv6 checksum wrong.
        BadChecksum: drop = "icmp6_bad_checksum",
        /// An NS or echo request behind extension headers (not answered).
        ExtHeaders: drop = "icmp6_ext_headers",
        /// An NS that fails RFC 4861 §7.1.1 (hop limit not 255, code not 0,
        /// bad options, a DAD probe with a source link-layer option or not
        /// to a solicited-node group, a group MAC in its option).
        BadSolicit: drop = "nd_bad_solicit",
        /// An NS for an address that is not one of the arriving port's.
        SolicitNotForUs: drop = "nd_solicit_not_for_us",
        /// An NS for one of ours sent to an address that is neither the
        /// target, its solicited-node group nor one of the port's.
        SolicitBadDst: drop = "nd_solicit_bad_dst",
        /// A frame with the port's own MAC as source (looped back).
        Looped: drop = "nd_looped",
        /// No room in the buffer to grow an NS into the NA.
        NoRoom: drop = "nd_no_room",
        /// A Neighbour Advertisement that fails RFC 4861 §7.1.2 (hop
        /// limit, code, a multicast target, solicited to a group, bad
        /// options).
        BadAdvert: drop = "nd_bad_advert",
        /// A valid Neighbour Advertisement without a target link-layer
        /// address (nothing to learn).
        AdvertNoMac: drop = "nd_advert_no_mac",
        /// A Neighbour Advertisement for one of the arriving port's own
        /// addresses from another host: an address conflict.
        AdvertConflict: drop = "nd_advert_conflict",
        /// Router solicitation, router advertisement or redirect.
        Router: drop = "nd_router",
        /// MLD query, report or done.
        Mld: drop = "icmp6_mld",
        /// An echo request to an address not ours.
        EchoNotForUs: drop = "icmp6_echo_not_for_us",
        /// An echo request to a multicast address or MAC.
        EchoNotUnicast: drop = "icmp6_echo_not_unicast",
        /// An ICMPv6 error message (types 1 to 4).
        Error: drop = "icmp6_error",
        /// Echo replies and every other type.
        Other: drop = "icmp6_other",
    }
}

/// What to do after [`nd_input`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NdAction {
    /// The frame now holds the NA answering an NS for `target`: transmit
    /// it on the receiving port. `dad` when it answers a duplicate address
    /// detection probe (sent to all-nodes).
    Advert {
        /// The address asked for.
        target: u128,
        /// An answer to a DAD probe.
        dad: bool,
        /// The asker's address and MAC (its source link-layer option), to
        /// learn: `None` for a DAD probe or an NS without the option.
        learn: Option<(u128, [u8; 6])>,
    },
    /// A Neighbour Advertisement: `ip` is at `mac` (the frame is unchanged;
    /// the caller learns and frees it).
    Learn {
        /// The address advertised (the NA's target).
        ip: u128,
        /// Its link-layer address.
        mac: [u8; 6],
        /// The NA answers a solicitation (S flag).
        solicited: bool,
    },
    /// The frame now holds the echo reply: transmit it on the receiving
    /// port.
    EchoReply,
    /// Not answered (frame unchanged; free it).
    Ignore(NdIgnore),
}

/// Length of the Ethernet frame of an NS dirigo sends (with its source
/// link-layer address option) and of an unsolicited NA (with its target
/// link-layer address option): 14 + 40 + 32.
pub const ND_FRAME_LEN: usize = ethernet::HEADER_LEN + NA_PACKET_LEN;

/// Write into `buf` the Neighbour Solicitation that resolves `target`
/// from `src_ip` (one of the port's addresses) and `src_mac`: to the
/// target's solicited-node group and its multicast MAC, with a source
/// link-layer address option (RFC 4861 §7.2.2). The frame's length, or
/// `None` when `buf` is too short (nothing written).
pub fn build_solicit(
    buf: &mut [u8],
    src_mac: [u8; 6],
    src_ip: u128,
    target: u128,
) -> Option<usize> {
    let ns = Solicit::multicast(src_ip, target, src_mac);
    let f = buf.get_mut(..ND_FRAME_LEN)?;
    let n = ns.emit(f.get_mut(ethernet::HEADER_LEN..)?).ok()?;
    let mut eth = ethernet::Frame::new_unchecked(&mut f[..]);
    eth.set_addrs(&ns.dst_mac([0; 6]), &src_mac).ok()?;
    eth.set_outer_ethertype(ethernet::ethertype::IPV6);
    Some(ethernet::HEADER_LEN + n)
}

/// Write into `buf` an unsolicited Neighbour Advertisement of our
/// address `ip` at `mac` to all-nodes (override set, solicited clear: RFC
/// 4861 §7.2.6), the IPv6 twin of a gratuitous ARP. The frame's length, or
/// `None` when `buf` is too short (nothing written).
pub fn build_unsolicited_advert(buf: &mut [u8], mac: [u8; 6], ip: u128) -> Option<usize> {
    let na = Advert {
        src: ip,
        dst: ndp::ALL_NODES,
        target: ip,
        router: false,
        solicited: false,
        override_flag: true,
        target_mac: Some(mac),
    };
    let f = buf.get_mut(..ND_FRAME_LEN)?;
    let n = na.emit(f.get_mut(ethernet::HEADER_LEN..)?).ok()?;
    let mut eth = ethernet::Frame::new_unchecked(&mut f[..]);
    eth.set_addrs(&na.dst_mac([0; 6]), &mac).ok()?;
    eth.set_outer_ethertype(ethernet::ethertype::IPV6);
    Some(ethernet::HEADER_LEN + n)
}

/// Answer, for the exception path, the kernel's Neighbour Solicitation
/// for one of dirigo's IPv6 VIPs (the IPv6 twin of the kernel's ARP for
/// an IPv4 VIP): `frame` is what the kernel interface sent (untagged, no
/// extension headers); when it is an NS whose target is a VIP, the
/// solicited Neighbour Advertisement of that VIP at `mac` (the port's)
/// is written into `out` and its length returned, so the kernel sends its
/// packets to the VIP to dirigo's pipeline (a health check probing a
/// real server through the VIP). `None` for anything else: it leaves
/// through the port.
pub fn kernel_vip_solicit(
    frame: &[u8],
    mac: [u8; 6],
    addrs: &OwnAddrs,
    out: &mut [u8; ND_FRAME_LEN],
) -> Option<usize> {
    let eth = ethernet::Frame::new_checked(frame).ok()?;
    if eth.ethertype() != ethernet::ethertype::IPV6 {
        return None;
    }
    let l3 = eth.header_len();
    let ip = ipv6::Packet::new_checked(frame.get(l3..)?).ok()?;
    if ip.next_header() != crate::net::meta::PROTO_ICMPV6 {
        return None;
    }
    let body = frame.get(l3 + ipv6::HEADER_LEN..l3 + ip.total_len())?;
    if body.first() != Some(&msg_type::NEIGHBOR_SOLICIT) {
        return None;
    }
    let ns = Solicit::parse(&ip, body).ok()?;
    if !addrs.is_vip6(ns.target) || ns.src == ipv6::UNSPECIFIED {
        return None;
    }
    let to_mac = ns.source_mac.unwrap_or(eth.src());
    if mac_is_group(to_mac) {
        return None;
    }
    let na = Advert::answer(&ns, mac, false, true);
    let n = na.emit(&mut out[ethernet::HEADER_LEN..]).ok()?;
    let mut e = ethernet::Frame::new_unchecked(&mut out[..]);
    e.set_addrs(&na.dst_mac(to_mac), &mac).ok()?;
    e.set_outer_ethertype(ethernet::ethertype::IPV6);
    Some(ethernet::HEADER_LEN + n)
}

/// Answer the ICMPv6 message of `buf` (the frame from its Ethernet header)
/// at `l4_off`, `len` bytes long, in the IPv6 packet at `l3_off`, which
/// arrived on `port` with MAC `port_mac`. The offsets are classify's; they
/// are checked again, so no input makes this panic.
pub fn nd_input<B: PacketBuf>(
    buf: &mut B,
    l3_off: usize,
    l4_off: usize,
    len: usize,
    port: u16,
    port_mac: [u8; 6],
    addrs: &OwnAddrs,
) -> NdAction {
    let m = match Msg::new(buf.data(), l3_off, l4_off, len) {
        Ok(m) => m,
        Err(r) => return NdAction::Ignore(r),
    };
    if m.eth_src == port_mac {
        return NdAction::Ignore(NdIgnore::Looped);
    }
    let r = match m.msg_type {
        msg_type::NEIGHBOR_SOLICIT => solicit(buf, &m, port, port_mac, addrs),
        msg_type::ECHO_REQUEST => echo(buf, &m, port, addrs),
        msg_type::NEIGHBOR_ADVERT => advert(buf.data(), &m, port, addrs),
        msg_type::ROUTER_SOLICIT | msg_type::ROUTER_ADVERT | msg_type::REDIRECT => {
            Err(NdIgnore::Router)
        }
        // MLDv1 query, report, done; MLDv2 report
        130..=132 | 143 => Err(NdIgnore::Mld),
        t if msg_type::quotes_packet(t) => Err(NdIgnore::Error),
        _ => Err(NdIgnore::Other),
    };
    r.unwrap_or_else(NdAction::Ignore)
}

/// What the handlers need of a checked frame.
struct Msg {
    l3_off: usize,
    l4_off: usize,
    len: usize,
    msg_type: u8,
    eth_src: [u8; 6],
    eth_dst: [u8; 6],
    /// ICMPv6 right behind the fixed header (no extension headers).
    bare: bool,
}

impl Msg {
    fn new(f: &[u8], l3_off: usize, l4_off: usize, len: usize) -> Result<Msg, NdIgnore> {
        let eth = ethernet::Frame::new_checked(f).map_err(|_| NdIgnore::Malformed)?;
        if eth.ethertype() != ethernet::ethertype::IPV6 || eth.header_len() != l3_off {
            return Err(NdIgnore::Malformed);
        }
        let ip = ipv6::Packet::new_checked(f.get(l3_off..).unwrap_or(&[]))
            .map_err(|_| NdIgnore::Malformed)?;
        let ip_end = l3_off + ip.total_len();
        // the message lies inside the IPv6 payload and is at least a header
        if l4_off < l3_off + ipv6::HEADER_LEN
            || len < icmpv6::HEADER_LEN
            || l4_off.checked_add(len) != Some(ip_end)
        {
            return Err(NdIgnore::Malformed);
        }
        let msg_type = f.get(l4_off).copied().ok_or(NdIgnore::Malformed)?;
        Ok(Msg {
            l3_off,
            l4_off,
            len,
            msg_type,
            eth_src: eth.src(),
            eth_dst: eth.dst(),
            bare: l4_off == l3_off + ipv6::HEADER_LEN,
        })
    }

    /// The IPv6 packet (header and payload, no padding) of `f`.
    fn ip<'a>(&self, f: &'a [u8]) -> Option<ipv6::Packet<&'a [u8]>> {
        let b = f.get(self.l3_off..self.l4_off + self.len)?;
        Some(ipv6::Packet::new_unchecked(b))
    }

    /// The ICMPv6 message of `f`.
    fn body<'a>(&self, f: &'a [u8]) -> Option<&'a [u8]> {
        f.get(self.l4_off..self.l4_off + self.len)
    }
}

/// An NS: the NA in place, or why not.
fn solicit<B: PacketBuf>(
    buf: &mut B,
    m: &Msg,
    port: u16,
    port_mac: [u8; 6],
    addrs: &OwnAddrs,
) -> Result<NdAction, NdIgnore> {
    if !m.bare {
        return Err(NdIgnore::ExtHeaders);
    }
    let ns = {
        let f = buf.data();
        let ip = m.ip(f).ok_or(NdIgnore::Malformed)?;
        let body = m.body(f).ok_or(NdIgnore::Malformed)?;
        Solicit::parse(&ip, body).map_err(|e| match e {
            NdpError::Checksum => NdIgnore::BadChecksum,
            _ => NdIgnore::BadSolicit,
        })?
    };
    if !addrs.is_port_addr6(port, ns.target) && !addrs.is_vip6(ns.target) {
        return Err(NdIgnore::SolicitNotForUs);
    }
    if ns.dst != ns.target
        && ns.dst != ndp::solicited_node(ns.target)
        && !addrs.is_port_addr6(port, ns.dst)
        && !addrs.is_vip6(ns.dst)
    {
        return Err(NdIgnore::SolicitBadDst);
    }
    let to_mac = ns.source_mac.unwrap_or(m.eth_src);
    if mac_is_group(to_mac) || to_mac == [0; 6] {
        return Err(NdIgnore::BadSolicit);
    }
    let na = Advert::answer(&ns, port_mac, false, true);
    // grow or cut the frame to exactly the NA (an NS without options is 8
    // bytes shorter; one with a nonce or padding longer)
    let want = m.l3_off + NA_PACKET_LEN;
    let have = buf.len();
    let sized = if want > have {
        buf.append(want - have)
    } else {
        buf.trim_to(want)
    };
    if !sized {
        return Err(NdIgnore::NoRoom);
    }
    let f = buf.data_mut();
    let written = f
        .get_mut(m.l3_off..want)
        .map(|p| na.emit(p))
        .ok_or(NdIgnore::NoRoom)?;
    if written != Ok(NA_PACKET_LEN) {
        return Err(NdIgnore::NoRoom);
    }
    let mut eth = ethernet::Frame::new_unchecked(f);
    eth.set_dst(na.dst_mac(to_mac));
    eth.set_src(port_mac);
    let learn = match ns.source_mac {
        Some(mac) if ns.src != ipv6::UNSPECIFIED => Some((ns.src, mac)),
        _ => None,
    };
    Ok(NdAction::Advert {
        target: ns.target,
        dad: ns.src == ipv6::UNSPECIFIED,
        learn,
    })
}

/// An NA: what it teaches, or why nothing.
fn advert(f: &[u8], m: &Msg, port: u16, addrs: &OwnAddrs) -> Result<NdAction, NdIgnore> {
    if !m.bare {
        return Err(NdIgnore::ExtHeaders);
    }
    let ip = m.ip(f).ok_or(NdIgnore::Malformed)?;
    let body = m.body(f).ok_or(NdIgnore::Malformed)?;
    let na = Advert::parse(&ip, body).map_err(|e| match e {
        NdpError::Checksum => NdIgnore::BadChecksum,
        _ => NdIgnore::BadAdvert,
    })?;
    if addrs.is_port_addr6(port, na.target) {
        return Err(NdIgnore::AdvertConflict);
    }
    let mac = na.target_mac.ok_or(NdIgnore::AdvertNoMac)?;
    if mac_is_group(mac) || mac == [0; 6] {
        return Err(NdIgnore::BadAdvert);
    }
    Ok(NdAction::Learn {
        ip: na.target,
        mac,
        solicited: na.solicited,
    })
}

/// An echo request: the reply in place, or why not.
fn echo<B: PacketBuf>(
    buf: &mut B,
    m: &Msg,
    port: u16,
    addrs: &OwnAddrs,
) -> Result<NdAction, NdIgnore> {
    let f = buf.data_mut();
    let (src, dst) = {
        let ip = m.ip(f).ok_or(NdIgnore::Malformed)?;
        (ip.src(), ip.dst())
    };
    if ipv6::is_multicast(dst) || mac_is_group(m.eth_dst) {
        return Err(NdIgnore::EchoNotUnicast);
    }
    let ours = if ipv6::is_link_local(dst) {
        addrs.is_port_addr6(port, dst)
    } else {
        addrs.is_local6(dst) || addrs.is_vip6(dst)
    };
    if !ours {
        return Err(NdIgnore::EchoNotForUs);
    }
    if !m.bare {
        return Err(NdIgnore::ExtHeaders);
    }
    // a source that cannot be answered: the unspecified address
    if src == ipv6::UNSPECIFIED {
        return Err(NdIgnore::EchoNotForUs);
    }
    let body = f
        .get_mut(m.l4_off..m.l4_off + m.len)
        .ok_or(NdIgnore::Malformed)?;
    let mut msg = icmpv6::Packet::new_unchecked(body);
    if !msg.verify_checksum(src, dst) {
        return Err(NdIgnore::BadChecksum);
    }
    // swapping the addresses leaves the pseudo-header sum alone: only the
    // type changes the checksum
    let code = msg.code();
    msg.set_type_code_update_checksum(msg_type::ECHO_REPLY, code);
    let hdr = f
        .get_mut(m.l3_off..m.l3_off + ipv6::HEADER_LEN)
        .ok_or(NdIgnore::Malformed)?;
    let mut ip = ipv6::Packet::new_unchecked(hdr);
    ip.set_src(dst);
    ip.set_dst(src);
    ip.set_hop_limit(REPLY_HOP_LIMIT);
    ethernet::Frame::new_unchecked(f).swap_macs();
    Ok(NdAction::EchoReply)
}

#[cfg(test)]
mod tests;
