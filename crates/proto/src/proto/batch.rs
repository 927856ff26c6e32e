//! [`BatchCmd`]: a change to the service table, ipvsadm's mutating verbs.

use dirigo_core::lb::spec::{DestKey, DestSpec, ServiceKey, ServiceSpec, Timeouts};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// A change to the service table: the one definition of ipvsadm's mutating
/// verbs (`-A -E -D -C -a -e -d --set -Z`) and DPVS's `--add-laddr`,
/// `--del-laddr`. It is a request on its own
/// ([`Request::Mutate`]), a command of a [`Request::RestoreBatch`], what
/// dirigoadm parses those options to, and what the daemon applies.
/// Serialized with its own `"op"` tag: `{"op":"add_service","service":{...}}`.
///
/// [`Request::Mutate`]: crate::proto::Request::Mutate
/// [`Request::RestoreBatch`]: crate::proto::Request::RestoreBatch
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
    /// Add a FullNAT local address to a service (`--add-laddr -z ADDR`,
    /// DPVS's). Errors: `no_service`, `exists`.
    AddLaddr {
        /// The service.
        service: ServiceKey,
        /// The local address (the real servers' family).
        addr: IpAddr,
    },
    /// Remove a FullNAT local address from a service (`--del-laddr -z
    /// ADDR`); its connections keep their address until they end.
    /// Errors: `no_service`, `not_found`.
    DelLaddr {
        /// The service.
        service: ServiceKey,
        /// The local address.
        addr: IpAddr,
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
            BatchCmd::AddLaddr { .. } => "add_laddr",
            BatchCmd::DelLaddr { .. } => "del_laddr",
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
