//! Least-load picks without a walk: a winner (tournament) tree over a
//! service's servers for lc, wlc, sed, nq and fo.
//!
//! The walk of [`super::least`] weighs every server for every new
//! connection: O(n) per pick, which at a few hundred servers costs more
//! than the rest of a new connection together. A winner tree keeps, in
//! each internal node, the index of the server that wins its subtree;
//! the root is the pick. A server whose load changed replays only the
//! matches on its path to the root (O(log n)), and stops as soon as a match
//! keeps its old winner, unless that winner is the changed server itself.
//!
//! The order is the walk's exactly ([`Node::of`]): the walk keeps the *first*
//! minimum in list order, the tree the minimum of (rank, index); the two
//! are the same server for every load (checked against the walk on random
//! loads in `tests/tree.rs`). Unavailable servers (weight 0, overloaded)
//! lose to every available one; a root that is unavailable means no pick.
//!
//! Every node holds its winner's *rank* ([`Node`], computed from the
//! server's load by [`Node::of`] when the server's leaf is set), so a match
//! is one comparison of two stored ranks: no counter is read above the
//! leaves, and no per-scheduler branch is taken above them either.
//!
//! Layout: `nodes[k]` for `1 <= k < 2 * size` (`size` = `n` rounded up to a
//! power of two); node `k`'s children are `2k` and `2k + 1`; node
//! `size + i` is leaf `i` (leaves `i >= n` are empty). `nodes[0]` is
//! unused. The caller owns the storage, so a worker can carve its trees
//! out of one preallocated arena.

use super::dest::DestLoad;
use super::kind::SchedKind;
use super::least::conn_overhead;
use std::cmp::Ordering;

/// An empty leaf or node.
pub const EMPTY: u32 = u32::MAX;

/// Whether `kind` picks by load (the walk of [`super::least`]), i.e. can
/// be answered by a tree.
#[inline]
pub fn by_load(kind: SchedKind) -> bool {
    matches!(
        kind,
        SchedKind::Lc | SchedKind::Wlc | SchedKind::Sed | SchedKind::Nq | SchedKind::Fo
    )
}

/// A tree over `n` servers' `size`: `n` rounded up to a power of two (at
/// least 1); it takes `2 * size` nodes.
#[inline]
pub fn size_for(n: usize) -> usize {
    n.max(1).next_power_of_two()
}

/// A match's contestant: a server's index and its rank under the tree's
/// scheduler. Ranks compare by class (an nq idle server, then any
/// available server, then unavailable ones, then empty leaves), then by
/// `oh / w` (cross-multiplied, never divided), then by index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// Overhead (the numerator).
    pub oh: u64,
    /// Weight (the denominator, never 0).
    pub w: u32,
    /// Class (top two bits) and server index (the rest).
    pub tag: u32,
}

const CLASS_SHIFT: u32 = 30;
const IDX_MASK: u32 = (1 << CLASS_SHIFT) - 1;
/// nq: an idle server (taken before any other).
const IDLE: u32 = 0;
/// Available.
const AVAILABLE: u32 = 1;
/// Weight 0 or overloaded: never picked.
const UNAVAILABLE: u32 = 2;
/// No server.
const NONE: u32 = 3;

impl Node {
    /// No server.
    pub const EMPTY: Node = Node {
        oh: 0,
        w: 1,
        tag: u32::MAX,
    };

    /// Server `idx`'s rank under `kind` with load `l`: the walk of
    /// [`super::least`] picks the first server of the least rank.
    #[inline(always)]
    pub fn of(kind: SchedKind, idx: u32, l: &DestLoad) -> Node {
        let idx = idx & IDX_MASK;
        if !l.available() {
            return Node {
                oh: 0,
                w: 1,
                tag: UNAVAILABLE << CLASS_SHIFT | idx,
            };
        }
        let (class, oh, w) = match kind {
            SchedKind::Lc => (AVAILABLE, conn_overhead(l), 1),
            SchedKind::Wlc => (AVAILABLE, conn_overhead(l), l.weight),
            SchedKind::Sed => (AVAILABLE, l.active as u64 + 1, l.weight),
            SchedKind::Nq if l.active == 0 => (IDLE, 0, 1),
            SchedKind::Nq => (AVAILABLE, l.active as u64 + 1, l.weight),
            // the highest weight: the least 1 / weight
            SchedKind::Fo => (AVAILABLE, 1, l.weight),
            _ => (AVAILABLE, 0, 1),
        };
        Node {
            oh,
            w,
            tag: class << CLASS_SHIFT | idx,
        }
    }

    /// The server's index, or [`EMPTY`] for an empty leaf.
    #[inline]
    pub fn idx(&self) -> u32 {
        if self.tag >> CLASS_SHIFT == NONE {
            EMPTY
        } else {
            self.tag & IDX_MASK
        }
    }

    /// Whether the server may be picked.
    #[inline]
    pub fn available(&self) -> bool {
        self.tag >> CLASS_SHIFT <= AVAILABLE
    }

    /// Whether `self` wins against `other` (a different server).
    #[inline(always)]
    fn beats(&self, other: &Node) -> bool {
        let (ca, cb) = (self.tag >> CLASS_SHIFT, other.tag >> CLASS_SHIFT);
        if ca != cb {
            return ca < cb;
        }
        // equal weights (lc, and most pools): the overheads alone
        let ord = if self.w == other.w {
            self.oh.cmp(&other.oh)
        } else {
            // oh fits 64 bits and w 32: the products fit 96, exact in 128
            (self.oh as u128 * other.w as u128).cmp(&(other.oh as u128 * self.w as u128))
        };
        match ord {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => self.tag < other.tag,
        }
    }
}

/// The match between nodes `2k` and `2k + 1`.
#[inline(always)]
fn play(nodes: &[Node], k: usize) -> Node {
    match (nodes.get(2 * k), nodes.get(2 * k + 1)) {
        (Some(a), Some(b)) => {
            if a.beats(b) {
                *a
            } else {
                *b
            }
        }
        _ => Node::EMPTY,
    }
}

/// Set every leaf of a `kind` tree over `n` servers from `load(i)` (server
/// `i`'s load) and play every match; `nodes` holds at least `2 *`
/// [`size_for`]`(n)` entries (fewer: nothing is built, [`root`] answers
/// no pick).
pub fn build(nodes: &mut [Node], n: usize, kind: SchedKind, load: impl Fn(u32) -> DestLoad) {
    let size = size_for(n);
    let Some(nodes) = nodes.get_mut(..2 * size) else {
        return;
    };
    for (i, leaf) in nodes[size..].iter_mut().enumerate() {
        *leaf = if i < n {
            Node::of(kind, i as u32, &load(i as u32))
        } else {
            Node::EMPTY
        };
    }
    for k in (1..size).rev() {
        nodes[k] = play(nodes, k);
    }
}

/// Server `leaf`'s load changed: set its leaf from `load(leaf)` and replay
/// the matches on its path to the root, until one ends as it did before
/// (same winner, same rank). Correct after any number of changes, in any
/// order, as long as each changed server is replayed once after its last
/// change: a stopped replay leaves above it only matches whose inputs have
/// not changed, or whose changed server's own replay is still to come.
pub fn update(
    nodes: &mut [Node],
    n: usize,
    kind: SchedKind,
    leaf: u32,
    load: impl Fn(u32) -> DestLoad,
) {
    let size = size_for(n);
    let Some(nodes) = nodes.get_mut(..2 * size) else {
        return;
    };
    if leaf as usize >= n {
        return;
    }
    let mut k = size + leaf as usize;
    let mut w = Node::of(kind, leaf, &load(leaf));
    loop {
        let Some(s) = nodes.get_mut(k) else {
            return;
        };
        if *s == w {
            return;
        }
        *s = w;
        k >>= 1;
        if k == 0 {
            return;
        }
        w = play(nodes, k);
    }
}

/// The winner of the whole tree: [`Node::idx`] and [`Node::available`]
/// say which server and whether it may be picked.
#[inline]
pub fn root(nodes: &[Node], n: usize) -> Node {
    if n == 0 {
        return Node::EMPTY;
    }
    let size = size_for(n);
    if nodes.len() < 2 * size {
        return Node::EMPTY;
    }
    nodes[1]
}
