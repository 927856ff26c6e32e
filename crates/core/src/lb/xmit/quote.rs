//! Where an ICMP error's quote lies in its frame: checked once for the
//! NAT and FullNAT translations of both families, which rewrite the outer
//! header, the quoted header and the quoted ports in place.

use super::error::XmitError;
use crate::net::meta::{Meta, PROTO_ICMP, PROTO_ICMPV6};
use crate::net::wire::{ethernet, icmp, icmpv6, ipv4, ipv6, udp};

/// The offsets of an ICMP (ICMPv6) error and the packet it quotes, each
/// checked against the others and the frame: the outer IP header at
/// `l3..l4`, the ICMP message at `l4..end`, the quoted IP header at
/// `il3..il4`, the quoted ports from `il4` (both within `end`); `proto`
/// the quoted packet's protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QuoteAt {
    pub l3: usize,
    pub l4: usize,
    pub il3: usize,
    pub il4: usize,
    pub end: usize,
    pub proto: u8,
}

impl QuoteAt {
    /// The quote of `meta`, an ICMP error of protocol `proto` (1 or 58)
    /// whose family's IP header is at least `ip_min` bytes and whose ICMP
    /// header is `icmp_len`, in a frame of `frame_len` bytes: the quote
    /// holds at least the two ports.
    #[inline]
    pub(crate) fn checked<A>(
        meta: &Meta<A>,
        frame_len: usize,
        proto: u8,
        ip_min: usize,
        icmp_len: usize,
    ) -> Result<QuoteAt, XmitError> {
        let q = meta.icmp.as_ref().ok_or(XmitError::Malformed)?;
        let at = QuoteAt {
            l3: meta.l3_off as usize,
            l4: meta.l4_off as usize,
            il3: q.inner_l3_off as usize,
            il4: q.inner_l4_off as usize,
            end: meta.l3_off as usize + meta.ip_len as usize,
            proto: q.inner_key.proto,
        };
        if meta.key.proto != proto
            || at.l3 < ethernet::HEADER_LEN
            || at.l4 < at.l3 + ip_min
            || at.il3 < at.l4 + icmp_len
            || at.il4 < at.il3 + ip_min
            || at.il4 + udp::field::DST_PORT.end > at.end
            || frame_len < at.end
        {
            return Err(XmitError::Malformed);
        }
        Ok(at)
    }

    /// [`Self::checked`] for an ICMPv4 error.
    #[inline]
    pub(crate) fn v4<A>(meta: &Meta<A>, frame_len: usize) -> Result<QuoteAt, XmitError> {
        Self::checked(
            meta,
            frame_len,
            PROTO_ICMP,
            ipv4::MIN_HEADER_LEN,
            icmp::HEADER_LEN,
        )
    }

    /// [`Self::checked`] for an ICMPv6 error.
    #[inline]
    pub(crate) fn v6<A>(meta: &Meta<A>, frame_len: usize) -> Result<QuoteAt, XmitError> {
        Self::checked(
            meta,
            frame_len,
            PROTO_ICMPV6,
            ipv6::HEADER_LEN,
            icmpv6::HEADER_LEN,
        )
    }
}
