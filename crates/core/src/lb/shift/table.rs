//! [`Inserts`]: one [`HeaderInsert`] per record of a connection table,
//! beside it and indexed by the record (FullNAT's `client_address`; the
//! balancer allocates it only when a service needs it).

use super::once::HeaderInsert;

/// A [`HeaderInsert`] (28 bytes) per record of a table.
pub struct Inserts {
    ins: Box<[HeaderInsert]>,
}

impl Inserts {
    /// The state of a table of `capacity` records, each with nothing to
    /// insert.
    pub fn new(capacity: u32) -> Inserts {
        Inserts {
            ins: vec![HeaderInsert::new(0, 0); capacity as usize].into_boxed_slice(),
        }
    }

    /// Record `idx`'s state (None past the table's capacity).
    #[inline]
    pub fn get(&self, idx: u32) -> Option<&HeaderInsert> {
        self.ins.get(idx as usize)
    }

    /// Record `idx`'s state, mutable (None past the table's capacity).
    #[inline]
    pub fn get_mut(&mut self, idx: u32) -> Option<&mut HeaderInsert> {
        self.ins.get_mut(idx as usize)
    }
}
