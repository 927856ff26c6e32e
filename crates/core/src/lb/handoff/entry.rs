//! The entries of a handoff file, its header, and what is counted of
//! a handoff (the format's rules are in the module docs of
//! [`super`]).

use crate::counters::counter_enum;
use crate::lb::spec::Method;
use crate::lb::synproxy::Aux;

/// The file's first eight bytes.
pub const MAGIC: [u8; 8] = *b"DIRIGOHO";

/// The format version (see the module docs for when it changes). 2:
/// FullNAT connections (the method, and the IPv6 local address).
pub const VERSION: u32 = 2;

/// One connection as handed over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnEntry {
    /// An IPv6 connection (addresses are IPv6; else IPv4 in the low 32
    /// bits).
    pub v6: bool,
    /// IP protocol.
    pub proto: u8,
    /// [`crate::lb::state::TcpState`] as u8.
    pub state: u8,
    /// The record's `F_*` flags (`F_USED` included).
    pub flags: u8,
    /// Forwarding method.
    pub method: Method,
    /// Client address.
    pub caddr: u128,
    /// Virtual address.
    pub vaddr: u128,
    /// Real server address (NAT64: IPv4-mapped).
    pub daddr: u128,
    /// Client port.
    pub cport: u16,
    /// Virtual port.
    pub vport: u16,
    /// Real server port.
    pub dport: u16,
    /// Milliseconds the connection's timer had left.
    pub left_ms: u32,
    /// The local leg: NAT64's IPv4 pool address and port, IPv4
    /// FullNAT's local address and port, IPv6 FullNAT's port (with
    /// [`ConnEntry::laddr6`]); (0, 0) otherwise.
    pub nat64: (u32, u16),
    /// IPv6 FullNAT: the local address the requests leave from (0
    /// otherwise).
    pub laddr6: u128,
    /// FullNAT: how the client's address reaches the real server
    /// ([`crate::lb::spec::ClientAddress`] as its number; 0: not at all).
    pub cip: u8,
    /// With `cip`: where the connection's PROXY header (or TOA option)
    /// stands — the client's sequence number it goes before, its length,
    /// its [`crate::lb::shift::Phase`] number — from which the shift of
    /// every later segment follows.
    pub insert: Option<(u32, u16, u8)>,
    /// The connection's service is the fwmark service of this mark (0:
    /// a protocol, address and port service, named by `vaddr`, `vport`).
    pub fwmark: u32,
    /// The SYN proxy's state of the connection (its sequence and
    /// timestamp deltas), when it was proxied.
    pub sp: Option<Aux>,
}

impl ConnEntry {
    /// Whether the client is an IPv4 one: an IPv4 connection, or an
    /// IPv4 FullNAT one, which the IPv6 table keeps with its addresses
    /// IPv4-mapped (`::ffff:a.b.c.d`). Its worker is an IPv4 client's.
    pub fn ipv4_client(&self) -> bool {
        !self.v6 || self.caddr >> 32 == 0xffff
    }
}

/// One persistence template without connections (templates that have
/// connections come back with them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TemplateEntry {
    /// An IPv6 service.
    pub v6: bool,
    /// The service's protocol.
    pub proto: u8,
    /// The service's VIP.
    pub vip: u128,
    /// The service's port.
    pub vport: u16,
    /// The template's client key (masked client address; IPv6: folded).
    pub client: u32,
    /// The real server's address.
    pub daddr: u128,
    /// The real server's port.
    pub dport: u16,
    /// Milliseconds the template had left.
    pub left_ms: u32,
    /// The fwmark service of this mark (0: the service of `vip`,
    /// `vport`).
    pub fwmark: u32,
}

/// One entry of a handoff file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A connection.
    Conn(ConnEntry),
    /// A persistence template.
    Template(TemplateEntry),
}

/// What a file says of itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// When the old process stopped forwarding (Unix time, ns).
    pub stopped_unix_ns: u64,
    /// How many entries follow.
    pub entries: u64,
}

/// Why a whole file is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileRefusal {
    /// Not a handoff file.
    #[error("not a dirigo handoff file (bad magic)")]
    Magic,
    /// Written by a process of another format version.
    #[error("format version {0}, this dirigo reads {VERSION}")]
    Version(u32),
    /// Shorter or longer than its header says.
    #[error("truncated (or trailing bytes)")]
    Truncated,
    /// The checksum does not match the contents.
    #[error("checksum mismatch")]
    Checksum,
    /// An entry of an unknown kind or an impossible value.
    #[error("malformed entry {0}")]
    Malformed(u64),
}

impl FileRefusal {
    /// The counter it is counted under.
    pub fn count(self) -> HandoffCount {
        match self {
            FileRefusal::Magic => HandoffCount::FileMagic,
            FileRefusal::Version(_) => HandoffCount::FileVersion,
            FileRefusal::Truncated => HandoffCount::FileTruncated,
            FileRefusal::Checksum => HandoffCount::FileChecksum,
            FileRefusal::Malformed(_) => HandoffCount::FileMalformed,
        }
    }
}

counter_enum! {
    /// What became of a handoff: entries written and installed, and why
    /// files and entries were refused.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum HandoffCount {
        /// Entries the old process wrote (the file's header).
        Written: count = "handoff_written",
        /// Connections installed.
        Installed: count = "handoff_installed",
        /// Persistence templates installed.
        TemplatesInstalled: count = "handoff_templates_installed",
        /// Files refused: not a handoff file.
        FileMagic: drop = "handoff_file_magic",
        /// Files refused: another format version.
        FileVersion: drop = "handoff_file_version",
        /// Files refused: truncated.
        FileTruncated: drop = "handoff_file_truncated",
        /// Files refused: the checksum does not match.
        FileChecksum: drop = "handoff_file_checksum",
        /// Files refused: an entry could not be read.
        FileMalformed: drop = "handoff_file_malformed",
        /// Entries refused: the service no longer exists.
        NoService: drop = "handoff_no_service",
        /// Entries refused: the real server is no longer in the service.
        NoDest: drop = "handoff_no_dest",
        /// Entries refused: the real server is now reached by another
        /// method (its translation would be wrong).
        MethodChanged: drop = "handoff_method_changed",
        /// Entries refused: SYN-proxied, and this process has no SYN proxy.
        NoSynproxy: drop = "handoff_no_synproxy",
        /// Entries refused: a NAT64 pool address this configuration does
        /// not have, or a pool port another worker now owns.
        Nat64Pool: drop = "handoff_nat64_pool",
        /// Entries refused: their timer had run out.
        Expired: drop = "handoff_expired",
        /// Entries refused: the tuple is in the table already.
        Exists: drop = "handoff_exists",
        /// Entries refused: no room in the owner's table.
        TableFull: drop = "handoff_table_full",
        /// Entries refused: a protocol, state or method dirigo does not
        /// keep.
        Unsupported: drop = "handoff_unsupported",
    }
}
