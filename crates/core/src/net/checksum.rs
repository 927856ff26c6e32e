//! The Internet checksum (RFC 1071), full and incremental (RFC 1624).
//!
//! All functions work on big-endian 16-bit words as they appear on the wire
//! and never panic: an odd trailing byte is padded with zero.

/// One's-complement sum of `data` added to `initial`, not yet folded.
#[inline]
pub fn sum(data: &[u8], initial: u32) -> u32 {
    let mut acc: u64 = initial as u64;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        acc += u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64;
    }
    let rem = chunks.remainder();
    let mut i = 0;
    while i + 1 < rem.len() {
        acc += u16::from_be_bytes([rem[i], rem[i + 1]]) as u64;
        i += 2;
    }
    if i < rem.len() {
        acc += (rem[i] as u64) << 8;
    }
    // fold 64 -> 32 bits without losing carries
    while acc >> 32 != 0 {
        acc = (acc & 0xffff_ffff) + (acc >> 32);
    }
    acc as u32
}

/// Fold a 32-bit partial sum to 16 bits (not complemented).
#[inline]
pub fn fold(mut s: u32) -> u16 {
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    s as u16
}

/// The finished checksum over `data`: `!fold(sum(data))`.
#[inline]
pub fn checksum(data: &[u8]) -> u16 {
    !fold(sum(data, 0))
}

/// Sum of the IPv4 pseudo header used by TCP and UDP.
#[inline]
pub fn pseudo_header_sum(src: u32, dst: u32, proto: u8, l4_len: u16) -> u32 {
    (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto as u32 + l4_len as u32
}

/// Sum of the eight 16-bit words of an IPv6 address (host-order `u128`),
/// not yet folded (at most 8 * 0xffff).
#[inline]
pub fn sum128(a: u128) -> u32 {
    let (hi, lo) = ((a >> 64) as u64, a as u64);
    let w =
        |x: u64| ((x >> 48) + ((x >> 32) & 0xffff) + ((x >> 16) & 0xffff) + (x & 0xffff)) as u32;
    w(hi) + w(lo)
}

/// Sum of the IPv6 pseudo header of an upper-layer checksum (RFC 8200
/// §8.1): source, destination (the final one when a Routing header is
/// present), the upper-layer packet length as 32 bits, three zero bytes and
/// the upper-layer protocol number (not the first Next Header when
/// extension headers come between).
#[inline]
pub fn pseudo_header_sum_v6(src: u128, dst: u128, next_header: u8, upper_len: u32) -> u32 {
    sum128(src) + sum128(dst) + (upper_len >> 16) + (upper_len & 0xffff) + next_header as u32
}

/// The folded sum of a whole upper-layer message `data` (TCP, UDP,
/// ICMPv6) under its IPv6 pseudo header (RFC 8200 §8.1, the length taken
/// from `data`): 0xffff when the checksum stored in `data` is right, and
/// with the checksum field zeroed its complement is the checksum to store.
#[inline]
pub fn upper_layer_sum_v6(data: &[u8], src: u128, dst: u128, next_header: u8) -> u16 {
    let ph = pseudo_header_sum_v6(src, dst, next_header, data.len() as u32);
    fold(sum(data, ph))
}

/// RFC 1624 eqn. 3: new checksum when one 16-bit word changes from `old`
/// to `new`. `check` is the checksum as stored in the header.
#[inline]
pub fn update16(check: u16, old: u16, new: u16) -> u16 {
    // HC' = ~(~HC + ~m + m')
    let s = (!check as u32) + (!old as u32 & 0xffff) + new as u32;
    !fold(s)
}

/// RFC 1624 for a 32-bit field (an IPv4 address) changing from `old` to `new`.
#[inline]
pub fn update32(check: u16, old: u32, new: u32) -> u16 {
    let s =
        (!check as u32) + (!(old >> 16) & 0xffff) + (!old & 0xffff) + (new >> 16) + (new & 0xffff);
    !fold(s)
}

/// RFC 1624 for a 128-bit field (an IPv6 address) changing from `old` to
/// `new`.
#[inline]
pub fn update128(check: u16, old: u128, new: u128) -> u16 {
    let s = (!check as u32) + sum128(!old) + sum128(new);
    !fold(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 section 3 example bytes: sum is 0xddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(sum(&data, 0)), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn ipv4_header_checksum() {
        // A real IPv4 header (from a capture), checksum 0xb861.
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(checksum(&h), 0);
        h[10] = 0;
        h[11] = 0;
        assert_eq!(checksum(&h), 0xb861);
    }

    #[test]
    fn odd_length() {
        assert_eq!(fold(sum(&[0xab], 0)), 0xab00);
        assert_eq!(fold(sum(&[0x01, 0x02, 0x03], 0)), 0x0402);
    }

    #[test]
    fn incremental_matches_full() {
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0, 0, 10, 0, 0, 1, 10, 0,
            0, 100,
        ];
        let c = checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        let old = u32::from_be_bytes([h[16], h[17], h[18], h[19]]);
        let new = 0xac10_0005u32;
        let inc = update32(c, old, new);
        h[16..20].copy_from_slice(&new.to_be_bytes());
        h[10] = 0;
        h[11] = 0;
        assert_eq!(inc, checksum(&h));
        // TTL decrement as a 16-bit word change
        let old_w = u16::from_be_bytes([h[8], h[9]]);
        h[10..12].copy_from_slice(&inc.to_be_bytes());
        h[8] -= 1;
        let new_w = u16::from_be_bytes([h[8], h[9]]);
        let inc2 = update16(inc, old_w, new_w);
        h[10] = 0;
        h[11] = 0;
        assert_eq!(inc2, checksum(&h));
    }

    #[test]
    fn ipv6_pseudo_header_is_the_sum_of_its_bytes() {
        let src = 0x2001_0db8_0000_0000_0000_0000_0000_0001u128;
        let dst = 0xfe80_0000_0000_0000_ffff_eeee_dddd_ccccu128;
        let mut ph = [0u8; 40];
        ph[..16].copy_from_slice(&src.to_be_bytes());
        ph[16..32].copy_from_slice(&dst.to_be_bytes());
        ph[32..36].copy_from_slice(&0x0001_0010u32.to_be_bytes());
        ph[39] = 58;
        assert_eq!(
            fold(pseudo_header_sum_v6(src, dst, 58, 0x0001_0010)),
            fold(sum(&ph, 0))
        );
        assert_eq!(sum128(u128::MAX), 8 * 0xffff);
        assert_eq!(sum128(0x0001_0002_0003_0004_0005_0006_0007_0008), 36);
    }

    #[test]
    fn upper_layer_sum_v6_matches_a_flat_sum() {
        let (src, dst) = (0x2001_0db8u128 << 96 | 7, 0x2001_0db8u128 << 96 | 0x10);
        let msg = [0x12u8, 0x34, 0, 0, 0xab, 0xcd, 0xef];
        // pseudo header + message laid out flat, the odd byte padded
        let mut flat = Vec::new();
        flat.extend_from_slice(&src.to_be_bytes());
        flat.extend_from_slice(&dst.to_be_bytes());
        flat.extend_from_slice(&(msg.len() as u32).to_be_bytes());
        flat.extend_from_slice(&[0, 0, 0, 17]);
        flat.extend_from_slice(&msg);
        assert_eq!(upper_layer_sum_v6(&msg, src, dst, 17), fold(sum(&flat, 0)));
        // storing the complement makes the sum 0xffff
        let mut m = msg;
        let c = !upper_layer_sum_v6(&m, src, dst, 17);
        m[2..4].copy_from_slice(&c.to_be_bytes());
        assert_eq!(upper_layer_sum_v6(&m, src, dst, 17), 0xffff);
    }

    proptest::proptest! {
        #[test]
        fn incremental_128_matches(mut data in proptest::collection::vec(proptest::prelude::any::<u8>(), 16..64),
                                   new in proptest::prelude::any::<u128>()) {
            let len = data.len() & !1;
            data.truncate(len);
            let c = checksum(&data);
            let mut old = [0u8; 16];
            old.copy_from_slice(&data[..16]);
            data[..16].copy_from_slice(&new.to_be_bytes());
            let full = checksum(&data);
            let inc = update128(c, u128::from_be_bytes(old), new);
            proptest::prop_assert!(inc == full || (inc == 0xffff && full == 0) || (inc == 0 && full == 0xffff));
        }

        #[test]
        fn incremental_always_matches(mut data in proptest::collection::vec(proptest::prelude::any::<u8>(), 8..64),
                                      idx in 0usize..3, new in proptest::prelude::any::<u32>()) {
            let len = data.len() & !1;
            data.truncate(len);
            let c = checksum(&data);
            let off = idx * 2;
            let old = u32::from_be_bytes([data[off], data[off+1], data[off+2], data[off+3]]);
            data[off..off+4].copy_from_slice(&new.to_be_bytes());
            let full = checksum(&data);
            let inc = update32(c, old, new);
            // 0x0000 and 0xffff are both "zero" in one's complement
            proptest::prop_assert!(inc == full || (inc == 0xffff && full == 0) || (inc == 0 && full == 0xffff));
        }
    }
}
