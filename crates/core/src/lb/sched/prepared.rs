//! The scheduler data prepared off the fast path ([`Prepared`]), with what
//! reads it on the fast path: the per-worker state ([`Cursor`]) and
//! [`pick`] / [`pick_with`], which hand a new connection to the
//! algorithm's own module.

use super::dest::{DestLoad, Loads};
use super::flags::SchedFlags;
use super::kind::SchedKind;
use super::maglev::MH_DEFAULT_TABLE_SIZE;
use super::{hash, least, maglev, rr};
use crate::net::meta::FlowKey;

/// The algorithm-specific prepared data.
#[derive(Clone, Debug)]
enum Table {
    /// rr, lc, wlc, sed, nq, fo: nothing precomputed.
    None,
    /// wrr: the interleaved sequence.
    Wrr(rr::WrrTable),
    /// sh / dh: 256 buckets.
    Buckets(hash::Buckets),
    /// mh: the Maglev lookup table.
    Maglev(maglev::Maglev),
}

/// Immutable scheduler data built off the fast path.
#[derive(Clone, Debug)]
pub struct Prepared {
    kind: SchedKind,
    flags: SchedFlags,
    len: usize,
    table: Table,
}

impl Prepared {
    /// Build for `weights` (index = real server index in the service). The
    /// index doubles as the server identity for `mh`, `sh` and `dh`; prefer
    /// [`Prepared::build_ids`] so that removing a server disturbs only the
    /// Maglev slots it owned.
    pub fn build(kind: SchedKind, flags: SchedFlags, weights: &[u32]) -> Prepared {
        Prepared::build_with(kind, flags, weights, MH_DEFAULT_TABLE_SIZE)
    }

    /// As [`Prepared::build`] with an explicit Maglev table size (rounded up
    /// to a prime, and to at least the number of weighted servers; 0 means
    /// [`MH_DEFAULT_TABLE_SIZE`]; ignored by the other kinds).
    pub fn build_with(
        kind: SchedKind,
        flags: SchedFlags,
        weights: &[u32],
        mh_table_size: usize,
    ) -> Prepared {
        let dests: Vec<(u64, u32)> = weights
            .iter()
            .enumerate()
            .map(|(i, &w)| (i as u64, w))
            .collect();
        Prepared::build_ids(kind, flags, &dests, mh_table_size)
    }

    /// Build from `(stable id, weight)` per real server, in the service's
    /// list order (index = position, as in `loads`). The id (see
    /// [`stable_id`]) seeds the Maglev permutation and orders its population,
    /// and orders the dealing of sh and dh buckets, so those tables map
    /// every slot to the same server whatever the servers' positions (two
    /// directors configured in different orders agree). Other kinds ignore
    /// the ids.
    ///
    /// [`stable_id`]: super::stable_id
    pub fn build_ids(
        kind: SchedKind,
        flags: SchedFlags,
        dests: &[(u64, u32)],
        mh_table_size: usize,
    ) -> Prepared {
        let weights: Vec<u32> = dests.iter().map(|d| d.1).collect();
        let table = match kind {
            SchedKind::Wrr => Table::Wrr(rr::WrrTable::build(&weights)),
            SchedKind::Sh => Table::Buckets(hash::Buckets::build_sh(dests)),
            SchedKind::Dh => Table::Buckets(hash::Buckets::build_dh(dests)),
            SchedKind::Mh => Table::Maglev(maglev::Maglev::build(dests, mh_table_size)),
            _ => Table::None,
        };
        Prepared {
            kind,
            flags,
            len: dests.len(),
            table,
        }
    }

    /// The algorithm.
    pub fn kind(&self) -> SchedKind {
        self.kind
    }

    /// The flags.
    pub fn flags(&self) -> SchedFlags {
        self.flags
    }

    /// Number of real servers this was built for.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it was built for no real server at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The Maglev lookup table (slot -> server index, `u32::MAX` = none),
    /// for inspection; `None` for other kinds.
    pub fn mh_table(&self) -> Option<&[u32]> {
        match &self.table {
            Table::Maglev(m) => Some(m.table()),
            _ => None,
        }
    }

    /// The sh/dh bucket table (256 entries, `u32::MAX` = none), for
    /// inspection; `None` for other kinds.
    pub fn buckets(&self) -> Option<&[u32]> {
        match &self.table {
            Table::Buckets(b) => Some(b.table()),
            _ => None,
        }
    }

    /// The table that maps a flow to a server by hashing alone (slot or
    /// bucket -> server index, [`NO_DEST`] = none): mh's Maglev table,
    /// sh's and dh's buckets; `None` for the schedulers whose choice
    /// depends on a worker's own state (rr, wrr, lc, ...). What
    /// `dirigoctl fingerprint` hashes.
    ///
    /// [`NO_DEST`]: super::NO_DEST
    pub fn flow_table(&self) -> Option<&[u32]> {
        match &self.table {
            Table::Maglev(m) => Some(m.table()),
            Table::Buckets(b) => Some(b.table()),
            _ => None,
        }
    }

    /// One cycle of the wrr sequence (server indexes), for inspection;
    /// `None` for other kinds.
    pub fn wrr_sequence(&self) -> Option<&[u32]> {
        match &self.table {
            Table::Wrr(t) => Some(t.sequence()),
            _ => None,
        }
    }
}

/// Per-worker, per-service mutable scheduler state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor {
    pos: u32,
}

impl Cursor {
    /// A cursor starting at position `start` (rr: server index, wrr:
    /// sequence position; reduced modulo the length), so that workers can
    /// start at different places. `Cursor::default()` starts at 0.
    pub fn starting_at(start: u32) -> Cursor {
        Cursor { pos: start }
    }
}

/// Pick a real server index for a new connection with tuple `key`, or
/// `None` when no server can take it. `loads` has one entry per real server,
/// in the same order as the weights given to [`Prepared::build`].
///
/// Never allocates, never panics. Work: O(1) for rr/wrr/sh/dh/mh when the
/// chosen server is available (bounded fallbacks otherwise), O(n) for
/// lc/wlc/sed/nq/fo.
#[inline]
pub fn pick(prep: &Prepared, cur: &mut Cursor, loads: &[DestLoad], key: &FlowKey) -> Option<usize> {
    pick_with(prep, cur, loads, key)
}

/// [`pick`] reading the loads through [`Loads`]: the same choice for the
/// same loads. rr, wrr, sh, dh and mh ask for the loads of the servers they
/// consider only (usually one); lc, wlc, sed, nq and fo for each server
/// once, in list order.
#[inline]
pub fn pick_with<L: Loads + ?Sized>(
    prep: &Prepared,
    cur: &mut Cursor,
    loads: &L,
    key: &FlowKey,
) -> Option<usize> {
    match (&prep.table, prep.kind) {
        (_, SchedKind::Rr) => rr::pick_rr(&mut cur.pos, loads),
        (Table::Wrr(t), _) => t.pick(&mut cur.pos, loads),
        (_, SchedKind::Lc) => least::pick_lc(loads),
        (_, SchedKind::Wlc) => least::pick_wlc(loads),
        (_, SchedKind::Sed) => least::pick_sed(loads),
        (_, SchedKind::Nq) => least::pick_nq(loads),
        (_, SchedKind::Fo) => least::pick_fo(loads),
        (Table::Buckets(b), SchedKind::Sh) => b.pick_sh(prep.flags, loads, key),
        (Table::Buckets(b), SchedKind::Dh) => b.pick_dh(prep.flags, loads, key),
        (Table::Maglev(m), _) => m.pick(prep.flags, loads, key),
        _ => None,
    }
}
