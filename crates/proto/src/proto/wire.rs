//! How a [`Request`] is written on the wire: serde's derived form of the
//! requests, plus [`Request::Mutate`] sent as its [`BatchCmd`] (whose own
//! `op` tag is the request's), so protocol v1 is the same as when every
//! mutation was a variant of `Request`.

use super::batch::BatchCmd;
use super::message::Request;
use serde::{Deserialize, Serialize};
use std::fmt;

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
pub(super) fn mutation_ops() -> &'static [&'static str] {
    op_names(BatchCmd::deserialize)
}

/// The `op`s of the requests that are not a [`BatchCmd`].
pub(super) fn other_ops() -> &'static [&'static str] {
    op_names(Request::deserialize)
}

/// Every request's `op`, in the order protocol v1 has always listed them
/// when a request names an unknown one (a test checks that these are
/// exactly the enums' own names).
pub(super) const ALL_OPS: [&str; 38] = [
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
    "health",
    "health_set",
    "sync",
    "fingerprint",
    "vips",
    "census",
    "handoff",
    "marks",
    "mark_add",
    "mark_del",
    "add_laddr",
    "del_laddr",
    "snat",
];
