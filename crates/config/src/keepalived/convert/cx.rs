//! The warnings collected on the way, and the reasons several blocks give.

use crate::keepalived::diag::Diag;
use crate::keepalived::parse::Node;

/// Collects the warnings.
pub(super) struct Cx<'w> {
    pub(super) warnings: &'w mut Vec<Diag>,
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

/// Why `delay_before_retry` is skipped.
pub(super) const DELAY_BEFORE_RETRY: &str =
    "dirigo checks every interval and takes a server down after `fall` failures in a row";
/// Why `alpha` is skipped.
pub(super) const ALPHA: &str =
    "dirigo's real servers start up and go down after `fall` failed checks";
