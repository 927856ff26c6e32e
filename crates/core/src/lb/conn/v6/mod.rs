//! IPv6 connections: [`Conn6`] records in a `ConnTable<Conn6>` of their
//! own, so that IPv4's stay 32 bytes.
//!
//! A record holds three IPv6 addresses (client, VIP, real server: 48
//! bytes) and the same fields as [`super::Conn`]; aligned to 32 bytes it
//! takes 96, so two records share three cache lines and each spans exactly
//! two (its start and its `proto` byte, which the burst stage prefetches
//! both of: [`Record::prefetch`]). With its index share (32 bytes, as for
//! IPv4) an IPv6 connection costs 128 bytes. The index, the staged
//! prefetching, eviction and expiry are the table's, unchanged.

use super::record::{Record, TableKey};
use crate::hint;
use crate::lb::spec::Method;
pub use crate::net::meta::FlowKey6;

#[inline(always)]
fn mix(h: u64) -> u64 {
    (h ^ (h >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93)
}

impl TableKey for FlowKey6 {
    /// Every 64-bit half of both addresses and the ports folded in turn
    /// (the IPv4 key's mixing, four words longer).
    #[inline(always)]
    fn hash(&self, seed: u32) -> u32 {
        let ports = ((self.sport as u64) << 32) | ((self.dport as u64) << 16) | self.proto as u64;
        let mut h = (seed as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for w in [
            (self.src >> 64) as u64,
            self.src as u64,
            (self.dst >> 64) as u64,
            self.dst as u64,
            ports,
        ] {
            h = mix(h ^ w.wrapping_mul(0xff51_afd7_ed55_8ccd));
        }
        (h ^ (h >> 32)) as u32
    }
}

/// One tracked IPv6 connection (96 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Conn6 {
    /// Client address.
    pub caddr: u128,
    /// Virtual address.
    pub vaddr: u128,
    /// Real server address.
    pub daddr: u128,
    /// Real server slot; the next free record while this one is free.
    pub dest: u32,
    /// Expiry time (ms tick).
    pub expires: u32,
    /// Client port.
    pub cport: u16,
    /// Virtual port.
    pub vport: u16,
    /// Real server port.
    pub dport: u16,
    /// Service slot.
    pub svc: u16,
    /// Next header (TCP or UDP).
    pub proto: u8,
    /// [`crate::lb::state::TcpState`] as u8 (NONE for UDP).
    pub state: u8,
    /// `F_*` flags (those of [`super::Conn`]).
    pub flags: u8,
    /// Forwarding method.
    pub method: Method,
    /// NAT64: the IPv4 pool address the connection's requests leave from
    /// (0 for a plain IPv6 connection; `daddr` is then the real server's
    /// IPv4 address, IPv4-mapped, `::ffff:a.b.c.d`).
    pub laddr4: u32,
    /// NAT64: the pool port.
    pub lport: u16,
}

/// `::ffff:a.b.c.d`, the IPv4-mapped IPv6 address of `a` (RFC 4291
/// §2.5.5.2): how IPv4 addresses sit in IPv6-sized fields (a NAT64
/// connection's real server and pool address, its reply tuple).
#[inline]
pub const fn mapped(a: u32) -> u128 {
    0xffff_0000_0000 | a as u128
}

impl Record for Conn6 {
    type Key = FlowKey6;
    #[inline(always)]
    fn in_key(&self) -> FlowKey6 {
        FlowKey6 {
            src: self.caddr,
            dst: self.vaddr,
            sport: self.cport,
            dport: self.vport,
            proto: self.proto,
        }
    }
    /// The reply tuple; for NAT64 the IPv4 reply (real server → pool
    /// address and port), its addresses IPv4-mapped.
    #[inline(always)]
    fn out_key(&self) -> FlowKey6 {
        if self.laddr4 != 0 {
            return FlowKey6 {
                src: self.daddr,
                dst: mapped(self.laddr4),
                sport: self.dport,
                dport: self.lport,
                proto: self.proto,
            };
        }
        FlowKey6 {
            src: self.daddr,
            dst: self.caddr,
            sport: self.dport,
            dport: self.cport,
            proto: self.proto,
        }
    }
    #[inline(always)]
    fn is_nat(&self) -> bool {
        self.method == Method::Nat
    }
    #[inline(always)]
    fn flags(&self) -> u8 {
        self.flags
    }
    #[inline(always)]
    fn set_flags(&mut self, f: u8) {
        self.flags = f;
    }
    #[inline(always)]
    fn expires(&self) -> u32 {
        self.expires
    }
    #[inline(always)]
    fn proto(&self) -> u8 {
        self.proto
    }
    #[inline(always)]
    fn state(&self) -> u8 {
        self.state
    }
    #[inline(always)]
    fn set_hot(&mut self, state: u8, flags: u8, expires: u32) {
        self.state = state;
        self.flags = flags;
        self.expires = expires;
    }
    #[inline(always)]
    fn set_expires(&mut self, expires: u32) {
        self.expires = expires;
    }
    #[inline(always)]
    fn next_free(&self) -> u32 {
        self.dest
    }
    /// Both lines of the record (it starts on a 32-byte boundary and is
    /// 96 bytes long: the line of its start and the line of `proto`, 64
    /// bytes in).
    #[inline(always)]
    fn prefetch(&self) {
        hint::prefetch(self);
        hint::prefetch(&self.proto);
    }
    #[inline(always)]
    fn set_next_free(&mut self, next: u32) {
        self.dest = next;
    }
}

#[cfg(test)]
mod tests;
