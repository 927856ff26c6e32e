//! Sequence-number arithmetic: 32-bit numbers that wrap, ordered by the
//! sign of their difference (RFC 9293 §3.4), as Linux's `before`/`after`.
//! Two numbers more than 2^31 apart have no order; TCP's windows keep
//! every pair this code compares far closer than that.

/// `a` comes strictly before `b`.
#[inline]
pub fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `a` comes strictly after `b`.
#[inline]
pub fn after(a: u32, b: u32) -> bool {
    before(b, a)
}

/// `a` is `b` or comes after it.
#[inline]
pub fn at_or_after(a: u32, b: u32) -> bool {
    !before(a, b)
}

/// `a` moved by a signed offset (wrapping).
#[inline]
pub fn add(a: u32, off: i32) -> u32 {
    a.wrapping_add(off as u32)
}

/// `a` moved back by a signed offset (wrapping).
#[inline]
pub fn sub(a: u32, off: i32) -> u32 {
    a.wrapping_sub(off as u32)
}
