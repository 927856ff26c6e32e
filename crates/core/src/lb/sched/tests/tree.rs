//! The winner tree against the walk it replaces: the same server for every
//! load, after a build and after any sequence of replayed changes.

use super::*;
use crate::lb::sched::tree::{self as wt, by_load};
use proptest::prelude::*;

const KINDS: [SchedKind; 5] = [
    SchedKind::Lc,
    SchedKind::Wlc,
    SchedKind::Sed,
    SchedKind::Nq,
    SchedKind::Fo,
];

fn walk(kind: SchedKind, l: &[DestLoad]) -> Option<usize> {
    let prep = Prepared::build(kind, SchedFlags::default(), &[]);
    pick(&prep, &mut Cursor::default(), l, &key(1, 1))
}

fn tree_pick(nodes: &[wt::Node], l: &[DestLoad]) -> Option<usize> {
    let r = wt::root(nodes, l.len());
    r.available().then_some(r.idx() as usize)
}

fn load(l: &[DestLoad]) -> impl Fn(u32) -> DestLoad + '_ {
    move |i| l[i as usize]
}

/// Loads with many ties (small numbers), some unavailable servers, and
/// now and then an overhead past 32 bits (the 128-bit comparison).
fn arb_load() -> impl Strategy<Value = DestLoad> {
    (0u32..4, 0u32..4, 0u32..6, any::<bool>(), 0u32..40).prop_map(|(w, a, i, over, big)| DestLoad {
        weight: if big == 0 { u32::MAX } else { w },
        active: if big == 1 { u32::MAX - 3 } else { a },
        inactive: i,
        overloaded: over && big == 2,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_built_tree_picks_what_the_walk_picks(
        loads in prop::collection::vec(arb_load(), 1..70),
        k in 0usize..5,
    ) {
        let kind = KINDS[k];
        let mut nodes = vec![wt::Node::EMPTY; 2 * wt::size_for(loads.len())];
        wt::build(&mut nodes, loads.len(), kind, load(&loads));
        prop_assert_eq!(tree_pick(&nodes, &loads), walk(kind, &loads), "{:?}", kind);
    }

    #[test]
    fn replayed_changes_keep_the_walks_pick(
        start in prop::collection::vec(arb_load(), 1..40),
        batches in prop::collection::vec(
            prop::collection::vec((any::<prop::sample::Index>(), arb_load(), any::<bool>()), 0..6),
            1..12,
        ),
        k in 0usize..5,
    ) {
        let kind = KINDS[k];
        let mut loads = start;
        let n = loads.len();
        let mut nodes = vec![wt::Node::EMPTY; 2 * wt::size_for(n)];
        wt::build(&mut nodes, n, kind, load(&loads));
        for batch in batches {
            // change several servers, then replay each (some twice), in an
            // order of their own: what a worker does between two picks
            let mut changed = Vec::new();
            for (i, l, twice) in &batch {
                let i = i.index(n);
                loads[i] = *l;
                changed.push(i);
                if *twice {
                    changed.insert(0, i);
                }
            }
            for i in changed.iter().rev() {
                wt::update(&mut nodes, n, kind, *i as u32, load(&loads));
            }
            prop_assert_eq!(tree_pick(&nodes, &loads), walk(kind, &loads), "{:?}", kind);
        }
    }
}

#[test]
fn a_change_not_replayed_is_not_seen() {
    // the test above can fail: without the replay the tree keeps its old
    // winner while the walk moves on
    let mut l = vec![
        DestLoad {
            weight: 1,
            active: 0,
            inactive: 0,
            overloaded: false,
        };
        5
    ];
    let mut nodes = vec![wt::Node::EMPTY; 2 * wt::size_for(5)];
    wt::build(&mut nodes, 5, SchedKind::Wlc, load(&l));
    assert_eq!(tree_pick(&nodes, &l), Some(0));
    l[0].active = 3;
    assert_eq!(walk(SchedKind::Wlc, &l), Some(1));
    assert_eq!(tree_pick(&nodes, &l), Some(0));
    wt::update(&mut nodes, 5, SchedKind::Wlc, 0, load(&l));
    assert_eq!(tree_pick(&nodes, &l), Some(1));
}

#[test]
fn only_the_load_schedulers_are_trees() {
    for k in SchedKind::ALL {
        assert_eq!(by_load(k), KINDS.contains(&k), "{k:?}");
    }
}

#[test]
fn short_storage_builds_nothing_and_picks_nothing() {
    let l = vec![DestLoad::default(); 3];
    let mut nodes = vec![wt::Node::EMPTY; 7];
    wt::build(&mut nodes, 3, SchedKind::Lc, load(&l));
    wt::update(&mut nodes, 3, SchedKind::Lc, 1, load(&l));
    assert_eq!(wt::root(&nodes, 3), wt::Node::EMPTY);
    assert_eq!(wt::root(&nodes, 0), wt::Node::EMPTY);
}
