//! Next hops: the next-hop cache follows each new view (and keeps two real
//! servers sharing a slot apart); an unresolved next hop is held and asked
//! for per packet, and the held packet is released once the view knows it.
//! IPv6 next hops the same way: an IPv6 NAT (or NAT64) reply to an on-link
//! client whose MAC is unknown is held, the client solicited, and the
//! reply sent once its advertisement is learned; bounded and expired as
//! IPv4's.

use super::{nat_service, service_of, setup, RS, VIP};
use crate::dataplane::hold::{HoldArea, HoldCount};
use crate::dataplane::pipeline::WorkerPipeline;
use crate::dataplane::shared::Event;
use crate::dataplane::verdict::Hop;
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
    hold.hold(b, Hop::V4(rs), 0, 1_000_000);
    let mut sent = Vec::new();
    hold.release(p, 2_000_000, |b, v| sent.push((b, v)));
    assert!(sent.is_empty() && hold.len() == 1, "still unknown");
    // the control thread resolved it: published, seen from the next burst on
    shared.net.store(known);
    assert!(!p.resolved(Hop::V4(rs)), "not before the next burst");
    p.begin_burst(3_000_000);
    assert!(p.resolved(Hop::V4(rs)));
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

// ---- IPv6 next hops: the same hold ----

use super::ipv6::PORT_IP6;
use super::v6nat::{
    client6, client_mac, nat64_service, setup6_workers, tcp6, POOL4, RS4, RS6, RS_MAC, VIP6,
};
use crate::dataplane::hold::{HOLD_NS, HOLD_PER_NEIGHBOR, HOLD_SLOTS};
use crate::dataplane::shared::Shared;
use crate::lb::testutil::OUR_MAC;
use crate::net::classify::{classify, Classified};
use crate::net::neigh::ResolveAction;
use etherparse::PacketBuilder;

const T0: u64 = 1_000_000_000;

/// One worker over [`setup6_workers`]' view, the IPv6 NAT service, and a
/// control thread's IPv6 neighbour table that knows the real server only
/// (the clients' MACs unknown), published.
fn setup6_unresolved() -> (Arc<Shared>, WorkerPipeline, NeighTable<u128>) {
    let (shared, mut pipes) = setup6_workers(1, [false, false]);
    let mut n6 = NeighTable::<u128>::new(NeighConfig::default());
    n6.add_static(RS6, RS_MAC, 1).unwrap();
    publish6(&shared, &n6);
    let mut p = pipes.remove(0);
    p.begin_burst(T0);
    (shared, p, n6)
}

/// The control thread publishes `n6` as the view's IPv6 neighbours.
fn publish6(shared: &Shared, n6: &NeighTable<u128>) {
    let v = shared.net.load().with_neigh6(Arc::new(n6.snapshot()));
    shared.net.store(Arc::new(v));
}

fn events(shared: &Shared) -> Vec<Event> {
    std::iter::from_fn(|| shared.events.pop()).collect()
}

/// Client `c`'s SYN to [VIP6]:80 from `sport`: forwarded to the real server.
fn open6(p: &mut WorkerPipeline, c: u128, sport: u16, now: u64) {
    let mut syn = VecBuf::new(&tcp6(
        c,
        sport,
        VIP6,
        80,
        false,
        [[2, 0, 0, 0, 9, 9], OUR_MAC],
    ));
    assert_eq!(p.process(&mut syn, Arrival::wire(0, now)), Verdict::Tx(1));
}

/// The real server's SYN/ACK to client `c`:`sport`.
fn reply6(c: u128, sport: u16) -> Vec<u8> {
    tcp6(RS6, 8080, c, sport, true, [RS_MAC, OUR_MAC])
}

/// Client `c`'s Neighbour Advertisement answering our solicitation:
/// solicited, override, its MAC `mac` in the option.
fn na(c: u128, mac: [u8; 6]) -> Vec<u8> {
    let mut body = c.to_be_bytes().to_vec();
    body.extend([2, 1]);
    body.extend(mac);
    let mut v = Vec::new();
    PacketBuilder::ethernet2(mac, OUR_MAC)
        .ipv6(c.to_be_bytes(), PORT_IP6.to_be_bytes(), 255)
        .icmpv6_raw(136, 0, [0x60, 0, 0, 0])
        .write(&mut v, &body)
        .unwrap();
    v
}

/// The hold area's counters: held, released, overflow, expired.
fn hold_counts(h: &HoldArea<VecBuf>) -> [u64; 4] {
    let c = h.counts();
    [
        c[HoldCount::Held],
        c[HoldCount::Released],
        c[HoldCount::Overflow],
        c[HoldCount::Expired],
    ]
}

/// A pipeline counter, published.
fn counter(shared: &Shared, p: &mut WorkerPipeline, name: &str, now: u64) -> u64 {
    p.housekeeping(now);
    shared.workers[0].counters.get(name)
}

/// The on-link client's first reply waits for its MAC: the pipeline holds
/// it (`Hold6`, its ticket naming the client) unchanged and asks the
/// control thread to solicit the client; the client's advertisement is
/// learned, and once the view knows the client the held reply goes out,
/// translated as any reply. Not a drop: `unresolved6` stays 0.
#[test]
fn ipv6_nat_reply_to_an_unresolved_client_is_held_until_its_advertisement() {
    let (shared, mut p, mut n6) = setup6_unresolved();
    let (c, mac, sport) = (client6(200), client_mac(200), 40200);
    open6(&mut p, c, sport, T0);
    assert_eq!(events(&shared), [], "the request's next hop is known");
    let frame = reply6(c, sport);
    let mut b = VecBuf::new(&frame);
    let Verdict::Hold6(t) = p.process(&mut b, Arrival::wire(1, T0)) else {
        panic!("the reply is not held");
    };
    assert_eq!(p.hop6(t), Some(c), "the ticket names the client");
    assert_eq!(b.data(), &frame[..], "a held packet is left as it was");
    assert_eq!(
        events(&shared),
        [Event::Resolve6 { ip: c, port: 0 }],
        "a solicitation asked for, on the client's port"
    );
    let mut hold = HoldArea::new();
    hold.hold6(&mut p, b, t, 1, T0);
    assert_eq!((hold.len(), hold_counts(&hold)), (1, [1, 0, 0, 0]));
    // the control thread solicits the client
    assert!(matches!(
        n6.resolve(c, 0, T0),
        ResolveAction::SendRequest { port: 0 }
    ));
    let mut sent = Vec::new();
    hold.release(&mut p, T0 + 1_000_000, |b, v| sent.push((b, v)));
    assert!(sent.is_empty() && hold.len() == 1, "still unknown");

    // the client's advertisement: learned (an entry the control thread
    // has: create false), not answered
    let mut adv = VecBuf::new(&na(c, mac));
    assert_eq!(
        p.process(&mut adv, Arrival::wire(0, T0 + 2_000_000)),
        Verdict::Drop
    );
    let learned = events(&shared);
    assert_eq!(
        learned,
        [Event::Learn6 {
            ip: c,
            mac,
            port: 0,
            create: false
        }]
    );
    n6.learn(c, mac, 0, T0 + 2_000_000, false);
    publish6(&shared, &n6);
    assert!(!p.resolved(Hop::V6(c)), "not before the next burst");
    p.begin_burst(T0 + 3_000_000);
    assert!(p.resolved(Hop::V6(c)));
    hold.release(&mut p, T0 + 3_000_000, |b, v| sent.push((b, v)));
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].1, Verdict::Tx(0));
    let mut want = tcp6(VIP6, 80, c, sport, true, [OUR_MAC, mac]);
    want[21] = 63; // hop limit decremented
    assert_eq!(sent[0].0.to_vec(), want, "translated, to the learned MAC");
    assert_eq!((hold.len(), hold_counts(&hold)), (0, [1, 1, 0, 0]));
    assert_eq!(counter(&shared, &mut p, "unresolved6", T0), 0);
    assert_eq!(counter(&shared, &mut p, "nd_taken", T0), 1);
}

/// The IPv4 area's bounds hold for IPv6 next hops: at most
/// [`HOLD_PER_NEIGHBOR`] replies per client, [`HOLD_SLOTS`] in all; the
/// rest are counted drops (`held_overflow`, as IPv4's), not
/// `unresolved6`.
#[test]
fn ipv6_holds_are_bounded_as_ipv4_ones() {
    let (shared, mut p, _n6) = setup6_unresolved();
    let mut hold = HoldArea::new();
    let reply = |p: &mut WorkerPipeline, hold: &mut HoldArea<VecBuf>, c: u128, sport| {
        open6(p, c, sport, T0);
        let mut b = VecBuf::new(&reply6(c, sport));
        let Verdict::Hold6(t) = p.process(&mut b, Arrival::wire(1, T0)) else {
            panic!("reply to {c:x} not held");
        };
        hold.hold6(p, b, t, 1, T0);
        // the control thread's queue, emptied as it would be
        assert_eq!(events(&shared), [Event::Resolve6 { ip: c, port: 0 }]);
    };
    // one client, two more replies than its share
    let c = client6(200);
    for i in 0..HOLD_PER_NEIGHBOR as u16 + 2 {
        reply(&mut p, &mut hold, c, 41000 + i);
    }
    let n = HOLD_PER_NEIGHBOR as u64;
    assert_eq!(
        (hold.len(), hold_counts(&hold)),
        (HOLD_PER_NEIGHBOR, [n, 0, 2, 0])
    );
    // one reply each to other clients, three more than the area holds
    let others = HOLD_SLOTS - HOLD_PER_NEIGHBOR + 3;
    for i in 0..others as u128 {
        reply(&mut p, &mut hold, client6(0) | 1 << 16 | i, 42000);
    }
    assert_eq!(hold.len(), HOLD_SLOTS);
    assert_eq!(hold_counts(&hold), [HOLD_SLOTS as u64, 0, 5, 0]);
    assert_eq!(counter(&shared, &mut p, "unresolved6", T0), 0);
}

/// A client that never answers: its held reply is dropped at the deadline
/// (`held_expired`), never processed again, as IPv4's.
#[test]
fn ipv6_hold_expires_when_the_client_does_not_answer() {
    let (shared, mut p, _n6) = setup6_unresolved();
    let c = client6(201);
    open6(&mut p, c, 43000, T0);
    let mut b = VecBuf::new(&reply6(c, 43000));
    let Verdict::Hold6(t) = p.process(&mut b, Arrival::wire(1, T0)) else {
        panic!("not held");
    };
    let mut hold = HoldArea::new();
    hold.hold6(&mut p, b, t, 1, T0);
    let mut sent = Vec::new();
    hold.release(&mut p, T0 + HOLD_NS - 1, |b, v| sent.push((b, v)));
    assert_eq!((hold.len(), hold_counts(&hold)), (1, [1, 0, 0, 0]));
    hold.release(&mut p, T0 + HOLD_NS, |b, v| sent.push((b, v)));
    assert!(sent.is_empty());
    assert_eq!((hold.len(), hold_counts(&hold)), (0, [1, 0, 0, 1]));
    assert_eq!(counter(&shared, &mut p, "unresolved6", T0), 0);
}

/// A ticket is good for the next burst's worth of tickets at least (the
/// worker redeems a burst's before the next); one far older names no next
/// hop any more, and the packet is a counted drop (`unresolved6`).
#[test]
fn an_ipv6_hold_ticket_too_old_is_a_counted_drop() {
    let (shared, mut p, _n6) = setup6_unresolved();
    let mut tickets = Vec::new();
    for i in 0..4 * crate::net::buf::BURST as u128 {
        let c = client6(0) | 2 << 16 | i;
        open6(&mut p, c, 44000, T0);
        let mut b = VecBuf::new(&reply6(c, 44000));
        let Verdict::Hold6(t) = p.process(&mut b, Arrival::wire(1, T0)) else {
            panic!("not held");
        };
        tickets.push((t, c));
        while shared.events.pop().is_some() {}
    }
    let burst = crate::net::buf::BURST;
    for &(t, c) in &tickets[tickets.len() - burst..] {
        assert_eq!(p.hop6(t), Some(c));
    }
    assert_eq!(p.hop6(tickets[0].0), None);
    assert_eq!(counter(&shared, &mut p, "unresolved6", T0), 1);
}

/// NAT64: the IPv4 reply to an IPv6 client whose MAC is unknown (through
/// the burst path, where the core finds it not its own and the pipeline
/// hands it to NAT64) is held as an IPv6 packet is, and translated once
/// the client's advertisement is learned.
#[test]
fn nat64_reply_to_an_unresolved_client_is_held() {
    let (shared, mut p, mut n6) = setup6_unresolved();
    shared.lb.store(Arc::new(nat64_service()));
    p.begin_burst(T0);
    let (c, mac, sport) = (client6(202), client_mac(202), 45000);
    open6(&mut p, c, sport, T0);
    let req = {
        let mut b = VecBuf::new(&tcp6(c, sport + 1, VIP6, 80, false, [mac, OUR_MAC]));
        assert_eq!(p.process(&mut b, Arrival::wire(0, T0)), Verdict::Tx(1));
        b.to_vec()
    };
    assert_eq!(&req[26..30], &POOL4.octets(), "from the pool");
    let lport = u16::from_be_bytes([req[34], req[35]]);
    let reply = tcp_frame(RS4, 8080, POOL4.octets(), lport, SYN | ACK, b"", 64, true);
    let mut bufs = vec![VecBuf::with_room(&reply, 128, 0)];
    let mut out = [Verdict::Drop];
    let all = p.process_burst(&mut bufs, Arrival::wire(1, T0), &mut out);
    assert_eq!(all, None);
    let Verdict::Hold6(t) = out[0] else {
        panic!("the NAT64 reply is not held: {out:?}");
    };
    assert_eq!(p.hop6(t), Some(c));
    assert_eq!(bufs[0].data(), &reply[..], "left as it was");
    assert_eq!(events(&shared), [Event::Resolve6 { ip: c, port: 0 }]);
    let mut hold = HoldArea::new();
    hold.hold6(&mut p, bufs.remove(0), t, 1, T0);
    n6.resolve(c, 0, T0);
    let mut adv = VecBuf::new(&na(c, mac));
    assert_eq!(p.process(&mut adv, Arrival::wire(0, T0)), Verdict::Drop);
    for e in events(&shared) {
        if let Event::Learn6 {
            ip,
            mac,
            port,
            create,
        } = e
        {
            n6.learn(ip, mac, port, T0, create);
        }
    }
    publish6(&shared, &n6);
    p.begin_burst(T0 + 1_000_000);
    let mut sent = Vec::new();
    hold.release(&mut p, T0 + 1_000_000, |b, v| sent.push((b, v)));
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].1, Verdict::Tx(0));
    let out = sent[0].0.to_vec();
    assert_eq!(out[0..6], mac, "to the learned MAC");
    match classify(&out, 0) {
        Classified::Ipv6(m) => {
            assert_eq!((m.key.src, m.key.dst), (VIP6, c));
            assert_eq!((m.key.sport, m.key.dport), (80, sport + 1));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(hold_counts(&hold), [1, 1, 0, 0]);
    assert_eq!(counter(&shared, &mut p, "unresolved6", T0), 0);
}
