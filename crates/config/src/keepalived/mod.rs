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
pub mod emit;
pub mod parse;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Where something is: a file as it was named and a line (1-based; 0 =
/// the file as a whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    /// The file, as given or as an `include` resolved it.
    pub file: Arc<str>,
    /// The line, from 1; 0 for the whole file.
    pub line: u32,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// How bad a [`Diag`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Skipped or changed; the conversion goes on.
    Warning,
    /// The conversion stops; nothing is printed on stdout.
    Error,
}

/// A warning or an error at a place in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    /// Where.
    pub loc: Loc,
    /// Warning or error.
    pub level: Level,
    /// What, in one line.
    pub msg: String,
}

impl Diag {
    /// An error at `loc`.
    pub fn error(loc: &Loc, msg: impl Into<String>) -> Diag {
        Diag {
            loc: loc.clone(),
            level: Level::Error,
            msg: msg.into(),
        }
    }

    /// A warning at `loc`.
    pub fn warning(loc: &Loc, msg: impl Into<String>) -> Diag {
        Diag {
            loc: loc.clone(),
            level: Level::Warning,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Warning => "warning",
            Level::Error => "error",
        };
        write!(f, "{}: {level}: {}", self.loc, self.msg)
    }
}

impl std::error::Error for Diag {}

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
