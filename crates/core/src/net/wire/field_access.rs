//! Reading and writing one big-endian header field without panicking:
//! the [`Field`] types, where a field starts ([`At`]), and [`get`]/[`set`],
//! which the views' accessors go through.

/// A fixed-size header field: read and written big-endian (network order).
pub(crate) trait Field: Copy {
    /// Size on the wire in bytes.
    const LEN: usize;
    /// The value of `LEN` bytes (the caller passes exactly `LEN`).
    fn from_wire(b: &[u8]) -> Self;
    /// Write the value into `LEN` bytes (the caller passes exactly `LEN`).
    fn to_wire(self, b: &mut [u8]);
    /// The value an out-of-range read yields.
    const ZERO: Self;
}

macro_rules! be_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            const LEN: usize = core::mem::size_of::<$t>();
            const ZERO: Self = 0;
            #[inline]
            fn from_wire(b: &[u8]) -> Self {
                let mut a = [0u8; core::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_be_bytes(a)
            }
            #[inline]
            fn to_wire(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_be_bytes())
            }
        }
    )*};
}
be_field!(u8, u16, u32, u128);

/// A MAC address field.
impl Field for [u8; 6] {
    const LEN: usize = 6;
    const ZERO: Self = [0; 6];
    #[inline]
    fn from_wire(b: &[u8]) -> Self {
        let mut m = [0u8; 6];
        m.copy_from_slice(b);
        m
    }
    #[inline]
    fn to_wire(self, b: &mut [u8]) {
        b.copy_from_slice(&self)
    }
}

/// Where a field starts: a byte offset (`field::TTL`) or a byte range
/// (`field::SRC`), as the `field` modules declare them.
pub(crate) trait At {
    /// The first byte.
    fn at(self) -> usize;
}

impl At for usize {
    #[inline]
    fn at(self) -> usize {
        self
    }
}

impl At for core::ops::Range<usize> {
    #[inline]
    fn at(self) -> usize {
        self.start
    }
}

/// Read the field at `at`; a buffer too short for it yields zero rather
/// than a panic (`new_checked` guarantees the length for every accessor).
#[inline]
pub(crate) fn get<F: Field>(b: &[u8], at: impl At) -> F {
    let at = at.at();
    match b.get(at..at.saturating_add(F::LEN)) {
        Some(s) => F::from_wire(s),
        None => F::ZERO,
    }
}

/// Write the field at `at` (nothing is written when the buffer is too short).
#[inline]
pub(crate) fn set<F: Field>(b: &mut [u8], at: impl At, v: F) {
    let at = at.at();
    if let Some(s) = b.get_mut(at..at.saturating_add(F::LEN)) {
        v.to_wire(s)
    }
}
