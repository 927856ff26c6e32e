//! Why a sync message, or one entry of it, is refused.

/// Why a message, or one entry of it, was refused. The first four come
/// from [`parse`](super::parse) (the message is dropped); the others from
/// [`Entries`](super::Entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    /// The datagram is shorter than a header, or ends before an entry the
    /// count promises (or before the size an entry states).
    #[error("truncated sync message")]
    Truncated,
    /// The header's size is not the datagram's length.
    #[error("sync message size is not the datagram's length")]
    BadSize,
    /// Linux's old version 0 format (reserved byte not 0, or a 4-byte
    /// header alone), which dirigo does not read.
    #[error("sync message in the old version 0 format")]
    Version0,
    /// Version not 1, or the spare field not 0.
    #[error("sync message version is not 1")]
    BadVersion,
    /// An entry of unknown type, of a version other than 0, or with a
    /// size below its fixed part.
    #[error("malformed sync entry")]
    BadEntry,
    /// A malformed option: past the entry, of length 0, sequence data not
    /// 24 bytes, a name over 16, an option given twice.
    #[error("malformed sync entry option")]
    BadOption,
    /// An option of unknown type without the may-ignore bit: the entry is
    /// skipped.
    #[error("unknown mandatory sync entry option")]
    UnknownOption,
    /// Persistence-engine data: dirigo has no engines (Linux drops such an
    /// entry too unless it has the named engine); the entry is skipped.
    #[error("sync entry with persistence-engine data")]
    PeData,
    /// A connection (not a template) of a protocol other than TCP and UDP:
    /// the entry is skipped.
    #[error("sync entry of an unsupported protocol")]
    BadProtocol,
    /// A connection's state is not one of its protocol's: the entry is
    /// skipped.
    #[error("sync entry with an invalid state")]
    BadState,
}

impl SyncError {
    /// Every variant, in declaration order.
    pub const ALL: [SyncError; 10] = [
        SyncError::Truncated,
        SyncError::BadSize,
        SyncError::Version0,
        SyncError::BadVersion,
        SyncError::BadEntry,
        SyncError::BadOption,
        SyncError::UnknownOption,
        SyncError::PeData,
        SyncError::BadProtocol,
        SyncError::BadState,
    ];

    /// A snake_case name (a drop counter's).
    pub fn name(&self) -> &'static str {
        match self {
            SyncError::Truncated => "truncated",
            SyncError::BadSize => "bad_size",
            SyncError::Version0 => "version0",
            SyncError::BadVersion => "bad_version",
            SyncError::BadEntry => "bad_entry",
            SyncError::BadOption => "bad_option",
            SyncError::UnknownOption => "unknown_option",
            SyncError::PeData => "pe_data",
            SyncError::BadProtocol => "bad_protocol",
            SyncError::BadState => "bad_state",
        }
    }

    /// True when only the entry is dropped and [`Entries`] goes on with the
    /// next one (Linux's positive return codes); false when the rest of
    /// the message is dropped.
    pub fn skips_entry(&self) -> bool {
        matches!(
            self,
            SyncError::UnknownOption
                | SyncError::PeData
                | SyncError::BadProtocol
                | SyncError::BadState
        )
    }
}
