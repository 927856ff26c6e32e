//! GRE header (RFC 2784), as Linux IPVS's GRE tunnel writes it
//! (`ipvs_gre_encap` → `gre_build_header`): version 0, no key, no
//! sequence number, and the checksum present (C bit, then the checksum
//! and a zero reserved word) only when asked.

use super::error::WireError;
use crate::net::checksum;

/// Byte ranges of the GRE header.
pub mod field {
    use core::ops::Range;
    /// C, R, K, S, s, Recur, flags, version (16 bits).
    pub const FLAGS_VERSION: Range<usize> = 0..2;
    /// Protocol type (an EtherType: 0x0800 IPv4, 0x86DD IPv6).
    pub const PROTOCOL: Range<usize> = 2..4;
    /// Checksum, present when the C bit is set.
    pub const CHECKSUM: Range<usize> = 4..6;
    /// Reserved1, present when the C bit is set (zero).
    pub const RESERVED1: Range<usize> = 6..8;
}

/// The C (checksum present) bit of the first word.
pub const FLAG_CSUM: u16 = 0x8000;
/// The K (key present) bit.
pub const FLAG_KEY: u16 = 0x2000;
/// The S (sequence number present) bit.
pub const FLAG_SEQ: u16 = 0x1000;
/// The version bits (0 for GRE; 1 is PPTP's enhanced GRE).
pub const VERSION_MASK: u16 = 0x0007;
/// Header length without the optional fields.
pub const BASE_LEN: usize = 4;
/// Header length with the checksum field (and reserved word).
pub const CSUM_LEN: usize = 8;

view!(
    /// A view of a GRE packet (the buffer is the outer IP payload: the GRE
    /// header, then the encapsulated packet).
    Packet,
    check_len
);

impl<T: AsRef<[u8]>> Packet<T> {
    /// The checks `new_checked` makes: version 0, and the base header plus
    /// every optional field its flags announce (checksum, key, sequence
    /// number) present.
    pub fn check_len(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < BASE_LEN {
            return Err(WireError::Truncated);
        }
        if self.flags_version() & VERSION_MASK != 0 {
            return Err(WireError::BadVersion);
        }
        if len < self.header_len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }
    /// Whether the checksum field is present (C bit).
    pub fn has_checksum(&self) -> bool {
        self.flags_version() & FLAG_CSUM != 0
    }
    /// Length of the header its flags announce (4, +4 for the checksum,
    /// +4 for a key, +4 for a sequence number).
    pub fn header_len(&self) -> usize {
        let f = self.flags_version();
        let mut n = BASE_LEN;
        for bit in [FLAG_CSUM, FLAG_KEY, FLAG_SEQ] {
            if f & bit != 0 {
                n += 4;
            }
        }
        n
    }
    /// The encapsulated packet.
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(self.header_len()..).unwrap_or(&[])
    }
    /// True when the checksum is absent or correct (RFC 2784: over the GRE
    /// header and the payload).
    pub fn verify_checksum(&self) -> bool {
        !self.has_checksum() || checksum::checksum(self.buffer.as_ref()) == 0
    }
}

accessors! {
    Packet;
    /// The first word: flags and version.
    flags_version, set_flags_version: u16 = field::FLAGS_VERSION;
    /// Protocol type (EtherType of the payload).
    protocol, set_protocol: u16 = field::PROTOCOL;
    /// Checksum as stored (meaningful with the C bit).
    checksum, set_checksum: u16 = field::CHECKSUM;
    /// Reserved1 (with the C bit).
    reserved1, set_reserved1: u16 = field::RESERVED1;
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Write the header as `ipvs_gre_encap` does: version 0, protocol type
    /// `protocol`, and with `csum` the C bit and a zero checksum and
    /// reserved word (fill it with [`Self::fill_checksum`] once the payload
    /// is in place). The buffer must hold [`CSUM_LEN`] bytes with `csum`,
    /// [`BASE_LEN`] without (the setters write nothing past its end).
    #[inline]
    pub fn emit(&mut self, protocol: u16, csum: bool) {
        self.set_flags_version(if csum { FLAG_CSUM } else { 0 });
        self.set_protocol(protocol);
        if csum {
            self.set_checksum(0);
            self.set_reserved1(0);
        }
    }
    /// Compute and store the checksum over the whole buffer (header and
    /// payload), as RFC 2784 says. Only with the C bit set.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::checksum(self.buffer.as_ref());
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_header_is_four_bytes_of_version_zero() {
        let mut b = [0xaau8; 4];
        Packet::new_unchecked(&mut b[..]).emit(0x0800, false);
        assert_eq!(b, [0x00, 0x00, 0x08, 0x00]);
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!((p.header_len(), p.protocol()), (4, 0x0800));
        assert!(!p.has_checksum() && p.verify_checksum());
    }

    #[test]
    fn checksum_covers_header_and_payload() {
        // C bit, IPv6, checksum, reserved, then a 3-byte payload
        let mut b = [0u8; 11];
        b[8..].copy_from_slice(&[0x60, 0x01, 0x02]);
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.emit(0x86dd, true);
        p.fill_checksum();
        // words: 8000 86dd 0000 0000 6001 0200 -> sum 0x168de ->
        // 0x68df -> !0x68df = 0x9720
        assert_eq!(b[..8], [0x80, 0x00, 0x86, 0xdd, 0x97, 0x20, 0x00, 0x00]);
        let p = Packet::new_checked(&b[..]).unwrap();
        assert!(p.verify_checksum());
        assert_eq!(p.payload(), &[0x60, 0x01, 0x02]);
        let mut bad = b;
        bad[10] ^= 1;
        assert!(!Packet::new_checked(&bad[..]).unwrap().verify_checksum());
    }

    #[test]
    fn checked_refuses_short_and_other_versions() {
        assert_eq!(
            Packet::new_checked(&[0u8; 3][..]),
            Err(WireError::Truncated)
        );
        // C bit announced, only 4 bytes
        assert_eq!(
            Packet::new_checked(&[0x80u8, 0, 8, 0][..]),
            Err(WireError::Truncated)
        );
        // C + K + S: 16 bytes needed
        assert_eq!(
            Packet::new_checked(&[0xb0u8, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0][..]),
            Err(WireError::Truncated)
        );
        // version 1 (PPTP)
        assert_eq!(
            Packet::new_checked(&[0x00u8, 1, 8, 0][..]),
            Err(WireError::BadVersion)
        );
    }
}
