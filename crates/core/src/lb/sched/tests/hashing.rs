//! sh and dh.

use super::*;

const FB: SchedFlags = SchedFlags {
    fallback: true,
    port: false,
};
const PORT: SchedFlags = SchedFlags {
    fallback: false,
    port: true,
};

fn one(prep: &Prepared, l: &[DestLoad], k: &FlowKey) -> Option<usize> {
    pick(prep, &mut Cursor::default(), l, k)
}

#[test]
fn sh_table_is_dealt_like_ipvs() {
    let prep = Prepared::build(SchedKind::Sh, SchedFlags::default(), &[1, 2, 3]);
    let tab = prep.buckets().unwrap();
    assert_eq!(tab.len(), 256);
    assert_eq!(&tab[..12], [0, 1, 1, 2, 2, 2, 0, 1, 1, 2, 2, 2]);
    // 256 = 42 * 6 + 4.
    assert_eq!(&tab[252..], [0, 1, 1, 2]);
    let count = |s: u32| tab.iter().filter(|&&x| x == s).count();
    assert_eq!((count(0), count(1), count(2)), (43, 86, 127));
    // gcd-normalised: 20:40:60 deals like 1:2:3.
    let p2 = Prepared::build(SchedKind::Sh, SchedFlags::default(), &[20, 40, 60]);
    assert_eq!(p2.buckets(), prep.buckets());
    // Weights summing past 256 are scaled, every server keeps buckets.
    let p3 = Prepared::build(SchedKind::Sh, SchedFlags::default(), &[1000, 1, 3000]);
    let tab = p3.buckets().unwrap();
    let c: Vec<usize> = (0..3)
        .map(|s| tab.iter().filter(|&&x| x == s).count())
        .collect();
    assert!(c[1] >= 1 && c[0] > 50 && c[2] > 150, "{c:?}");
    // Quiesced (weight 0 in the build): no bucket.
    let p4 = Prepared::build(SchedKind::Sh, SchedFlags::default(), &[1, 0, 1]);
    assert!(!p4.buckets().unwrap().contains(&1));
}

#[test]
fn sh_uses_ipvs_hash() {
    let prep = Prepared::build(SchedKind::Sh, SchedFlags::default(), &[1, 2, 3]);
    let l = loads(&[1, 2, 3]);
    // hash_32(0x0a000001, 8) = 0x27 = 39 -> bucket 39 = c.
    assert_eq!(one(&prep, &l, &key(0x0a00_0001, 1234)), Some(2));
    // With sh-port: hash_32(0x0a000001 + 1234, 8) = 0x80 -> b.
    let prep = Prepared::build(SchedKind::Sh, PORT, &[1, 2, 3]);
    assert_eq!(one(&prep, &l, &key(0x0a00_0001, 1234)), Some(1));
}

#[test]
fn sh_same_source_same_server() {
    let w = [1, 1, 1, 1, 1];
    let prep = Prepared::build(SchedKind::Sh, SchedFlags::default(), &w);
    let l = loads(&w);
    let mut rng = Rng::new(3);
    for _ in 0..1000 {
        let src = rng.next() as u32;
        let first = one(&prep, &l, &key(src, 1));
        for sport in [2, 999, 65535] {
            assert_eq!(one(&prep, &l, &key(src, sport)), first);
        }
    }
    // With the port flag, one source spreads over servers.
    let prep = Prepared::build(SchedKind::Sh, PORT, &w);
    let mut seen = [false; 5];
    for sport in 0..200 {
        seen[one(&prep, &l, &key(0x0a00_0001, sport)).unwrap()] = true;
    }
    assert_eq!(seen, [true; 5]);
}

#[test]
fn sh_distribution_follows_weights() {
    let w = [1, 3];
    let prep = Prepared::build(SchedKind::Sh, SchedFlags::default(), &w);
    let t = tally(&prep, &loads(&w), 64_000);
    // 256 buckets dealt a b b b: 64 and 192.
    let share = t[1] as f64 / 64_000.0;
    assert!((share - 0.75).abs() < 0.02, "{t:?}");
}

#[test]
fn sh_fallback_skips_unavailable_servers() {
    let w = [1, 1, 1, 1];
    let l = loads(&w);
    let mut down = loads(&w);
    down[2].overloaded = true;
    let plain = Prepared::build(SchedKind::Sh, SchedFlags::default(), &w);
    let fb = Prepared::build(SchedKind::Sh, FB, &w);
    let mut rng = Rng::new(9);
    let (mut moved, mut none) = (0, 0);
    for _ in 0..4000 {
        let k = key(rng.next() as u32, 1);
        let before = one(&fb, &l, &k).unwrap();
        let after = one(&fb, &down, &k);
        if before == 2 {
            moved += 1;
            assert!(matches!(after, Some(s) if s != 2));
            // Without fallback the flow finds no server.
            assert_eq!(one(&plain, &down, &k), None);
            none += 1;
        } else {
            // Flows of the other servers stay put.
            assert_eq!(after, Some(before));
            assert_eq!(one(&plain, &down, &k), Some(before));
        }
    }
    assert!(moved > 500 && none == moved);
    // Only one server left: everything lands on it.
    let mut one_left = loads(&w);
    for x in [0, 1, 3] {
        one_left[x].weight = 0;
    }
    for i in 0..200 {
        assert_eq!(one(&fb, &one_left, &key(i * 7919, 1)), Some(2));
    }
}

#[test]
fn sh_servers_added_removed_and_reweighted() {
    let k = key(0x0a00_0001, 1);
    // Bucket 39 (see sh_uses_ipvs_hash) under different memberships.
    let cases: [(&[u32], usize); 4] = [
        (&[1, 1], 1),       // 39 % 2
        (&[1, 1, 1], 0),    // 39 % 3
        (&[1, 1, 1, 1], 3), // 39 % 4
        (&[3, 1], 1),       // a a a b: 39 % 4 = 3 -> b
    ];
    for (w, want) in cases {
        let prep = Prepared::build(SchedKind::Sh, SchedFlags::default(), w);
        assert_eq!(one(&prep, &loads(w), &k), Some(want), "{w:?}");
    }
}

#[test]
fn dh_same_destination_same_server() {
    let w = [1, 1, 1, 1, 1];
    let prep = Prepared::build(SchedKind::Dh, SchedFlags::default(), &w);
    let l = loads(&w);
    // (0xc0a80164 * 2654435761) & 255 = 36; 36 % 5 = 1.
    let mut k = key(1, 1);
    k.dst = 0xc0a8_0164;
    assert_eq!(one(&prep, &l, &k), Some(1));
    let mut rng = Rng::new(5);
    for _ in 0..500 {
        k.src = rng.next() as u32;
        k.sport = rng.next() as u16;
        assert_eq!(one(&prep, &l, &k), Some(1));
    }
    // Weights only decide availability: one bucket per server in turn.
    let p2 = Prepared::build(SchedKind::Dh, SchedFlags::default(), &[9, 1, 1, 1, 1]);
    assert_eq!(p2.buckets(), prep.buckets());
    // Removed server 1 (4 left): 36 % 4 = 0.
    let p4 = Prepared::build(SchedKind::Dh, SchedFlags::default(), &[1; 4]);
    assert_eq!(one(&p4, &loads(&[1; 4]), &k), Some(0));
}

#[test]
fn dh_fallback_skips_unavailable_servers() {
    let w = [1, 1, 1];
    let mut down = loads(&w);
    down[1].weight = 0;
    let plain = Prepared::build(SchedKind::Dh, SchedFlags::default(), &w);
    let fb = Prepared::build(SchedKind::Dh, FB, &w);
    let mut k = key(1, 1);
    k.dst = 0xc0a8_0164; // bucket 36 -> server 0
    assert_eq!(one(&plain, &down, &k), Some(0));
    k.dst = 0xc0a8_0165; // bucket 213
    let b = one(&plain, &loads(&w), &k).unwrap();
    let mut d2 = loads(&w);
    d2[b].overloaded = true;
    assert_eq!(one(&plain, &d2, &k), None);
    let alt = one(&fb, &d2, &k).unwrap();
    assert_ne!(alt, b);
    // Deterministic.
    assert_eq!(one(&fb, &d2, &k), Some(alt));
}
