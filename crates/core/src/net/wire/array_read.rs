//! Reads of a fixed-size header array at offsets named in the `field`
//! tables, for code that checked a frame's length once up front.

/// Big-endian `u16` at `at` of a fixed-size header array, for code that
/// checked the length once up front and reads at offsets named in the
/// `field` tables (the bounds checks of a constant offset fold away).
#[inline(always)]
pub(crate) fn be16_at<const N: usize>(h: &[u8; N], at: usize) -> u16 {
    u16::from_be_bytes([h[at], h[at + 1]])
}

/// Big-endian `u32` at `at` of a fixed-size header array.
#[inline(always)]
pub(crate) fn be32_at<const N: usize>(h: &[u8; N], at: usize) -> u32 {
    u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]])
}

/// Little-endian `u32` at `at` of a fixed-size header array (a plain load
/// on x86 and ARM: for sums that do not care about byte order).
#[inline(always)]
pub(crate) fn le32_at<const N: usize>(h: &[u8; N], at: usize) -> u32 {
    u32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]])
}

/// Big-endian `u128` at `at` of a fixed-size header array.
#[inline(always)]
pub(crate) fn be128_at<const N: usize>(h: &[u8; N], at: usize) -> u128 {
    let mut b = [0u8; 16];
    b.copy_from_slice(&h[at..at + 16]);
    u128::from_be_bytes(b)
}
