//! The index's buckets (8 slots of signature and record reference, one
//! cache line each) and the choice of a hash's second candidate bucket
//! (or line, in the one-line table).

/// The second of a hash's two candidate buckets (or lines), in a table of
/// `mask + 1`, whose first is `first`: another mix of the hash's bits, and
/// never `first`.
#[inline]
pub(super) fn second_of(hash: u32, first: u32, mask: u32) -> u32 {
    let x = hash.rotate_left(13).wrapping_mul(0x9e37_79b1);
    let b = (x ^ (x >> 15)) & mask;
    if b == first {
        first ^ 1
    } else {
        b
    }
}

pub(super) const SLOTS: usize = 8;
pub(super) const EMPTY: u32 = u32::MAX;
pub(super) const REPLY: u32 = 1 << 31;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Bucket {
    pub(super) sig: [u32; SLOTS],
    pub(super) idx: [u32; SLOTS],
}

pub(super) const EMPTY_BUCKET: Bucket = Bucket {
    sig: [0; SLOTS],
    idx: [EMPTY; SLOTS],
};
