//! The connection handoff on the sans-IO core: what a stopped worker
//! exports is what the next process's worker installs, translations and
//! counts included; each entry this configuration cannot keep is refused
//! with its reason.

use super::v6::{dest6, from_client, svc6};
use super::*;
use crate::lb::conn::{F_ACTIVE, F_SYNPROXY};
use crate::lb::handoff::codec::{decode, encode};
use crate::lb::handoff::{ConnEntry, Entry, HandoffCount, TemplateEntry};
use crate::lb::synproxy::Aux;

const NOW: u64 = 100 * S;

fn nat_dr(b: &mut SnapshotBuilder) {
    b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
    b.service(svc(Proto::Tcp, 81), vec![dest(RIP2, 0, Method::Dr, 1)]);
}

fn export(e: &Env, snap: &Snapshot, now: u64) -> Vec<Entry> {
    let mut v = Vec::new();
    let n = e.w.handoff_export(snap, now, |x| v.push(*x));
    assert_eq!(n as usize, v.len());
    v
}

/// Through the file's bytes, as between two processes.
fn through_file(entries: &[Entry]) -> Vec<Entry> {
    let f = encode(7, entries);
    decode(&f).expect("decodes").entries().collect()
}

fn install(e: &mut Env, snap: &Snapshot, entries: &[Entry], now: u64) -> Vec<HandoffCount> {
    entries
        .iter()
        .map(|x| e.w.install_handoff(snap, x, now))
        .collect()
}

/// An IPv4 DR connection to port 81 (`RIP2`) as an entry.
fn entry() -> ConnEntry {
    ConnEntry {
        v6: false,
        proto: PROTO_TCP,
        state: TcpState::Established as u8,
        flags: F_ACTIVE | crate::lb::conn::F_NOOUTPUT,
        method: Method::Dr,
        caddr: ip(CLIENT).into(),
        vaddr: ip(VIP).into(),
        daddr: ip(RIP2).into(),
        cport: 5000,
        vport: 81,
        dport: 81,
        left_ms: 60_000,
        nat64: (0, 0),
        laddr6: 0,
        cip: 0,
        insert: None,
        fwmark: 0,
        sp: None,
    }
}

#[test]
fn nat_and_dr_connections_survive_a_handoff() {
    let mut a = env(1024);
    let sa = a.snap(1, nat_dr);
    // a NAT connection, established through both halves, and a DR one
    assert!(matches!(
        a.send(&sa, &tcp(SYN, 1000), S).0,
        LbVerdict::Tx { .. }
    ));
    let reply = tcp_frame(RIP, 8080, CLIENT, 1000, SYN | ACK, b"", 64, true);
    assert!(matches!(a.send(&sa, &reply, S).0, LbVerdict::Tx { .. }));
    assert!(matches!(
        a.send(&sa, &tcp(ACK, 1000), S).0,
        LbVerdict::Tx { .. }
    ));
    let dr = tcp_frame(CLIENT, 2000, VIP, 81, SYN, b"", 64, true);
    assert!(matches!(a.send(&sa, &dr, S).0, LbVerdict::Tx { .. }));
    let entries = through_file(&export(&a, &sa, 2 * S));
    assert_eq!(entries.len(), 2);

    // the next process: its own slots, its own clock
    let mut b = env(1024);
    let sb = b.snap(1, nat_dr);
    let got = install(&mut b, &sb, &entries, NOW);
    assert_eq!(got, [HandoffCount::Installed; 2]);
    assert_eq!(b.w.table().len(), 2);
    // states and what the timers had left (1 s passed before the export)
    let mut sa_states = a.states(2 * S);
    let mut sb_states = b.states(NOW);
    sa_states.sort();
    sb_states.sort();
    assert_eq!(sa_states, sb_states);
    // the real servers' counts follow the connections
    assert_eq!(b.load(&sb, 0, 0), (1, 0));
    assert_eq!(b.load(&sb, 1, 0), (0, 1));
    // the NAT reply is translated as before the handoff, and so is the
    // client's next segment
    let data = tcp_frame(RIP, 8080, CLIENT, 1000, ACK | PSH, b"hi", 64, true);
    let (va, fa) = a.send(&sa, &data, 3 * S);
    let (vb, fb) = b.send(&sb, &data, NOW + S);
    assert!(matches!(vb, LbVerdict::Tx { .. }), "{vb:?}");
    assert_eq!((va, fa), (vb, fb));
    let next = tcp_frame(CLIENT, 2000, VIP, 81, ACK, b"", 64, true);
    assert_eq!(a.send(&sa, &next, 3 * S), b.send(&sb, &next, NOW + S));
}

#[test]
fn ipv6_and_nat64_connections_survive_a_handoff() {
    let pool = [std::net::Ipv4Addr::new(10, 0, 0, 200)];
    let cfg = |b: &mut SnapshotBuilder| {
        b.nat64_pool(&pool);
        b.service(svc6(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
        b.service(svc6(Proto::Tcp, 81), vec![dest6(RIP6, 0, Method::Dr, 1)]);
    };
    let mut a = env(1024);
    let sa = a.snap(1, cfg);
    assert!(matches!(
        a.send6(&sa, &from_client(SYN, 40000, 80), S).0,
        LbVerdict::Tx { .. }
    ));
    assert!(matches!(
        a.send6(&sa, &from_client(SYN, 40001, 81), S).0,
        LbVerdict::Tx { .. }
    ));
    let entries = through_file(&export(&a, &sa, 2 * S));
    assert_eq!(entries.len(), 2);
    assert!(entries
        .iter()
        .any(|e| matches!(e, Entry::Conn(c) if c.v6 && c.nat64.0 == u32::from(pool[0]))));
    let mut b = env(1024);
    let sb = b.snap(1, cfg);
    assert_eq!(
        install(&mut b, &sb, &entries, NOW),
        [HandoffCount::Installed; 2]
    );
    let mut x = export(&b, &sb, NOW);
    let mut y = entries.clone();
    let key = |e: &Entry| match e {
        Entry::Conn(c) => c.cport,
        Entry::Template(_) => 0,
    };
    x.sort_by_key(key);
    y.sort_by_key(key);
    assert_eq!(x, y, "the same records, NAT64 legs and timers");
    // the client's next segment goes the same way
    // (but for the IPv4 header's identification, a per-worker counter,
    // and the header checksum over it)
    let f = from_client(ACK, 40000, 80);
    let unid = |(v, mut f): (LbVerdict, Vec<u8>)| {
        f[18..20].fill(0);
        f[24..26].fill(0);
        (v, f)
    };
    assert_eq!(unid(a.send6(&sa, &f, 2 * S)), unid(b.send6(&sb, &f, NOW)));

    // a pool address this configuration does not have
    let mut c = env(1024);
    let sc = c.snap(1, |b| {
        b.nat64_pool(&[std::net::Ipv4Addr::new(10, 0, 0, 201)]);
        b.service(svc6(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
    });
    let nat64: Vec<Entry> = entries
        .iter()
        .filter(|e| matches!(e, Entry::Conn(c) if c.nat64 != (0, 0)))
        .copied()
        .collect();
    assert_eq!(install(&mut c, &sc, &nat64, NOW), [HandoffCount::Nat64Pool]);
}

#[test]
fn synproxy_state_survives_a_handoff() {
    let ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        conn_capacity: 64,
        seed: 42,
        synproxy: true,
        synproxy_secret: [7, 11],
        ..BalancerConfig::default()
    };
    let w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
    let mut e = Env {
        ids,
        w,
        eg: FakeEgress::default(),
    };
    let sp_svc = |b: &mut SnapshotBuilder| {
        let mut s = svc(Proto::Tcp, 80);
        s.synproxy = true;
        b.synproxy(true)
            .service(s, vec![dest(RIP, 8080, Method::Nat, 1)]);
    };
    let s = e.snap(1, sp_svc);
    let aux = Aux {
        seq: 0x1234_5678,
        ts: 99,
        window: 0,
        wscale: 7,
        flags: 3,
    };
    let c = ConnEntry {
        flags: F_ACTIVE | F_SYNPROXY,
        method: Method::Nat,
        daddr: ip(RIP).into(),
        vport: 80,
        dport: 8080,
        sp: Some(aux),
        ..entry()
    };
    assert_eq!(
        e.w.install_handoff(&s, &Entry::Conn(c), NOW),
        HandoffCount::Installed
    );
    let out = export(&e, &s, NOW);
    assert_eq!(
        out,
        [Entry::Conn(ConnEntry {
            flags: c.flags | 1,
            ..c
        })]
    );

    // a process without the SYN proxy refuses it: it could not translate
    let mut plain = env(64);
    let s2 = plain.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
    });
    assert_eq!(
        plain.w.install_handoff(&s2, &Entry::Conn(c), NOW),
        HandoffCount::NoSynproxy
    );
    assert_eq!(plain.w.table().len(), 0);
}

#[test]
fn entries_this_configuration_cannot_keep_are_refused_alone() {
    let mut e = env(1024);
    let s = e.snap(1, nat_dr);
    let ok = entry();
    let cases = [
        (
            ConnEntry {
                vport: 99,
                dport: 99,
                ..ok
            },
            HandoffCount::NoService,
        ),
        (
            ConnEntry {
                daddr: ip(RIP).into(),
                ..ok
            },
            HandoffCount::NoDest,
        ),
        (ConnEntry { dport: 82, ..ok }, HandoffCount::NoDest),
        (
            ConnEntry {
                method: Method::Tun,
                ..ok
            },
            HandoffCount::MethodChanged,
        ),
        (ConnEntry { left_ms: 0, ..ok }, HandoffCount::Expired),
        (ConnEntry { proto: 1, ..ok }, HandoffCount::Unsupported),
        (ConnEntry { state: 200, ..ok }, HandoffCount::Unsupported),
        (
            ConnEntry {
                flags: F_SYNPROXY,
                ..ok
            },
            HandoffCount::NoSynproxy,
        ),
    ];
    for (c, want) in cases {
        assert_eq!(e.w.install_handoff(&s, &Entry::Conn(c), NOW), want, "{c:?}");
        assert_eq!(e.w.table().len(), 0, "{want:?} installed nothing");
    }
    assert_eq!(e.load(&s, 1, 0), (0, 0));
    // the good one goes in once
    assert_eq!(
        e.w.install_handoff(&s, &Entry::Conn(ok), NOW),
        HandoffCount::Installed
    );
    assert_eq!(
        e.w.install_handoff(&s, &Entry::Conn(ok), NOW),
        HandoffCount::Exists
    );
    assert_eq!(e.w.table().len(), 1);
    assert_eq!(e.load(&s, 1, 0), (1, 0));
}

#[test]
fn a_full_table_refuses_the_rest() {
    let mut e = env(64);
    let s = e.snap(1, nat_dr);
    let got: Vec<HandoffCount> = (0..300u16)
        .map(|p| {
            let c = ConnEntry {
                cport: 1000 + p,
                ..entry()
            };
            e.w.install_handoff(&s, &Entry::Conn(c), NOW)
        })
        .collect();
    let installed = got
        .iter()
        .filter(|&&g| g == HandoffCount::Installed)
        .count();
    assert_eq!(installed as u32, e.w.table().len());
    assert!(got.contains(&HandoffCount::TableFull));
    assert!(got
        .iter()
        .all(|&g| g == HandoffCount::Installed || g == HandoffCount::TableFull));
    // nothing evicted: every installed connection is still there
    assert_eq!(e.load(&s, 1, 0).0 as usize, installed);
}

#[test]
fn persistence_templates_come_back() {
    let persistent = |b: &mut SnapshotBuilder| {
        let mut spec = svc(Proto::Tcp, 80);
        spec.persistent = Some(300);
        b.service(
            spec,
            vec![dest(RIP, 80, Method::Dr, 1), dest(RIP2, 80, Method::Dr, 1)],
        );
    };
    let mut a = env(1024);
    let sa = a.snap(1, persistent);
    a.send(&sa, &tcp(SYN, 1000), S);
    let entries = through_file(&export(&a, &sa, 2 * S));
    let t = a.w.persist().iter().next().expect("a template");
    let mut b = env(1024);
    let sb = b.snap(1, persistent);
    assert_eq!(
        install(&mut b, &sb, &entries, NOW),
        [HandoffCount::Installed]
    );
    // the connection attached to a template naming the same server
    let tb = b.w.persist().iter().next().expect("a template");
    assert_eq!((tb.client, tb.refs), (t.client, 1));
    let dest_of = |s: &Snapshot, v: u64| {
        s.dest_by_slot(crate::lb::balancer::template_dest_id(v).slot)
            .map(|(_, d)| d.key)
    };
    assert_eq!(dest_of(&sb, tb.dest), dest_of(&sa, t.dest));

    // a template without connections is handed over on its own
    let lone = TemplateEntry {
        v6: false,
        proto: PROTO_TCP,
        vip: ip(VIP).into(),
        vport: 80,
        client: ip([198, 51, 100, 99]),
        daddr: ip(RIP2).into(),
        dport: 80,
        left_ms: 30_000,
        fwmark: 0,
    };
    assert_eq!(
        b.w.install_handoff(&sb, &Entry::Template(lone), NOW),
        HandoffCount::TemplatesInstalled
    );
    let out = export(&b, &sb, NOW);
    assert!(out.contains(&Entry::Template(lone)), "{out:?}");
    // not for a service that is no longer persistent
    let mut c = env(1024);
    let sc = c.snap(1, nat_dr);
    assert_eq!(
        c.w.install_handoff(&sc, &Entry::Template(lone), NOW),
        HandoffCount::NoService
    );
}

/// FullNAT connections, IPv4 and IPv6 (both in the IPv6 table), come
/// back with their local address and port: the client's next segment
/// and the real server's reply are rewritten as before the handoff. A
/// local address the service no longer has refuses them.
#[test]
fn fullnat_connections_survive_a_handoff() {
    const LADDR: [u8; 4] = [10, 0, 0, 200];
    const LADDR6: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0200;
    let with = |l4: [u8; 4], l6: u128| {
        move |b: &mut SnapshotBuilder| {
            let v4 = std::net::IpAddr::V4(Ipv4Addr::from(l4));
            let v6 = std::net::IpAddr::V6(l6.into());
            b.service(
                ServiceSpec {
                    local_addresses: vec![v4],
                    ..svc(Proto::Tcp, 80)
                },
                vec![dest(RIP, 8080, Method::FullNat, 1)],
            );
            b.service(
                ServiceSpec {
                    local_addresses: vec![v6],
                    ..svc6(Proto::Tcp, 80)
                },
                vec![dest6(RIP6, 8080, Method::FullNat, 1)],
            );
        }
    };
    let mut a = env(1024);
    let sa = a.snap(1, with(LADDR, LADDR6));
    let (v, out) = a.send(&sa, &tcp(SYN, 40000), S);
    assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
    let lport = u16::from_be_bytes([out[34], out[35]]);
    assert!(matches!(
        a.send6(&sa, &from_client(SYN, 40001, 80), S).0,
        LbVerdict::Tx { .. }
    ));
    let entries = through_file(&export(&a, &sa, 2 * S));
    assert_eq!(entries.len(), 2);
    let fullnat = |e: &Entry| match e {
        Entry::Conn(c) if c.method == Method::FullNat && c.v6 => Some(*c),
        _ => None,
    };
    let c4 = entries
        .iter()
        .find_map(|e| fullnat(e).filter(|c| c.ipv4_client()));
    let c6 = entries
        .iter()
        .find_map(|e| fullnat(e).filter(|c| !c.ipv4_client()));
    assert_eq!(
        c4.map(|c| c.nat64),
        Some((u32::from_be_bytes(LADDR), lport))
    );
    assert_eq!(c6.map(|c| c.laddr6), Some(LADDR6));

    let mut b = env(1024);
    let sb = b.snap(1, with(LADDR, LADDR6));
    assert_eq!(
        install(&mut b, &sb, &entries, NOW),
        [HandoffCount::Installed; 2]
    );
    let key = |e: &Entry| match e {
        Entry::Conn(c) => c.cport,
        Entry::Template(_) => 0,
    };
    let (mut x, mut y) = (export(&b, &sb, NOW), entries.clone());
    x.sort_by_key(key);
    y.sort_by_key(key);
    assert_eq!(x, y, "the same records, local legs and timers");
    assert_eq!(b.load(&sb, 0, 0), (0, 1), "the server's count follows");
    // the client's next segments, both families
    let f = tcp(ACK, 40000);
    let (va, fa) = a.send(&sa, &f, 2 * S);
    assert!(matches!(va, LbVerdict::Tx { .. }), "{va:?}");
    assert_eq!((va, fa), b.send(&sb, &f, NOW));
    let f6 = from_client(ACK, 40001, 80);
    assert_eq!(a.send6(&sa, &f6, 2 * S), b.send6(&sb, &f6, NOW));
    // the real server's reply to the IPv4 local address
    let reply = tcp_frame(RIP, 8080, LADDR, lport, ACK, b"ok", 64, true);
    let m = meta_of(&reply);
    let back = |e: &mut Env, s: &Snapshot, now: u64| {
        let mut buf = VecBuf::with_room(&reply, 128, 0);
        let v = e.w.nat64_reply(&BurstCtx::new(s, &e.eg, now), &mut buf, &m);
        (v, buf.to_vec())
    };
    let (va, fa) = back(&mut a, &sa, 2 * S);
    assert_eq!(va, LbVerdict::Tx { port: 0 });
    assert_eq!((va, fa), back(&mut b, &sb, NOW));

    // the services' local addresses changed meanwhile: refused, counted
    let mut c = env(1024);
    let sc = c.snap(1, with([10, 0, 0, 201], LADDR6 + 1));
    assert_eq!(
        install(&mut c, &sc, &entries, NOW),
        [HandoffCount::Nat64Pool; 2]
    );
    assert_eq!(c.w.table6().len(), 0);
}

/// The checkpoint's sweep, a slice at a time with an `out` that runs out
/// of room now and then, hands out exactly the entries the stopped
/// worker's export does, in the same order.
#[test]
fn a_sweep_in_slices_is_the_export() {
    let mut a = env(1024);
    let sa = a.snap(1, |b| {
        nat_dr(b);
        b.service(svc(Proto::Udp, 53), vec![dest(RIP2, 0, Method::Dr, 1)]);
    });
    for p in 0..40u16 {
        let f = tcp_frame(CLIENT, 3000 + p, VIP, 80 + p % 2, SYN, b"", 64, true);
        assert!(matches!(a.send(&sa, &f, S).0, LbVerdict::Tx { .. }));
    }
    let u = udp_frame(CLIENT, 5353, VIP, 53, b"q");
    assert!(matches!(a.send(&sa, &u, S).0, LbVerdict::Tx { .. }));
    let all = export(&a, &sa, 2 * S);
    assert_eq!(all.len(), 41);
    let (mut got, mut pos, mut calls, mut room) = (Vec::new(), Some(0), 0, 0u32);
    while let Some(p) = pos {
        calls += 1;
        assert!(calls < 10_000, "the sweep does not end");
        let (next, used) = a.w.checkpoint_step(&sa, 2 * S, p, 97, |e| {
            room += 1;
            // every seventh entry finds no room: handed again next time
            if room % 7 == 0 {
                return false;
            }
            got.push(*e);
            true
        });
        assert!(used <= 97);
        pos = next;
    }
    assert_eq!(got, all);
    assert!(calls > 10, "{calls} slices");
    // an expired connection is not handed out (the SYN_RECV ones, whose
    // timer is shorter than the UDP one's)
    let later = export(&a, &sa, 200 * S);
    assert!(later.len() < all.len(), "{}", later.len());
}
