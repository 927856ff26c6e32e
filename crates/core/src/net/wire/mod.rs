//! Zero-copy views of the headers dirigo parses and rewrites, in the style of
//! smoltcp's `wire` module.
//!
//! Each view wraps a buffer `T: AsRef<[u8]>`. `new_checked` validates every
//! length the accessors rely on, so that after it succeeds no accessor can
//! panic; `new_unchecked` skips the checks and is meant for buffers the caller
//! built itself. Setters exist only where `T: AsMut<[u8]>`. Byte ranges live in
//! each module's `field` module, and only here: code outside `wire` reads and
//! writes headers through the views. Multi-byte integers are returned in host
//! order; IPv4 addresses are host-order `u32` like [`crate::net::meta`], and
//! IPv6 addresses host-order `u128` for the same reasons: one load and a byte
//! swap to read, compared and hashed as plain integers on the per-packet path,
//! prefixes tested with a mask and a shift, the checksum words taken with
//! shifts, and `std::net::Ipv6Addr::from(u128)` / `u128::from(Ipv6Addr)` free
//! at the edges (config, logs).
//!
//! Rewriting a forwarded packet keeps its checksums right incrementally
//! (RFC 1624): `ipv4::Packet::set_{ttl,src,dst}_update_checksum`,
//! `{tcp,udp}::Packet::set_{src,dst}_port_update_checksum` (which also
//! account for the pseudo-header address NAT changed),
//! `icmp::Packet::set_type_code_update_checksum`. Headers dirigo builds
//! itself come from `ipv4::Repr::emit`, `tcp::Repr::emit` and the views'
//! setters.
//!
//! IPv6 (`ipv6`, `ipv6ext`, `icmpv6`, `ndp`) follows the same rules. The
//! fixed header and its extension headers are apart: `ipv6ext::walk` finds
//! the upper layer in a bounded number of steps (or says why not, a
//! fragment among the reasons), and the upper layers' checksums take the
//! IPv6 pseudo header from `checksum::pseudo_header_sum_v6`. `ndp::Solicit`
//! and `ndp::Advert` validate and emit whole Neighbour Discovery packets.
//!
//! The views share their plumbing: `view!` declares the struct and its
//! constructors, `accessors!` the plain getter/setter pairs of a field table,
//! and `get`/`set` read and write one big-endian field without panicking.
//! Code that checked a frame's length once and reads it as a fixed-size
//! array (the classify fast path, NAT's fixed-header rewrite) uses
//! `be16_at`, `be32_at`, `le32_at` and `be128_at` at offsets from the
//! `field` tables, whose bounds checks fold away.

/// Why a buffer could not be viewed as a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The buffer is shorter than the header (or than a length it states).
    Truncated,
    /// The IP version field is not the view's (4 for `ipv4`, 6 for `ipv6`).
    BadVersion,
    /// A header-length field is below the minimum (IHL < 5, TCP offset < 5).
    BadHeaderLen,
    /// A total-length field is inconsistent (below the header length or
    /// beyond the buffer).
    BadTotalLen,
    /// Fields describe a format dirigo does not handle (e.g. non-Ethernet/IPv4 ARP).
    Unsupported,
}

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

/// The length check of a header that states its own length (`stated`, read
/// only once `min` bytes are known to be there): the buffer holds `min`
/// bytes, the stated length is at least `min` and fits in the buffer.
#[inline]
pub(crate) fn check_stated_len(
    len: usize,
    min: usize,
    stated: impl FnOnce() -> usize,
) -> Result<(), WireError> {
    if len < min {
        return Err(WireError::Truncated);
    }
    let l = stated();
    if l < min {
        return Err(WireError::BadHeaderLen);
    }
    if l > len {
        return Err(WireError::Truncated);
    }
    Ok(())
}

/// Declares a view type: the struct wrapping a buffer `T`, `new_unchecked`,
/// `new_checked` (which runs the type's own length check, named by the
/// second argument) and `into_inner`.
macro_rules! view {
    ($(#[$attr:meta])* $name:ident, $check:ident) => {
        $(#[$attr])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name<T> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $name<T> {
            /// Wrap without checks: accessors return zeros on a short
            /// buffer and setters write nothing there.
            #[inline]
            pub fn new_unchecked(buffer: T) -> Self {
                $name { buffer }
            }

            #[doc = concat!("Wrap after [`Self::", stringify!($check), "`] succeeds; then no accessor can panic.")]
            #[inline]
            pub fn new_checked(buffer: T) -> Result<Self, WireError> {
                let v = $name { buffer };
                v.$check()?;
                Ok(v)
            }

            /// The wrapped buffer.
            #[inline]
            pub fn into_inner(self) -> T {
                self.buffer
            }
        }
    };
}

/// Declares plain field accessors of a view: for each
/// `getter, setter: type = field::RANGE;` a getter on `T: AsRef<[u8]>` and
/// a setter on `T: AsMut<[u8]>` too (the doc comment goes on the getter).
macro_rules! accessors {
    ($name:ident; $($(#[$doc:meta])* $get:ident, $set:ident: $ty:ty = $at:expr;)*) => {
        impl<T: AsRef<[u8]>> $name<T> {
            $(
                $(#[$doc])*
                #[inline]
                pub fn $get(&self) -> $ty {
                    $crate::net::wire::get::<$ty>(self.buffer.as_ref(), $at)
                }
            )*
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            $(
                #[doc = concat!("Set [`Self::", stringify!($get), "`].")]
                #[inline]
                pub fn $set(&mut self, v: $ty) {
                    $crate::net::wire::set::<$ty>(self.buffer.as_mut(), $at, v)
                }
            )*
        }
    };
}

// The header modules come after the macros they use.
pub mod arp;
pub mod ethernet;
pub mod icmp;
pub mod icmpv6;
pub mod ipv4;
pub mod ipv6;
pub mod ipv6ext;
pub mod ipvs_sync;
mod l4;
pub mod ndp;
pub mod tcp;
pub mod tcpopt;
pub mod udp;

/// True for a group (multicast or broadcast) MAC address.
#[inline]
pub fn mac_is_group(m: [u8; 6]) -> bool {
    m[0] & 1 != 0
}

/// The broadcast MAC.
pub const MAC_BROADCAST: [u8; 6] = [0xff; 6];

#[cfg(test)]
mod tests;
