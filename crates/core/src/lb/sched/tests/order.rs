//! Every director picks the same server: sh, dh and mh map a flow to the
//! same server *address* whatever order the servers were added in.

use super::*;

/// (address, port, weight) of the servers, in the order "added".
type Servers = Vec<(u32, u16, u32)>;

fn servers() -> Servers {
    (1..=7u32)
        .map(|i| {
            (
                0x0a00_0100 + i,
                if i % 2 == 0 { 8080 } else { 80 },
                i % 4 + 1,
            )
        })
        .collect()
}

/// For each sampled flow, the address of the server it goes to (or 0).
fn mapping(kind: SchedKind, flags: SchedFlags, list: &Servers) -> Vec<(u32, u16)> {
    let dests: Vec<(u64, u32)> = list.iter().map(|&(a, p, w)| (stable_id(a, p), w)).collect();
    let prep = Prepared::build_ids(kind, flags, &dests, 251);
    let l = loads(&list.iter().map(|s| s.2).collect::<Vec<_>>());
    let mut rng = Rng::new(7);
    (0..3000)
        .map(|_| {
            let r = rng.next();
            let k = FlowKey {
                src: r as u32,
                dst: (r >> 32) as u32,
                sport: (r >> 16) as u16,
                dport: 80,
                proto: crate::net::meta::PROTO_TCP,
            };
            match pick(&prep, &mut Cursor::default(), &l, &k) {
                Some(i) => (list[i].0, list[i].1),
                None => (0, 0),
            }
        })
        .collect()
}

/// Orders a set of servers can be added in: reversed, rotated, shuffled,
/// and with one removed and added again (it goes to the end).
fn orders() -> Vec<Servers> {
    let base = servers();
    let mut out = vec![base.clone()];
    out.push(base.iter().rev().copied().collect());
    let mut rot = base.clone();
    rot.rotate_left(3);
    out.push(rot);
    let mut shuffled = base.clone();
    let mut rng = Rng::new(99);
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.below(i as u64 + 1) as usize);
    }
    out.push(shuffled);
    let mut readded = base.clone();
    let s = readded.remove(2);
    readded.push(s);
    out.push(readded);
    out
}

fn same_everywhere(kind: SchedKind, flags: SchedFlags) {
    let all = orders();
    let want = mapping(kind, flags, &all[0]);
    let servers: std::collections::HashSet<_> = want.iter().collect();
    assert!(
        servers.len() >= 5,
        "{kind:?}: the sample reaches most servers"
    );
    assert!(
        !servers.contains(&(0, 0)),
        "{kind:?}: every flow is scheduled"
    );
    for (n, list) in all.iter().enumerate().skip(1) {
        let got = mapping(kind, flags, list);
        let differ = want.iter().zip(&got).filter(|(a, b)| a != b).count();
        assert_eq!(differ, 0, "{kind:?}: order {n} moves {differ} flows");
    }
}

#[test]
fn sh_same_server_in_any_order() {
    same_everywhere(SchedKind::Sh, SchedFlags::default());
    same_everywhere(
        SchedKind::Sh,
        SchedFlags {
            fallback: true,
            port: true,
        },
    );
}

#[test]
fn dh_same_server_in_any_order() {
    same_everywhere(SchedKind::Dh, SchedFlags::default());
}

#[test]
fn mh_same_server_in_any_order() {
    same_everywhere(SchedKind::Mh, SchedFlags::default());
    same_everywhere(
        SchedKind::Mh,
        SchedFlags {
            fallback: true,
            port: true,
        },
    );
}

/// With servers down, the fallbacks still agree across orders. The
/// servers left up are light (weight 1 against 1000), so they own few
/// slots and most mh flows reach its last resort.
#[test]
fn fallbacks_agree_with_servers_down() {
    let up = |a: u32| a % 3 == 0;
    let heavy: Vec<Servers> = orders()
        .into_iter()
        .map(|l| {
            l.into_iter()
                .map(|(a, p, _)| (a, p, if up(a) { 1 } else { 1000 }))
                .collect()
        })
        .collect();
    for kind in [SchedKind::Sh, SchedKind::Dh, SchedKind::Mh] {
        let flags = SchedFlags {
            fallback: true,
            port: false,
        };
        let pick_all = |list: &Servers| -> Vec<u32> {
            let dests: Vec<(u64, u32)> =
                list.iter().map(|&(a, p, w)| (stable_id(a, p), w)).collect();
            let prep = Prepared::build_ids(kind, flags, &dests, 251);
            // all but two servers down (live weight 0)
            let l: Vec<DestLoad> = list
                .iter()
                .map(|&(a, _, w)| DestLoad {
                    weight: if up(a) { w } else { 0 },
                    ..DestLoad::default()
                })
                .collect();
            (0..2000u32)
                .map(|i| {
                    let k = key(0x0c00_0000 + i * 7919, i as u16);
                    let mut k = k;
                    k.dst = 0x0a00_0000 + i;
                    pick(&prep, &mut Cursor::default(), &l, &k).map_or(0, |i| list[i].0)
                })
                .collect()
        };
        let want = pick_all(&heavy[0]);
        assert!(want.iter().all(|&a| up(a)), "{kind:?}");
        let reached: std::collections::HashSet<_> = want.iter().collect();
        assert!(reached.len() >= 2, "{kind:?}");
        for (n, list) in heavy.iter().enumerate().skip(1) {
            let got = pick_all(list);
            let differ = want.iter().zip(&got).filter(|(a, b)| a != b).count();
            assert_eq!(differ, 0, "{kind:?}: order {n} moves {differ} flows");
        }
    }
}
