//! SYN cookies, as Linux makes them (net/ipv4/syncookies.c and, for
//! IPv6, net/ipv6/syncookies.c), keyed by SipHash.
//!
//! A cookie is the initial sequence number of the SYN/ACK dirigo answers a
//! client's SYN with; the client's ACK returns it plus one. Nothing is
//! stored between the two: the cookie carries what the connection needs.
//!
//! ```text
//! cookie = H(K, tuple) + client ISN + (count << 24)
//!        + ((H(K_count, tuple) + mss index) mod 2^24)
//! ```
//!
//! `count` is the minute (`now_ms / 60000`, its low 8 bits in the cookie);
//! `K_count` is the key of that minute, derived from a random 128-bit
//! master secret by SipHash used as a PRF, so the secret that validates a
//! cookie changes every minute and none can be derived from another. A
//! cookie is valid for [`MAX_AGE`] minutes. The MSS is one of four values
//! of the family's table (Linux's `msstab`: [`MSS_TABLE`] for IPv4,
//! [`MSS_TABLE6`] for IPv6), the largest not above the client's. The
//! tuple hashed is the family's ([`CookieTuple`]): an IPv6 cookie hashes
//! both full 128-bit addresses, as Linux's `cookie_v6_init_sequence`. Forging one means guessing 24 bits whose value must fall
//! below 4 after subtraction: a chance of 2^-22 per try.
//!
//! Window scale and SACK-permitted travel in the low 6 bits of the SYN/ACK's
//! timestamp ([`ts_encode`], Linux's `cookie_init_timestamp`), so a client
//! without timestamps gets neither (as with Linux's syncookies).

use crate::net::meta::{FlowKey, FlowKey6};
use siphasher::sip::SipHasher13;
use std::hash::Hasher;

/// The MSS values an IPv4 cookie can carry (Linux's `msstab` for IPv4).
pub const MSS_TABLE: [u16; 4] = [536, 1300, 1440, 1460];
/// The MSS values an IPv6 cookie can carry (Linux's `msstab` of
/// net/ipv6/syncookies.c: 1280, 1480, 1500 and 9000 bytes less 60).
pub const MSS_TABLE6: [u16; 4] = [1220, 1420, 1440, 8940];

/// A connection's tuple as a cookie hashes it, and the MSS table of its
/// family.
pub trait CookieTuple {
    /// The MSS values a cookie of this family can carry.
    const MSS_TABLE: [u16; 4];
    /// Feed the tuple (addresses at full width, then the ports) to `h`.
    fn write_to(&self, h: &mut SipHasher13);
}

impl CookieTuple for FlowKey {
    const MSS_TABLE: [u16; 4] = MSS_TABLE;
    #[inline]
    fn write_to(&self, h: &mut SipHasher13) {
        h.write_u32(self.src);
        h.write_u32(self.dst);
        h.write_u32(((self.sport as u32) << 16) | self.dport as u32);
    }
}

impl CookieTuple for FlowKey6 {
    const MSS_TABLE: [u16; 4] = MSS_TABLE6;
    #[inline]
    fn write_to(&self, h: &mut SipHasher13) {
        h.write_u128(self.src);
        h.write_u128(self.dst);
        h.write_u32(((self.sport as u32) << 16) | self.dport as u32);
    }
}
/// Minutes a cookie stays valid (Linux `MAX_SYNCOOKIE_AGE`).
pub const MAX_AGE: u32 = 2;
const COUNT_SHIFT: u32 = 24;
const MASK: u32 = (1 << COUNT_SHIFT) - 1;
/// Milliseconds per cookie count.
pub const COUNT_MS: u32 = 60_000;
/// Timestamp bits that carry options.
const TS_BITS: u32 = 6;
const TS_MASK: u32 = (1 << TS_BITS) - 1;
const TS_WSCALE_NONE: u32 = 0xf;
const TS_SACK: u32 = 1 << 4;

/// Why a cookie was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CookieError {
    /// Not a cookie of ours (forged, or for another tuple or ISN).
    Invalid,
    /// Ours, but older than [`MAX_AGE`] minutes.
    Expired,
}

/// The keys (a 128-bit master secret) and the last two minutes' keys
/// derived from it (a cookie is made and checked within two minutes, so
/// deriving is rare).
#[derive(Clone, Debug)]
pub struct CookieKeys {
    master: [u64; 2],
    /// (count, key) of an even and an odd minute; `None` until derived.
    minutes: std::cell::Cell<[Option<(u32, u64, u64)>; 2]>,
}

impl CookieKeys {
    /// Keys from 16 random bytes.
    pub fn new(master: [u64; 2]) -> CookieKeys {
        CookieKeys {
            master,
            minutes: std::cell::Cell::new([None; 2]),
        }
    }

    fn derive(&self, count: u32) -> (u64, u64) {
        let mut h = SipHasher13::new_with_keys(self.master[0], self.master[1]);
        h.write_u32(count);
        let k0 = h.finish();
        h.write_u8(1);
        (k0, h.finish())
    }

    fn minute_key(&self, count: u32) -> SipHasher13 {
        let mut m = self.minutes.get();
        let slot = &mut m[(count & 1) as usize];
        let (k0, k1) = match *slot {
            Some((c, k0, k1)) if c == count => (k0, k1),
            _ => {
                let (k0, k1) = self.derive(count);
                *slot = Some((count, k0, k1));
                self.minutes.set(m);
                (k0, k1)
            }
        };
        SipHasher13::new_with_keys(k0, k1)
    }

    fn tuple_hash<K: CookieTuple>(mut h: SipHasher13, k: &K) -> u32 {
        k.write_to(&mut h);
        h.finish() as u32
    }

    fn fixed<K: CookieTuple>(&self, k: &K) -> u32 {
        Self::tuple_hash(
            SipHasher13::new_with_keys(self.master[1], self.master[0]),
            k,
        )
    }

    /// The cookie for a SYN of `key` (client → VIP) with initial sequence
    /// number `isn` and MSS `mss`, at minute `count`.
    pub fn make<K: CookieTuple>(&self, key: &K, isn: u32, mss: u16, count: u32) -> u32 {
        let idx = mss_index(&K::MSS_TABLE, mss);
        self.fixed(key)
            .wrapping_add(isn)
            .wrapping_add(count << COUNT_SHIFT)
            .wrapping_add(Self::tuple_hash(self.minute_key(count), key).wrapping_add(idx) & MASK)
    }

    /// Check the cookie an ACK of `key` returns (`ack - 1`) with the
    /// client's initial sequence number (`seq - 1`) at minute `count`;
    /// the MSS it carries.
    pub fn check<K: CookieTuple>(
        &self,
        key: &K,
        isn: u32,
        cookie: u32,
        count: u32,
    ) -> Result<u16, CookieError> {
        let c = cookie.wrapping_sub(self.fixed(key)).wrapping_sub(isn);
        let diff = count.wrapping_sub(c >> COUNT_SHIFT) & (u32::MAX >> COUNT_SHIFT);
        let made = count.wrapping_sub(diff);
        let data = c.wrapping_sub(Self::tuple_hash(self.minute_key(made), key)) & MASK;
        match K::MSS_TABLE.get(data as usize) {
            Some(&mss) if diff < MAX_AGE => Ok(mss),
            Some(_) => Err(CookieError::Expired),
            None => Err(CookieError::Invalid),
        }
    }
}

/// Index of the largest `table` value not above `mss` (0 for a smaller
/// one).
pub fn mss_index(table: &[u16; 4], mss: u16) -> u32 {
    table.iter().rposition(|&m| m <= mss).unwrap_or(0) as u32
}

/// The cookie count of `now_ms`.
pub fn count_of(now_ms: u32) -> u32 {
    now_ms / COUNT_MS
}

/// The options a cookie timestamp carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TsOptions {
    /// The client's window scale, if it offered one.
    pub wscale: Option<u8>,
    /// SACK permitted.
    pub sack: bool,
}

/// The SYN/ACK's TSval at `now` (ms) carrying `o` in its low bits, never
/// ahead of `now` (Linux `cookie_init_timestamp`).
pub fn ts_encode(now: u32, o: TsOptions) -> u32 {
    let mut opts = o.wscale.map_or(TS_WSCALE_NONE, |w| w.min(14) as u32);
    if o.sack {
        opts |= TS_SACK;
    }
    let mut ts = (now & !TS_MASK) | opts;
    if ts > now {
        ts = ts.wrapping_sub(1 << TS_BITS);
    }
    ts
}

/// The options in the TSecr a client's ACK echoes (a nibble of 15 means
/// no window scale; 0..=14 is the client's scale).
pub fn ts_decode(ecr: u32) -> TsOptions {
    let ws = ecr & 0xf;
    TsOptions {
        wscale: (ws != TS_WSCALE_NONE).then_some(ws as u8),
        sack: ecr & TS_SACK != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: FlowKey = FlowKey {
        src: 0x0a63_0002,
        dst: 0x0a63_0064,
        sport: 40000,
        dport: 80,
        proto: 6,
    };

    const K6: FlowKey6 = FlowKey6 {
        src: 0x2001_0db8_0063_0000_0000_0000_0000_0002,
        dst: 0x2001_0db8_0063_0000_0000_0000_0000_0064,
        sport: 40000,
        dport: 80,
        proto: 6,
    };

    fn keys() -> CookieKeys {
        CookieKeys::new([0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210])
    }

    #[test]
    fn round_trip_every_mss_for_its_lifetime() {
        let k = keys();
        for (mss, want) in [
            (1460, 1460),
            (9000, 1460),
            (1400, 1300),
            (1440, 1440),
            (100, 536),
        ] {
            for count in [0, 1, 255, 256, 70_000] {
                let c = k.make(&K, 0xdead_beef, mss, count);
                assert_eq!(k.check(&K, 0xdead_beef, c, count), Ok(want));
                assert_eq!(k.check(&K, 0xdead_beef, c, count + 1), Ok(want));
                assert_eq!(
                    k.check(&K, 0xdead_beef, c, count + MAX_AGE),
                    Err(CookieError::Expired)
                );
            }
        }
    }

    #[test]
    fn another_tuple_isn_or_secret_is_refused() {
        let k = keys();
        let c = k.make(&K, 7, 1460, 10);
        let mut other = K;
        other.sport += 1;
        assert_eq!(k.check(&other, 7, c, 10), Err(CookieError::Invalid));
        // the ISN enters the sum, so a nearby one only shifts the MSS
        // index (as with Linux's cookies): a far one is refused
        assert_eq!(k.check(&K, 7 + 1000, c, 10), Err(CookieError::Invalid));
        assert_eq!(
            k.check(&K, 7u32.wrapping_sub(1000), c, 10),
            Err(CookieError::Invalid)
        );
        let k2 = CookieKeys::new([1, 2]);
        assert_eq!(k2.check(&K, 7, c, 10), Err(CookieError::Invalid));
        assert_eq!(
            k.check(&K, 7, c.wrapping_add(1 << 20), 10),
            Err(CookieError::Invalid)
        );
    }

    #[test]
    fn ipv6_round_trip_with_linux_ipv6_mss_table() {
        let k = keys();
        for (mss, want) in [
            (1440, 1440),
            (9000, 8940),
            (1460, 1440),
            (1400, 1220),
            (1420, 1420),
            (536, 1220),
        ] {
            for count in [0, 1, 255, 256, 70_000] {
                let c = k.make(&K6, 0xdead_beef, mss, count);
                assert_eq!(k.check(&K6, 0xdead_beef, c, count), Ok(want));
                assert_eq!(k.check(&K6, 0xdead_beef, c, count + 1), Ok(want));
                assert_eq!(
                    k.check(&K6, 0xdead_beef, c, count + MAX_AGE),
                    Err(CookieError::Expired)
                );
            }
        }
    }

    #[test]
    fn ipv6_cookies_hash_all_128_bits_of_both_addresses() {
        let k = keys();
        let c = k.make(&K6, 7, 1440, 10);
        // a bit anywhere in either address (a fold to 32 bits would miss
        // some of these) and either port make another tuple
        for bit in [0u32, 31, 32, 63, 64, 95, 96, 127] {
            let mut o = K6;
            o.src ^= 1 << bit;
            assert_eq!(
                k.check(&o, 7, c, 10),
                Err(CookieError::Invalid),
                "src bit {bit}"
            );
            let mut o = K6;
            o.dst ^= 1 << bit;
            assert_eq!(
                k.check(&o, 7, c, 10),
                Err(CookieError::Invalid),
                "dst bit {bit}"
            );
        }
        let mut o = K6;
        o.dport += 1;
        assert_eq!(k.check(&o, 7, c, 10), Err(CookieError::Invalid));
        // and an IPv4 cookie of the same low 32 bits is not an IPv6 one
        let k4 = FlowKey {
            src: K6.src as u32,
            dst: K6.dst as u32,
            ..K
        };
        assert_ne!(k.make(&k4, 7, 1440, 10), c);
    }

    #[test]
    fn forgeries_almost_never_pass() {
        // random cookies for one tuple: the chance is 4 / 2^24 per try
        let k = keys();
        let mut x = 0x9e37_79b9u32;
        let mut ok = 0;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if k.check(&K, 1, x, 1000).is_ok() {
                ok += 1;
            }
        }
        assert!(ok <= 2, "{ok} forged cookies accepted");
    }

    #[test]
    fn timestamps_carry_wscale_and_sack() {
        for wscale in [None, Some(0), Some(7), Some(14)] {
            for sack in [false, true] {
                let o = TsOptions { wscale, sack };
                for now in [0u32, 63, 64, 1_000_000, u32::MAX] {
                    let ts = ts_encode(now, o);
                    assert!(ts <= now || now < 64, "{ts} > {now}");
                    assert_eq!(ts_decode(ts), o);
                }
            }
        }
        assert_eq!(
            ts_decode(0x0e | 0x40),
            TsOptions {
                wscale: Some(14),
                sack: false
            }
        );
        assert!(ts_decode(0xf).wscale.is_none());
    }
}
