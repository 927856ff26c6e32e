//! What the per-lcore driver returns and how it is configured: verdicts,
//! drop reasons (with counter indices and names), worker configuration and
//! the connection listing line.

use crate::lb::spec::Proto;
use std::net::SocketAddrV4;

/// Why the core dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LbDrop {
    /// TCP/UDP to a VIP on a port/protocol with no service.
    NotAService,
    /// No real server available (none, all weight 0 or overloaded).
    NoDest,
    /// Connection table full and nothing evictable.
    TableFull,
    /// No route toward the next destination.
    NoRoute,
    /// Next hop's MAC not resolved yet.
    Unresolved,
    /// Non-SYN TCP segment with no connection.
    NotTracked,
    /// Too big for the egress MTU (TUN) and not answered with ICMP.
    TooBig,
    /// ICMP fragmentation-needed suppressed by the rate limiter.
    IcmpRateLimited,
    /// TTL expired (NAT).
    TtlExceeded,
    /// No headroom/tailroom to build the output.
    NoRoom,
    /// Metadata does not fit the frame.
    Malformed,
    /// The connection's real server was removed (`expire_nodest_conn`).
    DestRemoved,
}

impl LbDrop {
    /// Number of reasons.
    pub const COUNT: usize = 12;
    /// All reasons in index order.
    pub const ALL: [LbDrop; Self::COUNT] = [
        LbDrop::NotAService,
        LbDrop::NoDest,
        LbDrop::TableFull,
        LbDrop::NoRoute,
        LbDrop::Unresolved,
        LbDrop::NotTracked,
        LbDrop::TooBig,
        LbDrop::IcmpRateLimited,
        LbDrop::TtlExceeded,
        LbDrop::NoRoom,
        LbDrop::Malformed,
        LbDrop::DestRemoved,
    ];
    /// Index into counter arrays.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    /// Counter name.
    pub fn name(self) -> &'static str {
        match self {
            LbDrop::NotAService => "not_a_service",
            LbDrop::NoDest => "no_dest",
            LbDrop::TableFull => "table_full",
            LbDrop::NoRoute => "no_route",
            LbDrop::Unresolved => "unresolved",
            LbDrop::NotTracked => "not_tracked",
            LbDrop::TooBig => "too_big",
            LbDrop::IcmpRateLimited => "icmp_rate_limited",
            LbDrop::TtlExceeded => "ttl_exceeded",
            LbDrop::NoRoom => "no_room",
            LbDrop::Malformed => "malformed",
            LbDrop::DestRemoved => "dest_removed",
        }
    }
}

/// What the caller does with the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbVerdict {
    /// Transmit the (rewritten) frame on `port`.
    Tx {
        /// Egress port.
        port: u16,
    },
    /// Drop it (already counted).
    Drop(LbDrop),
    /// Not load-balancer traffic: the caller handles it (stack, other).
    NotForUs,
}

/// Per-worker configuration.
#[derive(Clone, Copy, Debug)]
pub struct LbWorkerConfig {
    /// Connection table capacity (fixed for the worker's life).
    pub conn_capacity: u32,
    /// Hash seed (use a random value per worker).
    pub seed: u32,
    /// ICMP fragmentation-needed messages per second.
    pub icmp_rate: u32,
    /// ICMP burst.
    pub icmp_burst: u32,
    /// Persistence template capacity (`-p` services); 0 = automatic:
    /// `conn_capacity / 4`, at least 1024.
    pub persist_capacity: u32,
}

impl Default for LbWorkerConfig {
    fn default() -> Self {
        LbWorkerConfig {
            conn_capacity: 1 << 20,
            seed: 0x5eed_1b0d,
            icmp_rate: 100,
            icmp_burst: 20,
            persist_capacity: 0,
        }
    }
}

/// One line of `ipvsadm -L -n -c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnInfo {
    /// TCP or UDP.
    pub proto: Proto,
    /// Client address and port.
    pub client: SocketAddrV4,
    /// Virtual address and port.
    pub vip: SocketAddrV4,
    /// Real server address and port.
    pub rs: SocketAddrV4,
    /// State name (`ESTABLISHED`, ..., `UDP` for UDP).
    pub state: &'static str,
    /// Seconds until expiry.
    pub expires_s: u32,
}
