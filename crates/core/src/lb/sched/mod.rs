//! Schedulers: pick a real server for a new connection.
//!
//! Split in two so the fast path never allocates:
//! * [`Prepared`] is built by the control thread whenever a service's real
//!   servers or weights change (wrr sequence, Maglev table, ...) and is
//!   published immutably in the snapshot;
//! * [`Cursor`] is the small mutable state each worker keeps per service
//!   (rr position, ...).
//!
//! [`pick`] reads the per-real-server loads the core keeps ([`DestLoad`]).
//!
//! The algorithms follow the Linux IPVS schedulers (`ip_vs_*.c`):
//! * `rr`, `wrr` ([`rr`]): O(1) picks; wrr walks a precomputed copy of the
//!   interleaved sequence `ip_vs_wrr.c` produces (gcd / max-weight stepping);
//! * `lc`, `wlc`, `sed`, `nq`, `fo` ([`least`]): one O(n) scan over the live
//!   loads, IPVS overheads and tie-breaking (first minimum in list order,
//!   compared by cross-multiplication, never division);
//! * `sh`, `dh` ([`hash`]): IPVS's 256-bucket tables and hash functions,
//!   dealt in stable-identity order rather than list order;
//! * `mh` ([`maglev`]): Maglev with a prime table (default 65537) and
//!   permutations derived from a stable per-server identity.
//!
//! Availability: a server with live weight 0 (quiesced) or `overloaded` is
//! never picked for a new connection; when none is available [`pick`] returns
//! `None`. [`pick`] never allocates and never panics, whatever `loads` holds
//! (a `loads` shorter than the prepared list makes the missing servers
//! unavailable).
//!
//! Table-based schedulers (`wrr`, `sh`, `dh`, `mh`) take the weights given to
//! the build: a server built with weight 0 owns no slot. To quiesce a server
//! while keeping its slots (IPVS's `last_weight` behaviour, so re-enabling it
//! remaps nothing), build with its previous weight and publish its live
//! weight 0 in [`DestLoad`].

use crate::net::meta::FlowKey;

pub mod hash;
pub mod least;
pub mod maglev;
pub mod rr;
pub mod tree;

#[cfg(test)]
mod tests;

pub use hash::stable_id;
pub use maglev::MH_DEFAULT_TABLE_SIZE;

/// The scheduling algorithms (ipvsadm `-s` names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedKind {
    /// Round robin.
    Rr,
    /// Weighted round robin (interleaved as IPVS).
    Wrr,
    /// Least connection.
    Lc,
    /// Weighted least connection (the ipvsadm default).
    Wlc,
    /// Shortest expected delay.
    Sed,
    /// Never queue.
    Nq,
    /// Source hashing.
    Sh,
    /// Destination hashing.
    Dh,
    /// Maglev hashing.
    Mh,
    /// Weighted failover.
    Fo,
}

impl SchedKind {
    /// All kinds, in ipvsadm's documentation order.
    pub const ALL: [SchedKind; 10] = [
        SchedKind::Rr,
        SchedKind::Wrr,
        SchedKind::Lc,
        SchedKind::Wlc,
        SchedKind::Sed,
        SchedKind::Nq,
        SchedKind::Sh,
        SchedKind::Dh,
        SchedKind::Mh,
        SchedKind::Fo,
    ];

    /// The ipvsadm name (`rr`, `wlc`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SchedKind::Rr => "rr",
            SchedKind::Wrr => "wrr",
            SchedKind::Lc => "lc",
            SchedKind::Wlc => "wlc",
            SchedKind::Sed => "sed",
            SchedKind::Nq => "nq",
            SchedKind::Sh => "sh",
            SchedKind::Dh => "dh",
            SchedKind::Mh => "mh",
            SchedKind::Fo => "fo",
        }
    }
}

impl std::str::FromStr for SchedKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SchedKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown scheduler '{s}'"))
    }
}

/// Scheduler flags (ipvsadm `-b`): sh-fallback/mh-fallback skip an
/// unavailable server; sh-port/mh-port hash the source port too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SchedFlags {
    /// `sh-fallback` / `mh-fallback`.
    pub fallback: bool,
    /// `sh-port` / `mh-port`.
    pub port: bool,
}

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

/// Where [`pick_with`] reads the live loads: one per real server, in the
/// order given to [`Prepared::build`]. A slice of [`DestLoad`] is one; a
/// worker can instead compute each load when a scheduler asks for it, so
/// that rr, wrr, sh, dh and mh read the servers they consider only, and
/// the least-connection family reads each server once without a copy.
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
