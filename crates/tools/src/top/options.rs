//! How `top` runs: the socket, the delay, batch or live, colours.

use std::path::PathBuf;
use std::time::Duration;

/// How `top` runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// The control socket.
    pub socket: PathBuf,
    /// Time between two polls.
    pub delay: Duration,
    /// Batch mode: print this many plain-text frames and exit; `None`:
    /// the live view.
    pub batch: Option<u32>,
    /// Colours allowed.
    pub color: bool,
}

/// Whether colours are allowed: `NO_COLOR` unset or empty (no-color.org).
pub fn color_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
