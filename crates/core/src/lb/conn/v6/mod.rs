//! IPv6 connections: [`Conn6`] records in a `ConnTable<Conn6>` of their
//! own, so that IPv4's stay 32 bytes.
//!
//! A record holds three IPv6 addresses (client, VIP, real server: 48
//! bytes) and the same fields as [`super::Conn`]; aligned to 32 bytes it
//! takes 96, so two records share three cache lines and each spans exactly
//! two (its start and its `proto` byte, which the burst stage prefetches
//! both of: [`super::Record::prefetch`]). With its index share (32 bytes, as for
//! IPv4) an IPv6 connection costs 128 bytes. The index, the staged
//! prefetching, eviction and expiry are the table's, unchanged.

use super::record::{ConnExt, ConnOf, TableKey};
pub use crate::net::meta::FlowKey6;
use crate::net::meta::Seed;

/// The 128-bit product of `a` and `b`, its halves folded together (one
/// widening multiply: every bit of either input moves most of the
/// result's).
#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = (a as u128).wrapping_mul(b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

impl TableKey for FlowKey6 {
    /// Each address's two 64-bit halves multiplied together (one widening
    /// multiply each, its halves folded), each half first XOR-ed with
    /// the seeded constant of its position (so that neither zero halves
    /// nor swapped addresses cancel), the ports with the destination's
    /// low half; then the two folded once more, and the result mixed by one
    /// multiply: four multiplies for 296 bits (the IPv4 key's mixing, four
    /// words longer, took ten).
    #[inline(always)]
    fn hash_with(&self, seed: Seed) -> u32 {
        let ports = ((self.sport as u64) << 32) | ((self.dport as u64) << 16) | self.proto as u64;
        let s = seed.mixed();
        let a = fold_mul(
            (self.src >> 64) as u64 ^ s ^ 0xa076_1d64_78bd_642f,
            self.src as u64 ^ 0xe703_7ed1_a0b4_28db,
        );
        let b = fold_mul(
            (self.dst >> 64) as u64 ^ s ^ 0x8ebc_6af0_9c88_c6e3,
            self.dst as u64 ^ ports.wrapping_mul(0xff51_afd7_ed55_8ccd) ^ 0x5899_65cc_7537_4cc3,
        );
        let h = fold_mul(a ^ 0x1d8e_4e27_c47d_124f, b ^ s);
        // a product with a constant input is close to linear in the
        // other: one multiply more, whose high half depends on every bit
        ((h ^ (h >> 29)).wrapping_mul(0xd6e8_feb8_6659_fd93) >> 32) as u32
    }
}

/// One tracked IPv6 connection (96 bytes): [`super::ConnOf`] over
/// `u128` addresses, with NAT64's IPv4 leg beside it.
pub type Conn6 = ConnOf<u128, Nat64Leg>;

/// What an IPv6 record keeps that IPv4's has no room for: the local leg
/// of a connection that leaves from an address and port dirigo chose —
/// NAT64's IPv4 pool address, IPv4 FullNAT's local address (both in
/// `laddr4`, the record's addresses then IPv4-mapped) or IPv6 FullNAT's
/// (`laddr6`) — and its port (all 0 for a plain IPv6 connection). 24
/// bytes from offset 68: the record stays 96.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Nat64Leg {
    /// NAT64 and IPv4 FullNAT: the IPv4 address the connection's requests
    /// leave from (0 otherwise; for NAT64 `daddr` is then the real
    /// server's IPv4 address, IPv4-mapped, `::ffff:a.b.c.d`).
    pub laddr4: u32,
    /// The local port (0: a plain IPv6 connection).
    pub lport: u16,
    /// FullNAT: how the client's address reaches the real server, a
    /// [`crate::lb::spec::ClientAddress`] as its number (0: not at all;
    /// else the worker keeps the connection's
    /// [`crate::lb::shift::HeaderInsert`] beside the record). In the
    /// padding after `lport`: the record stays 96 bytes.
    pub cip: u8,
    /// IPv6 FullNAT: the local address, as four host-order words, most
    /// significant first ([`Nat64Leg::laddr6`]; an array of `u32`, not a
    /// `u128`, whose alignment would move it and grow the record).
    pub laddr6: [u32; 4],
}

impl Nat64Leg {
    /// The local leg of an IPv6 FullNAT connection: `laddr`, port `lport`.
    #[inline]
    pub fn local6(laddr: u128, lport: u16) -> Nat64Leg {
        Nat64Leg {
            laddr4: 0,
            lport,
            cip: 0,
            laddr6: [
                (laddr >> 96) as u32,
                (laddr >> 64) as u32,
                (laddr >> 32) as u32,
                laddr as u32,
            ],
        }
    }
    /// IPv6 FullNAT's local address (0 for the others).
    #[inline]
    pub fn laddr6(&self) -> u128 {
        let [a, b, c, d] = self.laddr6;
        ((a as u128) << 96) | ((b as u128) << 64) | ((c as u128) << 32) | d as u128
    }
    /// The address replies come back to: `laddr4` IPv4-mapped, or
    /// `laddr6`.
    #[inline]
    pub fn laddr(&self) -> u128 {
        if self.laddr4 != 0 {
            mapped(self.laddr4)
        } else {
            self.laddr6()
        }
    }
}

impl ConnExt<u128> for Nat64Leg {
    #[inline(always)]
    fn has_local_leg(&self) -> bool {
        self.lport != 0
    }
    /// A connection with a local leg is answered to it: the real server →
    /// the local address (NAT64's and IPv4 FullNAT's IPv4-mapped) and port.
    #[inline(always)]
    fn reply_key(&self, plain: FlowKey6) -> FlowKey6 {
        if self.lport == 0 {
            return plain;
        }
        FlowKey6 {
            dst: self.laddr(),
            dport: self.lport,
            ..plain
        }
    }
}

/// `::ffff:a.b.c.d`, the IPv4-mapped IPv6 address of `a` (RFC 4291
/// §2.5.5.2): how IPv4 addresses sit in IPv6-sized fields (a NAT64
/// connection's real server and pool address, its reply tuple).
#[inline]
pub const fn mapped(a: u32) -> u128 {
    0xffff_0000_0000 | a as u128
}

#[cfg(test)]
mod tests;
