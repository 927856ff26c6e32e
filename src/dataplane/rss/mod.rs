//! RSS on the client address (sans-IO): which port configuration makes the
//! NIC deliver both directions of a connection to the worker that owns it,
//! and the owner function that agrees with the NIC.
//!
//! A packet's owner is the worker of its client address (see
//! `pipeline::owner_of`). A NIC that can hash on the source address only
//! (`RTE_ETH_RSS_L3_SRC_ONLY`) on the client-facing port and on the
//! destination address only (`L3_DST_ONLY`) on the server-facing port
//! hashes both directions of a NAT connection on the same 32 bits, the
//! client's address. With one Toeplitz key and one redirection table
//! (RETA) on every port, and the pipeline's owner being
//! `reta[toeplitz(client)]` ([`ClientOwner`]), the queue a packet arrives
//! on is its owner's and nothing is handed over. The pipeline still checks
//! every packet's owner, so a NIC that hashes differently (or an ICMP
//! error, whose owner is the connection it quotes) costs a hand-over,
//! never a wrong answer.
//!
//! [`plan`] decides per port, from what the device reports, and says why
//! when software steering is still needed. Nothing here calls DPDK.

use std::fmt;

/// `RTE_ETH_RSS_IPV4` (the values are DPDK's ABI; `daemon::rss` checks
/// them against the headers through the shim).
pub const RSS_IPV4: u64 = 1 << 2;
/// `RTE_ETH_RSS_FRAG_IPV4`.
pub const RSS_FRAG_IPV4: u64 = 1 << 3;
/// `RTE_ETH_RSS_NONFRAG_IPV4_TCP`.
pub const RSS_NONFRAG_IPV4_TCP: u64 = 1 << 4;
/// `RTE_ETH_RSS_NONFRAG_IPV4_UDP`.
pub const RSS_NONFRAG_IPV4_UDP: u64 = 1 << 5;
/// `RTE_ETH_RSS_NONFRAG_IPV4_OTHER`.
pub const RSS_NONFRAG_IPV4_OTHER: u64 = 1 << 7;
/// `RTE_ETH_RSS_L3_SRC_ONLY`.
pub const RSS_L3_SRC_ONLY: u64 = 1 << 63;
/// `RTE_ETH_RSS_L3_DST_ONLY`.
pub const RSS_L3_DST_ONLY: u64 = 1 << 62;
/// `RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP`: the plain 5-tuple
/// RSS dirigo asks for where the NIC cannot hash on the client address
/// (IPv4 and IPv6 types, as before).
pub const RSS_PLAIN: u64 = RSS_IPV4
    | RSS_FRAG_IPV4
    | RSS_NONFRAG_IPV4_TCP
    | RSS_NONFRAG_IPV4_UDP
    | RSS_NONFRAG_IPV4_OTHER
    | (1 << 8)   // IPV6
    | (1 << 9)   // FRAG_IPV6
    | (1 << 10)  // NONFRAG_IPV6_TCP
    | (1 << 11)  // NONFRAG_IPV6_UDP
    | (1 << 13)  // NONFRAG_IPV6_OTHER
    | (1 << 15)  // IPV6_EX
    | (1 << 16)  // IPV6_TCP_EX
    | (1 << 17); // IPV6_UDP_EX

/// The IPv4 hash types asked for with an L3-only modifier. Only L3 types:
/// DPDK's SRC_ONLY/DST_ONLY bits select within a level, so
/// `NONFRAG_IPV4_TCP | L3_SRC_ONLY` would still hash the TCP ports, and a
/// connection's two directions (different ports after NAT) would part.
pub const RSS_CLIENT_TYPES: u64 = RSS_IPV4 | RSS_FRAG_IPV4 | RSS_NONFRAG_IPV4_OTHER;

/// The Toeplitz key on every port: the well-known default of Microsoft's
/// RSS specification (and of most drivers), whose published test vectors
/// check [`toeplitz`]. Devices with a longer key (52 bytes on i40e/ice)
/// get it repeated; a 4-byte input uses only its first 8 bytes.
pub const KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// The largest software redirection table: any port's RETA (a power of
/// two at least this large or smaller) maps onto it.
pub const MAX_RETA: usize = 512;

/// Toeplitz hash of `input` (network byte order) under `key`, bit by bit:
/// for each set input bit i (most significant first) the 32 key bits from
/// bit i are XORed in. `key` must be at least `input.len() + 4` bytes;
/// missing key bytes count as zero.
pub fn toeplitz(key: &[u8], input: &[u8]) -> u32 {
    let k = |i: usize| key.get(i).copied().unwrap_or(0);
    let mut window = u32::from_be_bytes([k(0), k(1), k(2), k(3)]);
    let mut hash = 0u32;
    for (i, &byte) in input.iter().enumerate() {
        let next = k(i + 4);
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                hash ^= window;
            }
            window = (window << 1) | u32::from((next >> (7 - bit)) & 1);
        }
    }
    hash
}

/// Which address of a packet a port's NIC hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hashed {
    /// The source (`L3_SRC_ONLY`): clients' requests to VIPs.
    Source,
    /// The destination (`L3_DST_ONLY`): NAT replies to clients.
    Destination,
}

pub use dirigo_config::PortRole;

/// What a port can do, as far as RSS goes (from `rte_eth_dev_info`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RssCaps {
    /// Driver name ("net_tap", "net_i40e").
    pub driver: String,
    /// `flow_type_rss_offloads`.
    pub rss_offloads: u64,
    /// Maximum RX queues.
    pub max_rx_queues: u16,
    /// Redirection table entries (0: none reported).
    pub reta_size: u16,
    /// RSS key length in bytes (0: the key cannot be set).
    pub hash_key_size: u8,
}

/// Why a port's packets still go through software steering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// One worker: there is nothing to steer.
    OneWorker,
    /// `[dataplane] rss = false`.
    RssOff,
    /// The device has no RSS (net_tap, net_pcap, net_ring).
    NoRss { driver: String },
    /// The device has RSS but not on one address only.
    NoL3Only { driver: String, want: &'static str },
    /// Fewer RX queues than workers.
    FewQueues {
        driver: String,
        have: u16,
        need: u16,
    },
    /// A redirection table that cannot be laid out per worker.
    Reta { driver: String, size: u16 },
    /// The RSS key cannot be set (too short or not settable).
    Key { driver: String, size: u8 },
    /// The port faces clients and servers: the NIC hashes the source, NAT
    /// replies (destination = client) are steered in software.
    BothSides,
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::OneWorker => write!(f, "one worker, nothing to steer"),
            Why::RssOff => write!(f, "[dataplane] rss = false"),
            Why::NoRss { driver } => write!(f, "{driver} has no RSS"),
            Why::NoL3Only { driver, want } => write!(f, "{driver} cannot hash on {want} alone"),
            Why::FewQueues { driver, have, need } => {
                write!(f, "{driver} has {have} RX queues for {need} workers")
            }
            Why::Reta { driver, size } => write!(
                f,
                "{driver}'s redirection table ({size} entries) is not a power of two as large as the workers"
            ),
            Why::Key { driver, size } => {
                write!(f, "{driver}'s RSS key ({size} bytes) cannot be set")
            }
            Why::BothSides => write!(
                f,
                "the port faces clients and servers (role = both): NAT replies are steered in software"
            ),
        }
    }
}

/// How one port is configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortPlan {
    /// RX queues to set up.
    pub rx_queues: u16,
    /// `rss_hf` (0: no RSS).
    pub rss_hf: u64,
    /// The RSS key to program (empty: the driver's own).
    pub key: Vec<u8>,
    /// The redirection table to program, queue per entry (empty: the
    /// driver's default).
    pub reta: Vec<u16>,
    /// What the NIC hashes (none: plain RSS or none).
    pub hashed: Option<Hashed>,
    /// Why some packets of this port still need software steering (none:
    /// every packet of a connection arrives at its owner's queue).
    pub software: Option<Why>,
}

impl fmt::Display for PortPlan {
    /// The start-up log line's tail ("RSS on the client address ...").
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.hashed, &self.software) {
            (Some(h), None) => write!(
                f,
                "RSS on the client address ({}), no software steering",
                match h {
                    Hashed::Source => "source, L3_SRC_ONLY",
                    Hashed::Destination => "destination, L3_DST_ONLY",
                }
            ),
            (Some(_), Some(why)) => {
                write!(f, "RSS on the source address (L3_SRC_ONLY); {why}")
            }
            (None, Some(why)) => write!(f, "software steering: {why}"),
            (None, None) => write!(f, "software steering"),
        }
    }
}

/// The configuration of every port and the owner function that goes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// One per port, in the order given.
    pub ports: Vec<PortPlan>,
    /// The owner function's redirection table ([`MAX_RETA`] entries, every
    /// port's RETA maps onto it) when any port hashes on the client
    /// address; none: the pipeline keeps its own hash (`owner_of`).
    pub owner_reta: Option<Vec<u16>>,
}

/// Whether a port can hash on the client address for `role`, or why not.
fn can_hash(c: &RssCaps, role: PortRole, workers: u16) -> Result<(Hashed, u64), Why> {
    let driver = || c.driver.clone();
    if c.rss_offloads == 0 || c.max_rx_queues <= 1 {
        return Err(Why::NoRss { driver: driver() });
    }
    if c.max_rx_queues < workers {
        return Err(Why::FewQueues {
            driver: driver(),
            have: c.max_rx_queues,
            need: workers,
        });
    }
    let (hashed, bit, want) = match role {
        PortRole::Client | PortRole::Both => {
            (Hashed::Source, RSS_L3_SRC_ONLY, "the source address")
        }
        PortRole::Server => (
            Hashed::Destination,
            RSS_L3_DST_ONLY,
            "the destination address",
        ),
    };
    if c.rss_offloads & RSS_IPV4 == 0 || c.rss_offloads & bit == 0 {
        return Err(Why::NoL3Only {
            driver: driver(),
            want,
        });
    }
    if !c.reta_size.is_power_of_two() || c.reta_size < workers {
        return Err(Why::Reta {
            driver: driver(),
            size: c.reta_size,
        });
    }
    if (c.hash_key_size as usize) < 8 {
        return Err(Why::Key {
            driver: driver(),
            size: c.hash_key_size,
        });
    }
    Ok((hashed, (RSS_CLIENT_TYPES & c.rss_offloads) | bit))
}

/// Plan every port for `workers` workers (`rss`: `[dataplane] rss`).
/// Ports that can hash on the client address get the same key and RETAs
/// that all map onto one table; the others keep plain RSS (or none) and
/// software steering, exactly as without this plan.
pub fn plan(ports: &[(RssCaps, PortRole)], workers: u16, rss: bool) -> Plan {
    let workers = workers.max(1);
    let checked: Vec<Result<(Hashed, u64), Why>> = ports
        .iter()
        .map(|(c, role)| {
            if workers == 1 {
                Err(Why::OneWorker)
            } else if !rss {
                Err(Why::RssOff)
            } else {
                can_hash(c, *role, workers)
            }
        })
        .collect();
    // the software table: as large as the smallest RETA of the ports that
    // hash on the client address (so each maps onto it), at most MAX_RETA
    let soft = ports
        .iter()
        .zip(&checked)
        .filter(|(_, r)| r.is_ok())
        .map(|((c, _), _)| (c.reta_size as usize).min(MAX_RETA))
        .min();
    let mut out = Vec::with_capacity(ports.len());
    for ((c, role), r) in ports.iter().zip(checked) {
        let plain_rxq = workers.min(c.max_rx_queues.max(1));
        out.push(match (r, soft) {
            (Ok((hashed, rss_hf)), Some(s)) => PortPlan {
                rx_queues: workers,
                rss_hf,
                key: KEY
                    .iter()
                    .cycle()
                    .take(c.hash_key_size as usize)
                    .copied()
                    .collect(),
                reta: (0..c.reta_size as usize)
                    .map(|i| ((i & (s - 1)) % workers as usize) as u16)
                    .collect(),
                hashed: Some(hashed),
                software: (*role == PortRole::Both).then_some(Why::BothSides),
            },
            (r, _) => {
                let hf = RSS_PLAIN & c.rss_offloads;
                PortPlan {
                    rx_queues: plain_rxq,
                    rss_hf: if rss && plain_rxq > 1 { hf } else { 0 },
                    key: Vec::new(),
                    reta: Vec::new(),
                    hashed: None,
                    software: Some(r.err().unwrap_or(Why::OneWorker)),
                }
            }
        });
    }
    let owner_reta = soft.map(|s| {
        (0..MAX_RETA)
            .map(|i| ((i & (s - 1)) % workers as usize) as u16)
            .collect()
    });
    Plan {
        ports: out,
        owner_reta,
    }
}

/// The owner function of NIC-steered set-ups: `reta[toeplitz(KEY, client)]`,
/// the queue the NIC picks for the client's address. Four table lookups
/// and three XORs per packet (a byte-wise Toeplitz table), and one more
/// lookup in the redirection table.
pub struct ClientOwner {
    table: Box<[[u32; 256]; 4]>,
    reta: Box<[u16; MAX_RETA]>,
}

impl ClientOwner {
    /// The owner function for `key` and the software table `reta` (from
    /// [`Plan::owner_reta`]; shorter tables repeat).
    pub fn new(key: &[u8], reta: &[u16]) -> ClientOwner {
        let mut table = Box::new([[0u32; 256]; 4]);
        for (pos, row) in table.iter_mut().enumerate() {
            for (v, slot) in row.iter_mut().enumerate() {
                let mut input = [0u8; 4];
                input[pos] = v as u8;
                *slot = toeplitz(key, &input);
            }
        }
        let mut r = Box::new([0u16; MAX_RETA]);
        if !reta.is_empty() {
            for (i, slot) in r.iter_mut().enumerate() {
                *slot = reta[i % reta.len()];
            }
        }
        ClientOwner { table, reta: r }
    }

    /// Toeplitz hash of one IPv4 address (host order), as the NIC computes
    /// it over the address's four bytes.
    #[inline(always)]
    pub fn hash(&self, addr: u32) -> u32 {
        let b = addr.to_be_bytes();
        self.table[0][b[0] as usize]
            ^ self.table[1][b[1] as usize]
            ^ self.table[2][b[2] as usize]
            ^ self.table[3][b[3] as usize]
    }

    /// The worker (queue) that owns `client`.
    #[inline(always)]
    pub fn owner(&self, client: u32) -> u32 {
        u32::from(self.reta[(self.hash(client) as usize) & (MAX_RETA - 1)])
    }
}

impl fmt::Debug for ClientOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOwner").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
