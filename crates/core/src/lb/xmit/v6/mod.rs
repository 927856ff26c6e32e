//! IPv6 forwarding (issue 18): IPv6 VIPs with IPv6 real servers, in DR,
//! TUN and NAT, plus the ICMPv6 Packet Too Big a too-big tunnelled packet
//! turns into.
//!
//! The same conventions as the IPv4 functions of [`super`]: each takes the
//! frame and the [`crate::net::meta::PacketMeta6`] classify produced (DR
//! only the frame), checks every offset it uses against the frame,
//! rewrites in place through the `net::wire` views (made with
//! `new_unchecked` over sub-slices whose bounds were checked here), never
//! allocates, and returns the egress port or an [`XmitError`]. A VLAN tag
//! on the incoming frame stays in place. The next hop is asked first, so a
//! [`XmitError::NoRoute`] or [`XmitError::Unresolved`] leaves the frame as
//! it was (the caller holds it and resolves the address it routed toward).
//!
//! What differs from IPv4, and why:
//!
//! * **No header checksum.** Only the upper layers' checksums cover the
//!   addresses (through the pseudo header): NAT updates the TCP/UDP
//!   checksum for the 128-bit address and the port (RFC 1624), and
//!   recomputes an ICMPv6 error's checksum over the message.
//! * **Hop limit.** As in IPv4 ([`super`]'s module docs): DR and TUN leave
//!   it (TUN's outer header copies the inner one, as IPVS's
//!   `ip_vs_prepare_tunneled_skb` does), NAT decrements it and refuses a
//!   packet arriving with hop limit <= 1 ([`XmitError::TtlExceeded`], no
//!   ICMPv6 Time Exceeded generated). Linux IPVS since 4.x also decrements
//!   the hop limit in DR and TUN; dirigo's IPv4 DR/TUN do not, and IPv6
//!   follows IPv4.
//! * **No fragmentation in transit.** A tunnelled packet that would exceed
//!   the egress MTU is always [`XmitError::NeedFrag`] (there is no DF bit
//!   to consult); the caller answers with [`icmp::packet_too_big6`].
//! * **UDP checksum 0 is invalid** (RFC 8200 §8.1): NAT refuses such a
//!   datagram as [`XmitError::Malformed`] instead of inventing a checksum
//!   that would certify data its sender did not protect; the receiver
//!   would drop it anyway.
//!
//! ICMPv6 errors quoting a connection: DR and TUN forward them unchanged
//! with [`dr::dr6`] and [`tun::tun6`] on the whole packet (nothing else is
//! needed: the message and its checksum do not change, the outer header of
//! TUN is new); NAT translates them with [`nat::nat6_icmp`]. No Packet Too
//! Big is generated about an ICMPv6 error ([`icmp::packet_too_big6`]
//! refuses), as RFC 4443 §2.4 (e) and IPVS's `ensure_mtu_is_adequate`.
//!
//! [`XmitError`]: super::XmitError
//! [`XmitError::NoRoute`]: super::XmitError::NoRoute
//! [`XmitError::Unresolved`]: super::XmitError::Unresolved
//! [`XmitError::TtlExceeded`]: super::XmitError::TtlExceeded
//! [`XmitError::NeedFrag`]: super::XmitError::NeedFrag
//! [`XmitError::Malformed`]: super::XmitError::Malformed

pub mod fullnat;
pub mod icmp;
pub mod nat;
pub mod nat64;
pub mod tun;

#[cfg(test)]
mod tests;

pub use icmp::packet_too_big6;
pub use nat::nat6_icmp;
pub use tun::tun6;
