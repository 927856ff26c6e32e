//! The control protocol: newline-delimited JSON over a Unix stream socket.
//!
//! Each request is one line `{"v":1,"id":N,"req":{"op":"...",...}}`; each
//! response is one line `{"v":1,"id":N,"ok":{...}}` or
//! `{"v":1,"id":N,"err":{"code":"...","msg":"..."}}`. The `id` of a response
//! echoes the request's (0 when the request could not be parsed far enough to
//! know it). The lines' envelopes are in `envelope`, the requests and
//! their answers in `message` (the service-table changes, [`BatchCmd`], in
//! `batch`); listing payloads live in [`crate::view`], error answers in
//! `error`, and how a [`Request`] is written on the wire in `wire`.

mod batch;
mod envelope;
mod error;
mod message;
mod wire;

pub use batch::BatchCmd;
pub use envelope::{
    parse_request_line, RequestEnvelope, ResponseEnvelope, MAX_REQUEST, PROTO_VERSION,
};
pub use error::{CtlError, ErrCode};
pub use message::{ListOpts, Request, Response};

#[cfg(test)]
mod tests;
