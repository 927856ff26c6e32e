//! Connection sync, the core's side (sans-IO): what a worker hands to the
//! sync sender and what it installs from other directors.
//!
//! Several directors behind router ECMP share their connections with the
//! Linux IPVS sync protocol (version 1; the messages are
//! [`crate::net::wire::ipvs_sync`], the sockets and batching
//! `daemon::sync`). A worker never touches a socket: the balancer pushes a
//! [`SyncConn`] on a bounded queue when a connection is worth telling the
//! others about (a full queue is a counted loss), and the worker installs
//! what the receiver queued for it at housekeeping, a bounded number per
//! tick ([`INSTALL_PER_TICK`]).
//!
//! When a connection is sent ([`SyncPolicy`], after IPVS's
//! `ip_vs_sync_conn_needed`):
//! * TCP: when it enters ESTABLISHED, FIN_WAIT, CLOSE_WAIT, TIME_WAIT or
//!   CLOSE (the states IPVS syncs; a handshake in progress is not sent);
//! * UDP: at its `udp_threshold`-th packet (IPVS `sync_threshold`, 3: a
//!   one-packet flow is not worth a message) — the record's state byte,
//!   unused for UDP, counts the first packets;
//! * then again about every `refresh_period` of traffic while it stays in
//!   such a state (IPVS `sync_refresh_period`), so the copies elsewhere
//!   never time out while the flow lives. There is no room for a packet
//!   counter or a last-sync time in the 32-byte record, so the refresh is
//!   the moment the connection's expiry crosses a multiple of
//!   2^`refresh_shift` ms — once per such period of activity, with no
//!   state at all. IPVS's `sync_period` (every 50th packet) is not kept.
//!
//! IPv6 connections (DR, TUN, NAT) are sent and installed by the same
//! rules, in the protocol's IPv6 entries and the worker's IPv6 table
//! ([`SyncConn::v6`]); NAT64 connections are not sent (an entry has no
//! room for the pool address and port their replies come back to).
//!
//! A received connection is installed as *synced* ([`crate::lb::conn::F_SYNCED`])
//! with the timeout it came with, counted in its real server's active or
//! inactive connections like IPVS's backup does, and forwarded like any
//! other when a packet of its flow arrives (the director never saw the
//! SYN: the flow was moved here by the routers). Its first local packet
//! makes it this director's own: from then on it is synced from here and
//! a peer's copy no longer overwrites it. Received entries may fill at most
//! 7/8 of the table ([`SYNC_FILL_LIMIT`]), so a flood of sync messages
//! cannot take the room local connections need.
//!
//! A director that starts knows nothing of the flows the others carry, and
//! IPVS would only tell it about each at its next state change or refresh.
//! So dirigo's sync thread sends a message without entries each second
//! for its first five (valid for Linux too, which ignores it: its links
//! may come up after the process), and a director that
//! receives such a message from a peer sends its whole table again
//! ([`crate::lb::balancer::Balancer::resend_all`], [`RESEND_PER_TICK`]
//! records per tick): the newcomer is warm within about a second, before
//! the routers (BGP, BFD) move flows to it.

use crate::counters::counter_enum;
use crate::lb::spec::Method;

counter_enum! {
    /// What a worker did with connection sync.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum SyncCount {
        /// Connections handed to the sync sender.
        Queued: count = "sync_queued",
        /// Connections not sent: the sender's queue was full.
        QueueFull: drop = "sync_queue_full",
        /// Connections sent again because another director started.
        Resent: count = "sync_resent",
        /// Received connections installed.
        Installed: count = "sync_installed",
        /// Received connections that refreshed a synced one.
        Updated: count = "sync_updated",
        /// Received connections this director forwards itself (its own
        /// state wins).
        LocalKept: count = "sync_local_kept",
        /// Received connections for a service this director does not have.
        NoService: drop = "sync_no_service",
        /// Received connections to a real server the service does not have.
        NoDest: drop = "sync_no_dest",
        /// Received connections refused: synced entries fill their share of
        /// the table, or no record was free.
        TableFull: drop = "sync_table_full",
        /// Received connections dirigo does not install: persistence
        /// templates, local-node and bypass connections, a protocol other
        /// than TCP or UDP, an unknown state.
        Unsupported: drop = "sync_unsupported",
    }
}

/// Received connections a worker installs per housekeeping tick (1 ms): a
/// sync flood costs a worker a bounded slice of every millisecond.
pub const INSTALL_PER_TICK: usize = 256;

/// Records a worker looks at per housekeeping tick while it sends its whole
/// table again (a million-connection table in about a second).
pub const RESEND_PER_TICK: u32 = 1024;

/// Synced entries may fill at most this fraction (in 1/8) of a table.
pub const SYNC_FILL_LIMIT: u32 = 7;

/// One connection as the sync protocol carries it, IPv4 or IPv6
/// (addresses host order: an IPv4 one in the low 32 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SyncConn {
    /// An IPv6 connection (its addresses are IPv6; an IPv6 entry on the
    /// wire). False: IPv4, each address a `u32` widened.
    pub v6: bool,
    /// IP protocol (6 TCP, 17 UDP).
    pub proto: u8,
    /// TCP state ([`crate::lb::state::TcpState`] numbering = IPVS's); 0 for UDP.
    pub state: u8,
    /// No reply seen yet (IPVS `IP_VS_CONN_F_NOOUTPUT`).
    pub no_output: bool,
    /// Forwarding method, `None` for what dirigo does not forward.
    pub method: Option<Method>,
    /// A persistence template (IPVS `IP_VS_CONN_F_TEMPLATE`).
    pub template: bool,
    /// Client address.
    pub caddr: u128,
    /// Virtual address.
    pub vaddr: u128,
    /// Real server address.
    pub daddr: u128,
    /// Client port.
    pub cport: u16,
    /// Virtual port.
    pub vport: u16,
    /// Real server port.
    pub dport: u16,
    /// Remaining timeout in seconds (0: the state's default).
    pub timeout_s: u32,
}

impl SyncConn {
    /// The IPv4 client address (the low 32 bits; meaningless for IPv6).
    #[inline]
    pub fn caddr4(&self) -> u32 {
        self.caddr as u32
    }
    /// The IPv4 virtual address.
    #[inline]
    pub fn vaddr4(&self) -> u32 {
        self.vaddr as u32
    }
    /// The IPv4 real server address.
    #[inline]
    pub fn daddr4(&self) -> u32 {
        self.daddr as u32
    }
}

/// The bounded queue between workers and the sync thread (either way).
pub type SyncQueue = crossbeam_queue::ArrayQueue<SyncConn>;

/// When the balancer sends a connection (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncPolicy {
    /// UDP: sent at this packet (1..=255; IPVS `sync_threshold`).
    pub udp_threshold: u8,
    /// Refresh about every 2^`refresh_shift` ms of activity; 0 = never.
    pub refresh_shift: u8,
}

impl SyncPolicy {
    /// From IPVS-style settings: the UDP threshold (clamped to 1..=255)
    /// and the refresh period in seconds (0 = none), rounded up to a power
    /// of two milliseconds.
    pub fn new(udp_threshold: u32, refresh_period_s: u32) -> SyncPolicy {
        let refresh_shift = if refresh_period_s == 0 {
            0
        } else {
            let ms = (refresh_period_s as u64 * 1000).min(1 << 30);
            (64 - (ms - 1).leading_zeros()) as u8
        };
        SyncPolicy {
            udp_threshold: udp_threshold.clamp(1, 255) as u8,
            refresh_shift,
        }
    }

    /// The refresh period as applied, in milliseconds (0 = none).
    pub fn refresh_ms(&self) -> u64 {
        if self.refresh_shift == 0 {
            0
        } else {
            1 << self.refresh_shift
        }
    }
}

impl Default for SyncPolicy {
    /// IPVS's threshold (3) and a refresh about every minute.
    fn default() -> Self {
        SyncPolicy::new(3, 60)
    }
}

#[cfg(test)]
mod tests;
