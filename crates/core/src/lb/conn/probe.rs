//! What a lookup miss hands to the insert that follows ([`Probe`]).

use super::bucket::SLOTS;

/// What a lookup miss learned about its key's buckets, for the insert
/// that follows ([`ConnTable::lookup_probe`], [`ConnTable::insert_probed`]):
/// the key's hash, its secondary bucket and the first free slot the insert
/// would take, so the insert neither hashes the key again nor scans its
/// buckets again. Valid until the table changes (other than by that
/// insert's own eviction, which the insert accounts for); a probe for
/// another key would misplace the entry.
///
/// [`ConnTable::lookup_probe`]: super::table::ConnTable::lookup_probe
/// [`ConnTable::insert_probed`]: super::table::ConnTable::insert_probed
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub(super) hash: u32,
    pub(super) b2: u32,
    /// Rank of the first free slot: `i` for slot `i` of the primary bucket,
    /// `SLOTS + i` of the secondary, [`NO_SLOT`] for none (the insert then
    /// displaces, as [`ConnTable::insert`] does), [`UNKNOWN_SLOT`] when
    /// not scanned ([`ConnTable::unprobed`]).
    ///
    /// [`ConnTable::insert`]: super::table::ConnTable::insert
    /// [`ConnTable::unprobed`]: super::table::ConnTable::unprobed
    pub(super) free: u32,
}

/// [`Probe::free`] when both buckets are full.
pub(super) const NO_SLOT: u32 = 2 * SLOTS as u32;
/// [`Probe::free`] when the buckets were not scanned.
pub(super) const UNKNOWN_SLOT: u32 = u32::MAX;

impl Probe {
    /// The hash of the key this probe is for.
    #[inline]
    pub fn hash(&self) -> u32 {
        self.hash
    }
}
