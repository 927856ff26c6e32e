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
