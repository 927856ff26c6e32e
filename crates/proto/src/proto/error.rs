//! Error answers: machine-readable codes and ipvsadm's wording.

use serde::{Deserialize, Serialize};
use std::fmt;

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
