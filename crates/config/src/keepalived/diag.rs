//! Where something is in the input, and the warnings and errors found
//! there.

use std::fmt;
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
