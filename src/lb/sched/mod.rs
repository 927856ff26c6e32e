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

use crate::net::meta::FlowKey;

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

/// Immutable scheduler data built off the fast path.
#[derive(Clone, Debug)]
pub struct Prepared {
    kind: SchedKind,
    flags: SchedFlags,
}

impl Prepared {
    /// Build for `weights` (index = real server index in the service).
    pub fn build(kind: SchedKind, flags: SchedFlags, weights: &[u32]) -> Prepared {
        let _ = weights;
        Prepared { kind, flags }
    }

    /// The algorithm.
    pub fn kind(&self) -> SchedKind {
        self.kind
    }

    /// The flags.
    pub fn flags(&self) -> SchedFlags {
        self.flags
    }
}

/// Per-worker, per-service mutable scheduler state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor {
    pos: u32,
}

/// Pick a real server index for a new connection with tuple `key`, or
/// `None` when no server can take it. `loads` has one entry per real server,
/// in the same order as the weights given to [`Prepared::build`].
#[inline]
pub fn pick(prep: &Prepared, cur: &mut Cursor, loads: &[DestLoad], key: &FlowKey) -> Option<usize> {
    // Placeholder round robin until the full set lands (issue 5).
    let _ = (prep, key);
    let n = loads.len();
    for _ in 0..n {
        let i = cur.pos as usize % n;
        cur.pos = cur.pos.wrapping_add(1);
        if loads[i].available() {
            return Some(i);
        }
    }
    None
}
