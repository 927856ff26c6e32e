//! `dirigoctl top`: a live view of a running dirigo, `ipvsadm -L --rate`
//! meets `top`. Every `delay` it reads the daemon's cumulative counters
//! (services and real servers, workers, drops) and shows what grew since
//! the previous reading, per second.
//!
//! * [`sample`] — what one poll reads, and the poller that reconnects;
//! * [`rates`] — two samples in, a [`rates::Frame`] of rates out (no
//!   terminal: unit-tested on its own);
//! * [`draw`] — a frame as lines fitted to a width and height, drawn into a
//!   ratatui buffer or printed as plain text;
//! * `term` — the live loop: raw mode, keys, the poller thread.

mod clock;
pub mod draw;
mod options;
pub mod rates;
pub mod sample;
mod term;

pub use clock::clock;
pub use dirigo_proto::cli::ctl::{parse_delay, MAX_DELAY, MIN_DELAY};
pub use options::{color_allowed, Options};
pub use term::{action, Action};

use draw::{text, Status, View};
use rates::Frame;
use sample::Poller;
use std::io::{IsTerminal, Write};
use std::time::Duration;

/// Width of `--once` output when stdout is not a terminal.
pub const BATCH_WIDTH: u16 = 120;

/// Run `top` as `o` says.
pub fn run(o: &Options) -> Result<(), String> {
    match o.batch {
        Some(n) => batch(o, n, &mut std::io::stdout().lock()),
        None => term::interactive(o),
    }
}

/// The width of batch output: the terminal's, else `$COLUMNS`, else
/// [`BATCH_WIDTH`].
fn batch_width() -> u16 {
    if std::io::stdout().is_terminal() {
        if let Ok((w, _)) = ratatui::crossterm::terminal::size() {
            return w;
        }
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|w| *w >= 20)
        .unwrap_or(BATCH_WIDTH)
}

/// Batch mode: poll, then `frames` times wait `delay`, poll and print the
/// frame (rates over that wait). A daemon that cannot be reached at first
/// is an error; one lost later prints a "disconnected" frame and is tried
/// again.
pub fn batch(o: &Options, frames: u32, out: &mut impl Write) -> Result<(), String> {
    let mut p = Poller::new(o.socket.clone(), Duration::from_secs(5).max(o.delay));
    let mut prev = Some(p.poll()?);
    let width = batch_width();
    for i in 0..frames {
        std::thread::sleep(o.delay);
        let (frame, status) = match p.poll() {
            Ok(s) => {
                let f = Frame::between(prev.as_ref(), &s);
                prev = Some(s);
                (Some(f), Status::Connected)
            }
            Err(e) => {
                prev = None;
                (None, Status::Disconnected(e))
            }
        };
        let view = View {
            frame: frame.as_ref(),
            status,
            delay: o.delay,
            clock: clock(),
            scroll: 0,
            color: false,
            keys: false,
        };
        let sep = if i + 1 < frames { "\n" } else { "" };
        write!(out, "{}{sep}", text(&view, width))
            .and_then(|_| out.flush())
            .map_err(|e| format!("stdout: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
