//! The entry points: the fast path answers the common packet, the slow
//! path everything else; [`classify_into_fast`] also says which did
//! ([`Placed`]).

use super::fast;
use super::slow::classify_slow;
use super::verdict::Classified;
use crate::net::meta::PacketMeta;

/// Classify one received frame from `port`.
///
/// The common packet (untagged, option-less, valid IPv4 TCP/UDP; untagged
/// IPv6 TCP/UDP without extension headers) is answered by a fast path that
/// reads the headers through one length check; everything else goes to the
/// general parser, which alone decides drops. Both give the same answer
/// for every input.
#[inline]
pub fn classify(frame: &[u8], port: u16) -> Classified {
    match fast::classify_fast(frame, port) {
        Some(m) => Classified::Ipv4(m),
        None => match fast::classify_fast6(frame, port) {
            Some(m) => Classified::Ipv6(m),
            None => classify_slow(frame, port),
        },
    }
}

/// [`classify`] for a burst loop: an IPv4 result is written straight into
/// `*meta` (no copy of the meta through the return value) and `None`
/// returned; anything else (ARP, a drop) is returned, `*meta` untouched.
#[inline]
pub fn classify_into(frame: &[u8], port: u16, meta: &mut PacketMeta) -> Option<Classified> {
    match classify_into_fast(frame, port, meta) {
        Placed::Other(c) => Some(c),
        Placed::Fast | Placed::Slow => None,
    }
}

/// What [`classify_into_fast`] did with a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placed {
    /// The fast path wrote the meta: a plain TCP or UDP packet, no ICMP
    /// error (`meta.icmp` is `None`).
    Fast,
    /// The slow path wrote the meta.
    Slow,
    /// Not IPv4 to balance (the meta is untouched).
    Other(Classified),
}

/// [`classify_into`] telling which path answered ([`Placed`]).
#[inline(always)]
pub fn classify_into_fast(frame: &[u8], port: u16, meta: &mut PacketMeta) -> Placed {
    if fast::classify_fast_into(frame, port, meta) {
        return Placed::Fast;
    }
    if let Some(m) = fast::classify_fast6(frame, port) {
        return Placed::Other(Classified::Ipv6(m));
    }
    match classify_slow(frame, port) {
        Classified::Ipv4(m) => {
            *meta = m;
            Placed::Slow
        }
        other => Placed::Other(other),
    }
}
