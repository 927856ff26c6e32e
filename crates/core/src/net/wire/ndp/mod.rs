//! Neighbour Discovery for Ethernet (RFC 4861): Neighbour Solicitation and
//! Advertisement, their link-layer address options, and the solicited-node
//! multicast addresses a solicitation goes to.
//!
//! The views ([`NeighborSolicit`], [`NeighborAdvert`]) wrap the ICMPv6
//! message; their `new_checked` walks the options once (bounded by
//! [`MAX_OPTIONS`]) and rejects an option of length 0 as RFC 4861 §4.6
//! requires. [`Solicit`] and [`Advert`] add the checks of §7.1 that need
//! the IPv6 header (hop limit 255, the checksum, the rules for an
//! unspecified source or a multicast destination) and emit whole IPv6
//! packets: [`Advert::answer`] is the NA that answers an NS for one of our
//! addresses, [`Solicit::multicast`] the NS dirigo sends to resolve one.

use super::error::WireError;
use super::field_access::{get, set};
use super::icmpv6;
use super::ipv6::{self, is_multicast, next_header::ICMPV6};
use icmpv6::msg_type::{NEIGHBOR_ADVERT, NEIGHBOR_SOLICIT};

/// Byte ranges of a Neighbour Solicitation or Advertisement (after the
/// ICMPv6 type, code and checksum).
pub mod field {
    use core::ops::{Range, RangeFrom};
    /// NA flags (R, S, O in the high bits); reserved (0) in an NS.
    pub const FLAGS: usize = 4;
    /// The 4 bytes of flags and reserved bits.
    pub const FLAGS_RESERVED: Range<usize> = 4..8;
    /// Target address.
    pub const TARGET: Range<usize> = 8..24;
    /// Options.
    pub const OPTIONS: RangeFrom<usize> = 24..;
}

/// Length of an NS or NA without options.
pub const MESSAGE_LEN: usize = 24;
/// Length of an Ethernet link-layer address option.
pub const LL_OPTION_LEN: usize = 8;
/// The most options a message may carry (the walk is bounded; RFC 4861
/// messages carry one or two, SEND adds a few).
pub const MAX_OPTIONS: usize = 16;
/// The hop limit every ND message is sent with and must arrive with.
pub const HOP_LIMIT: u8 = 255;

/// NA flag: the sender is a router.
pub const FLAG_ROUTER: u8 = 0x80;
/// NA flag: sent in response to a solicitation.
pub const FLAG_SOLICITED: u8 = 0x40;
/// NA flag: override an existing cache entry.
pub const FLAG_OVERRIDE: u8 = 0x20;

/// Option types (RFC 4861 §4.6).
pub mod option {
    /// Source link-layer address.
    pub const SOURCE_LL_ADDR: u8 = 1;
    /// Target link-layer address.
    pub const TARGET_LL_ADDR: u8 = 2;
}

/// The all-nodes multicast address ff02::1.
pub const ALL_NODES: u128 = 0xff02_0000_0000_0000_0000_0000_0000_0001;
/// The solicited-node multicast prefix ff02::1:ff00:0/104.
pub const SOLICITED_NODE_PREFIX: u128 = 0xff02_0000_0000_0000_0000_0001_ff00_0000;

/// The solicited-node multicast address of `a` (RFC 4291 §2.7.1):
/// ff02::1:ffXX:XXXX with the low 24 bits of `a`.
#[inline]
pub fn solicited_node(a: u128) -> u128 {
    SOLICITED_NODE_PREFIX | a & 0x00ff_ffff
}

/// True when `a` is a solicited-node multicast address.
#[inline]
pub fn is_solicited_node(a: u128) -> bool {
    a >> 24 == SOLICITED_NODE_PREFIX >> 24
}

/// The Ethernet MAC of an IPv6 multicast address (RFC 2464 §7):
/// 33:33 and its low 32 bits (33:33:ff:XX:XX:XX for a solicited-node one).
#[inline]
pub fn multicast_mac(a: u128) -> [u8; 6] {
    let l = (a as u32).to_be_bytes();
    [0x33, 0x33, l[0], l[1], l[2], l[3]]
}

/// One option of an ND message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdOption<'a> {
    /// Option type.
    pub kind: u8,
    /// The bytes after type and length (length * 8 - 2 of them).
    pub body: &'a [u8],
}

impl NdOption<'_> {
    /// The MAC of a link-layer address option of length 1 (Ethernet).
    pub fn mac(&self) -> Option<[u8; 6]> {
        match self.body {
            &[a, b, c, d, e, f] => Some([a, b, c, d, e, f]),
            _ => None,
        }
    }
}

/// The options of an ND message, in order. It stops at the first
/// malformed option (length 0 or past the buffer) and after
/// [`MAX_OPTIONS`]; a checked view has none malformed.
#[derive(Clone, Debug)]
pub struct Options<'a> {
    rest: &'a [u8],
    left: usize,
}

impl<'a> Options<'a> {
    /// The options in `b` (the bytes after the fixed part).
    pub fn new(b: &'a [u8]) -> Self {
        Options {
            rest: b,
            left: MAX_OPTIONS,
        }
    }
}

impl<'a> Iterator for Options<'a> {
    type Item = Result<NdOption<'a>, WireError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let r = option_at(self.rest, self.left);
        match r {
            Ok((o, len)) => {
                self.rest = self.rest.get(len..).unwrap_or(&[]);
                self.left -= 1;
                Some(Ok(o))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

/// The option at the front of `b` (not empty) and its length, when `left`
/// more options are allowed.
#[inline]
fn option_at(b: &[u8], left: usize) -> Result<(NdOption<'_>, usize), WireError> {
    if left == 0 {
        return Err(WireError::Unsupported);
    }
    let (kind, units) = match b.get(..2) {
        Some(&[k, l]) => (k, l as usize),
        _ => return Err(WireError::Truncated),
    };
    if units == 0 {
        return Err(WireError::BadHeaderLen);
    }
    match b.get(2..units * 8) {
        Some(body) => Ok((NdOption { kind, body }, units * 8)),
        None => Err(WireError::Truncated),
    }
}

/// The length check of an NS or NA: the fixed part, type `t`, code 0, and
/// every option well formed ([`WireError::BadHeaderLen`] for a length of 0,
/// [`WireError::Unsupported`] past [`MAX_OPTIONS`]).
fn check_message(b: &[u8], t: u8) -> Result<(), WireError> {
    if b.len() < MESSAGE_LEN {
        return Err(WireError::Truncated);
    }
    if get::<u8>(b, icmpv6::field::TYPE) != t || get::<u8>(b, icmpv6::field::CODE) != 0 {
        return Err(WireError::Unsupported);
    }
    let opts = b.get(field::OPTIONS).unwrap_or(&[]);
    Options::new(opts).try_for_each(|o| o.map(|_| ()))
}

/// The MAC of the first link-layer address option of `kind` in `b`.
fn ll_option(b: &[u8], kind: u8) -> Option<[u8; 6]> {
    Options::new(b.get(field::OPTIONS).unwrap_or(&[]))
        .map_while(Result::ok)
        .find(|o| o.kind == kind)
        .and_then(|o| o.mac())
}

view!(
    /// A view of a Neighbour Solicitation (the buffer is the ICMPv6
    /// message).
    NeighborSolicit,
    check
);

impl<T: AsRef<[u8]>> NeighborSolicit<T> {
    /// The checks `new_checked` makes: 24 bytes, type 135, code 0, options
    /// well formed.
    pub fn check(&self) -> Result<(), WireError> {
        check_message(self.buffer.as_ref(), NEIGHBOR_SOLICIT)
    }
    /// The options.
    pub fn options(&self) -> Options<'_> {
        Options::new(self.buffer.as_ref().get(field::OPTIONS).unwrap_or(&[]))
    }
    /// The source link-layer address option's MAC, if any.
    pub fn source_mac(&self) -> Option<[u8; 6]> {
        ll_option(self.buffer.as_ref(), option::SOURCE_LL_ADDR)
    }
}

accessors! {
    NeighborSolicit;
    /// Target address (host order).
    target, set_target: u128 = field::TARGET;
}

view!(
    /// A view of a Neighbour Advertisement (the buffer is the ICMPv6
    /// message).
    NeighborAdvert,
    check
);

impl<T: AsRef<[u8]>> NeighborAdvert<T> {
    /// The checks `new_checked` makes: 24 bytes, type 136, code 0, options
    /// well formed.
    pub fn check(&self) -> Result<(), WireError> {
        check_message(self.buffer.as_ref(), NEIGHBOR_ADVERT)
    }
    /// Router flag.
    pub fn router(&self) -> bool {
        self.flags() & FLAG_ROUTER != 0
    }
    /// Solicited flag.
    pub fn solicited(&self) -> bool {
        self.flags() & FLAG_SOLICITED != 0
    }
    /// Override flag.
    pub fn override_flag(&self) -> bool {
        self.flags() & FLAG_OVERRIDE != 0
    }
    /// The options.
    pub fn options(&self) -> Options<'_> {
        Options::new(self.buffer.as_ref().get(field::OPTIONS).unwrap_or(&[]))
    }
    /// The target link-layer address option's MAC, if any.
    pub fn target_mac(&self) -> Option<[u8; 6]> {
        ll_option(self.buffer.as_ref(), option::TARGET_LL_ADDR)
    }
}

accessors! {
    NeighborAdvert;
    /// The flags byte (R, S, O).
    flags, set_flags: u8 = field::FLAGS;
    /// Target address (host order).
    target, set_target: u128 = field::TARGET;
}

/// Why an ND message was not valid (RFC 4861 §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NdpError {
    /// The message (or an option) is malformed.
    Wire(WireError),
    /// The IPv6 hop limit is not 255: the message crossed a router.
    HopLimit,
    /// The ICMPv6 checksum is wrong.
    Checksum,
    /// The IPv6 source is a multicast address (never a valid source,
    /// RFC 4291 §2.7; an answer to it would go to a group).
    MulticastSource,
    /// The target address is multicast.
    MulticastTarget,
    /// An NS from the unspecified address (duplicate address detection)
    /// not sent to a solicited-node address, or carrying a source
    /// link-layer address option.
    BadDad,
    /// An NA with the solicited flag sent to a multicast address.
    SolicitedMulticast,
}

impl From<WireError> for NdpError {
    fn from(e: WireError) -> Self {
        NdpError::Wire(e)
    }
}

/// The checks every ND message shares: hop limit 255, the checksum, a
/// source that is not multicast.
fn check_ip<T: AsRef<[u8]>>(ip: &ipv6::Packet<T>, msg: &[u8]) -> Result<(), NdpError> {
    if ip.hop_limit() != HOP_LIMIT {
        return Err(NdpError::HopLimit);
    }
    if is_multicast(ip.src()) {
        return Err(NdpError::MulticastSource);
    }
    if !icmpv6::Packet::new_unchecked(msg).verify_checksum(ip.src(), ip.dst()) {
        return Err(NdpError::Checksum);
    }
    Ok(())
}

/// Write the 40-byte IPv6 header of an ND message of `msg_len` bytes and
/// return the whole packet's length, or [`WireError::Truncated`] when
/// `buf` is too short (nothing is written then).
fn emit_ip(buf: &mut [u8], src: u128, dst: u128, msg_len: usize) -> Result<usize, WireError> {
    let total = ipv6::HEADER_LEN + msg_len;
    if buf.len() < total {
        return Err(WireError::Truncated);
    }
    let r = ipv6::Repr {
        src,
        dst,
        next_header: ICMPV6,
        payload_len: msg_len as u16,
        hop_limit: HOP_LIMIT,
        traffic_class: 0,
        flow_label: 0,
    };
    r.emit(&mut ipv6::Packet::new_unchecked(&mut buf[..]));
    Ok(total)
}

/// Write the fixed part of an ND message and an optional link-layer option
/// into `m` (exactly `MESSAGE_LEN` or `MESSAGE_LEN + LL_OPTION_LEN` bytes),
/// then its checksum.
fn emit_message(
    m: &mut [u8],
    t: u8,
    flags: u8,
    target: u128,
    ll: Option<(u8, [u8; 6])>,
    src: u128,
    dst: u128,
) {
    set::<u8>(m, icmpv6::field::TYPE, t);
    set::<u8>(m, icmpv6::field::CODE, 0);
    set::<u32>(m, field::FLAGS_RESERVED, (flags as u32) << 24);
    set::<u128>(m, field::TARGET, target);
    if let Some((kind, mac)) = ll {
        set::<u8>(m, MESSAGE_LEN, kind);
        set::<u8>(m, MESSAGE_LEN + 1, 1);
        set::<[u8; 6]>(m, MESSAGE_LEN + 2, mac);
    }
    icmpv6::Packet::new_unchecked(m).fill_checksum(src, dst);
}

/// A Neighbour Solicitation with its IPv6 addresses, validated (RFC 4861
/// §7.1.1) or to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Solicit {
    /// IPv6 source (unspecified for duplicate address detection).
    pub src: u128,
    /// IPv6 destination: the target's solicited-node address, or the
    /// target itself (unicast, to probe reachability).
    pub dst: u128,
    /// The address whose MAC is asked for.
    pub target: u128,
    /// The source link-layer address option, if any.
    pub source_mac: Option<[u8; 6]>,
}

impl Solicit {
    /// Validate the NS `msg` (the ICMPv6 message, e.g. the upper layer of
    /// `ip`'s payload) carried by `ip`.
    pub fn parse<T: AsRef<[u8]>>(ip: &ipv6::Packet<T>, msg: &[u8]) -> Result<Solicit, NdpError> {
        let ns = NeighborSolicit::new_checked(msg)?;
        check_ip(ip, msg)?;
        let s = Solicit {
            src: ip.src(),
            dst: ip.dst(),
            target: ns.target(),
            source_mac: ns.source_mac(),
        };
        if is_multicast(s.target) {
            return Err(NdpError::MulticastTarget);
        }
        if s.src == ipv6::UNSPECIFIED && (!is_solicited_node(s.dst) || s.source_mac.is_some()) {
            return Err(NdpError::BadDad);
        }
        Ok(s)
    }

    /// The NS dirigo sends from `src` (with MAC `mac`) to resolve `target`:
    /// to the target's solicited-node address, with a source link-layer
    /// address option.
    pub fn multicast(src: u128, target: u128, mac: [u8; 6]) -> Solicit {
        Solicit {
            src,
            dst: solicited_node(target),
            target,
            source_mac: Some(mac),
        }
    }

    /// Length of the ICMPv6 message.
    pub fn message_len(&self) -> usize {
        MESSAGE_LEN + self.source_mac.map_or(0, |_| LL_OPTION_LEN)
    }

    /// The Ethernet destination of the NS: the multicast MAC of a multicast
    /// destination, else `unicast` (the target's MAC as cached).
    pub fn dst_mac(&self, unicast: [u8; 6]) -> [u8; 6] {
        if is_multicast(self.dst) {
            multicast_mac(self.dst)
        } else {
            unicast
        }
    }

    /// Write the IPv6 packet (header, NS, option, checksum) at the front of
    /// `buf`; its length, or [`WireError::Truncated`] when `buf` is too
    /// short (nothing written).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let len = self.message_len();
        let total = emit_ip(buf, self.src, self.dst, len)?;
        let ll = self.source_mac.map(|m| (option::SOURCE_LL_ADDR, m));
        let m = buf
            .get_mut(ipv6::HEADER_LEN..total)
            .ok_or(WireError::Truncated)?;
        emit_message(m, NEIGHBOR_SOLICIT, 0, self.target, ll, self.src, self.dst);
        Ok(total)
    }
}

/// A Neighbour Advertisement with its IPv6 addresses, validated (RFC 4861
/// §7.1.2) or to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Advert {
    /// IPv6 source.
    pub src: u128,
    /// IPv6 destination.
    pub dst: u128,
    /// The address advertised.
    pub target: u128,
    /// R: the sender is a router.
    pub router: bool,
    /// S: an answer to a solicitation.
    pub solicited: bool,
    /// O: override the receiver's cached MAC.
    pub override_flag: bool,
    /// The target link-layer address option, if any.
    pub target_mac: Option<[u8; 6]>,
}

impl Advert {
    /// Validate the NA `msg` (the ICMPv6 message) carried by `ip`.
    pub fn parse<T: AsRef<[u8]>>(ip: &ipv6::Packet<T>, msg: &[u8]) -> Result<Advert, NdpError> {
        let na = NeighborAdvert::new_checked(msg)?;
        check_ip(ip, msg)?;
        let a = Advert {
            src: ip.src(),
            dst: ip.dst(),
            target: na.target(),
            router: na.router(),
            solicited: na.solicited(),
            override_flag: na.override_flag(),
            target_mac: na.target_mac(),
        };
        if is_multicast(a.target) {
            return Err(NdpError::MulticastTarget);
        }
        if a.solicited && is_multicast(a.dst) {
            return Err(NdpError::SolicitedMulticast);
        }
        Ok(a)
    }

    /// The NA that answers `ns` for our address `ns.target`, with our MAC
    /// `mac` in a target link-layer address option (RFC 4861 §7.2.4): to
    /// the solicitation's source with the solicited flag, or to all-nodes
    /// without it when the source was unspecified (duplicate address
    /// detection). `override_flag` is set for our own unicast addresses and
    /// cleared for an anycast one; `router` when dirigo routes for the
    /// asker (NAT's default gateway).
    pub fn answer(ns: &Solicit, mac: [u8; 6], router: bool, override_flag: bool) -> Advert {
        let dad = ns.src == ipv6::UNSPECIFIED;
        Advert {
            src: ns.target,
            dst: if dad { ALL_NODES } else { ns.src },
            target: ns.target,
            router,
            solicited: !dad,
            override_flag,
            target_mac: Some(mac),
        }
    }

    /// The flags byte.
    pub fn flags(&self) -> u8 {
        (if self.router { FLAG_ROUTER } else { 0 })
            | (if self.solicited { FLAG_SOLICITED } else { 0 })
            | (if self.override_flag { FLAG_OVERRIDE } else { 0 })
    }

    /// Length of the ICMPv6 message.
    pub fn message_len(&self) -> usize {
        MESSAGE_LEN + self.target_mac.map_or(0, |_| LL_OPTION_LEN)
    }

    /// The Ethernet destination of the NA: the multicast MAC of a multicast
    /// destination, else `unicast` (the NS's source link-layer address, or
    /// the frame's source MAC when it had none).
    pub fn dst_mac(&self, unicast: [u8; 6]) -> [u8; 6] {
        if is_multicast(self.dst) {
            multicast_mac(self.dst)
        } else {
            unicast
        }
    }

    /// Write the IPv6 packet (header, NA, option, checksum) at the front of
    /// `buf`; its length, or [`WireError::Truncated`] when `buf` is too
    /// short (nothing written).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let len = self.message_len();
        let total = emit_ip(buf, self.src, self.dst, len)?;
        let ll = self.target_mac.map(|m| (option::TARGET_LL_ADDR, m));
        let m = buf
            .get_mut(ipv6::HEADER_LEN..total)
            .ok_or(WireError::Truncated)?;
        emit_message(
            m,
            NEIGHBOR_ADVERT,
            self.flags(),
            self.target,
            ll,
            self.src,
            self.dst,
        );
        Ok(total)
    }
}

#[cfg(test)]
mod tests;
