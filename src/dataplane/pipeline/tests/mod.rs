//! Two workers' pipelines sharing one control state: NAT requests and
//! replies arriving at different workers meet at the owner, are translated
//! once and tracked once; ARP and ping are answered by whoever receives them.

use super::{owner_of, WorkerPipeline};
use crate::dataplane::hold::{HoldArea, HoldCount};
use crate::dataplane::shared::{Event, Shared, WorkerShared};
use crate::dataplane::{all_tx, Pipeline, Verdict};
use crate::lb::balancer::{Balancer, BalancerConfig};
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::{LbIds, Snapshot, SnapshotBuilder};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use crate::lb::testutil::{tcp_frame, verify, OUR_MAC};
use crate::net::addr::{link_local_of, Ipv4Cidr, Ipv6Cidr, OwnAddrs};
use crate::net::buf::{PacketBuf, VecBuf};
use crate::net::meta::tcp_flags::{ACK, SYN};
use crate::net::neigh::{NeighConfig, NeighTable};
use crate::net::route::RouteTable;
use crate::net::view::{NetView, PortInfo};
use arc_swap::ArcSwap;
use crossbeam_queue::ArrayQueue;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const VIP: [u8; 4] = [10, 0, 0, 100];
const RS: [u8; 4] = [172, 16, 0, 11];

fn setup(workers: usize) -> (Arc<Shared>, Vec<WorkerPipeline>) {
    setup_ports(workers, [false, false])
}

/// [`setup`] with port `i` having a kernel interface when `kernel[i]`.
fn setup_ports(workers: usize, kernel: [bool; 2]) -> (Arc<Shared>, Vec<WorkerPipeline>) {
    let mut addrs = OwnAddrs::new();
    addrs
        .add_port_addr(
            0,
            Ipv4Cidr::new(u32::from_be_bytes([10, 0, 0, 1]), 24).unwrap(),
        )
        .unwrap();
    addrs
        .add_port_addr(
            1,
            Ipv4Cidr::new(u32::from_be_bytes([172, 16, 0, 1]), 24).unwrap(),
        )
        .unwrap();
    addrs.add_vip(u32::from_be_bytes(VIP));
    // port 0's IPv6 addresses: its link-local one and 2001:db8:99::1/64
    addrs
        .add_port_addr6(0, Ipv6Cidr::new(link_local_of(OUR_MAC), 64).unwrap())
        .unwrap();
    addrs
        .add_port_addr6(0, Ipv6Cidr::new(self::ipv6::PORT_IP6, 64).unwrap())
        .unwrap();
    let routes = RouteTable::new(&addrs, &[]).unwrap();
    let mut neigh = NeighTable::new(NeighConfig::default());
    neigh
        .add_static(u32::from_be_bytes(RS), [2, 0, 0, 0, 0, 0x11], 1)
        .unwrap();
    for c in 2..=255u8 {
        neigh
            .add_static(u32::from_be_bytes([10, 0, 0, c]), [2, 0, 0, 0, 1, c], 0)
            .unwrap();
    }
    let ports: Arc<[PortInfo]> = kernel
        .iter()
        .map(|&kernel| PortInfo {
            mac: OUR_MAC,
            mtu: 1500,
            kernel,
        })
        .collect();
    let view = NetView::new(
        ports,
        Arc::new(addrs.clone()),
        Arc::new(routes),
        Arc::new(neigh.snapshot()),
    );
    let snap = nat_service(&[RS]);
    let mut lbs = Vec::new();
    let mut ws = Vec::new();
    for i in 0..workers {
        let lb = Balancer::new(
            &BalancerConfig {
                conn_capacity: 4096,
                seed: i as u32,
                worker: i as u32,
                workers: workers as u32,
                ..Default::default()
            },
            64,
            16,
        );
        ws.push(WorkerShared::new(lb.stats(), 2, i as u32 + 1));
        lbs.push(lb);
    }
    let shared = Arc::new(Shared {
        net: Arc::new(ArcSwap::from_pointee(view)),
        lb: Arc::new(ArcSwap::from_pointee(snap)),
        events: ArrayQueue::new(64),
        workers: ws,
        stop: Arc::new(AtomicBool::new(false)),
    });
    let pipes = lbs
        .into_iter()
        .enumerate()
        .map(|(i, lb)| {
            let mut p = WorkerPipeline::new(&shared, i, lb);
            p.begin_burst(0);
            p
        })
        .collect();
    (shared, pipes)
}

/// A snapshot with one NAT service, VIP:80 -> `rs`:8080 (rr).
fn nat_service(rs: &[[u8; 4]]) -> Snapshot {
    service_of(rs, Method::Nat, 8080)
}

/// One TCP service VIP:80 over real servers `rs` (port `rport`) by `method`.
fn service_of(rs: &[[u8; 4]], method: Method, rport: u16) -> Snapshot {
    let mut ids = LbIds::new(16, 64);
    let dests = rs
        .iter()
        .map(|&a| DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V4(Ipv4Addr::from(a)),
                port: rport,
            },
            method,
            weight: 1,
            upper: 0,
            lower: 0,
        })
        .collect();
    let mut b = SnapshotBuilder::new();
    b.service(
        ServiceSpec {
            key: ServiceKey {
                proto: Proto::Tcp,
                vip: std::net::IpAddr::V4(Ipv4Addr::from(VIP)),
                port: 80,
            },
            sched: SchedKind::Rr,
            flags: SchedFlags::default(),
            persistent: None,
            netmask: Ipv4Addr::BROADCAST,
            prefix6: 128,
            synproxy: false,
        },
        dests,
    );
    b.build(&mut ids, 1).unwrap()
}

/// Run a packet arriving at worker `at`; follow a steer to the owner.
/// Returns (verdict, worker that handled it).
fn run(pipes: &mut [WorkerPipeline], at: usize, buf: &mut VecBuf, port: u16) -> (Verdict, usize) {
    match pipes[at].process(buf, port, 1_000_000) {
        Verdict::Steer(w) => {
            let w = w as usize;
            let v = pipes[w].process_steered(buf, port, 1_000_000);
            assert!(!matches!(v, Verdict::Steer(_)), "steered twice");
            (v, w)
        }
        v => (v, at),
    }
}

#[test]
fn owner_is_stable_and_spread() {
    let mut n = [0u32; 2];
    for c in 0..1000u32 {
        let o = owner_of(0x0a00_0000 + c, u32::MAX, 2);
        assert_eq!(o, owner_of(0x0a00_0000 + c, u32::MAX, 2));
        n[o as usize] += 1;
    }
    assert!(n[0] > 400 && n[1] > 400, "{n:?}");
    assert_eq!(owner_of(12345, u32::MAX, 1), 0);
    // a /24 netmask keeps a client network on one worker
    let o = owner_of(0x0a00_0001, 0xffff_ff00, 2);
    assert!((0..=255).all(|c| owner_of(0x0a00_0000 + c, 0xffff_ff00, 2) == o));
}

#[test]
fn nat_requests_and_replies_on_different_workers_meet_at_the_owner() {
    let (shared, mut pipes) = setup(2);
    let mut owners = [0usize; 2];
    for c in 2..=41u8 {
        let client = [10, 0, 0, c];
        let sport = 40000 + c as u16;
        // The request arrives at worker (c % 2), the reply at the other one.
        let req_at = (c % 2) as usize;
        let mut syn = VecBuf::new(&tcp_frame(client, sport, VIP, 80, SYN, b"", 64, true));
        let (v, owner) = run(&mut pipes, req_at, &mut syn, 0);
        assert_eq!(v, Verdict::Tx(1), "request of client {c}");
        owners[owner] += 1;
        let out = syn.to_vec();
        verify(&out);
        assert_eq!(&out[30..34], &RS, "dst rewritten to the RS");
        assert_eq!(u16::from_be_bytes([out[36], out[37]]), 8080);

        let mut reply = VecBuf::new(&tcp_frame(
            RS,
            8080,
            client,
            sport,
            SYN | ACK,
            b"",
            64,
            true,
        ));
        let (v, rowner) = run(&mut pipes, 1 - req_at, &mut reply, 1);
        assert_eq!(v, Verdict::Tx(0), "reply of client {c}");
        assert_eq!(rowner, owner, "reply handled by the request's owner");
        let out = reply.to_vec();
        verify(&out);
        assert_eq!(&out[26..30], &VIP, "src rewritten to the VIP");
        assert_eq!(u16::from_be_bytes([out[34], out[35]]), 80);
    }
    assert!(
        owners[0] > 5 && owners[1] > 5,
        "both workers own flows: {owners:?}"
    );
    // Every connection tracked exactly once over both workers, every
    // packet counted once.
    let conns: u64 = shared
        .workers
        .iter()
        .map(|w| w.lb.conns.load(Ordering::Relaxed))
        .sum();
    assert_eq!(conns, 40);
    let pkts_in: u64 = shared
        .workers
        .iter()
        .map(|w| {
            w.lb.services[..]
                .iter()
                .map(|s| s.pkts_in.load(Ordering::Relaxed))
                .sum::<u64>()
        })
        .sum();
    let pkts_out: u64 = shared
        .workers
        .iter()
        .map(|w| {
            w.lb.services[..]
                .iter()
                .map(|s| s.pkts_out.load(Ordering::Relaxed))
                .sum::<u64>()
        })
        .sum();
    assert_eq!((pkts_in, pkts_out), (40, 40));
}

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
    assert_eq!(pipes[0].process(&mut ob, 0, 0), Verdict::Drop);
    assert_eq!(ob.data(), &other[..], "untouched");
    pipes[0].housekeeping(0);
    assert_eq!(shared.workers[0].counters.get("other_host"), 1);
    // Garbage is dropped and counted, never steered.
    let mut junk = VecBuf::new(&[0x02u8; 10]);
    assert_eq!(pipes[1].process(&mut junk, 0, 0), Verdict::Drop);
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
fn burst_path_equals_packet_path() {
    let (_s1, mut one) = setup(1);
    let (_s2, mut other) = setup(1);
    let mut frames = Vec::new();
    for c in 2..=40u8 {
        frames.push(tcp_frame(
            [10, 0, 0, c],
            1000 + c as u16,
            VIP,
            80,
            SYN,
            b"",
            64,
            true,
        ));
    }
    // a mixed burst (with an ARP-less junk frame) and a pure one
    let mut mixed = frames.clone();
    mixed.insert(5, vec![0x02; 10]);
    for burst in [frames, mixed] {
        let mut a: Vec<VecBuf> = burst.iter().map(|f| VecBuf::new(f)).collect();
        let mut b: Vec<VecBuf> = burst.iter().map(|f| VecBuf::new(f)).collect();
        let mut va = vec![Verdict::Drop; a.len()];
        let all = one[0].process_burst(&mut a, 0, 5_000_000, &mut va);
        assert_eq!(all, all_tx(&va), "the burst's summary is its verdicts'");
        let vb: Vec<Verdict> = b
            .iter_mut()
            .map(|x| other[0].process(x, 0, 5_000_000))
            .collect();
        assert_eq!(va, vb);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.data(), y.data());
        }
        assert!(va.iter().filter(|v| **v == Verdict::Tx(1)).count() >= 39);
    }
}

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
        let v = p.process(&mut b, 0, 2_000_000);
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
        p.process_burst(&mut bufs, 0, 5_000_000 + round, &mut out);
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

/// With two workers, a burst mixing flows of both owners stays on the
/// burst path: the foreign packets come back as `Steer(owner)` (nothing
/// else done to them), the own ones are forwarded exactly as the packet
/// path would; the owner then takes the handed-over packets as a steered
/// burst. A junk frame in the middle is answered on its own.
#[test]
fn mixed_burst_steers_foreign_packets_and_forwards_its_own() {
    let (shared, mut pipes) = setup(2);
    let (_s2, mut reference) = setup(2);
    let mut frames: Vec<Vec<u8>> = (2..=41u8)
        .map(|c| tcp_frame([10, 0, 0, c], 5000 + c as u16, VIP, 80, SYN, b"", 64, true))
        .collect();
    frames.insert(7, vec![0x02; 10]);
    let mut bufs: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
    let mut out = vec![Verdict::Tx(9); bufs.len()];
    let all = pipes[0].process_burst(&mut bufs, 0, 1_000_000, &mut out);
    assert_eq!(out[7], Verdict::Drop, "junk frame");
    assert_eq!(all, None, "not one Tx port");
    let mut handed = Vec::new();
    let (mut own, mut foreign) = (0, 0);
    for (i, f) in frames.iter().enumerate() {
        if i == 7 {
            continue;
        }
        let client = u32::from_be_bytes([f[26], f[27], f[28], f[29]]);
        let mut r = VecBuf::new(f);
        let (rv, rw) = run(&mut reference, 0, &mut r, 0);
        if owner_of(client, u32::MAX, 2) == 0 {
            own += 1;
            assert_eq!(out[i], Verdict::Tx(1), "own flow {i} forwarded");
            assert_eq!((rv, rw), (Verdict::Tx(1), 0));
            assert_eq!(bufs[i].data(), r.data(), "same bytes as the packet path");
        } else {
            foreign += 1;
            assert_eq!(out[i], Verdict::Steer(1), "foreign flow {i} handed over");
            assert_eq!(bufs[i].data(), &f[..], "a handed-over packet is untouched");
            handed.push((bufs[i].clone(), r));
        }
    }
    assert!(own > 5 && foreign > 5, "{own} own, {foreign} foreign");
    let (mut hb, refs): (Vec<VecBuf>, Vec<VecBuf>) = handed.into_iter().unzip();
    let mut out1 = vec![Verdict::Drop; hb.len()];
    let all1 = pipes[1].process_steered_burst(&mut hb, 0, 1_000_000, &mut out1);
    assert_eq!(all1, Some(1), "a handed-over burst out of one port");
    assert!(out1.iter().all(|v| *v == Verdict::Tx(1)), "{out1:?}");
    for (a, b) in hb.iter().zip(&refs) {
        assert_eq!(a.data(), b.data());
    }
    let conns: Vec<u64> = shared
        .workers
        .iter()
        .map(|w| w.lb.conns.load(Ordering::Relaxed))
        .collect();
    assert_eq!(
        conns,
        vec![own as u64, foreign as u64],
        "each flow tracked once, by its owner"
    );
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
    let all = p.process_burst(&mut bufs, 0, 1_000_000, &mut out);
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
    assert_eq!(p.process(&mut again, 0, 1_000_000), Verdict::Hold(a));
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
    assert_eq!(p.process(&mut b, 0, 1_000_000), Verdict::Hold(rs));
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

mod ipv6;
mod kernel;
mod v6nat;

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

/// The burst's summary (`process_burst`'s answer, on which the worker
/// hands a whole burst to one port's driver without reading its verdicts)
/// is `Some(port)` exactly when every verdict is `Tx(port)`: NAT requests
/// (out of the server port) and replies (out of the client port) each
/// alone are one port; mixed, or with a packet answered aside (a junk
/// frame, a packet whose next hop is unknown), they are not.
#[test]
fn burst_summary_is_one_port_only_when_every_verdict_is() {
    let (shared, mut pipes) = setup(1);
    shared.lb.store(Arc::new(nat_service(&[RS])));
    let p = &mut pipes[0];
    p.begin_burst(1_000_000);
    let clients: Vec<[u8; 4]> = (2..=9u8).map(|c| [10, 0, 0, c]).collect();
    let req = |c: [u8; 4], f: u8| tcp_frame(c, 7000, VIP, 80, f, b"", 64, true);
    let rep = |c: [u8; 4], f: u8| tcp_frame(RS, 8080, c, 7000, f, b"", 64, true);
    let mut burst = |frames: &[Vec<u8>], port: u16| {
        let mut bufs: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
        let mut out = vec![Verdict::Drop; bufs.len()];
        let all = p.process_burst(&mut bufs, port, 1_000_000, &mut out);
        assert_eq!(all, all_tx(&out), "{out:?}");
        (all, out)
    };
    let syns: Vec<Vec<u8>> = clients.iter().map(|&c| req(c, SYN)).collect();
    assert_eq!(burst(&syns, 0).0, Some(1), "requests: the server port");
    let replies: Vec<Vec<u8>> = clients.iter().map(|&c| rep(c, SYN | ACK)).collect();
    assert_eq!(burst(&replies, 1).0, Some(0), "replies: the client port");
    // requests and replies in one burst (as a one-port lab delivers
    // them): every one is a Tx, but to two ports
    let mixed: Vec<Vec<u8>> = clients
        .iter()
        .flat_map(|&c| [req(c, ACK), rep(c, ACK)])
        .collect();
    let (all, out) = burst(&mixed, 0);
    assert_eq!(all, None, "two ports");
    assert!(out.iter().all(|v| matches!(v, Verdict::Tx(_))), "{out:?}");
    // one junk frame among established requests
    let mut junk: Vec<Vec<u8>> = clients.iter().map(|&c| req(c, ACK)).collect();
    junk.insert(3, vec![0x02; 10]);
    assert_eq!(burst(&junk, 0).0, None, "a drop among them");
    // an empty burst is no port
    assert_eq!(burst(&[], 0).0, None);
}

/// With the NIC's owner function (RSS on the client address), a request
/// on the client port and its NAT reply on the server port, each arriving
/// on the queue the NIC picks, are processed where they arrive: nothing is
/// steered. A packet on another queue is still handed to the owner.
#[test]
fn nic_owner_function_needs_no_hand_over() {
    use crate::dataplane::rss::{plan, ClientOwner, PortRole, RssCaps, KEY};
    let caps = RssCaps {
        driver: "net_mlx5".into(),
        rss_offloads: u64::MAX,
        max_rx_queues: 64,
        reta_size: 512,
        hash_key_size: 52,
    };
    let p = plan(
        &[(caps.clone(), PortRole::Client), (caps, PortRole::Server)],
        2,
        true,
    );
    let owner = Arc::new(ClientOwner::new(&KEY, p.owner_reta.as_ref().unwrap()));
    let (_shared, mut pipes) = setup(2);
    for pipe in &mut pipes {
        pipe.set_client_owner(Arc::clone(&owner));
    }
    let mut per_queue = [0u32; 2];
    for c in 2..=41u8 {
        let client = [10, 0, 0, c];
        let q = owner.owner(u32::from_be_bytes(client)) as usize;
        per_queue[q] += 1;
        let sport = 40000 + c as u16;
        let syn = tcp_frame(client, sport, VIP, 80, SYN, b"", 64, true);
        // on another queue: handed to the owner
        let v = pipes[1 - q].process(&mut VecBuf::new(&syn), 0, 1_000_000);
        assert_eq!(v, Verdict::Steer(q as u16), "client {c}");
        // on the NIC's queue: processed there
        let v = pipes[q].process(&mut VecBuf::new(&syn), 0, 1_000_000);
        assert_eq!(v, Verdict::Tx(1), "request of client {c}");
        let reply = tcp_frame(RS, 8080, client, sport, SYN | ACK, b"", 64, true);
        let v = pipes[q].process(&mut VecBuf::new(&reply), 1, 1_000_000);
        assert_eq!(v, Verdict::Tx(0), "reply of client {c}");
    }
    assert!(per_queue.iter().all(|&n| n > 5), "{per_queue:?}");
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
        assert_eq!(p.process(&mut buf, 0, 1_000_000), Verdict::Tx(1));
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
        let all = p.process_burst(&mut bufs, 0, now, &mut out);
        assert_eq!(all, Some(1), "round {round}");
        for (c, buf) in (2..=21u8).zip(&bufs) {
            assert_eq!(buf.data()[0..6], mac_of[&c][..], "client {c} round {round}");
        }
        assert!(out.iter().all(|v| *v == Verdict::Tx(1)), "{out:?}");
    }
}
