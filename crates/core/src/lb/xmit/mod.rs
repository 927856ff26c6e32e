//! Forwarding: rewrite a packet in place for DR, TUN or NAT.
//!
//! Every function takes the frame (a [`PacketBuf`]) and the
//! [`crate::net::meta::PacketMeta`] classify produced, checks every offset
//! it touches, and returns the egress port or an [`XmitError`]. Headers are
//! read and written through the `net::wire` views (their incremental
//! checksum setters and `ipv4::Repr::emit`), never at raw offsets; the views
//! are made with `new_unchecked` over sub-slices whose bounds were checked
//! here against the metadata classify validated. Nothing here allocates. A
//! VLAN tag on the incoming frame is left in place (the egress side owns
//! VLAN policy).
//!
//! TTL: like IPVS, DR and TUN do not decrement the TTL (the packet is
//! "delivered locally" and re-sent; the TUN outer TTL copies the inner);
//! NAT decrements it in both directions (IPVS NAT traffic is routed by
//! `ip_forward`), and a packet arriving with TTL <= 1 is dropped with
//! [`XmitError::TtlExceeded`] (no ICMP time-exceeded is generated).

pub mod dr;
pub mod icmp;
pub mod nat;
pub mod tun;
pub mod v6;

#[cfg(test)]
mod tests;

use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, NextHop, Resolve};
use crate::net::wire::ethernet;

/// Why a packet could not be forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XmitError {
    /// No route to the next destination.
    NoRoute,
    /// Neighbor MAC not yet resolved (the packet is left as it was).
    Unresolved,
    /// Encapsulated packet exceeds the egress MTU and may be fragmented —
    /// dirigo does not fragment, so it is dropped.
    TooBig,
    /// Encapsulated packet exceeds the egress MTU with DF set: the caller
    /// should answer with ICMP fragmentation-needed for `mtu` (the value to
    /// quote, i.e. egress MTU − 20).
    NeedFrag {
        /// Next-hop MTU to report.
        mtu: u16,
    },
    /// TTL would reach 0 (NAT).
    TtlExceeded,
    /// Not enough headroom/tailroom in the buffer.
    NoRoom,
    /// Offsets in the metadata do not fit the frame.
    Malformed,
}

/// Resolve the next hop toward `dst`.
#[inline]
pub fn next_hop(egress: &impl Egress, dst: u32) -> Result<NextHop, XmitError> {
    match egress.next_hop(dst) {
        Resolve::Ready(nh) => Ok(nh),
        Resolve::NoRoute => Err(XmitError::NoRoute),
        Resolve::Unresolved { .. } => Err(XmitError::Unresolved),
    }
}

/// Write the Ethernet addresses for `nh`.
#[inline]
pub fn set_eth(d: &mut [u8], nh: &NextHop) -> Result<(), XmitError> {
    ethernet::Frame::new_unchecked(d)
        .set_addrs(&nh.dst_mac, &nh.src_mac)
        .map_err(|_| XmitError::Malformed)
}

/// After `shift` bytes were prepended in front of a frame whose IP header
/// was at `l3`: move what follows the link header's addresses (the
/// EtherType, and a VLAN tag before it) back to the front, ahead of the
/// room made for an outer header. The addresses are left for [`set_eth`]
/// (or its IPv6 twin) to write. An untagged frame's two EtherType bytes
/// move as two bytes: `copy_within` with a run-time length is a call into
/// libc's `memmove` (~30 instructions per tunnelled packet).
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

/// A token bucket (per lcore) limiting generated ICMP errors.
#[derive(Clone, Copy, Debug)]
pub struct TokenBucket {
    interval_ns: u64,
    max_credit_ns: u64,
    credit_ns: u64,
    last_ns: u64,
}

impl TokenBucket {
    /// `rate` tokens per second, at most `burst` at once (starts full).
    pub fn new(rate: u32, burst: u32) -> TokenBucket {
        let interval_ns = 1_000_000_000 / rate.max(1) as u64;
        let max_credit_ns = interval_ns * burst.max(1) as u64;
        TokenBucket {
            interval_ns,
            max_credit_ns,
            credit_ns: max_credit_ns,
            last_ns: 0,
        }
    }

    /// Take a token at `now_ns` if one is available.
    #[inline]
    pub fn allow(&mut self, now_ns: u64) -> bool {
        let dt = now_ns.saturating_sub(self.last_ns);
        self.last_ns = self.last_ns.max(now_ns);
        self.credit_ns = self.credit_ns.saturating_add(dt).min(self.max_credit_ns);
        if self.credit_ns >= self.interval_ns {
            self.credit_ns -= self.interval_ns;
            true
        } else {
            false
        }
    }
}
