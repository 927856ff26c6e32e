//! Next hops: the next-hop cache follows each new view (and keeps two real
//! servers sharing a slot apart); an unresolved next hop is held and asked
//! for per packet, and the held packet is released once the view knows it.

use super::{nat_service, service_of, setup, RS, VIP};
use crate::dataplane::hold::{HoldArea, HoldCount};
use crate::dataplane::pipeline::WorkerPipeline;
use crate::dataplane::shared::Event;
use crate::dataplane::Arrival;
use crate::dataplane::{Pipeline, Verdict};
use crate::lb::spec::Method;
use crate::lb::testutil::{tcp_frame, verify};
use crate::net::buf::{PacketBuf, VecBuf};
use crate::net::meta::tcp_flags::{ACK, SYN};
use crate::net::neigh::{NeighConfig, NeighTable};
use std::sync::Arc;

/// The next-hop cache never outlives the view it was filled from: a real
/// server whose MAC changes (a new neighbor snapshot published by the
/// control thread) gets the new MAC from the next burst on, and one that
/// disappears from the neighbor table is held (unresolved), not sent to the
/// old MAC.
#[test]
fn next_hop_cache_follows_a_new_view() {
    // NAT asks the cache for the whole next hop; DR for the Ethernet
    // addresses only (`Egress::ready_eth`), on its established shortcut too
    for (method, rport) in [(Method::Nat, 8080), (Method::Dr, 80)] {
        next_hop_cache_follows(method, rport);
    }
}

fn next_hop_cache_follows(method: Method, rport: u16) {
    let (shared, mut pipes) = setup(1);
    shared.lb.store(Arc::new(service_of(&[RS], method, rport)));
    let p = &mut pipes[0];
    p.begin_burst(1_000_000);
    let send = |p: &mut WorkerPipeline, c: u8, flags: u8| {
        let mut b = VecBuf::new(&tcp_frame(
            [10, 0, 0, c],
            4000,
            VIP,
            80,
            flags,
            b"",
            64,
            true,
        ));
        let v = p.process(&mut b, Arrival::wire(0, 2_000_000));
        (v, b.data()[0..6].to_vec())
    };
    let (v, mac) = send(p, 7, SYN);
    assert_eq!(v, Verdict::Tx(1));
    assert_eq!(mac, [2, 0, 0, 0, 0, 0x11]);
    let (_, mac) = send(p, 8, SYN);
    assert_eq!(mac, [2, 0, 0, 0, 0, 0x11], "cached hop, same view");

    let rs = u32::from_be_bytes(RS);
    let mut neigh = NeighTable::new(NeighConfig::default());
    neigh.add_static(rs, [2, 0, 0, 0, 0, 0x22], 1).unwrap();
    let view = shared.net.load().with_neigh(Arc::new(neigh.snapshot()));
    shared.net.store(Arc::new(view));
    p.begin_burst(3_000_000);
    let (v, mac) = send(p, 9, SYN);
    assert_eq!(v, Verdict::Tx(1));
    assert_eq!(mac, [2, 0, 0, 0, 0, 0x22], "new MAC after a new view");
    let (_, mac) = send(p, 7, ACK);
    assert_eq!(mac, [2, 0, 0, 0, 0, 0x22], "existing connection too");

    let empty = NeighTable::new(NeighConfig::default());
    let view = shared.net.load().with_neigh(Arc::new(empty.snapshot()));
    shared.net.store(Arc::new(view));
    p.begin_burst(4_000_000);
    let (v, _) = send(p, 7, ACK);
    assert_eq!(v, Verdict::Hold(rs), "neighbor gone: held, not sent");

    // resolved again with a third MAC: the burst path's established ACKs
    // (for DR its shortcut, which copies the cached Ethernet addresses)
    // follow
    let mut neigh = NeighTable::new(NeighConfig::default());
    neigh.add_static(rs, [2, 0, 0, 0, 0, 0x33], 1).unwrap();
    let view = shared.net.load().with_neigh(Arc::new(neigh.snapshot()));
    shared.net.store(Arc::new(view));
    for round in 0..2u64 {
        p.begin_burst(5_000_000 + round);
        let mut bufs: Vec<VecBuf> = [7u8, 9, 7]
            .iter()
            .map(|&c| VecBuf::new(&tcp_frame([10, 0, 0, c], 4000, VIP, 80, ACK, b"", 64, true)))
            .collect();
        let mut out = vec![Verdict::Drop; bufs.len()];
        p.process_burst(&mut bufs, Arrival::wire(0, 5_000_000 + round), &mut out);
        assert_eq!(out, [Verdict::Tx(1); 3], "{method:?} round {round}");
        for b in &bufs {
            assert_eq!(
                b.data()[0..6],
                [2, 0, 0, 0, 0, 0x33],
                "{method:?} round {round}"
            );
            assert_eq!(b.data()[6..12], shared.net.load().port(1).unwrap().mac);
        }
    }
}

/// An unresolved next hop is a hold, not a drop: each packet of a burst
/// is held for its own next hop, and the pipeline asks the control thread
/// to resolve exactly that one, once per packet. A full event queue is
/// counted (`events_lost`), like a lost ARP learning event.
#[test]
fn unresolved_next_hops_are_held_and_requested_per_packet() {
    let (shared, mut pipes) = setup(1);
    let rs2 = [172, 16, 0, 12];
    shared.lb.store(Arc::new(nat_service(&[RS, rs2])));
    let empty = NeighTable::new(NeighConfig::default());
    let view = shared.net.load().with_neigh(Arc::new(empty.snapshot()));
    shared.net.store(Arc::new(view));
    let p = &mut pipes[0];
    p.begin_burst(1_000_000);
    let frames: Vec<Vec<u8>> = (2..6u8)
        .map(|c| tcp_frame([10, 0, 0, c], 6000, VIP, 80, SYN, b"", 64, true))
        .collect();
    let mut bufs: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
    let mut out = vec![Verdict::Drop; bufs.len()];
    let all = p.process_burst(&mut bufs, Arrival::wire(0, 1_000_000), &mut out);
    assert_eq!(all, None, "held packets are no Tx burst");
    let (a, b) = (u32::from_be_bytes(RS), u32::from_be_bytes(rs2));
    // rr alternates the two real servers; every hold names its own hop
    assert_eq!(
        out,
        [
            Verdict::Hold(a),
            Verdict::Hold(b),
            Verdict::Hold(a),
            Verdict::Hold(b)
        ]
    );
    for (buf, f) in bufs.iter().zip(&frames) {
        assert_eq!(buf.data(), &f[..], "a held packet is left as it was");
    }
    let asked: Vec<Event> = std::iter::from_fn(|| shared.events.pop()).collect();
    let want: Vec<Event> = [a, b, a, b]
        .iter()
        .map(|&ip| Event::Resolve { ip, port: 1 })
        .collect();
    assert_eq!(asked, want);
    assert!(
        shared.workers[0].lb.drop_counts().all(|(_, n)| n == 0),
        "not a drop"
    );
    // a full queue: the request is lost and counted
    while shared
        .events
        .push(Event::Resolve { ip: 0, port: 0 })
        .is_ok()
    {}
    let mut again = VecBuf::new(&frames[0]);
    assert_eq!(
        p.process(&mut again, Arrival::wire(0, 1_000_000)),
        Verdict::Hold(a)
    );
    p.housekeeping(1_000_000);
    assert_eq!(shared.workers[0].counters.get("events_lost"), 1);
}

/// The hold area and the pipeline together: a packet held for its real
/// server's MAC is released once the pipeline's view (picked up at a burst
/// boundary) knows the neighbor, and forwarded as if it had just arrived.
#[test]
fn held_packet_released_once_the_view_knows_the_neighbor() {
    let (shared, mut pipes) = setup(1);
    let p = &mut pipes[0];
    let rs = u32::from_be_bytes(RS);
    let known = shared.net.load_full();
    let empty = NeighTable::new(NeighConfig::default());
    shared
        .net
        .store(Arc::new(known.with_neigh(Arc::new(empty.snapshot()))));
    p.begin_burst(1_000_000);
    let frame = tcp_frame([10, 0, 0, 9], 7000, VIP, 80, SYN, b"", 64, true);
    let mut b = VecBuf::new(&frame);
    assert_eq!(
        p.process(&mut b, Arrival::wire(0, 1_000_000)),
        Verdict::Hold(rs)
    );
    let mut hold = HoldArea::new();
    hold.hold(b, rs, 0, 1_000_000);
    let mut sent = Vec::new();
    hold.release(p, 2_000_000, |b, v| sent.push((b, v)));
    assert!(sent.is_empty() && hold.len() == 1, "still unknown");
    // the control thread resolved it: published, seen from the next burst on
    shared.net.store(known);
    assert!(!p.resolved(rs), "not before the next burst");
    p.begin_burst(3_000_000);
    assert!(p.resolved(rs));
    hold.release(p, 3_000_000, |b, v| sent.push((b, v)));
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].1, Verdict::Tx(1));
    let out = sent[0].0.to_vec();
    verify(&out);
    assert_eq!(&out[30..34], &RS, "translated like any packet");
    assert_eq!(hold.counts()[HoldCount::Released], 1);
}

/// Two DR real servers whose addresses share a slot of the next-hop cache
/// (172.16.0.6 and 172.16.0.40): each packet still gets its own server's
/// MAC, in the packet and in the burst path, as the cache takes turns.
#[test]
fn next_hop_cache_slot_shared_by_two_servers() {
    let (a, b) = ([172, 16, 0, 6], [172, 16, 0, 40]);
    let (mac_a, mac_b) = ([2, 0, 0, 0, 0, 0x06], [2, 0, 0, 0, 0, 0x40]);
    let (shared, mut pipes) = setup(1);
    let mut neigh = NeighTable::new(NeighConfig::default());
    neigh.add_static(u32::from_be_bytes(a), mac_a, 1).unwrap();
    neigh.add_static(u32::from_be_bytes(b), mac_b, 1).unwrap();
    let view = shared.net.load().with_neigh(Arc::new(neigh.snapshot()));
    shared.net.store(Arc::new(view));
    shared
        .lb
        .store(Arc::new(service_of(&[a, b], Method::Dr, 80)));
    let p = &mut pipes[0];
    p.begin_burst(1_000_000);
    let frame = |c: u8, flags: u8| tcp_frame([10, 0, 0, c], 4000, VIP, 80, flags, b"", 64, true);
    // round robin: clients 2..=21 alternate between the two servers
    let mut mac_of = std::collections::HashMap::new();
    for c in 2..=21u8 {
        let mut buf = VecBuf::new(&frame(c, SYN));
        assert_eq!(
            p.process(&mut buf, Arrival::wire(0, 1_000_000)),
            Verdict::Tx(1)
        );
        mac_of.insert(c, buf.data()[0..6].to_vec());
    }
    let on_a = mac_of.values().filter(|m| m[..] == mac_a).count();
    let on_b = mac_of.values().filter(|m| m[..] == mac_b).count();
    assert_eq!((on_a, on_b), (10, 10), "{mac_of:?}");
    // the established ACKs of all of them in one burst: same server each
    for round in 0..3u64 {
        let now = 2_000_000 + round;
        p.begin_burst(now);
        let mut bufs: Vec<VecBuf> = (2..=21u8).map(|c| VecBuf::new(&frame(c, ACK))).collect();
        let mut out = vec![Verdict::Drop; bufs.len()];
        let all = p.process_burst(&mut bufs, Arrival::wire(0, now), &mut out);
        assert_eq!(all, Some(1), "round {round}");
        for (c, buf) in (2..=21u8).zip(&bufs) {
            assert_eq!(buf.data()[0..6], mac_of[&c][..], "client {c} round {round}");
        }
        assert!(out.iter().all(|v| *v == Verdict::Tx(1)), "{out:?}");
    }
}
