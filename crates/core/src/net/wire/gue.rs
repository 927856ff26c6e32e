//! GUE header (draft-ietf-intarea-gue), version 0, as Linux IPVS's GUE
//! tunnel writes it (`ipvs_gue_encap`): the 4-byte base header carrying
//! the inner IP protocol (4 for IPv4, 41 for IPv6), no extension fields.
//! It follows a UDP header whose destination port is the real server's
//! `--tun-port`.

use super::error::WireError;

/// Byte ranges of the GUE base header.
pub mod field {
    use core::ops::Range;
    /// Version (2 bits), C (1 bit), Hlen (5 bits: extension words).
    pub const VER_C_HLEN: usize = 0;
    /// Proto/ctype: the inner IP protocol of a data message.
    pub const PROTO_CTYPE: usize = 1;
    /// Flags (16 bits).
    pub const FLAGS: Range<usize> = 2..4;
}

/// Length of the base header.
pub const HEADER_LEN: usize = 4;
/// The C bit (control message) in the first byte.
pub const C_BIT: u8 = 0x20;
/// The Hlen bits (32-bit words of extension fields) in the first byte.
pub const HLEN_MASK: u8 = 0x1f;

view!(
    /// A view of a GUE message (the buffer is the UDP payload).
    Packet,
    check_len
);

impl<T: AsRef<[u8]>> Packet<T> {
    /// The checks `new_checked` makes: version 0, and the base header plus
    /// the extension words Hlen announces present.
    pub fn check_len(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.version() != 0 {
            return Err(WireError::BadVersion);
        }
        if len < self.header_len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }
    /// The version (the top two bits).
    pub fn version(&self) -> u8 {
        self.ver_c_hlen() >> 6
    }
    /// Whether this is a control message (C bit).
    pub fn is_control(&self) -> bool {
        self.ver_c_hlen() & C_BIT != 0
    }
    /// Base header plus extension fields, in bytes.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + 4 * (self.ver_c_hlen() & HLEN_MASK) as usize
    }
    /// The encapsulated packet.
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(self.header_len()..).unwrap_or(&[])
    }
}

accessors! {
    Packet;
    /// The first byte: version, C, Hlen.
    ver_c_hlen, set_ver_c_hlen: u8 = field::VER_C_HLEN;
    /// The inner IP protocol (data message) or control type.
    proto_ctype, set_proto_ctype: u8 = field::PROTO_CTYPE;
    /// Flags.
    flags, set_flags: u16 = field::FLAGS;
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Write a version 0 data message header with no extension fields and
    /// inner protocol `proto`, as `ipvs_gue_encap` does.
    #[inline]
    pub fn emit(&mut self, proto: u8) {
        self.set_ver_c_hlen(0);
        self.set_proto_ctype(proto);
        self.set_flags(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_header_is_version_zero_with_the_inner_protocol() {
        let mut b = [0xffu8; 6];
        Packet::new_unchecked(&mut b[..]).emit(4);
        assert_eq!(b, [0x00, 0x04, 0x00, 0x00, 0xff, 0xff]);
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!((p.version(), p.proto_ctype(), p.header_len()), (0, 4, 4));
        assert!(!p.is_control());
        assert_eq!(p.payload(), &[0xff, 0xff]);
        Packet::new_unchecked(&mut b[..]).emit(41);
        assert_eq!(b[..4], [0x00, 0x29, 0x00, 0x00]);
    }

    #[test]
    fn checked_refuses_short_and_other_versions() {
        assert_eq!(
            Packet::new_checked(&[0u8; 3][..]),
            Err(WireError::Truncated)
        );
        // Hlen 1: 8 bytes needed
        assert_eq!(
            Packet::new_checked(&[0x01u8, 4, 0, 0, 0][..]),
            Err(WireError::Truncated)
        );
        assert_eq!(
            Packet::new_checked(&[0x40u8, 4, 0, 0][..]),
            Err(WireError::BadVersion)
        );
        let p = Packet::new_checked(&[0x21u8, 0, 0, 0, 1, 2, 3, 4][..]).unwrap();
        assert!(p.is_control());
        assert_eq!(p.header_len(), 8);
    }
}
