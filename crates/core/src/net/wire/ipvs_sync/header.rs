//! The message header: the version this codec speaks, the header's
//! lengths and byte offsets, its view and what a receiver reads of it.

use crate::net::wire::error::WireError;

/// The message version this codec speaks (`SYNC_PROTO_VER`).
pub const SYNC_VERSION: u8 = 1;
/// Length of the version 1 message header (`struct ip_vs_sync_mesg`).
pub const HEADER_LEN: usize = 8;
/// Length of a version 0 message header (`struct ip_vs_sync_mesg_v0`).
pub const HEADER_V0_LEN: usize = 4;
/// The most entries a message holds (its count is one byte).
pub const MAX_ENTRIES: usize = 255;

/// Byte ranges of the message header.
pub mod field {
    use core::ops::Range;
    /// Zero in version 1 (a version 0 message's entry count).
    pub const RESERVED: usize = 0;
    /// Sync ID (the group of directors).
    pub const SYNCID: usize = 1;
    /// Length of the whole message, header included.
    pub const SIZE: Range<usize> = 2..4;
    /// Number of entries.
    pub const COUNT: usize = 4;
    /// Version (1).
    pub const VERSION: usize = 5;
    /// Zero.
    pub const SPARE: Range<usize> = 6..8;
}

view!(
    /// A view of a message header (the buffer is the UDP payload).
    Header,
    check_len
);

impl<T: AsRef<[u8]>> Header<T> {
    /// The check `new_checked` makes: the 8 header bytes are there (the
    /// message's own rules are [`parse`](super::parse)'s).
    pub fn check_len(&self) -> Result<(), WireError> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        Ok(())
    }
}

accessors! {
    Header;
    /// Reserved byte (0 in version 1).
    reserved, set_reserved: u8 = field::RESERVED;
    /// Sync ID.
    syncid, set_syncid: u8 = field::SYNCID;
    /// Message size, header included.
    size, set_size: u16 = field::SIZE;
    /// Number of entries.
    count, set_count: u8 = field::COUNT;
    /// Version.
    version, set_version: u8 = field::VERSION;
    /// Spare (0).
    spare, set_spare: u16 = field::SPARE;
}

/// A message header as received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderRepr {
    /// Sync ID.
    pub syncid: u8,
    /// Message size, header included (the datagram's length).
    pub size: u16,
    /// Number of entries the message says it has.
    pub count: u8,
    /// Version (1).
    pub version: u8,
}
