//! One-packet scheduling (`-o`, `ops`): datagrams of one tuple spread
//! over the real servers by the scheduler, the table stays empty, the
//! counts the schedulers read never move; the refusals.

use super::v6::{dest6, svc6};
use super::*;
use crate::lb::snapshot::BuildError;
use crate::lb::stats::sum_service;
use etherparse::PacketBuilder;

const RIP3: [u8; 4] = [10, 0, 0, 23];

fn ops_svc(sched: SchedKind) -> ServiceSpec {
    ServiceSpec {
        sched,
        ops: true,
        client_address: Default::default(),
        ..svc(Proto::Udp, 53)
    }
}

/// How many of `n` datagrams (one client socket) reached each of `rips`
/// (by the destination MAC DR wrote), checking each verdict.
fn spread(e: &mut Env, s: &Snapshot, rips: &[[u8; 4]], n: usize) -> Vec<usize> {
    let q = udp_frame(CLIENT, 5353, VIP, 53, b"query");
    let mut got = vec![0; rips.len()];
    for i in 0..n {
        let (v, out) = e.send(s, &q, i as u64 * 1000);
        assert_eq!(v, LbVerdict::Tx { port: 1 }, "datagram {i}");
        let to = rips
            .iter()
            .position(|r| out[0..6] == mac_of(*r))
            .expect("sent to a real server");
        got[to] += 1;
    }
    got
}

#[test]
fn rr_spreads_one_tuple_and_makes_no_entry() {
    let mut e = env(64);
    let rips = [RIP, RIP2, RIP3];
    let s = e.snap(1, |b| {
        let ds = rips.iter().map(|r| dest(*r, 0, Method::Dr, 1)).collect();
        b.service(ops_svc(SchedKind::Rr), ds);
    });
    assert_eq!(spread(&mut e, &s, &rips, 300), [100, 100, 100]);
    assert_eq!(e.w.table().len(), 0, "no connection entry");
    assert_eq!(e.states(0), []);
    let st = e.w.stats();
    for i in 0..3 {
        let t = sum_dest(&[&st], s.services()[0].dests[i].id);
        // IPVS counts each one-packet connection in the totals; nothing
        // is left in the counts the schedulers read
        assert_eq!((t.conns, t.pkts_in, t.pkts_out), (100, 100, 0), "{i}");
        assert_eq!((t.active, t.inactive, t.live), (0, 0, 0), "{i}");
    }
    let t = sum_service(&[&st], s.services()[0].id);
    assert_eq!((t.conns, t.pkts_in, t.live), (300, 300, 0));
    assert_eq!(st.conns.load(Relaxed), 0);
}

#[test]
fn wrr_spreads_by_weight() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        let ds = vec![dest(RIP, 0, Method::Dr, 3), dest(RIP2, 0, Method::Dr, 1)];
        b.service(ops_svc(SchedKind::Wrr), ds);
    });
    assert_eq!(spread(&mut e, &s, &[RIP, RIP2], 400), [300, 100]);
    assert_eq!(e.w.table().len(), 0);
}

#[test]
fn without_ops_one_tuple_is_one_connection() {
    // the control: the same datagrams to the same service without the
    // flag stay on one server, in one entry
    let mut e = env(64);
    let rips = [RIP, RIP2, RIP3];
    let s = e.snap(1, |b| {
        let ds = rips.iter().map(|r| dest(*r, 0, Method::Dr, 1)).collect();
        b.service(svc(Proto::Udp, 53), ds);
    });
    assert_eq!(spread(&mut e, &s, &rips, 30), [30, 0, 0]);
    assert_eq!(e.w.table().len(), 1);
}

#[test]
fn tun_encapsulates_each_datagram_to_its_server() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        let ds = vec![dest(RIP, 0, Method::Tun, 1), dest(RIP2, 0, Method::Tun, 1)];
        b.service(ops_svc(SchedKind::Rr), ds);
    });
    let q = udp_frame(CLIENT, 5353, VIP, 53, b"query");
    let mut outer = Vec::new();
    for _ in 0..4 {
        let (v, out) = e.send(&s, &q, 0);
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        assert_eq!(out[23], 4, "IPIP");
        verify(&out);
        outer.push([out[30], out[31], out[32], out[33]]);
    }
    assert_eq!(outer, [RIP, RIP2, RIP, RIP2]);
    assert_eq!(e.w.table().len(), 0);
}

#[test]
fn no_server_is_a_counted_drop() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(ops_svc(SchedKind::Rr), vec![dest(RIP, 0, Method::Dr, 0)]);
    });
    let q = udp_frame(CLIENT, 5353, VIP, 53, b"query");
    assert_eq!(e.send(&s, &q, 0).0, LbVerdict::Drop(LbDrop::NoDest));
    let st = e.w.stats();
    assert_eq!(st.drops[LbDrop::NoDest.index()].load(Relaxed), 1);
    let t = sum_dest(&[&st], s.services()[0].dests[0].id);
    assert_eq!(t.conns, 0);
}

#[test]
fn ipv6_dr_spreads_one_tuple() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        let ds = vec![
            dest6(RIP6, 0, Method::Dr, 1),
            dest6(RIP6_2, 0, Method::Dr, 1),
        ];
        b.service(
            ServiceSpec {
                sched: SchedKind::Rr,
                ops: true,
                client_address: Default::default(),
                ..svc6(Proto::Udp, 53)
            },
            ds,
        );
    });
    let mut q = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ipv6(CLIENT6.to_be_bytes(), VIP6.to_be_bytes(), 64)
        .udp(5353, 53)
        .write(&mut q, b"query")
        .unwrap();
    let mut macs = Vec::new();
    for _ in 0..4 {
        let (v, out) = e.send6(&s, &q, 0);
        assert_eq!(v, LbVerdict::Tx { port: 1 });
        macs.push(out[5]);
    }
    assert_eq!(macs, [0x21, 0x22, 0x21, 0x22]);
    assert_eq!(e.w.table6().len(), 0);
}

#[test]
fn refused_on_tcp_with_persistence_and_with_nat() {
    let build = |spec: ServiceSpec, method| {
        let mut b = SnapshotBuilder::new();
        b.service(spec, vec![dest(RIP, 0, method, 1)]);
        b.build(&mut LbIds::new(4, 4), 1).map(|_| ())
    };
    let tcp = ServiceSpec {
        ops: true,
        client_address: Default::default(),
        ..svc(Proto::Tcp, 80)
    };
    let k = tcp.key;
    assert_eq!(build(tcp, Method::Dr), Err(BuildError::OpsNotUdp(k)));
    let persistent = ServiceSpec {
        persistent: Some(300),
        ..ops_svc(SchedKind::Rr)
    };
    let k = persistent.key;
    assert_eq!(
        build(persistent, Method::Dr),
        Err(BuildError::OpsPersistent(k))
    );
    let e = build(ops_svc(SchedKind::Rr), Method::Nat).unwrap_err();
    assert!(matches!(e, BuildError::OpsNat(..)), "{e}");
    assert!(
        e.to_string()
            .contains("10.0.0.21 of 192.0.2.10:53 is NAT (-m)"),
        "{e}"
    );
    assert_eq!(build(ops_svc(SchedKind::Rr), Method::Tun), Ok(()));
}
