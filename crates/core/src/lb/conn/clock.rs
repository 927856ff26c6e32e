//! The table's clock: a wrapping `u32` millisecond tick, compared by
//! wrapping differences (see the folder's docs, "Clock and expiry").

/// True when `t` is at or after `deadline` (wrapping ms ticks).
#[inline]
pub fn tick_reached(t: u32, deadline: u32) -> bool {
    (t.wrapping_sub(deadline) as i32) >= 0
}

/// Nanoseconds to the table's millisecond tick.
#[inline]
pub fn tick_of(now_ns: u64) -> u32 {
    (now_ns / 1_000_000) as u32
}
