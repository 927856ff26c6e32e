//! IPv6 balancing through two workers' pipelines: NAT requests and
//! replies of IPv6 connections arriving at different workers meet at the
//! owner (software steering on the folded client address), are translated
//! once and tracked once; an NS for the IPv6 VIP is answered; IPv6 to one
//! of our addresses that no service takes goes to the kernel interface.

use super::ipv6::PORT_IP6;
use super::{run, setup_ports};
use crate::dataplane::pipeline::mac::MacWord;
use crate::dataplane::Arrival;
use crate::dataplane::Verdict;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::{LbIds, Snapshot, SnapshotBuilder};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use crate::lb::testutil::OUR_MAC;
use crate::net::addr::Ipv6Cidr;
use crate::net::buf::VecBuf;
use crate::net::classify::{classify, Classified};
use crate::net::neigh::{NeighConfig, NeighTable};
use crate::net::route6::RouteTable6;
use crate::net::wire::ndp;
use etherparse::PacketBuilder;
use std::net::Ipv4Addr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub(super) const VIP6: u128 = 0x2001_0db8_0099_0000_0000_0000_0000_0100;
const LAN6: u128 = 0x2001_0db8_0098_0000_0000_0000_0000_0001;
pub(super) const RS6: u128 = 0x2001_0db8_0098_0000_0000_0000_0000_0011;
pub(super) const RS_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x11];

/// Client `c`, on port 0's network (2001:db8:99::/64); [`setup6`] knows
/// the MACs of clients 2 to 60.
pub(super) fn client6(c: u8) -> u128 {
    0x2001_0db8_0099_0000_0000_0000_0000_0000 | c as u128
}

pub(super) fn client_mac(c: u8) -> [u8; 6] {
    [2, 0, 0, 0, 6, c]
}

pub(super) fn tcp6(
    src: u128,
    sport: u16,
    dst: u128,
    dport: u16,
    syn_ack: bool,
    eth: [[u8; 6]; 2],
) -> Vec<u8> {
    let mut v = Vec::new();
    let b = PacketBuilder::ethernet2(eth[0], eth[1])
        .ipv6(src.to_be_bytes(), dst.to_be_bytes(), 64)
        .tcp(sport, dport, 1, 64240)
        .syn();
    let b = if syn_ack { b.ack(2) } else { b };
    b.write(&mut v, b"").unwrap();
    v
}

fn nat6_service() -> Snapshot {
    let mut ids = LbIds::new(16, 64);
    let mut b = SnapshotBuilder::new();
    b.service(
        ServiceSpec {
            members: Vec::new(),
            local_addresses: Vec::new(),
            key: ServiceKey {
                fwmark: 0,
                proto: Proto::Tcp,
                vip: std::net::IpAddr::V6(VIP6.into()),
                port: 80,
            },
            sched: SchedKind::Rr,
            flags: SchedFlags::default(),
            persistent: None,
            netmask: Ipv4Addr::BROADCAST,
            prefix6: 128,
            synproxy: false,
            ops: false,
            client_address: Default::default(),
        },
        vec![DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V6(RS6.into()),
                port: 8080,
            },
            method: Method::Nat,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        }],
    );
    b.build(&mut ids, 2).unwrap()
}

/// Two workers whose view has port 1's IPv6 network (2001:db8:98::/64),
/// static neighbours for the real server and the clients, and the IPv6
/// NAT service [VIP6]:80 -> [RS6]:8080.
fn setup6(
    kernel: [bool; 2],
) -> (
    Arc<crate::dataplane::shared::Shared>,
    Vec<super::WorkerPipeline>,
) {
    setup6_workers(2, kernel)
}

/// [`setup6`] with `workers` workers.
pub(super) fn setup6_workers(
    workers: usize,
    kernel: [bool; 2],
) -> (
    Arc<crate::dataplane::shared::Shared>,
    Vec<super::WorkerPipeline>,
) {
    let (shared, mut pipes) = setup_ports(workers, kernel);
    let view = shared.net.load_full();
    let mut addrs = view.addrs().clone();
    addrs
        .add_port_addr6(1, Ipv6Cidr::new(LAN6, 64).unwrap())
        .unwrap();
    addrs.set_vips6([VIP6]);
    let routes6 = RouteTable6::new(&addrs, &[]).unwrap();
    let mut n6 = NeighTable::<u128>::new(NeighConfig::default());
    n6.add_static(RS6, RS_MAC, 1).unwrap();
    for c in 2..=60u8 {
        n6.add_static(client6(c), client_mac(c), 0).unwrap();
    }
    let v = view
        .with_addrs_routes(Arc::new(addrs), Arc::new(view.routes().clone()))
        .with_routes6(Arc::new(routes6))
        .with_neigh6(Arc::new(n6.snapshot()));
    shared.net.store(Arc::new(v));
    shared.lb.store(Arc::new(nat6_service()));
    for p in pipes.iter_mut() {
        crate::dataplane::Pipeline::begin_burst(p, 1);
    }
    (shared, pipes)
}

#[test]
fn nat6_requests_and_replies_meet_at_the_owner() {
    let (shared, mut pipes) = setup6([false, false]);
    let mut owners = [0usize; 2];
    for c in 2..=41u8 {
        let sport = 40000 + c as u16;
        let req_at = (c % 2) as usize;
        let mut syn = VecBuf::new(&tcp6(
            client6(c),
            sport,
            VIP6,
            80,
            false,
            [client_mac(c), OUR_MAC],
        ));
        let (v, owner) = run(&mut pipes, req_at, &mut syn, 0);
        assert_eq!(v, Verdict::Tx(1), "request of client {c}");
        owners[owner] += 1;
        let want = tcp6(client6(c), sport, RS6, 8080, false, [OUR_MAC, RS_MAC]);
        let mut want = want;
        want[21] = 63; // hop limit decremented
        assert_eq!(syn.to_vec(), want, "request of client {c}, byte-exact");

        let mut reply = VecBuf::new(&tcp6(RS6, 8080, client6(c), sport, true, [RS_MAC, OUR_MAC]));
        let (v, rowner) = run(&mut pipes, 1 - req_at, &mut reply, 1);
        assert_eq!(v, Verdict::Tx(0), "reply of client {c}");
        assert_eq!(rowner, owner, "reply handled by the request's owner");
        let mut want = tcp6(VIP6, 80, client6(c), sport, true, [OUR_MAC, client_mac(c)]);
        want[21] = 63;
        assert_eq!(reply.to_vec(), want, "reply of client {c}, byte-exact");
    }
    assert!(owners[0] > 5 && owners[1] > 5, "{owners:?}");
    let conns: u64 = shared
        .workers
        .iter()
        .map(|w| w.lb.conns.load(Ordering::Relaxed))
        .sum();
    assert_eq!(conns, 40, "each connection tracked once");
}

#[test]
fn ns_for_the_vip_and_own_address_traffic() {
    let (_shared, mut pipes) = setup6([true, false]);
    // an NS for the VIP, from a client, to its solicited-node group
    let dst = ndp::solicited_node(VIP6);
    let mut body = VIP6.to_be_bytes().to_vec();
    body.extend([1, 1]);
    body.extend(client_mac(9));
    let mut f = Vec::new();
    PacketBuilder::ethernet2(client_mac(9), ndp::multicast_mac(dst))
        .ipv6(client6(9).to_be_bytes(), dst.to_be_bytes(), 255)
        .icmpv6_raw(135, 0, [0; 4])
        .write(&mut f, &body)
        .unwrap();
    let mut b = VecBuf::new(&f);
    assert_eq!(
        crate::dataplane::Pipeline::process(&mut pipes[0], &mut b, Arrival::wire(0, 1)),
        Verdict::Tx(0)
    );
    let out = b.to_vec();
    let p = etherparse::SlicedPacket::from_ethernet(&out).unwrap();
    match p.transport {
        Some(etherparse::TransportSlice::Icmpv6(i)) => {
            assert_eq!(i.type_u8(), 136, "a neighbour advertisement");
            assert_eq!(&i.payload()[..16], &VIP6.to_be_bytes(), "for the VIP");
        }
        other => panic!("{other:?}"),
    }
    // TCP to port 0's own IPv6 address (ssh): the kernel's, wherever it
    // lands (never steered: the client side is the source)
    let ssh = tcp6(
        client6(9),
        50000,
        PORT_IP6,
        22,
        false,
        [client_mac(9), OUR_MAC],
    );
    assert!(matches!(classify(&ssh, 0), Classified::Ipv6(_)));
    let handled: Vec<Verdict> = (0..2)
        .map(|w| {
            let mut b = VecBuf::new(&ssh);
            super::run(&mut pipes, w, &mut b, 0).0
        })
        .collect();
    assert_eq!(handled, [Verdict::Kernel(0), Verdict::Kernel(0)]);
}

/// A persistent IPv6 service with `-M 48` keeps every client of a /48 on
/// one worker (its templates are per worker); without persistence clients
/// spread by their whole address.
#[test]
fn persistence_prefix_steers_a_network_to_one_worker() {
    use crate::dataplane::pipeline::v6::{owner6, steer_mask6};
    let mut ids = LbIds::new(16, 64);
    let mut spec = nat6_service().services()[0].spec.clone();
    spec.persistent = Some(60);
    spec.prefix6 = 48;
    let mut b = SnapshotBuilder::new();
    b.service(spec, vec![]);
    let snap = b.build(&mut ids, 1).unwrap();
    let m = steer_mask6(&snap);
    assert_eq!(m, !(u128::MAX >> 48));
    let net = 0x2001_0db8_0042u128 << 80;
    let o = owner6(net & m, 2);
    for h in 0..200u128 {
        let c = net | (h << 64) | h;
        assert_eq!(owner6(c & m, 2), o);
    }
    assert_eq!(steer_mask6(&nat6_service()), u128::MAX);
    let spread: std::collections::HashSet<u32> = (0..64u128).map(|h| owner6(net | h, 2)).collect();
    assert_eq!(spread.len(), 2, "unmasked clients use both workers");
}

/// NAT64's IPv4 real server and pool address ([`nat64_service`]).
pub(super) const RS4: [u8; 4] = [172, 16, 0, 11];
pub(super) const POOL4: std::net::Ipv4Addr = std::net::Ipv4Addr::new(172, 16, 0, 200);

/// NAT64: [VIP6]:80 -> [`RS4`]:8080, from the pool [`POOL4`].
pub(super) fn nat64_service() -> Snapshot {
    let mut ids = LbIds::new(16, 64);
    let spec = nat6_service().services()[0].spec.clone();
    let mut b = SnapshotBuilder::new();
    b.nat64_pool(&[POOL4]);
    b.service(
        spec,
        vec![DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V4(RS4.into()),
                port: 8080,
            },
            method: Method::Nat,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        }],
    );
    b.build(&mut ids, 3).unwrap()
}

/// [`nat64_service`] in force for `pipes`; the server's address and the
/// pool's.
fn nat64_in_force(
    shared: &crate::dataplane::shared::Shared,
    pipes: &mut [super::WorkerPipeline],
) -> ([u8; 4], Ipv4Addr) {
    shared.lb.store(Arc::new(nat64_service()));
    for p in pipes.iter_mut() {
        crate::dataplane::Pipeline::begin_burst(p, 2);
    }
    (RS4, POOL4)
}

/// Client `c`'s SYN from `sport` to [VIP6]:80 of the NAT64 service,
/// arriving at worker `c % 2`: it leaves as IPv4 from the owner; the
/// owner and the frame that left.
fn nat64_syn(
    pipes: &mut [crate::dataplane::pipeline::WorkerPipeline],
    c: u8,
    sport: u16,
) -> (usize, Vec<u8>) {
    let mut syn = VecBuf::new(&tcp6(
        client6(c),
        sport,
        VIP6,
        80,
        false,
        [client_mac(c), OUR_MAC],
    ));
    let (v, owner) = run(pipes, (c % 2) as usize, &mut syn, 0);
    assert_eq!(v, Verdict::Tx(1), "request of client {c}");
    (owner, syn.to_vec())
}

/// NAT64 through two workers: an IPv6 client's request leaves as IPv4 from
/// the pool with a port of its owner's share; the IPv4 reply, arriving at
/// either worker, is steered by that port to the owner and goes back as
/// IPv6 to the client.
#[test]
fn nat64_replies_steered_by_pool_port() {
    let (shared, mut pipes) = setup6([false, false]);
    let (rs4, pool) = nat64_in_force(&shared, &mut pipes);
    let mut owners = [0usize; 2];
    for c in 2..=21u8 {
        let sport = 41000 + c as u16;
        let (owner, out) = nat64_syn(&mut pipes, c, sport);
        owners[owner] += 1;
        crate::lb::testutil::verify(&out);
        assert_eq!(&out[26..30], &pool.octets(), "from the pool");
        assert_eq!(&out[30..34], &rs4);
        let lport = u16::from_be_bytes([out[34], out[35]]);
        assert_eq!(lport as usize % 2, owner, "a port of the owner's share");
        let reply = crate::lb::testutil::tcp_frame(
            rs4,
            8080,
            pool.octets(),
            lport,
            crate::net::meta::tcp_flags::SYN | crate::net::meta::tcp_flags::ACK,
            b"",
            64,
            true,
        );
        // the reply arrives at the other worker
        let mut rb = VecBuf::with_room(&reply, 128, 0);
        let (v, rowner) = run(&mut pipes, 1 - owner, &mut rb, 1);
        assert_eq!(v, Verdict::Tx(0), "reply of client {c}");
        assert_eq!(rowner, owner, "steered to the owner by its port");
        let out = rb.to_vec();
        match classify(&out, 0) {
            Classified::Ipv6(m) => {
                assert_eq!((m.key.src, m.key.dst), (VIP6, client6(c)));
                assert_eq!((m.key.sport, m.key.dport), (80, sport));
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(owners[0] > 3 && owners[1] > 3, "{owners:?}");
}

/// NAT64's ICMP errors through two workers, both toward the IPv4 server:
/// a reply too big for the client's link once translated, arriving at
/// either worker, makes the connection's owner answer the server with
/// fragmentation needed (MTU 1500 - 20); a Packet Too Big from a router
/// on the client's side about a reply (sent to the VIP: the client is
/// named only in the quote) is steered by the quoted client to the owner
/// and leaves as ICMPv4 fragmentation needed (MTU - 20) for the server.
#[test]
fn nat64_icmp_errors_reach_the_ipv4_server_from_the_owner() {
    use crate::net::meta::tcp_flags::{ACK, PSH};
    use etherparse::icmpv4::DestUnreachableHeader::FragmentationNeeded;
    use etherparse::Icmpv4Type::DestinationUnreachable;
    let (shared, mut pipes) = setup6([false, false]);
    let (rs4, pool) = nat64_in_force(&shared, &mut pipes);
    let frag_needed = |out: &[u8], mtu: u16, lport: u16| {
        crate::lb::testutil::verify(out);
        let p = etherparse::SlicedPacket::from_ethernet(out).unwrap();
        let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else {
            panic!("IPv4")
        };
        let h = ip.header().to_header();
        assert_eq!((h.source, h.destination), (pool.octets(), rs4));
        let Some(etherparse::TransportSlice::Icmpv4(i)) = &p.transport else {
            panic!("ICMPv4")
        };
        let want = DestinationUnreachable(FragmentationNeeded { next_hop_mtu: mtu });
        assert_eq!(i.icmp_type(), want);
        match classify(out, 1) {
            Classified::Ipv4(m) => {
                let q = m.icmp.expect("a quote");
                assert_eq!((q.inner_key.sport, q.inner_key.dport), (8080, lport));
            }
            other => panic!("{other:?}"),
        }
    };
    let router = client6(0xfe);
    for c in 2..=9u8 {
        let sport = 42000 + c as u16;
        let (owner, out) = nat64_syn(&mut pipes, c, sport);
        let lport = u16::from_be_bytes([out[34], out[35]]);
        let reply = |len: usize| {
            crate::lb::testutil::tcp_frame(
                rs4,
                8080,
                pool.octets(),
                lport,
                ACK | PSH,
                &vec![7; len],
                64,
                true,
            )
        };
        // a full-size reply: 1520 bytes of IPv6 do not fit the client's link
        let mut rb = VecBuf::with_room(&reply(1460), 128, 0);
        let (v, w) = run(&mut pipes, 1 - owner, &mut rb, 1);
        assert_eq!((v, w), (Verdict::Tx(1), owner), "client {c}");
        frag_needed(&rb.to_vec(), 1480, lport);
        // the server's next try fits
        let mut rb = VecBuf::with_room(&reply(1440), 128, 0);
        let (v, w) = run(&mut pipes, 1 - owner, &mut rb, 1);
        assert_eq!((v, w), (Verdict::Tx(0), owner), "client {c}");
        let sent = rb.to_vec();
        assert_eq!(sent.len(), 14 + 1500);
        // but a link beyond a router on the client's side takes 1400
        let mut err = Vec::new();
        PacketBuilder::ethernet2(client_mac(0xfe), OUR_MAC)
            .ipv6(router.to_be_bytes(), VIP6.to_be_bytes(), 64)
            .icmpv6(etherparse::Icmpv6Type::PacketTooBig { mtu: 1400 })
            .write(&mut err, &sent[14..14 + 1232])
            .unwrap();
        let mut eb = VecBuf::new(&err);
        let (v, w) = run(&mut pipes, 1 - owner, &mut eb, 0);
        assert_eq!((v, w), (Verdict::Tx(1), owner), "steered by the quote");
        frag_needed(&eb.to_vec(), 1380, lport);
    }
}

/// The burst path answers IPv6 frames as the packet path does (it hands
/// the packet path what it classified rather than classifying again), and
/// the next-hop cache IPv6 forwarding reads through follows a new view: a
/// real server whose MAC changes gets the new MAC from the next burst on.
#[test]
fn ipv6_burst_path_equals_packet_path_and_follows_a_new_view() {
    use crate::dataplane::Pipeline;
    use crate::net::buf::PacketBuf;
    let (s1, mut one) = setup6([false, false]);
    let (_s2, mut other) = setup6([false, false]);
    let frames: Vec<Vec<u8>> = (2..=40u8)
        .map(|c| {
            let sport = 40000 + c as u16;
            tcp6(client6(c), sport, VIP6, 80, false, [client_mac(c), OUR_MAC])
        })
        .collect();
    let burst = |p: &mut super::WorkerPipeline, now: u64| {
        let mut a: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
        let mut v = vec![Verdict::Drop; a.len()];
        p.process_burst(&mut a, Arrival::wire(0, now), &mut v);
        (v, a)
    };
    let (va, a) = burst(&mut one[0], 1_000_000);
    let mut b: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
    let vb: Vec<Verdict> = b
        .iter_mut()
        .map(|x| other[0].process(x, Arrival::wire(0, 1_000_000)))
        .collect();
    assert_eq!(va, vb);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.data(), y.data());
    }
    let mine: Vec<usize> = (0..va.len()).filter(|&i| va[i] == Verdict::Tx(1)).collect();
    assert!(mine.len() > 5, "{va:?}");
    for &i in &mine {
        assert_eq!(a[i].data()[0..6], RS_MAC, "packet {i}");
    }

    // the real server's MAC changes in a new view
    let mut n6 = NeighTable::<u128>::new(NeighConfig::default());
    n6.add_static(RS6, [2, 0, 0, 0, 0, 0x77], 1).unwrap();
    let v = s1.net.load().with_neigh6(Arc::new(n6.snapshot()));
    s1.net.store(Arc::new(v));
    one[0].begin_burst(2_000_000);
    let (v2, a2) = burst(&mut one[0], 2_000_000);
    for &i in &mine {
        assert_eq!(v2[i], Verdict::Tx(1), "packet {i}");
        assert_eq!(
            a2[i].data()[0..6],
            [2, 0, 0, 0, 0, 0x77],
            "packet {i}: new MAC"
        );
    }
}

/// `frame` with an 8-byte hop-by-hop header (a PadN option) before its
/// transport header: classify walks it, the early IPv6 stage does not
/// read past the first next header.
fn with_hop_by_hop(frame: &[u8]) -> Vec<u8> {
    let mut f = frame.to_vec();
    let next = f[20];
    f[20] = 0;
    let pl = u16::from_be_bytes([f[18], f[19]]) + 8;
    f[18..20].copy_from_slice(&pl.to_be_bytes());
    f.splice(54..54, [next, 0, 1, 4, 0, 0, 0, 0]);
    f
}

/// The early IPv6 stage (hash and prefetch ahead of the classify loop)
/// runs once a burst had IPv6 for the balancer, classifies and hashes
/// exactly the IPv6 TCP/UDP frames classify's fast path answers (not one
/// classify drops, hop limit 0, nor one with a hop-by-hop header, which
/// the packet path takes), and hands each packet its own hash. `process6_hashed` checks
/// every handed hash against the key's (debug builds, as here), and the
/// verdicts and bytes are the packet path's.
#[test]
fn early_ipv6_stage_hands_each_packet_its_own_hash() {
    use crate::dataplane::Pipeline;
    use crate::net::buf::PacketBuf;
    use crate::net::classify::peek_key6;
    let (_s1, mut one) = setup6([false, false]);
    let (_s2, mut other) = setup6([false, false]);
    let mut frames: Vec<Vec<u8>> = Vec::new();
    for c in 2..=12u8 {
        let f = tcp6(
            client6(c),
            40000 + c as u16,
            VIP6,
            80,
            false,
            [client_mac(c), OUR_MAC],
        );
        if c == 5 {
            let mut dead = f.clone();
            dead[21] = 0; // hop limit 0: classify drops it
            frames.push(dead);
            frames.push(with_hop_by_hop(&f));
        } else {
            frames.push(f);
        }
    }
    assert!(matches!(classify(&frames[3], 0), Classified::Drop(_)));
    assert!(matches!(classify(&frames[4], 0), Classified::Ipv6(_)));
    let bufs = || -> Vec<VecBuf> { frames.iter().map(|f| VecBuf::new(f)).collect() };
    let burst = |p: &mut super::WorkerPipeline, now: u64| {
        let mut a = bufs();
        let mut v = vec![Verdict::Drop; a.len()];
        p.process_burst(&mut a, Arrival::wire(0, now), &mut v);
        (v, a)
    };
    let packets = |p: &mut super::WorkerPipeline, now: u64| {
        let mut b = bufs();
        let v: Vec<Verdict> = b
            .iter_mut()
            .map(|x| p.process(x, Arrival::wire(0, now)))
            .collect();
        (v, b)
    };
    assert!(!one[0].v6_seen);
    let first = burst(&mut one[0], 1_000_000);
    assert!(one[0].v6_seen, "IPv6 went to the balancer");
    // what the stage classifies and hashes: every frame but the one
    // classify drops and the hop-by-hop one (the slow path's)
    let mask = one[0].prepare6(&bufs(), 0, MacWord::of(Some(OUR_MAC)));
    let want: u32 = (0..frames.len())
        .filter(|&i| i != 3 && i != 4)
        .fold(0, |m, i| m | 1 << i);
    assert_eq!(mask, want);
    for (i, f) in frames.iter().enumerate().filter(|&(i, _)| i != 3 && i != 4) {
        let Classified::Ipv6(m) = classify(f, 0) else {
            panic!("frame {i}");
        };
        assert_eq!(peek_key6(f), Some(m.key));
        assert_eq!(one[0].scratch.metas6[i], m, "frame {i}");
        assert_eq!(
            one[0].scratch.hash6[i],
            one[0].lb.prepare6(&m.key),
            "frame {i}"
        );
    }
    // the next burst runs the stage; the packet path does not
    one[0].begin_burst(2_000_000);
    let second = burst(&mut one[0], 2_000_000);
    let p1 = packets(&mut other[0], 1_000_000);
    other[0].begin_burst(2_000_000);
    let p2 = packets(&mut other[0], 2_000_000);
    for ((v, a), (w, b)) in [(first, p1), (second, p2)] {
        assert_eq!(v, w);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.data(), y.data());
        }
    }
}
