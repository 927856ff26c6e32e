//! The address family as a type: what IPv4 and IPv6 share but for the
//! width of an address. Code written once over `F: Family` is
//! monomorphised for [`V4`] and [`V6`], so IPv4 keeps its own machine code
//! (a `u32` address, a 33-entry prefix table) and pays nothing for IPv6's
//! width. What differs in kind (neighbour discovery against ARP, extension
//! headers, NAT64) stays written per family.

use crate::net::addr::{Ipv4Cidr, Ipv6Cidr};
use crate::net::neigh::NeighAddr;
use std::fmt;
use std::hash::Hash;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::BitAnd;

/// An address family: its address (host order), its prefix and its
/// standard-library address (for messages).
pub trait Family: Copy + fmt::Debug + PartialEq + Eq + Hash + 'static {
    /// An address in host order: `u32` or `u128`.
    type Addr: Copy + Ord + Hash + fmt::Debug + Default + NeighAddr + BitAnd<Output = Self::Addr>;
    /// An address with a prefix length.
    type Cidr: Copy + fmt::Debug + fmt::Display + Eq + Hash;
    /// The standard library's address, for messages.
    type Std: Copy + fmt::Debug + fmt::Display + Eq;
    /// Bits in an address: the longest prefix.
    const BITS: u8;
    /// "IPv4" or "IPv6".
    const NAME: &'static str;
    /// The netmask of a prefix of `len` bits.
    fn mask_of(len: u8) -> Self::Addr;
    /// The prefix `addr`/`len` (`len` at most [`Self::BITS`]).
    fn cidr(addr: Self::Addr, len: u8) -> Self::Cidr;
    /// A prefix's address and length.
    fn parts(c: &Self::Cidr) -> (Self::Addr, u8);
    /// `a` as the standard library's address.
    fn to_std(a: Self::Addr) -> Self::Std;
    /// Whether a route may lead to `a` (IPv6: not a link-local address,
    /// which is tied to its link).
    fn routable(a: Self::Addr) -> bool;

    /// The prefix `c` with its host bits cleared.
    #[inline]
    fn network(c: &Self::Cidr) -> Self::Cidr {
        let (a, len) = Self::parts(c);
        Self::cidr(a & Self::mask_of(len), len)
    }
}

/// An address type that names its family (`u32`: IPv4, `u128`: IPv6),
/// so that code generic over the family infers it from an address.
pub trait Addr: Copy + 'static {
    /// The family whose address this is.
    type Family: Family<Addr = Self>;
}

impl Addr for u32 {
    type Family = V4;
}

impl Addr for u128 {
    type Family = V6;
}

/// IPv4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum V4 {}

/// IPv6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum V6 {}

impl Family for V4 {
    type Addr = u32;
    type Cidr = Ipv4Cidr;
    type Std = Ipv4Addr;
    const BITS: u8 = 32;
    const NAME: &'static str = "IPv4";

    #[inline(always)]
    fn mask_of(len: u8) -> u32 {
        Ipv4Cidr::mask_of(len)
    }

    #[inline(always)]
    fn cidr(addr: u32, len: u8) -> Ipv4Cidr {
        Ipv4Cidr { addr, len }
    }

    #[inline(always)]
    fn parts(c: &Ipv4Cidr) -> (u32, u8) {
        (c.addr, c.len)
    }

    #[inline(always)]
    fn to_std(a: u32) -> Ipv4Addr {
        Ipv4Addr::from(a)
    }

    #[inline(always)]
    fn routable(_: u32) -> bool {
        true
    }
}

impl Family for V6 {
    type Addr = u128;
    type Cidr = Ipv6Cidr;
    type Std = Ipv6Addr;
    const BITS: u8 = 128;
    const NAME: &'static str = "IPv6";

    #[inline(always)]
    fn mask_of(len: u8) -> u128 {
        Ipv6Cidr::mask_of(len)
    }

    #[inline(always)]
    fn cidr(addr: u128, len: u8) -> Ipv6Cidr {
        Ipv6Cidr { addr, len }
    }

    #[inline(always)]
    fn parts(c: &Ipv6Cidr) -> (u128, u8) {
        (c.addr, c.len)
    }

    #[inline(always)]
    fn to_std(a: u128) -> Ipv6Addr {
        Ipv6Addr::from(a)
    }

    #[inline(always)]
    fn routable(a: u128) -> bool {
        !crate::net::wire::ipv6::is_link_local(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_networks_agree_with_the_cidr_types() {
        assert_eq!(V4::mask_of(24), 0xffff_ff00);
        assert_eq!(V6::mask_of(64), u128::MAX << 64);
        let c: Ipv4Cidr = "10.1.2.3/16".parse().unwrap();
        assert_eq!(V4::network(&c), "10.1.0.0/16".parse().unwrap());
        let c: Ipv6Cidr = "2001:db8:1:2::5/48".parse().unwrap();
        assert_eq!(V6::network(&c), "2001:db8:1::/48".parse().unwrap());
        assert!(V4::routable(0));
        assert!(!V6::routable(u128::from(
            "fe80::1".parse::<Ipv6Addr>().unwrap()
        )));
        assert!(V6::routable(u128::from(
            "2001:db8::1".parse::<Ipv6Addr>().unwrap()
        )));
    }
}
