//! The wall clock shown in the title.

use std::time::{SystemTime, UNIX_EPOCH};

/// The time of day, UTC: `12:34:56 UTC`.
pub fn clock() -> String {
    let s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
        % 86_400;
    format!("{:02}:{:02}:{:02} UTC", s / 3600, s / 60 % 60, s % 60)
}
