//! The line around every request and response: the protocol version, the
//! id, and the payload; and how the server reads a request line.

use super::error::{CtlError, ErrCode};
use super::message::{Request, Response};
use serde::{Deserialize, Serialize};

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
