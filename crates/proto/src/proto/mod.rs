//! The control protocol: newline-delimited JSON over a Unix stream socket.
//!
//! Each request is one line `{"v":1,"id":N,"req":{"op":"...",...}}`; each
//! response is one line `{"v":1,"id":N,"ok":{...}}` or
//! `{"v":1,"id":N,"err":{"code":"...","msg":"..."}}`. The `id` of a response
//! echoes the request's (0 when the request could not be parsed far enough to
//! know it). Listing payloads live in [`crate::view`], error answers in
//! `error`, and how a [`Request`] is written on the wire in `wire`.

mod error;
mod wire;

pub use error::{CtlError, ErrCode};

use crate::view::{
    AddrInfo, CensusInfo, ConnInfo, DropCount, FingerprintInfo, HealthReport, LcoreInfo, MacAddr,
    NeighInfo, PortInfo, RouteInfo, ServiceList, SyncInfo, VersionInfo, VipReport,
};
use dirigo_core::lb::spec::{DestKey, DestSpec, ServiceKey, ServiceSpec, Timeouts};
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// Protocol version spoken by this build (`"v"` in every line).
pub const PROTO_VERSION: u32 = 1;

/// Default longest request line the server accepts (bytes, without `\n`).
pub const MAX_REQUEST: usize = 1 << 20;

/// One request line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestEnvelope {
    /// Protocol version ([`PROTO_VERSION`]).
    pub v: u32,
    /// Caller-chosen id echoed in the response.
    pub id: u64,
    /// The request.
    pub req: Request,
}

/// One response line: exactly one of `ok` / `err` is present.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseEnvelope {
    /// Protocol version ([`PROTO_VERSION`]).
    pub v: u32,
    /// The id of the request answered (0 if it could not be read).
    pub id: u64,
    /// The payload on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<Response>,
    /// The error on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub err: Option<CtlError>,
}

impl ResponseEnvelope {
    /// Build the envelope for a handler result.
    pub fn new(id: u64, res: Result<Response, CtlError>) -> Self {
        match res {
            Ok(r) => ResponseEnvelope {
                v: PROTO_VERSION,
                id,
                ok: Some(r),
                err: None,
            },
            Err(e) => ResponseEnvelope {
                v: PROTO_VERSION,
                id,
                ok: None,
                err: Some(e),
            },
        }
    }

    /// Back to a `Result` (a line with neither field is a protocol error).
    pub fn into_result(self) -> Result<Response, CtlError> {
        match (self.ok, self.err) {
            (_, Some(e)) => Err(e),
            (Some(r), None) => Ok(r),
            (None, None) => Err(CtlError::new(
                ErrCode::BadResponse,
                "response has neither ok nor err",
            )),
        }
    }
}

/// Which listing details the server should fill in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListOpts {
    /// Only this service (error [`ErrCode::NoService`] if absent).
    #[serde(default)]
    pub service: Option<ServiceKey>,
    /// Fill the cumulative counters (`--stats`).
    #[serde(default)]
    pub stats: bool,
    /// Fill the rates (`--rate`).
    #[serde(default)]
    pub rate: bool,
}

/// A change to the service table: the one definition of ipvsadm's mutating
/// verbs (`-A -E -D -C -a -e -d --set -Z`). It is a request on its own
/// ([`Request::Mutate`]), a command of a [`Request::RestoreBatch`], what
/// dirigoadm parses those options to, and what the daemon applies.
/// Serialized with its own `"op"` tag: `{"op":"add_service","service":{...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum BatchCmd {
    /// Add a virtual service (`-A`). Errors: `service_exists`.
    AddService {
        /// The new service.
        service: ServiceSpec,
    },
    /// Replace a service's settings (`-E`). Errors: `no_service`.
    EditService {
        /// New settings; `service.key` selects the service.
        service: ServiceSpec,
    },
    /// Delete a service and its real servers (`-D`). Errors: `no_service`.
    DelService {
        /// Which service.
        key: ServiceKey,
    },
    /// Delete every service (`-C`).
    Clear,
    /// Add a real server (`-a`). Errors: `no_service`, `dest_exists`.
    AddDest {
        /// The service.
        service: ServiceKey,
        /// The new real server.
        dest: DestSpec,
    },
    /// Replace a real server's settings (`-e`). Errors: `no_service`, `no_dest`.
    EditDest {
        /// The service.
        service: ServiceKey,
        /// New settings; `dest.key` selects the real server.
        dest: DestSpec,
    },
    /// Delete a real server (`-d`). Errors: `no_service`, `no_dest`.
    DelDest {
        /// The service.
        service: ServiceKey,
        /// Which real server.
        dest: DestKey,
    },
    /// Set connection timeouts (`--set`); 0 keeps the current value, as IPVS.
    SetTimeouts {
        /// New timeouts.
        timeouts: Timeouts,
    },
    /// Zero counters (`-Z`) of one service or all. Errors: `no_service`.
    Zero {
        /// One service, or all when absent.
        #[serde(default)]
        service: Option<ServiceKey>,
    },
}

impl BatchCmd {
    /// The command's `op` name.
    pub fn op_name(&self) -> &'static str {
        match self {
            BatchCmd::AddService { .. } => "add_service",
            BatchCmd::EditService { .. } => "edit_service",
            BatchCmd::DelService { .. } => "del_service",
            BatchCmd::Clear => "clear",
            BatchCmd::AddDest { .. } => "add_dest",
            BatchCmd::EditDest { .. } => "edit_dest",
            BatchCmd::DelDest { .. } => "del_dest",
            BatchCmd::SetTimeouts { .. } => "set_timeouts",
            BatchCmd::Zero { .. } => "zero",
        }
    }

    /// Whether the command names a real server (`-a`, `-e`, `-d`).
    pub fn is_dest(&self) -> bool {
        matches!(
            self,
            BatchCmd::AddDest { .. } | BatchCmd::EditDest { .. } | BatchCmd::DelDest { .. }
        )
    }
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
    /// Add an address to a port. Errors: `no_port`, `exists`.
    AddrAdd {
        /// Port index.
        port: u16,
        /// Address.
        addr: Ipv4Addr,
        /// Prefix length of the connected network.
        prefix_len: u8,
    },
    /// Remove an address from a port. Errors: `not_found`.
    AddrDel {
        /// Port index.
        port: u16,
        /// Address.
        addr: Ipv4Addr,
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
        }
    }
}

/// Parse one request line as the server does. On failure the error carries
/// the id when the line got far enough to have one.
pub fn parse_request_line(line: &[u8]) -> Result<RequestEnvelope, (u64, CtlError)> {
    let val: serde_json::Value = serde_json::from_slice(line).map_err(|e| {
        (
            0,
            CtlError::new(ErrCode::BadRequest, format!("invalid JSON: {e}")),
        )
    })?;
    let obj = val.as_object().ok_or_else(|| {
        (
            0,
            CtlError::new(ErrCode::BadRequest, "request is not a JSON object"),
        )
    })?;
    let id = obj.get("id").and_then(|v| v.as_u64()).ok_or_else(|| {
        (
            0,
            CtlError::new(ErrCode::BadRequest, "missing or invalid \"id\""),
        )
    })?;
    match obj.get("v").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(PROTO_VERSION) => {}
        Some(v) => {
            return Err((
                id,
                CtlError::new(
                    ErrCode::BadVersion,
                    format!(
                        "protocol version {v} not supported (this server speaks {PROTO_VERSION})"
                    ),
                ),
            ))
        }
        None => {
            return Err((
                id,
                CtlError::new(ErrCode::BadRequest, "missing or invalid \"v\""),
            ))
        }
    }
    let req_val = obj
        .get("req")
        .ok_or_else(|| (id, CtlError::new(ErrCode::BadRequest, "missing \"req\"")))?;
    let req = <Request as Deserialize>::deserialize(req_val).map_err(|e| {
        (
            id,
            CtlError::new(ErrCode::UnknownRequest, format!("bad request: {e}")),
        )
    })?;
    Ok(RequestEnvelope {
        v: PROTO_VERSION,
        id,
        req,
    })
}

#[cfg(test)]
mod tests;
