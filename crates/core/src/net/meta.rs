//! What classify learns about an IPv4 packet, handed to the balancing core.
//!
//! Addresses are host-order `u32` (`std::net::Ipv4Addr::from(u32)` converts);
//! ports are host order.

/// IP protocol numbers dirigo knows.
pub const PROTO_ICMP: u8 = 1;
/// IPIP (IPv4 in IPv4).
pub const PROTO_IPIP: u8 = 4;
/// TCP.
pub const PROTO_TCP: u8 = 6;
/// UDP.
pub const PROTO_UDP: u8 = 17;

/// A connection's 5-tuple as seen in one direction, over an address
/// type `A` (host order): [`FlowKey`] for IPv4, [`FlowKey6`] for IPv6.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flow<A> {
    /// Source address.
    pub src: A,
    /// Destination address.
    pub dst: A,
    /// Source port (0 for ICMP and ICMPv6).
    pub sport: u16,
    /// Destination port (0 for ICMP and ICMPv6).
    pub dport: u16,
    /// IP protocol (IPv6: the next header, TCP, UDP or ICMPv6).
    pub proto: u8,
}

/// An IPv4 connection's 5-tuple.
pub type FlowKey = Flow<u32>;

/// An IPv6 connection's 5-tuple (addresses as host-order `u128`, as the
/// IPv6 wire views give them).
pub type FlowKey6 = Flow<u128>;

impl<A: Copy> Flow<A> {
    /// The same flow seen from the other side.
    #[inline]
    pub fn reversed(&self) -> Flow<A> {
        Flow {
            src: self.dst,
            dst: self.src,
            sport: self.dport,
            dport: self.sport,
            proto: self.proto,
        }
    }
}

/// A table's hash seed, multiplied out once when the table is made (the
/// tuple hashes' first step), not per packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed(u64);

impl Seed {
    /// `seed` premixed.
    #[inline]
    pub const fn new(seed: u32) -> Seed {
        Seed((seed as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }
    /// The premixed value.
    #[inline(always)]
    pub const fn mixed(self) -> u64 {
        self.0
    }
}

impl FlowKey {
    /// A fast, well-mixed 32-bit hash of the tuple (not keyed; the
    /// connection table adds its own per-table seed).
    #[inline]
    pub fn hash(&self, seed: u32) -> u32 {
        self.hash_with(Seed::new(seed))
    }

    /// [`Self::hash`] with the seed premixed ([`Seed::new`]).
    #[inline(always)]
    pub fn hash_with(&self, seed: Seed) -> u32 {
        let a = ((self.src as u64) << 32) | self.dst as u64;
        let b = ((self.sport as u64) << 32) | ((self.dport as u64) << 16) | self.proto as u64;
        let mut h = a ^ seed.mixed();
        h = (h ^ (h >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
        h ^= b.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h = (h ^ (h >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
        (h ^ (h >> 32)) as u32
    }
}

/// ICMPv6's next-header number.
pub const PROTO_ICMPV6: u8 = 58;

/// The packet quoted inside an ICMP error message (ICMP: types 3, 4, 5,
/// 11, 12; ICMPv6: Destination Unreachable 1, Packet Too Big 2, Time
/// Exceeded 3, Parameter Problem 4), over an address type `A`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quote<A> {
    /// ICMP (ICMPv6) type of the error.
    pub icmp_type: u8,
    /// Its code.
    pub code: u8,
    /// Offset of the quoted IP header from the start of the frame.
    pub inner_l3_off: u16,
    /// Offset of the quoted L4 header from the start of the frame (IPv6:
    /// after the quoted packet's extension headers).
    pub inner_l4_off: u16,
    /// The quoted packet's tuple, exactly as it was sent.
    pub inner_key: Flow<A>,
}

/// The packet quoted inside an ICMP error message.
pub type IcmpQuote = Quote<u32>;
/// The packet quoted inside an ICMPv6 error message.
pub type IcmpQuote6 = Quote<u128>;

/// Validated facts about a packet to balance, over an address type `A`:
/// headers bounds-checked (IPv4: its header checksum verified; IPv6: the
/// extension chain walked, [`crate::net::wire::ipv6ext::walk`]), not a
/// fragment unless stated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta<A> {
    /// Index of the port the packet arrived on.
    pub port: u16,
    /// VLAN id of the single 802.1Q tag, if any.
    pub vlan: Option<u16>,
    /// Offset of the IP header (14, or 18 behind one VLAN tag).
    pub l3_off: u16,
    /// Offset of the L4 header (IPv4: l3_off + IHL*4; IPv6: after any
    /// extension headers).
    pub l4_off: u16,
    /// The IP packet's length (IPv4: its total length; IPv6: 40 + payload
    /// length); the frame may carry Ethernet padding after it.
    pub ip_len: u16,
    /// The 5-tuple (for ICMP errors: ports 0, proto 1 or 58; the quote
    /// says which connection).
    pub key: Flow<A>,
    /// TCP flags byte (0 when not TCP).
    pub tcp_flags: u8,
    /// IPv4's TTL, IPv6's hop limit.
    pub ttl: u8,
    /// IPv4's don't-fragment bit; always set for IPv6 (no router
    /// fragments an IPv6 packet).
    pub df: bool,
    /// For ICMP errors: the quoted packet.
    pub icmp: Option<Quote<A>>,
}

/// Validated facts about an IPv4 packet.
pub type PacketMeta = Meta<u32>;
/// Validated facts about an IPv6 packet.
pub type PacketMeta6 = Meta<u128>;

/// TCP flag bits as in the header's flags byte.
pub mod tcp_flags {
    /// FIN
    pub const FIN: u8 = 0x01;
    /// SYN
    pub const SYN: u8 = 0x02;
    /// RST
    pub const RST: u8 = 0x04;
    /// PSH
    pub const PSH: u8 = 0x08;
    /// ACK
    pub const ACK: u8 = 0x10;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversed_twice_is_identity() {
        let k = FlowKey {
            src: 1,
            dst: 2,
            sport: 3,
            dport: 4,
            proto: PROTO_TCP,
        };
        assert_eq!(k.reversed().reversed(), k);
        assert_ne!(k.hash(0), k.reversed().hash(0));
        assert_ne!(k.hash(0), k.hash(1));
    }

    /// The hash spreads the tuples a director sees (clients counting up
    /// through one network, one client's source ports counting up) evenly
    /// over the table's buckets (its low bits) and signatures (its high
    /// bits): no bucket of 4096 gets more than twice its share of 256k
    /// keys, whichever field varies, under two seeds.
    #[test]
    fn hash_spreads_sequential_tuples() {
        const KEYS: u32 = 1 << 18;
        const BUCKETS: usize = 1 << 12;
        let clients = |i: u32| FlowKey {
            src: 0x0a00_0000 + i,
            dst: 0xc0a8_6464,
            sport: 40000,
            dport: 80,
            proto: PROTO_TCP,
        };
        let ports = |i: u32| FlowKey {
            src: 0x0a00_0000 + (i >> 16),
            dst: 0xc0a8_6464,
            sport: i as u16,
            dport: 80,
            proto: PROTO_TCP,
        };
        let dests = |i: u32| FlowKey {
            src: 0x0a00_0001,
            dst: 0xac10_0000 + i,
            sport: 40000,
            dport: 8080,
            proto: PROTO_UDP,
        };
        for seed in [0, 0x5eed_1234] {
            for (name, f) in [
                ("clients", &clients as &dyn Fn(u32) -> FlowKey),
                ("ports", &ports),
                ("dests", &dests),
            ] {
                for (bits, shift) in [("low", 0), ("high", 20)] {
                    let mut n = vec![0u32; BUCKETS];
                    for i in 0..KEYS {
                        n[(f(i).hash(seed) >> shift) as usize % BUCKETS] += 1;
                    }
                    let share = KEYS / BUCKETS as u32;
                    let max = *n.iter().max().unwrap();
                    let min = *n.iter().min().unwrap();
                    assert!(
                        max < 2 * share && min > share / 2,
                        "{name}, {bits} bits, seed {seed:#x}: {min}..{max} per bucket, share {share}"
                    );
                }
            }
        }
    }
}
