//! `dirigoctl keepalived-convert`: keepalived.conf's LVS part as dirigo's
//! `[[service]]` TOML.
//!
//! * [`parse`] — keepalived's language: words, quoted strings, `{` `}`,
//!   `#`/`!` comments and `include` (globs, relative to the including
//!   file), into a tree of [`parse::Node`]s that remember their file and
//!   line;
//! * [`convert`] — `virtual_server` blocks into services, with keepalived's
//!   defaults, and a warning for everything dirigo does not do;
//! * [`emit`] — the services as TOML text.
//!
//! Offline: nothing here talks to a daemon. A warning or an error is a
//! [`Diag`], printed `file:line: warning: ...` / `file:line: error: ...`.

pub mod convert;
mod diag;
pub mod emit;
pub mod parse;

pub use diag::{Diag, Level, Loc};

use std::path::Path;

/// A converted file: the TOML text and the warnings, in input order.
#[derive(Debug, Clone)]
pub struct Converted {
    /// `[[service]]` sections with a header comment.
    pub toml: String,
    /// What was skipped or changed.
    pub warnings: Vec<Diag>,
}

/// Convert the keepalived.conf at `path` (with its includes).
pub fn convert_file(path: &Path) -> Result<Converted, Diag> {
    let mut warnings = Vec::new();
    let tokens = parse::load(path, &mut warnings)?;
    let tree = parse::parse(&tokens)?;
    let services = convert::services(&tree, &mut warnings)?;
    let source = path.display().to_string();
    Ok(Converted {
        toml: emit::toml(&services, &source),
        warnings,
    })
}

#[cfg(test)]
mod tests;
