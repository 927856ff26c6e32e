//! The macros that declare the views: `view!` (the struct and its
//! constructors) and `accessors!` (the plain getter/setter pairs of a
//! field table). Declared first in the folder's `mod.rs`, so that the
//! header modules after it can use them.

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
                    $crate::net::wire::field_access::get::<$ty>(self.buffer.as_ref(), $at)
                }
            )*
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            $(
                #[doc = concat!("Set [`Self::", stringify!($get), "`].")]
                #[inline]
                pub fn $set(&mut self, v: $ty) {
                    $crate::net::wire::field_access::set::<$ty>(self.buffer.as_mut(), $at, v)
                }
            )*
        }
    };
}
