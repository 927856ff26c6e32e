//! The real servers as a scheduler sees them: their live loads
//! ([`DestLoad`], read through [`Loads`]), whether one may take a new
//! connection, and the sentinel for none in prepared tables ([`NO_DEST`]).

/// The live load of one real server, as the worker sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DestLoad {
    /// Configured weight (0 = quiesced: takes no new connections).
    pub weight: u32,
    /// Active connections (TCP ESTABLISHED).
    pub active: u32,
    /// Inactive connections (every other state, and UDP).
    pub inactive: u32,
    /// Over its upper connection threshold (IPVS's overload flag).
    pub overloaded: bool,
}

impl DestLoad {
    /// Whether the server may take a new connection at all.
    #[inline]
    pub fn available(&self) -> bool {
        self.weight > 0 && !self.overloaded
    }
}

/// Sentinel for "no server" in prepared tables.
pub const NO_DEST: u32 = u32::MAX;

/// Where [`pick_with`] reads the live loads: one per real server, in the
/// order given to [`Prepared::build`]. A slice of [`DestLoad`] is one; a
/// worker can instead compute each load when a scheduler asks for it, so
/// that rr, wrr, sh, dh and mh read the servers they consider only, and
/// the least-connection family reads each server once without a copy.
///
/// [`pick_with`]: super::pick_with
/// [`Prepared::build`]: super::Prepared::build
pub trait Loads {
    /// How many servers (indexes `0..count()`).
    fn count(&self) -> usize;
    /// The load of server `i`; `None` (out of range) = unavailable.
    fn load(&self, i: usize) -> Option<DestLoad>;
    /// `f(i, load(i))` for every `i` in `0..count()` whose load is known,
    /// in order, until `f` answers `false`: what the least-connection
    /// family walks. The same calls as that loop over [`Self::load`]; an
    /// implementer walks its own storage instead, without an index check
    /// per server.
    #[inline]
    fn each(&self, mut f: impl FnMut(usize, DestLoad) -> bool) {
        for i in 0..self.count() {
            if let Some(l) = self.load(i) {
                if !f(i, l) {
                    return;
                }
            }
        }
    }
}

impl Loads for [DestLoad] {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn load(&self, i: usize) -> Option<DestLoad> {
        self.get(i).copied()
    }
    #[inline]
    fn each(&self, mut f: impl FnMut(usize, DestLoad) -> bool) {
        for (i, l) in self.iter().enumerate() {
            if !f(i, *l) {
                return;
            }
        }
    }
}

/// Whether server `i` may take a new connection (out of range = no).
#[inline]
pub(crate) fn available<L: Loads + ?Sized>(loads: &L, i: usize) -> bool {
    loads.load(i).is_some_and(|l| l.available())
}
