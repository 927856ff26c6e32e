//! fwmark services: packets the service lookup misses, given a mark by
//! a mark rule, go to the mark's service (DR and NAT, replies included);
//! persistence holds across the ports of the mark; a mark without a
//! service is a counted drop; an ordinary service is found first.

use super::*;
use crate::lb::mark::{MarkRule, Prefix};
use crate::lb::snapshot::BuildError;
use crate::lb::spec::{DestKey, DestSpec};

const VIP2: [u8; 4] = [192, 0, 2, 11];

fn fwm(mark: u32, persistent: Option<u32>) -> ServiceSpec {
    ServiceSpec {
        key: ServiceKey::fwmark(mark, false),
        persistent,
        ..svc(Proto::Tcp, 80)
    }
}

fn rule(proto: Proto, dst: &str, lo: u16, hi: u16, mark: u32) -> MarkRule {
    MarkRule {
        proto,
        dst: dst.parse::<Prefix>().unwrap(),
        port_lo: lo,
        port_hi: hi,
        src: None,
        mark,
    }
}

fn dr(a: [u8; 4]) -> DestSpec {
    dest(a, 0, Method::Dr, 1)
}

#[test]
fn marked_packets_reach_the_fwmark_service_and_persist_across_ports() {
    let mut e = env(1024);
    // persistent: a client's 80 and 443 go to one server
    let mut ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        conn_capacity: 1024,
        persist_capacity: 1024,
        ..BalancerConfig::default()
    };
    e.w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
    let mut b = SnapshotBuilder::new();
    b.service(fwm(1, Some(300)), vec![dr(RIP), dr(RIP2)])
        .marks(&[
            rule(Proto::Tcp, "192.0.2.10/32", 80, 80, 1),
            rule(Proto::Tcp, "192.0.2.10/32", 443, 443, 1),
        ]);
    let s = b.build(&mut ids, 1).unwrap();
    e.ids = ids;
    for (i, client) in [[198, 51, 100, 7], [198, 51, 100, 8], [198, 51, 100, 9]]
        .into_iter()
        .enumerate()
    {
        let now = i as u64 * S;
        let (v, a) = e.send(
            &s,
            &tcp_frame(client, 1000, VIP, 80, SYN, b"", 64, true),
            now,
        );
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        let (v, b) = e.send(
            &s,
            &tcp_frame(client, 1001, VIP, 443, SYN, b"", 64, true),
            now,
        );
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        // DR: only the MAC changes, the port is the client's
        assert_eq!(
            a[0..6],
            b[0..6],
            "client {client:?}: 80 and 443 on one server"
        );
        assert!(a[0..6] == mac_of(RIP) || a[0..6] == mac_of(RIP2));
        assert_eq!(&b[36..38], &443u16.to_be_bytes());
    }
    // port 8080 has no rule: not ours (the VIP is no service's)
    let (v, _) = e.send(
        &s,
        &tcp_frame(CLIENT, 1, VIP, 8080, SYN, b"", 64, true),
        5 * S,
    );
    assert_eq!(v, LbVerdict::NotForUs);
    // UDP has no rule either
    let (v, _) = e.send(&s, &udp_frame(CLIENT, 1, VIP, 80, b"x"), 5 * S);
    assert_eq!(v, LbVerdict::NotForUs);
}

#[test]
fn nat_fwmark_replies_come_back_translated() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(fwm(7, None), vec![dest(RIP, 0, Method::Nat, 1)])
            .marks(&[rule(Proto::Tcp, "192.0.2.0/24", 1000, 2000, 7)]);
    });
    let (v, out) = e.send(
        &s,
        &tcp_frame(CLIENT, 40000, VIP2, 1500, SYN, b"", 64, true),
        0,
    );
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let want = with_eth(
        tcp_frame(CLIENT, 40000, RIP, 1500, SYN, b"", 63, true),
        mac_of(RIP),
        OUR_MAC,
    );
    assert_eq!(out, want);
    let synack = tcp_frame(RIP, 1500, CLIENT, 40000, SYN | ACK, b"", 64, true);
    let (v, out) = e.send(&s, &synack, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let want = with_eth(
        tcp_frame(VIP2, 1500, CLIENT, 40000, SYN | ACK, b"", 63, true),
        GW_MAC,
        OUR_MAC,
    );
    assert_eq!(out, want);
    verify(&out);
}

#[test]
fn a_mark_without_a_service_is_a_counted_drop_and_services_come_first() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dr(RIP)])
            .service(fwm(1, None), vec![dr(RIP2)])
            .marks(&[
                rule(Proto::Tcp, "192.0.2.0/24", 80, 80, 1),
                rule(Proto::Tcp, "192.0.2.0/24", 81, 81, 2),
            ]);
    });
    // the ordinary service 192.0.2.10:80 wins over the mark rule
    let (_, out) = e.send(&s, &tcp(SYN, 1), 0);
    assert_eq!(out[0..6], mac_of(RIP));
    // another address of the rule's network: the fwmark service
    let (_, out) = e.send(&s, &tcp_frame(CLIENT, 2, VIP2, 80, SYN, b"", 64, true), 0);
    assert_eq!(out[0..6], mac_of(RIP2));
    // mark 2 has no service
    let (v, _) = e.send(&s, &tcp_frame(CLIENT, 3, VIP2, 81, SYN, b"", 64, true), 0);
    assert_eq!(v, LbVerdict::Drop(LbDrop::MarkNoService));
    assert_eq!(
        e.w.stats().drops[LbDrop::MarkNoService.index()].load(Relaxed),
        1
    );
}

#[test]
fn bad_fwmark_services_and_rules_are_refused() {
    let build = |spec: ServiceSpec, ds: Vec<DestSpec>, rules: &[MarkRule]| {
        let mut b = SnapshotBuilder::new();
        b.service(spec, ds).marks(rules);
        b.build(&mut LbIds::new(16, 64), 1).map(|_| ())
    };
    let mut with_port = fwm(1, None);
    with_port.key.port = 80;
    assert!(matches!(
        build(with_port, vec![dr(RIP)], &[]),
        Err(BuildError::FwmarkKey(_))
    ));
    let mut sp = fwm(1, None);
    sp.synproxy = true;
    assert!(matches!(
        build(sp, vec![dr(RIP)], &[]),
        Err(BuildError::FwmarkUnsupported(..))
    ));
    let r = rule(Proto::Tcp, "192.0.2.0/24", 80, 90, 1);
    let e = build(fwm(1, None), vec![dr(RIP)], &[r, r]).unwrap_err();
    assert!(e.to_string().contains("given twice"), "{e}");
    let zero = rule(Proto::Tcp, "192.0.2.0/24", 80, 90, 0);
    let e = build(fwm(1, None), vec![dr(RIP)], &[zero]).unwrap_err();
    assert!(e.to_string().contains("mark 0"), "{e}");
    // the same mark, IPv4 and IPv6, are two services
    let mut b = SnapshotBuilder::new();
    let v6 = ServiceSpec {
        key: ServiceKey::fwmark(1, true),
        ..fwm(1, None)
    };
    let d6 = DestSpec {
        key: DestKey {
            addr: "2001:db8::21".parse().unwrap(),
            port: 0,
        },
        ..dr(RIP)
    };
    b.service(fwm(1, None), vec![dr(RIP)]).service(v6, vec![d6]);
    assert!(b.build(&mut LbIds::new(16, 64), 1).is_ok());
}

/// A persistent fwmark service's connections across a restart (issue 53):
/// the entries name the service by its mark (it has no address or port),
/// so the next process installs them, their template attached again: the
/// client's next connection, on the other port of the mark, goes to the
/// same server. Without the fwmark service they are refused.
#[test]
fn fwmark_connections_survive_a_handoff() {
    use crate::lb::handoff::codec::{decode, encode};
    use crate::lb::handoff::{Entry, HandoffCount};
    let world = |with_service: bool| {
        let mut ids = LbIds::new(16, 64);
        let cfg = BalancerConfig {
            conn_capacity: 1024,
            persist_capacity: 1024,
            ..BalancerConfig::default()
        };
        let mut e = env(1024);
        e.w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
        let mut b = SnapshotBuilder::new();
        if with_service {
            b.service(fwm(1, Some(300)), vec![dr(RIP), dr(RIP2)]);
        } else {
            b.service(svc(Proto::Tcp, 80), vec![dr(RIP)]);
        }
        b.marks(&[
            rule(Proto::Tcp, "192.0.2.10/32", 80, 80, 1),
            rule(Proto::Tcp, "192.0.2.10/32", 443, 443, 1),
        ]);
        let s = b.build(&mut ids, 1).unwrap();
        e.ids = ids;
        (e, s)
    };
    let (mut a, sa) = world(true);
    let client = [198, 51, 100, 7];
    let syn = |port, cport| tcp_frame(client, cport, VIP, port, SYN, b"", 64, true);
    let (v, first) = a.send(&sa, &syn(80, 1000), S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let mut entries = Vec::new();
    a.w.handoff_export(&sa, 2 * S, |e| entries.push(*e));
    let entries: Vec<Entry> = decode(&encode(1, &entries)).unwrap().entries().collect();
    assert!(
        matches!(entries.as_slice(), [Entry::Conn(c)] if c.fwmark == 1),
        "{entries:?}"
    );

    let (mut b, sb) = world(true);
    let got: Vec<_> = entries
        .iter()
        .map(|e| b.w.install_handoff(&sb, e, S))
        .collect();
    assert_eq!(got, [HandoffCount::Installed]);
    // the same connection, and the client's next one on 443: one server
    let ack = tcp_frame(client, 1000, VIP, 80, ACK, b"", 64, true);
    let (v, again) = b.send(&sb, &ack, 2 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(again[0..6], first[0..6]);
    for cport in 2000..2004 {
        let (_, next) = b.send(&sb, &syn(443, cport), 2 * S);
        assert_eq!(
            next[0..6],
            first[0..6],
            "persistence across the mark's ports"
        );
    }
    // the mark's service is gone: refused, counted
    let (mut c, sc) = world(false);
    let got: Vec<_> = entries
        .iter()
        .map(|e| c.w.install_handoff(&sc, e, S))
        .collect();
    assert_eq!(got, [HandoffCount::NoService]);
}
