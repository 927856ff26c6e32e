//! The control protocol: newline-delimited JSON over a Unix stream socket.
//!
//! Each request is one line `{"v":1,"id":N,"req":{"op":"...",...}}`; each
//! response is one line `{"v":1,"id":N,"ok":{...}}` or
//! `{"v":1,"id":N,"err":{"code":"...","msg":"..."}}`. The `id` of a response
//! echoes the request's (0 when the request could not be parsed far enough to
//! know it). Listing payloads live in [`crate::ctl::view`].

use crate::ctl::view::{
    AddrInfo, ConnInfo, DropCount, LcoreInfo, MacAddr, NeighInfo, PortInfo, RouteInfo, ServiceList,
    VersionInfo,
};
use crate::lb::spec::{DestKey, DestSpec, ServiceKey, ServiceSpec, Timeouts};
use serde::{Deserialize, Serialize};
use std::fmt;
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
        /// IPv4 address.
        addr: Ipv4Addr,
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
}

impl From<BatchCmd> for Request {
    fn from(c: BatchCmd) -> Request {
        Request::Mutate(c)
    }
}

impl Serialize for Request {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Request::Mutate(c) => c.serialize(s),
            // The derived form (`remote = "Self"`) of every other request.
            other => Request::serialize(other, s),
        }
    }
}

impl<'de> Deserialize<'de> for Request {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Request, D::Error> {
        use serde::de::Error;
        let v = serde_json::Value::deserialize(d)?;
        let res = match v.get("op").and_then(|op| op.as_str()) {
            Some(op) if mutation_ops().contains(&op) => {
                BatchCmd::deserialize(v).map(Request::Mutate)
            }
            Some(op) if !other_ops().contains(&op) => {
                return Err(D::Error::unknown_variant(op, &ALL_OPS))
            }
            // The derived form (`remote = "Self"`) of every other request.
            _ => Request::deserialize(v),
        };
        res.map_err(D::Error::custom)
    }
}

/// An error that keeps the variant names serde reports for an unknown tag.
#[derive(Debug)]
struct VariantNames(&'static [&'static str]);

impl fmt::Display for VariantNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl std::error::Error for VariantNames {}

impl serde::de::Error for VariantNames {
    fn custom<M: fmt::Display>(_: M) -> Self {
        VariantNames(&[])
    }
    fn unknown_variant(_: &str, expected: &'static [&'static str]) -> Self {
        VariantNames(expected)
    }
}

/// `{"op":""}`, to ask a derived deserializer for its `op` names.
type OpProbe = serde::de::value::MapDeserializer<
    'static,
    std::iter::Once<(&'static str, &'static str)>,
    VariantNames,
>;

/// The `op` names serde derived for an internally tagged enum, in
/// declaration order, read from the error an unknown `op` raises (so the
/// names are written once, by the enums themselves).
fn op_names<T>(deserialize: fn(OpProbe) -> Result<T, VariantNames>) -> &'static [&'static str] {
    let probe = OpProbe::new(std::iter::once(("op", "")));
    deserialize(probe).err().map_or(&[], |n| n.0)
}

/// The `op`s of [`BatchCmd`].
fn mutation_ops() -> &'static [&'static str] {
    op_names(BatchCmd::deserialize)
}

/// The `op`s of the requests that are not a [`BatchCmd`].
fn other_ops() -> &'static [&'static str] {
    op_names(Request::deserialize)
}

/// Every request's `op`, in the order protocol v1 has always listed them
/// when a request names an unknown one (a test checks that these are
/// exactly the enums' own names).
const ALL_OPS: [&str; 25] = [
    "add_service",
    "edit_service",
    "del_service",
    "clear",
    "add_dest",
    "edit_dest",
    "del_dest",
    "list",
    "list_conns",
    "zero",
    "set_timeouts",
    "get_timeouts",
    "restore_batch",
    "ports",
    "addresses",
    "addr_add",
    "addr_del",
    "routes",
    "neighbors",
    "neigh_add",
    "neigh_flush",
    "lcores",
    "drops",
    "reload",
    "version",
];

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
    /// Drop counters.
    Drops(Vec<DropCount>),
    /// Version information.
    Version(VersionInfo),
}

/// Machine-readable error class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrCode {
    /// The line is not valid JSON or not a valid request envelope.
    BadRequest,
    /// Valid envelope, but the `op` is unknown or its fields are wrong.
    UnknownRequest,
    /// The `v` field is not a version this server speaks.
    BadVersion,
    /// The request line exceeds the size limit (the connection is closed).
    TooLarge,
    /// Too many clients; try again later (the connection is closed).
    Busy,
    /// The service already exists.
    ServiceExists,
    /// No such service.
    NoService,
    /// The real server already exists.
    DestExists,
    /// No such real server.
    NoDest,
    /// An argument is out of range or inconsistent.
    InvalidArg,
    /// A generic "already exists" (addresses, neighbors).
    Exists,
    /// A generic "not found" (addresses, neighbors, ports).
    NotFound,
    /// The daemon does not support this request.
    NotSupported,
    /// A resource limit (table full, out of memory).
    NoMemory,
    /// The server failed internally (a handler bug).
    Internal,
    /// The response could not be understood (client side only).
    BadResponse,
    /// Any code this build does not know (from a newer peer).
    #[serde(other)]
    Other,
}

impl ErrCode {
    /// The wire name (`"no_service"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrCode::BadRequest => "bad_request",
            ErrCode::UnknownRequest => "unknown_request",
            ErrCode::BadVersion => "bad_version",
            ErrCode::TooLarge => "too_large",
            ErrCode::Busy => "busy",
            ErrCode::ServiceExists => "service_exists",
            ErrCode::NoService => "no_service",
            ErrCode::DestExists => "dest_exists",
            ErrCode::NoDest => "no_dest",
            ErrCode::InvalidArg => "invalid_arg",
            ErrCode::Exists => "exists",
            ErrCode::NotFound => "not_found",
            ErrCode::NotSupported => "not_supported",
            ErrCode::NoMemory => "no_memory",
            ErrCode::Internal => "internal",
            ErrCode::BadResponse => "bad_response",
            ErrCode::Other => "other",
        }
    }
}

/// An error answer: a code and a human message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CtlError {
    /// The class.
    pub code: ErrCode,
    /// Human-readable detail.
    pub msg: String,
    /// For `restore_batch`: the 0-based index of the command that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<u32>,
}

impl fmt::Display for CtlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.msg, self.code.as_str())
    }
}

impl std::error::Error for CtlError {}

impl CtlError {
    /// Any error.
    pub fn new(code: ErrCode, msg: impl Into<String>) -> Self {
        CtlError {
            code,
            msg: msg.into(),
            at: None,
        }
    }
    /// The same error, marked as raised by batch command `index`.
    pub fn at(mut self, index: usize) -> Self {
        self.at = Some(index as u32);
        self
    }
    /// `service_exists`, worded as ipvsadm.
    pub fn service_exists() -> Self {
        Self::new(ErrCode::ServiceExists, "Service already exists")
    }
    /// `no_service`, worded as ipvsadm.
    pub fn no_service() -> Self {
        Self::new(ErrCode::NoService, "No such service")
    }
    /// `dest_exists`, worded as ipvsadm.
    pub fn dest_exists() -> Self {
        Self::new(ErrCode::DestExists, "Destination already exists")
    }
    /// `no_dest`, worded as ipvsadm.
    pub fn no_dest() -> Self {
        Self::new(ErrCode::NoDest, "No such destination")
    }
    /// `invalid_arg` with a message.
    pub fn invalid(msg: impl Into<String>) -> Self {
        Self::new(ErrCode::InvalidArg, msg)
    }
    /// `not_supported` naming the request.
    pub fn not_supported(what: &str) -> Self {
        Self::new(ErrCode::NotSupported, format!("{what} is not supported"))
    }
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
