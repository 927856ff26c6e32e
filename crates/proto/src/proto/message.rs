//! The control messages: the requests ([`Request`], with the listing
//! options [`ListOpts`]) and their successful answers ([`Response`]).

use super::batch::BatchCmd;
use crate::view::{
    AddrInfo, CensusInfo, ConnInfo, DropCount, FingerprintInfo, HandoffInfo, HealthReport,
    LcoreInfo, MacAddr, NeighInfo, PortInfo, RouteInfo, ServiceList, SnatReport, SyncInfo,
    VersionInfo, VipReport,
};
use dirigo_core::lb::mark::MarkRule;
use dirigo_core::lb::spec::{DestKey, ServiceKey, Timeouts};
use serde::{Deserialize, Serialize};

/// Which listing details the server should fill in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListOpts {
    /// Only this service (error
    /// [`ErrCode::NoService`](crate::proto::ErrCode::NoService) if absent).
    #[serde(default)]
    pub service: Option<ServiceKey>,
    /// Fill the cumulative counters (`--stats`).
    #[serde(default)]
    pub stats: bool,
    /// Fill the rates (`--rate`).
    #[serde(default)]
    pub rate: bool,
}

/// A control request. Serialized with an `"op"` tag:
/// `{"op":"add_service","service":{...}}`, `{"op":"clear"}`, ... A
/// [`BatchCmd`] is sent as itself (its `op` is the request's).
///
/// The `Serialize` and `Deserialize` impls add [`Request::Mutate`] to the
/// derived ones, which serde generates as the inherent
/// `Request::serialize` / `Request::deserialize` (`remote = "Self"`):
/// call the traits (`serde_json::to_string`, `<Request as Deserialize>`),
/// not those.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", remote = "Self")]
pub enum Request {
    /// Change the service table (one [`BatchCmd`]). Answer: [`Response::Done`].
    #[serde(skip)]
    Mutate(BatchCmd),
    /// List services with their real servers (`-L`, `-S`). Answer: [`Response::Services`].
    List(ListOpts),
    /// List connection entries (`-L -c`). Answer: [`Response::Conns`].
    ListConns {
        /// Only connections of this service.
        #[serde(default)]
        service: Option<ServiceKey>,
        /// At most this many entries (the server may cap it anyway).
        #[serde(default)]
        limit: Option<u32>,
    },
    /// Get connection timeouts (`-L --timeout`). Answer: [`Response::Timeouts`].
    GetTimeouts,
    /// Apply a list of mutations atomically (`-R`): either all apply or none
    /// does; on failure the error's `at` is the failing command's index.
    RestoreBatch {
        /// The commands, in order.
        cmds: Vec<BatchCmd>,
    },
    /// Port link state and counters. Answer: [`Response::Ports`].
    Ports {
        /// Also fill the extended (driver) counters.
        #[serde(default)]
        xstats: bool,
    },
    /// The addresses configured on ports. Answer: [`Response::Addresses`].
    Addresses,
    /// Add an address to a port (and to its kernel interface, when it has
    /// one). Errors: `no_port`, `exists`.
    AddrAdd {
        /// Port index.
        port: u16,
        /// Address, IPv4 or IPv6 (global or unique-local unicast).
        addr: std::net::IpAddr,
        /// Prefix length of the connected network.
        prefix_len: u8,
    },
    /// Remove an address from a port. Errors: `not_found`.
    AddrDel {
        /// Port index.
        port: u16,
        /// Address, IPv4 or IPv6.
        addr: std::net::IpAddr,
    },
    /// The route table. Answer: [`Response::Routes`].
    Routes,
    /// The neighbor (ARP) table. Answer: [`Response::Neighbors`].
    Neighbors,
    /// Add a static neighbor entry.
    NeighAdd {
        /// Port index.
        port: u16,
        /// IPv4 or IPv6 address.
        addr: std::net::IpAddr,
        /// Its MAC.
        mac: MacAddr,
    },
    /// Flush dynamic neighbor entries (of one port, or all).
    NeighFlush {
        /// Only this port.
        #[serde(default)]
        port: Option<u16>,
    },
    /// Per-lcore counters. Answer: [`Response::Lcores`].
    Lcores,
    /// Drop reasons and counts. Answer: [`Response::Drops`].
    Drops,
    /// Re-read the configuration file and apply it.
    Reload,
    /// Daemon version. Answer: [`Response::Version`].
    Version,
    /// Health of every checked real server. Answer: [`Response::Health`].
    Health,
    /// Take a checked real server out for maintenance (`enable = false`)
    /// or give it back to its checks. Errors: `not_found`.
    HealthSet {
        /// The service.
        service: ServiceKey,
        /// The real server (address and port).
        dest: DestKey,
        /// Whether it is enabled.
        enable: bool,
    },
    /// Connection sync: settings and counters. Answer: [`Response::Sync`]
    /// (`null` when `[sync]` is off).
    Sync,
    /// Each service's scheduler table fingerprint, in service order
    /// (protocol, VIP, port), to compare across directors. Answer:
    /// [`Response::Fingerprints`]. Errors: `no_service`.
    Fingerprint {
        /// Only this service.
        #[serde(default)]
        service: Option<ServiceKey>,
    },
    /// Every VIP's announce state (`[announce]`). Answer:
    /// [`Response::Vips`].
    Vips,
    /// Each worker's connections counted every way at one moment. Answer:
    /// [`Response::Census`].
    Census,
    /// The connection handoff at this process's start: entries written,
    /// installed, refused by reason, and the gap. Answer:
    /// [`Response::Handoff`].
    Handoff,
    /// The mark rules (`[[mark]]`, `dirigoctl mark`), in order. Answer:
    /// [`Response::Marks`].
    Marks,
    /// Add a mark rule. Answer: [`Response::Done`]. Errors: `invalid`
    /// (a bad rule, one overlapping another).
    MarkAdd {
        /// The rule.
        rule: MarkRule,
    },
    /// Delete a mark rule (given exactly as listed). Answer:
    /// [`Response::Done`]. Errors: `invalid` (no such rule).
    MarkDel {
        /// The rule.
        rule: MarkRule,
    },
    /// The SNAT rules (`[[snat]]`) with their connections. Answer:
    /// [`Response::Snat`].
    Snat,
}

impl From<BatchCmd> for Request {
    fn from(c: BatchCmd) -> Request {
        Request::Mutate(c)
    }
}

/// A successful answer. Serialized adjacently tagged:
/// `{"kind":"services","data":{...}}`, `{"kind":"done"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum Response {
    /// The mutation was applied (no payload).
    Done,
    /// Services with their real servers.
    Services(ServiceList),
    /// Connection entries.
    Conns(Vec<ConnInfo>),
    /// Connection timeouts.
    Timeouts(Timeouts),
    /// Ports.
    Ports(Vec<PortInfo>),
    /// Port addresses.
    Addresses(Vec<AddrInfo>),
    /// Routes.
    Routes(Vec<RouteInfo>),
    /// Neighbors.
    Neighbors(Vec<NeighInfo>),
    /// Per-lcore counters.
    Lcores(Vec<LcoreInfo>),
    /// Health checks.
    Health(HealthReport),
    /// Drop counters.
    Drops(Vec<DropCount>),
    /// Version information.
    Version(VersionInfo),
    /// Connection sync (`None`: off).
    Sync(Option<SyncInfo>),
    /// Scheduler table fingerprints.
    Fingerprints(Vec<FingerprintInfo>),
    /// VIPs and their announce state.
    Vips(VipReport),
    /// Each worker's connection census.
    Census(Vec<CensusInfo>),
    /// The connection handoff.
    Handoff(HandoffInfo),
    /// The mark rules.
    Marks(Vec<MarkRule>),
    /// The SNAT rules and their connections.
    Snat(SnatReport),
}

impl Request {
    /// The request's `op` name, for logs and messages.
    pub fn op_name(&self) -> &'static str {
        match self {
            Request::Mutate(c) => c.op_name(),
            Request::List(_) => "list",
            Request::ListConns { .. } => "list_conns",
            Request::GetTimeouts => "get_timeouts",
            Request::RestoreBatch { .. } => "restore_batch",
            Request::Ports { .. } => "ports",
            Request::Addresses => "addresses",
            Request::AddrAdd { .. } => "addr_add",
            Request::AddrDel { .. } => "addr_del",
            Request::Routes => "routes",
            Request::Neighbors => "neighbors",
            Request::NeighAdd { .. } => "neigh_add",
            Request::NeighFlush { .. } => "neigh_flush",
            Request::Lcores => "lcores",
            Request::Drops => "drops",
            Request::Reload => "reload",
            Request::Version => "version",
            Request::Health => "health",
            Request::HealthSet { .. } => "health_set",
            Request::Sync => "sync",
            Request::Fingerprint { .. } => "fingerprint",
            Request::Vips => "vips",
            Request::Census => "census",
            Request::Handoff => "handoff",
            Request::Marks => "marks",
            Request::MarkAdd { .. } => "mark_add",
            Request::MarkDel { .. } => "mark_del",
            Request::Snat => "snat",
        }
    }
}
