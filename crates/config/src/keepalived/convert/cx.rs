//! The warnings collected on the way, and the reasons several blocks give.

use crate::keepalived::diag::Diag;
use crate::keepalived::parse::Node;

/// Collects the warnings; knows the `track_file`s.
pub(super) struct Cx<'w> {
    pub(super) warnings: &'w mut Vec<Diag>,
    /// The top-level `track_file` blocks, by name.
    pub(super) track_files: std::collections::HashMap<String, TrackFile>,
    /// The top-level `virtual_server_group` blocks, by name.
    pub(super) groups: std::collections::HashMap<String, Vec<Entry>>,
}

/// A top-level `track_file NAME { file ...; weight N [reverse] }`.
#[derive(Debug, Clone)]
pub(super) struct TrackFile {
    /// `file`.
    pub(super) path: Option<String>,
    /// `weight` (default 1) and `reverse`.
    pub(super) weight: (i64, bool),
}

impl Cx<'_> {
    /// Warn about `n`.
    pub(super) fn warn(&mut self, n: &Node, msg: impl Into<String>) {
        self.warnings.push(Diag::warning(&n.loc, msg));
    }

    /// A keyword this converter does not know (or keepalived syntax it
    /// does not take): one warning, skipped with its block.
    pub(super) fn unknown(&mut self, n: &Node, inside: &str) {
        let msg = if n.key.starts_with('@') {
            format!(
                "conditional configuration ('{}') is not supported: statement skipped",
                n.key
            )
        } else if n.key.starts_with('$') {
            format!(
                "parameter definitions ('{}') are not supported: skipped, and $NAME is not replaced",
                n.key
            )
        } else {
            format!("unknown keyword '{}'{inside}: skipped", n.key)
        };
        self.warn(n, msg);
    }

    /// A keepalived keyword dirigo has no equivalent for.
    pub(super) fn unsupported(&mut self, n: &Node, why: &str) {
        let msg = if why.is_empty() {
            format!("{} is not supported by dirigo: skipped", n.key)
        } else {
            format!("{} skipped: {why}", n.key)
        };
        self.warn(n, msg);
    }
}

/// One entry of a `virtual_server_group`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Entry {
    /// `VIP PORT` or `VIP-END PORT` (the range expanded).
    Addrs(Vec<std::net::IpAddr>, u16),
    /// `fwmark N`.
    Mark(u32),
}

/// Why `alpha` is skipped.
pub(super) const ALPHA: &str =
    "dirigo's real servers start up and go down after `fall` failed checks";
