use super::*;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::spec::Proto;
use crate::lb::testutil::dest;

fn svc(proto: Proto, vip: [u8; 4], port: u16) -> ServiceSpec {
    ServiceSpec {
        key: ServiceKey {
            proto,
            vip: Ipv4Addr::from(vip),
            port,
        },
        sched: SchedKind::Wlc,
        flags: SchedFlags::default(),
        persistent: None,
        netmask: Ipv4Addr::BROADCAST,
        synproxy: false,
    }
}

const V: [u8; 4] = [192, 0, 2, 1];

type Config = Vec<(ServiceSpec, Vec<DestSpec>)>;

#[test]
fn lookup_and_ports() {
    let mut ids = LbIds::new(8, 16);
    let mut b = SnapshotBuilder::new();
    b.service(
        svc(Proto::Tcp, V, 80),
        vec![
            dest([10, 0, 0, 2], 8080, Method::Nat, 1),
            dest([10, 0, 0, 3], 8080, Method::Dr, 1),
        ],
    );
    b.service(
        svc(Proto::Udp, V, 80),
        vec![dest([10, 0, 0, 2], 0, Method::Nat, 1)],
    );
    let s = b.build(&mut ids, 1).unwrap();
    let v = u32::from_be_bytes(V);
    let (i, t) = s.service(6, v, 80).unwrap();
    assert_eq!((i, t.spec.key.proto), (0, Proto::Tcp));
    assert_eq!(t.dests[0].port, 8080, "NAT keeps its port");
    assert_eq!(t.dests[1].port, 80, "DR uses the service port");
    assert_eq!(
        s.service(17, v, 80).unwrap().1.dests[0].port,
        80,
        "port 0 = service port"
    );
    assert!(s.service(6, v, 81).is_none());
    assert!(s.service(6, v + 1, 80).is_none());
    assert!(s.is_vip(v));
    assert!(!s.is_vip(v + 1));
    let d = &s.services()[1].dests[0];
    let (sv, dd) = s.dest_by_slot(d.id.slot).unwrap();
    assert_eq!((sv.spec.key.proto, dd.key), (Proto::Udp, d.key));
    assert_eq!(s.timeouts.tcp_ms[1], 900_000);
}

#[test]
fn port_zero_fallback_requires_persistence() {
    let mut ids = LbIds::new(8, 16);
    let mut b = SnapshotBuilder::new();
    b.service(svc(Proto::Tcp, V, 0), vec![]);
    assert_eq!(
        b.build(&mut ids, 1).unwrap_err(),
        BuildError::PortZero(svc(Proto::Tcp, V, 0).key)
    );
    let mut p = svc(Proto::Tcp, V, 0);
    p.persistent = Some(300);
    let mut b = SnapshotBuilder::new();
    b.service(p, vec![dest([10, 0, 0, 2], 0, Method::Dr, 1)]);
    b.service(svc(Proto::Tcp, V, 443), vec![]);
    let s = b.build(&mut ids, 1).unwrap();
    let v = u32::from_be_bytes(V);
    assert_eq!(s.service(6, v, 22).unwrap().0, 0);
    assert_eq!(s.service(6, v, 443).unwrap().0, 1);
}

#[test]
fn validation_errors() {
    let mut ids = LbIds::new(2, 3);
    let k = svc(Proto::Tcp, V, 80);
    let cases: Vec<(Config, BuildError)> = vec![
        (
            vec![(k.clone(), vec![]), (k.clone(), vec![])],
            BuildError::DuplicateService(k.key),
        ),
        (
            vec![(
                k.clone(),
                vec![
                    dest([10, 0, 0, 2], 0, Method::Dr, 1),
                    dest([10, 0, 0, 2], 0, Method::Nat, 2),
                ],
            )],
            BuildError::DuplicateDest(k.key, dest([10, 0, 0, 2], 0, Method::Dr, 1).key),
        ),
        (
            vec![(k.clone(), vec![dest([10, 0, 0, 2], 0, Method::Dr, 65536)])],
            BuildError::WeightTooLarge(k.key, dest([10, 0, 0, 2], 0, Method::Dr, 1).key, 65536),
        ),
        (
            vec![(
                k.clone(),
                vec![DestSpec {
                    upper: 5,
                    lower: 6,
                    ..dest([10, 0, 0, 2], 0, Method::Dr, 1)
                }],
            )],
            BuildError::ThresholdOrder(k.key, dest([10, 0, 0, 2], 0, Method::Dr, 1).key, 5, 6),
        ),
        (
            vec![(k.clone(), vec![dest([0, 0, 0, 0], 0, Method::Dr, 1)])],
            BuildError::BadAddress(Ipv4Addr::UNSPECIFIED, "unspecified"),
        ),
        (
            vec![
                (k.clone(), vec![]),
                (svc(Proto::Udp, V, 80), vec![]),
                (svc(Proto::Udp, V, 81), vec![]),
            ],
            BuildError::TooManyServices(2),
        ),
        (
            vec![(
                k.clone(),
                (1..=4)
                    .map(|i| dest([10, 0, 0, i], 0, Method::Nat, 1))
                    .collect(),
            )],
            BuildError::TooManyDests(3),
        ),
    ];
    for (svcs, want) in cases {
        let mut b = SnapshotBuilder::new();
        for (s, d) in svcs {
            b.service(s, d);
        }
        assert_eq!(b.build(&mut ids, 1).unwrap_err(), want);
    }
    assert_eq!(ids.services.available(), 2, "failed builds assign nothing");
}

#[test]
fn dr_on_link_hook() {
    let mut ids = LbIds::new(2, 4);
    let on_link = |a: u32| a >> 8 == 0x000a_0000;
    let mut b = SnapshotBuilder::new();
    b.on_link(&on_link);
    let k = svc(Proto::Tcp, V, 80);
    b.service(
        k.clone(),
        vec![
            dest([10, 0, 0, 2], 0, Method::Dr, 1),
            dest([10, 9, 0, 2], 0, Method::Tun, 1),
        ],
    );
    assert!(b.build(&mut ids, 1).is_ok(), "TUN needs no on-link server");
    let mut b = SnapshotBuilder::new();
    b.on_link(&on_link);
    b.service(k.clone(), vec![dest([10, 9, 0, 2], 0, Method::Dr, 1)]);
    assert_eq!(
        b.build(&mut ids, 2).unwrap_err(),
        BuildError::NotOnLink(k.key, dest([10, 9, 0, 2], 0, Method::Dr, 1).key)
    );
}

#[test]
fn slots_stable_across_edits_and_thresholds_divided() {
    let mut ids = LbIds::new(4, 8);
    let k = svc(Proto::Tcp, V, 80);
    let a = DestSpec {
        upper: 10,
        lower: 5,
        ..dest([10, 0, 0, 2], 0, Method::Dr, 1)
    };
    let mut b = SnapshotBuilder::new();
    b.service(
        k.clone(),
        vec![a.clone(), dest([10, 0, 0, 3], 0, Method::Dr, 1)],
    );
    let s1 = b.build(&mut ids, 1).unwrap();
    let mut b = SnapshotBuilder::new();
    b.threshold_divisor(4);
    b.service(
        k.clone(),
        vec![dest([10, 0, 0, 4], 0, Method::Dr, 1), a.clone()],
    );
    let s2 = b.build(&mut ids, 2).unwrap();
    assert_eq!(s2.services()[0].id, s1.services()[0].id);
    assert_eq!(s2.services()[0].dests[1].id, s1.services()[0].dests[0].id);
    assert_ne!(
        s2.services()[0].dests[0].id.slot,
        s1.services()[0].dests[1].id.slot
    );
    assert_eq!(
        (
            s2.services()[0].dests[1].upper,
            s2.services()[0].dests[1].lower
        ),
        (3, 2)
    );
    assert!(s2.dest_by_slot(s1.services()[0].dests[1].id.slot).is_none());
    assert_eq!(ids.dests.retired(), 1);
}

/// The Maglev table of the first service, as real-server addresses.
fn mh_by_addr(s: &Snapshot) -> Vec<Option<Ipv4Addr>> {
    let svc = &s.services()[0];
    svc.prepared
        .mh_table()
        .expect("an mh service")
        .iter()
        .map(|&i| svc.dests.get(i as usize).map(|d| d.key.addr))
        .collect()
}

fn mh_snapshot(ids: &mut LbIds, epoch: u64, last_octets: &[u8]) -> Snapshot {
    let mut k = svc(Proto::Tcp, V, 80);
    k.sched = SchedKind::Mh;
    let mut b = SnapshotBuilder::new();
    b.mh_table_size(250);
    b.service(
        k,
        last_octets
            .iter()
            .map(|&o| dest([10, 0, 0, o], 0, Method::Dr, 1))
            .collect(),
    );
    b.build(ids, epoch).unwrap()
}

#[test]
fn maglev_built_from_stable_ids() {
    let mut ids = LbIds::new(4, 16);
    let s1 = mh_snapshot(&mut ids, 1, &[2, 3, 4, 5]);
    let t1 = mh_by_addr(&s1);
    assert_eq!(t1.len(), 251, "250 rounded up to a prime");
    // Exactly the table of the stable ids, whatever the list order.
    let want: Vec<(u64, u32)> = [2u8, 3, 4, 5]
        .iter()
        .map(|&o| {
            (
                crate::lb::sched::stable_id(u32::from_be_bytes([10, 0, 0, o]), 0),
                1,
            )
        })
        .collect();
    let p = Prepared::build_ids(SchedKind::Mh, SchedFlags::default(), &want, 250);
    assert_eq!(s1.services()[0].prepared.mh_table(), p.mh_table());
    let reordered = mh_by_addr(&mh_snapshot(&mut ids, 2, &[5, 3, 2, 4]));
    assert_eq!(reordered, t1, "positions in the list do not matter");
    // Removing the first server moves (almost) only the clients it served.
    let removed = Some(Ipv4Addr::new(10, 0, 0, 2));
    let t3 = mh_by_addr(&mh_snapshot(&mut ids, 3, &[3, 4, 5]));
    let kept = t1.iter().filter(|o| **o != removed).count();
    let moved = t1
        .iter()
        .zip(&t3)
        .filter(|(a, b)| **a != removed && a != b)
        .count();
    assert!(t3.iter().all(|o| o.is_some() && *o != removed));
    assert!(moved * 10 < kept, "{moved} of {kept} slots moved");
    // By list index (the former build) most slots would move.
    let by_index = |n: usize| {
        Prepared::build_with(SchedKind::Mh, SchedFlags::default(), &vec![1; n], 250)
            .mh_table()
            .unwrap()
            .to_vec()
    };
    let (i4, i3) = (by_index(4), by_index(3));
    let idx_moved = i4
        .iter()
        .zip(&i3)
        .filter(|(a, b)| **a != 0 && **a - 1 != **b)
        .count();
    assert!(
        idx_moved > moved,
        "index ids moved {idx_moved}, stable {moved}"
    );
}

/// One service of `sched` over 10.0.0.{o}:8080 (NAT) with these weights,
/// in this order, on a director of its own (fresh slot ids).
fn fp_of(sched: SchedKind, servers: &[(u8, u32)]) -> Option<Fingerprint> {
    let mut ids = LbIds::new(4, 16);
    let mut b = SnapshotBuilder::new();
    b.mh_table_size(251);
    let mut spec = svc(Proto::Tcp, V, 80);
    spec.sched = sched;
    b.service(
        spec,
        servers
            .iter()
            .map(|&(o, w)| dest([10, 0, 0, o], 8080, Method::Nat, w))
            .collect(),
    );
    b.build(&mut ids, 1).unwrap().services()[0].fingerprint()
}

#[test]
fn fingerprint_is_the_same_in_any_order_and_follows_weights() {
    let base = [(2, 1), (3, 2), (4, 3), (5, 1)];
    for sched in [SchedKind::Sh, SchedKind::Dh, SchedKind::Mh] {
        let f = fp_of(sched, &base).expect("a table");
        let entries = if sched == SchedKind::Mh { 251 } else { 256 };
        assert_eq!((f.entries, f.servers), (entries, 4), "{sched:?}");
        for order in [
            [(5, 1), (4, 3), (3, 2), (2, 1)],
            [(3, 2), (5, 1), (2, 1), (4, 3)],
        ] {
            assert_eq!(fp_of(sched, &order), Some(f), "{sched:?} {order:?}");
        }
        // a server removed: another table
        let fewer = fp_of(sched, &base[1..]).unwrap();
        assert_ne!(fewer.hash, f.hash, "{sched:?}");
        assert_eq!(fewer.servers, 3);
        // quiesced in the build (weight 0): it owns nothing
        let q = fp_of(sched, &[(2, 0), (3, 2), (4, 3), (5, 1)]).unwrap();
        assert_eq!(q.servers, 3, "{sched:?}");
        assert_ne!(q.hash, f.hash, "{sched:?}");
    }
    // a changed weight changes the tables that weights shape (dh's one
    // bucket per server in turn does not depend on them, as in IPVS)
    for sched in [SchedKind::Sh, SchedKind::Mh] {
        let f = fp_of(sched, &base).unwrap();
        let w = fp_of(sched, &[(2, 1), (3, 2), (4, 5), (5, 1)]).unwrap();
        assert_ne!(w.hash, f.hash, "{sched:?}");
    }
    assert_eq!(
        fp_of(SchedKind::Dh, &base),
        fp_of(SchedKind::Dh, &[(2, 1), (3, 2), (4, 5), (5, 1)])
    );
    // the scheduler's name enters: sh and dh tables of 1:1 weights are alike
    let even = [(2, 1), (3, 1)];
    assert_ne!(
        fp_of(SchedKind::Sh, &even).unwrap().hash,
        fp_of(SchedKind::Dh, &even).unwrap().hash
    );
    for sched in [SchedKind::Rr, SchedKind::Wrr, SchedKind::Wlc, SchedKind::Fo] {
        assert_eq!(fp_of(sched, &base), None, "{sched:?} has no flow table");
    }
}

/// The documented definition, byte for byte: SipHash-2-4, keys 0 and 0,
/// over name, 0, flags, size, then address and port of every entry.
#[test]
fn fingerprint_is_siphash_of_the_documented_bytes() {
    use std::hash::Hasher;
    let mut ids = LbIds::new(4, 16);
    let mut b = SnapshotBuilder::new();
    let mut spec = svc(Proto::Tcp, V, 80);
    spec.sched = SchedKind::Dh;
    spec.flags.fallback = true;
    b.service(
        spec,
        vec![
            dest([10, 0, 0, 2], 8080, Method::Nat, 1),
            dest([10, 0, 0, 3], 0, Method::Dr, 1),
        ],
    );
    let s = b.build(&mut ids, 1).unwrap();
    let svc = &s.services()[0];
    let mut bytes = b"dh\0\x01".to_vec();
    bytes.extend_from_slice(&256u32.to_be_bytes());
    for &i in svc.prepared.buckets().unwrap() {
        let d = &svc.dests[i as usize];
        bytes.extend_from_slice(&d.addr.to_be_bytes());
        bytes.extend_from_slice(&d.port.to_be_bytes());
    }
    let mut h = siphasher::sip::SipHasher24::new_with_keys(0, 0);
    h.write(&bytes);
    let f = svc.fingerprint().unwrap();
    assert_eq!(f.hash, h.finish());
    // and it does not change between builds (a golden value: if this
    // moves, directors of two versions can no longer be compared)
    assert_eq!(format!("{:#018x}", f.hash), "0x203520759a595c4a");
}
