//! What every worker does by itself, whoever owns the flow: ARP and ping
//! answered where they arrive, drops counted per worker (and summed in the
//! data plane's drops view), and an idle worker's housekeeping reporting
//! the snapshot it works with.

use super::{nat_service, run, setup, RS, VIP};
use crate::dataplane::Arrival;
use crate::dataplane::{Pipeline, Verdict};
use crate::lb::testutil::OUR_MAC;
use crate::net::buf::{PacketBuf, VecBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

#[test]
fn arp_and_ping_answered_locally_and_drops_counted() {
    let (shared, mut pipes) = setup(2);
    // ICMP echo to the VIP, built with etherparse.
    let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 1, 7], OUR_MAC)
        .ipv4([10, 0, 0, 7], VIP, 64)
        .icmpv4_echo_request(1, 1);
    let mut v = Vec::new();
    b.write(&mut v, b"ping").unwrap();
    let mut buf = VecBuf::new(&v);
    let (verdict, _) = run(&mut pipes, 0, &mut buf, 0);
    assert_eq!(verdict, Verdict::Tx(0));
    let p = etherparse::SlicedPacket::from_ethernet(buf.data()).unwrap();
    match p.transport {
        Some(etherparse::TransportSlice::Icmpv4(i)) => {
            assert!(matches!(
                i.icmp_type(),
                etherparse::Icmpv4Type::EchoReply(_)
            ))
        }
        other => panic!("{other:?}"),
    }
    // A frame for another host's MAC is not ours to answer.
    let mut other = v.clone();
    other[0..6].copy_from_slice(&[2, 0, 0, 0, 0x77, 0x77]);
    let mut ob = VecBuf::new(&other);
    assert_eq!(
        pipes[0].process(&mut ob, Arrival::wire(0, 0)),
        Verdict::Drop
    );
    assert_eq!(ob.data(), &other[..], "untouched");
    pipes[0].housekeeping(0);
    assert_eq!(shared.workers[0].counters.get("other_host"), 1);
    // Garbage is dropped and counted, never steered.
    let mut junk = VecBuf::new(&[0x02u8; 10]);
    assert_eq!(
        pipes[1].process(&mut junk, Arrival::wire(0, 0)),
        Verdict::Drop
    );
    pipes[1].housekeeping(0);
    assert_eq!(shared.workers[1].counters.get("truncated"), 1);
    // the data plane's drops view: both workers summed, the core's reasons
    // after the pipeline's, TX losses by port name
    let drops = shared.drops(&["wan", "lan"]);
    let count = |r: &str| drops.iter().find(|d| d.0 == r).map(|d| d.1);
    assert_eq!(count("other_host"), Some(1));
    assert_eq!(count("truncated"), Some(1));
    assert_eq!(count("lb_not_a_service"), Some(0));
    assert_eq!(count("tx_full_lan"), Some(0));
    assert_eq!(count("lb_unresolved"), None, "holding is not dropping");
    assert_eq!(count("echo_replied"), None, "not a drop");
    assert_eq!(shared.workers[0].dropped() + shared.workers[1].dropped(), 2);
}

#[test]
fn idle_worker_reports_the_snapshot_it_works_with() {
    // the control side reuses a removed service's slot only once every
    // worker has seen the snapshot that removed it; a worker without
    // traffic reports it from its housekeeping
    let (shared, mut pipes) = setup(2);
    let mut next = nat_service(&[RS]);
    next.epoch = 7;
    shared.lb.store(Arc::new(next));
    for p in pipes.iter_mut() {
        p.begin_burst(2_000_000);
        p.housekeeping(2_000_000);
    }
    for w in &shared.workers {
        assert_eq!(w.lb.epoch_seen.load(Ordering::Relaxed), 7);
    }
}
