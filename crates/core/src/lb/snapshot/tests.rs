use super::*;
use crate::lb::sched::{Prepared, SchedFlags, SchedKind};
use crate::lb::spec::{DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use crate::lb::testutil::dest;
use crate::lb::testutil::V4 as _;
use std::net::Ipv4Addr;

fn svc(proto: Proto, vip: [u8; 4], port: u16) -> ServiceSpec {
    ServiceSpec {
        members: Vec::new(),
        local_addresses: Vec::new(),
        key: ServiceKey {
            fwmark: 0,
            proto,
            vip: std::net::IpAddr::V4(Ipv4Addr::from(vip)),
            port,
        },
        sched: SchedKind::Wlc,
        flags: SchedFlags::default(),
        persistent: None,
        netmask: Ipv4Addr::BROADCAST,
        prefix6: 128,
        synproxy: false,
        ops: false,
        client_address: Default::default(),
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
            BuildError::BadAddress(std::net::IpAddr::V4(Ipv4Addr::UNSPECIFIED), "unspecified"),
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
    let on_link = |a: std::net::IpAddr| u32::from(a.v4()) >> 8 == 0x000a_0000;
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
        .map(|&i| svc.dests.get(i as usize).map(|d| d.key.addr.v4()))
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

/// One IPv6 service `[2001:db8::10]:80` of `sched` over these NAT servers
/// (address, port, weight), in this order, on a director of its own.
fn fp6_of(sched: SchedKind, servers: &[(&str, u16, u32)]) -> Fingerprint {
    let mut ids = LbIds::new(4, 16);
    let mut b = SnapshotBuilder::new();
    b.mh_table_size(251);
    let mut spec = svc(Proto::Tcp, V, 80);
    spec.key.vip = std::net::IpAddr::V6("2001:db8::10".parse().unwrap());
    spec.sched = sched;
    let dests = servers
        .iter()
        .map(|&(a, port, w)| {
            let mut d = dest([0, 0, 0, 0], port, Method::Nat, w);
            d.key.addr = std::net::IpAddr::V6(a.parse().unwrap());
            d
        })
        .collect();
    b.service(spec, dests);
    b.build(&mut ids, 1).unwrap().services()[0]
        .fingerprint()
        .expect("a table")
}

/// An IPv6 service's fingerprint follows its servers' addresses, ports
/// and weights as an IPv4 one does (it once hashed every IPv6 server as
/// `0.0.0.0`, so adding a server or changing a weight left it unchanged).
#[test]
fn ipv6_fingerprint_follows_servers_and_weights() {
    const A: &str = "2001:db8:2::11";
    const B: &str = "2001:db8:2::12";
    for sched in [SchedKind::Mh, SchedKind::Sh] {
        let one = fp6_of(sched, &[(A, 8080, 1)]);
        assert_eq!(one.servers, 1, "{sched:?}");
        let two = fp6_of(sched, &[(A, 8080, 1), (B, 8080, 3)]);
        assert_eq!(two.servers, 2, "{sched:?}");
        assert_ne!(two.hash, one.hash, "{sched:?}: a second server");
        let w = fp6_of(sched, &[(A, 8080, 1), (B, 8080, 5)]);
        assert_ne!(w.hash, two.hash, "{sched:?}: a changed weight");
        // the same servers in another order: the same table
        assert_eq!(fp6_of(sched, &[(B, 8080, 3), (A, 8080, 1)]), two);
        // one server alone, at another address or port
        assert_ne!(fp6_of(sched, &[(B, 8080, 1)]).hash, one.hash, "{sched:?}");
        assert_ne!(fp6_of(sched, &[(A, 8081, 1)]).hash, one.hash, "{sched:?}");
    }
    // the IPv4 equivalent, as before
    let one = fp_of(SchedKind::Mh, &[(2, 1)]).unwrap();
    let two = fp_of(SchedKind::Mh, &[(2, 1), (3, 3)]).unwrap();
    let w = fp_of(SchedKind::Mh, &[(2, 1), (3, 5)]).unwrap();
    assert!(one.hash != two.hash && two.hash != w.hash && one.hash != w.hash);
}

/// The documented definition for an IPv6 service: every entry is its
/// server's 16-byte address and port (`::` and 0 for an empty one); a
/// NAT64 server (IPv4, behind an IPv6 VIP) as its IPv4-mapped address.
#[test]
fn ipv6_fingerprint_is_siphash_of_the_documented_bytes() {
    use std::hash::Hasher;
    let v6 = |s: &str| std::net::IpAddr::V6(s.parse().unwrap());
    let mut ids = LbIds::new(4, 16);
    let mut b = SnapshotBuilder::new();
    b.nat64_pool(&[Ipv4Addr::new(10, 0, 9, 1)]);
    let mut spec = svc(Proto::Tcp, V, 80);
    spec.key.vip = v6("2001:db8::10");
    spec.sched = SchedKind::Dh;
    spec.flags.port = true;
    let mut d6 = dest([0, 0, 0, 0], 8080, Method::Nat, 1);
    d6.key.addr = v6("2001:db8:2::11");
    let d64 = dest([10, 0, 0, 3], 0, Method::Nat, 1);
    b.service(spec, vec![d6, d64]);
    let s = b.build(&mut ids, 1).unwrap();
    let svc = &s.services()[0];
    let mut bytes = b"dh\0\x02".to_vec();
    bytes.extend_from_slice(&256u32.to_be_bytes());
    let mut seen = [false; 2];
    for &i in svc.prepared.buckets().unwrap() {
        let d = &svc.dests[i as usize];
        seen[i as usize] = true;
        let a = match d.key.addr {
            std::net::IpAddr::V4(a) => a.to_ipv6_mapped(),
            std::net::IpAddr::V6(a) => a,
        };
        bytes.extend_from_slice(&a.octets());
        bytes.extend_from_slice(&d.port.to_be_bytes());
    }
    assert_eq!(seen, [true, true]);
    let mut h = siphasher::sip::SipHasher24::new_with_keys(0, 0);
    h.write(&bytes);
    let f = svc.fingerprint().unwrap();
    assert_eq!((f.entries, f.servers), (256, 2));
    assert_eq!(f.hash, h.finish());
    // a golden value, as for IPv4
    assert_eq!(format!("{:#018x}", f.hash), "0x994f8fabbf3e7316");
}

/// IPv6 services sit in their own index: found by `service6`, never by
/// the IPv4 lookup (and the other way round); a real server of the other
/// family is refused with ipvsadm's words; IPv6 on-link checks go through
/// the same hook.
#[test]
fn ipv6_services_and_mixed_families() {
    let v6 = |s: &str| std::net::IpAddr::V6(s.parse().unwrap());
    let bits = |s: &str| u128::from(s.parse::<std::net::Ipv6Addr>().unwrap());
    let mut ids = LbIds::new(8, 16);
    let mut s6 = svc(Proto::Tcp, V, 80);
    s6.key.vip = v6("2001:db8::10");
    let mut d6 = dest([0, 0, 0, 0], 8080, Method::Nat, 1);
    d6.key.addr = v6("2001:db8:2::11");
    let mut dr6 = dest([0, 0, 0, 0], 0, Method::Dr, 1);
    dr6.key.addr = v6("2001:db8:1::12");
    let mut b = SnapshotBuilder::new();
    b.service(s6.clone(), vec![d6.clone(), dr6.clone()]);
    b.service(
        svc(Proto::Tcp, V, 80),
        vec![dest([10, 0, 0, 2], 0, Method::Dr, 1)],
    );
    let s = b.build(&mut ids, 1).unwrap();
    let (_, found) = s.service6(6, bits("2001:db8::10"), 80).unwrap();
    assert_eq!(found.spec.key, s6.key);
    assert_eq!(found.vip6, bits("2001:db8::10"));
    assert_eq!(found.dests[0].addr6, bits("2001:db8:2::11"));
    assert_eq!(found.dests[0].port, 8080);
    assert_eq!(found.dests[1].port, 80, "DR takes the service's port");
    assert!(s.service6(17, bits("2001:db8::10"), 80).is_none());
    assert!(s.service6(6, bits("2001:db8::11"), 80).is_none());
    assert!(s.is_vip6(bits("2001:db8::10")));
    assert!(!s.is_vip6(bits("2001:db8::11")));
    // the IPv4 side sees only its own service
    let (_, v4) = s.service(6, u32::from_be_bytes(V), 80).unwrap();
    assert!(v4.spec.key.vip.is_ipv4());
    assert!(!s.is_vip(0));
    // a family mix is refused
    let mut b = SnapshotBuilder::new();
    b.service(s6.clone(), vec![dest([10, 0, 0, 2], 0, Method::Dr, 1)]);
    let e = b.build(&mut ids, 2).unwrap_err();
    assert!(matches!(e, BuildError::MixedFamily(..)), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("Operation not supported with specified address family"),
        "{e}"
    );
    // bad IPv6 addresses
    for bad in ["::", "::1", "ff02::1"] {
        let mut b = SnapshotBuilder::new();
        let mut s = s6.clone();
        s.key.vip = v6(bad);
        b.service(s, vec![]);
        assert!(
            matches!(b.build(&mut ids, 3), Err(BuildError::BadAddress(..))),
            "{bad}"
        );
    }
    // the DR on-link hook sees IPv6 real servers
    let on_link = |a: std::net::IpAddr| a == v6("2001:db8:1::12");
    let mut b = SnapshotBuilder::new();
    b.on_link(&on_link);
    b.service(s6.clone(), vec![dr6.clone()]);
    assert!(b.build(&mut ids, 4).is_ok());
    let mut far = dr6.clone();
    far.key.addr = v6("2001:db8:9::12");
    let mut b = SnapshotBuilder::new();
    b.on_link(&on_link);
    b.service(s6, vec![far]);
    assert!(matches!(
        b.build(&mut ids, 5),
        Err(BuildError::NotOnLink(..))
    ));
}

#[test]
fn tunnels_are_kept_per_slot_and_misfits_refused() {
    use crate::lb::tunnel::{TunCsum, TunType, Tunnel};
    let gue = Tunnel {
        tun_type: TunType::Gue,
        tun_port: 6080,
        tun_csum: TunCsum::Csum,
    };
    let mut ids = LbIds::new(2, 4);
    let k = svc(Proto::Tcp, V, 80);
    let mut a = dest([10, 0, 0, 2], 0, Method::Tun, 1);
    a.tun = gue;
    let b_ = dest([10, 0, 0, 3], 0, Method::Tun, 1);
    let mut b = SnapshotBuilder::new();
    b.service(k.clone(), vec![a.clone(), b_]);
    let s = b.build(&mut ids, 1).unwrap();
    let slot = |i: usize| s.services()[0].dests[i].id.slot;
    assert_eq!(s.tunnel(slot(0)), gue);
    assert_eq!(s.tunnel(slot(1)), Tunnel::IPIP);
    // IPIP only: no per-server look-up at all
    let mut b = SnapshotBuilder::new();
    b.service(k.clone(), vec![dest([10, 0, 0, 3], 0, Method::Tun, 1)]);
    let s = b.build(&mut ids, 2).unwrap();
    assert!(!s.tun_encap);
    // a GUE tunnel on a DR server, GUE without its port
    let mut dr = dest([10, 0, 0, 2], 0, Method::Dr, 1);
    dr.tun = gue;
    let mut noport = a.clone();
    noport.tun.tun_port = 0;
    for d in [dr, noport] {
        let mut b = SnapshotBuilder::new();
        b.service(k.clone(), vec![d.clone()]);
        let e = b.build(&mut ids, 3).unwrap_err();
        assert!(matches!(e, BuildError::Tunnel(..)), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("real server 10.0.0.2 of service 192.0.2.1:80: "),
            "{e}"
        );
    }
}
