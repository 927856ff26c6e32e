//! Counters declared once.
//!
//! [`counter_enum!`] turns one declaration — an enum whose every variant
//! carries its kind (`drop` or `count`) and its counter name — into the
//! enum, `ALL` (index order), `COUNT`, `index()`, `name()` and `is_drop()`,
//! plus the [`Counter`] trait for generic code. [`Counts`] is a plain array
//! with one `u64` per variant, indexed by the enum, and [`CounterSet`] lists
//! the counters of a set (one or several `Counts`) by name for publishing
//! and listings. Nothing is addressed by a hand-kept number: a counter's
//! slot is its variant, its name is the string given in the declaration.
//!
//! ```
//! dirigo_core::counters::counter_enum! {
//!     /// Why a widget was refused.
//!     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
//!     pub enum WidgetDrop {
//!         /// Too large.
//!         TooLarge: drop = "widget_too_large",
//!         /// Accepted, for comparison.
//!         Accepted: count = "widget_accepted",
//!     }
//! }
//! assert_eq!(WidgetDrop::COUNT, 2);
//! assert_eq!(WidgetDrop::ALL[1].name(), "widget_accepted");
//! assert!(WidgetDrop::TooLarge.is_drop());
//! ```

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// What [`counter_enum!`] generates, for code generic over counter sets.
pub trait Counter: Copy + 'static {
    /// Every variant, in index order.
    const ALL: &'static [Self];
    /// Dense index in `0..ALL.len()`.
    fn index(self) -> usize;
    /// The counter's name (snake_case, stable: listings and the control
    /// protocol use it).
    fn name(self) -> &'static str;
    /// Whether the counter counts dropped packets.
    fn is_drop(self) -> bool;
}

/// Declare an enum of counters; see the [module docs](self).
///
/// Each variant is written `Variant: kind = "name"`, where `kind` is
/// `drop` (the counter counts dropped packets: `dirigoctl drops` lists it)
/// or `count` (anything else). Attributes and doc comments go on the enum
/// and on the variants as usual; the variants get implicit discriminants
/// `0..COUNT`, which is what `index()` returns.
#[macro_export]
macro_rules! counter_enum {
    (@drop drop) => { true };
    (@drop count) => { false };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident : $kind:ident = $cname:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant,
            )+
        }

        impl $name {
            /// Number of counters (the length of a counter array).
            pub const COUNT: usize = [$($cname),+].len();
            /// Every counter, in `index()` order.
            pub const ALL: [$name; Self::COUNT] = [$($name::$variant),+];

            /// Dense index in `0..COUNT`.
            #[inline(always)]
            pub const fn index(self) -> usize {
                self as usize
            }

            /// The counter's stable snake_case name.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $cname,)+
                }
            }

            /// Whether the counter counts dropped packets.
            pub const fn is_drop(self) -> bool {
                match self {
                    $($name::$variant => $crate::counter_enum!(@drop $kind),)+
                }
            }
        }

        impl $crate::counters::Counter for $name {
            const ALL: &'static [Self] = &$name::ALL;
            #[inline(always)]
            fn index(self) -> usize {
                $name::index(self)
            }
            fn name(self) -> &'static str {
                $name::name(self)
            }
            fn is_drop(self) -> bool {
                $name::is_drop(self)
            }
        }
    };
}
pub use crate::counter_enum;

/// One counter's value with its name and kind, for publishing and listings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Named {
    /// The counter's name.
    pub name: &'static str,
    /// Its value.
    pub value: u64,
    /// Whether it counts dropped packets.
    pub drop: bool,
}

/// A fixed list of named counters: one [`Counts`] or a composition of
/// several (the pipeline's own slots plus its per-reason arrays). The
/// order of [`CounterSet::named`] is the order of listings.
pub trait CounterSet {
    /// Every counter of the set, in listing order.
    fn named(&self) -> impl Iterator<Item = Named> + '_;
}

/// One `u64` per counter of `E`, indexed by `E` (`N` must be `E::COUNT`:
/// write `Counts<E, { E::COUNT }>`; [`Counts::new`] refuses anything else
/// at compile time). Plain integers: the owner is the only writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts<E: Counter, const N: usize> {
    v: [u64; N],
    _e: PhantomData<E>,
}

impl<E: Counter, const N: usize> Counts<E, N> {
    /// All zero.
    pub const fn new() -> Self {
        const { assert!(N == E::ALL.len(), "Counts<E, N> needs N == E::COUNT") };
        Counts {
            v: [0; N],
            _e: PhantomData,
        }
    }

    /// `(counter, value)` in index order.
    pub fn iter(&self) -> impl Iterator<Item = (E, u64)> + '_ {
        E::ALL.iter().map(|&e| (e, self.v[e.index()]))
    }

    /// The sum of all counters.
    pub fn total(&self) -> u64 {
        self.v.iter().sum()
    }
}

impl<E: Counter, const N: usize> Default for Counts<E, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Counter, const N: usize> Index<E> for Counts<E, N> {
    type Output = u64;
    #[inline(always)]
    fn index(&self, e: E) -> &u64 {
        &self.v[e.index()]
    }
}

impl<E: Counter, const N: usize> IndexMut<E> for Counts<E, N> {
    #[inline(always)]
    fn index_mut(&mut self, e: E) -> &mut u64 {
        &mut self.v[e.index()]
    }
}

impl<E: Counter, const N: usize> CounterSet for Counts<E, N> {
    fn named(&self) -> impl Iterator<Item = Named> + '_ {
        self.iter().map(|(e, value)| Named {
            name: e.name(),
            value,
            drop: e.is_drop(),
        })
    }
}

/// Check what [`counter_enum!`] promises for `E`: `ALL` lists every
/// variant once in index order, and names are unique, non-empty
/// snake_case. For the unit tests of each counter enum.
pub fn check<E: Counter + std::fmt::Debug>() {
    let mut seen = std::collections::HashSet::new();
    for (i, e) in E::ALL.iter().enumerate() {
        assert_eq!(e.index(), i, "{e:?}: ALL is not in index order");
        let n = e.name();
        assert!(
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{e:?}: name {n:?} is not snake_case"
        );
        assert!(seen.insert(n), "{e:?}: name {n:?} used twice");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    counter_enum! {
        /// A test set: drops and counts mixed, in an order unlike the names'.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        enum T {
            /// first
            Zeta: count = "zeta",
            /// second
            Alpha: drop = "alpha_dropped",
            /// third
            Mid: count = "mid",
            /// fourth
            Last: drop = "last_dropped",
        }
    }

    #[test]
    fn generated_items_follow_the_declaration() {
        assert_eq!(T::COUNT, 4);
        assert_eq!(T::ALL, [T::Zeta, T::Alpha, T::Mid, T::Last]);
        for (i, t) in T::ALL.iter().enumerate() {
            assert_eq!(t.index(), i);
        }
        let names: Vec<_> = T::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["zeta", "alpha_dropped", "mid", "last_dropped"]);
        let drops: Vec<_> = T::ALL.iter().map(|t| t.is_drop()).collect();
        assert_eq!(drops, [false, true, false, true]);
        // the trait agrees with the inherent items
        assert_eq!(<T as Counter>::ALL, &T::ALL[..]);
        assert_eq!(Counter::name(T::Mid), "mid");
        assert!(Counter::is_drop(T::Last));
        check::<T>();
    }

    #[test]
    fn counts_are_indexed_by_the_enum_and_listed_in_order() {
        let mut c = Counts::<T, { T::COUNT }>::new();
        c[T::Alpha] += 2;
        c[T::Last] += 5;
        assert_eq!((c[T::Zeta], c[T::Alpha], c[T::Last]), (0, 2, 5));
        assert_eq!(c.total(), 7);
        let listed: Vec<_> = c.named().map(|n| (n.name, n.value, n.drop)).collect();
        assert_eq!(
            listed,
            [
                ("zeta", 0, false),
                ("alpha_dropped", 2, true),
                ("mid", 0, false),
                ("last_dropped", 5, true)
            ]
        );
    }

    #[derive(Clone, Copy, Debug)]
    struct Dup(usize);
    impl Counter for Dup {
        const ALL: &'static [Self] = &[Dup(0), Dup(1)];
        fn index(self) -> usize {
            self.0
        }
        fn name(self) -> &'static str {
            "same"
        }
        fn is_drop(self) -> bool {
            false
        }
    }

    #[test]
    #[should_panic(expected = "used twice")]
    fn check_catches_a_duplicate_name() {
        check::<Dup>();
    }
}
