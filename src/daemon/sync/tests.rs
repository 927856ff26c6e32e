//! Two directors' workers, sans-IO: what one worker queues goes through the
//! IPVS message format to the other director's owning worker, which
//! installs it at housekeeping and forwards the flow's next segment.

use super::*;
use crate::dataplane::pipeline::{owner_of, WorkerPipeline};
use crate::dataplane::rss::KEY;
use crate::dataplane::shared::{WorkerShared, WorkerSync};
use crate::dataplane::Arrival;
use crate::dataplane::{Pipeline, Verdict};
use crate::lb::balancer::{Balancer, BalancerConfig};
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::{LbIds, Snapshot, SnapshotBuilder};
use crate::lb::spec::{DestKey, DestSpec, Proto, ServiceKey, ServiceSpec};
use crate::lb::state::TcpState;
use crate::lb::sync::{SyncCount, SyncPolicy};
use crate::lb::testutil::{tcp_frame, OUR_MAC};
use crate::net::addr::{Ipv4Cidr, OwnAddrs};
use crate::net::buf::{PacketBuf, VecBuf};
use crate::net::meta::tcp_flags::{ACK, PSH, SYN};
use crate::net::neigh::{NeighConfig, NeighTable};
use crate::net::route::RouteTable;
use crate::net::view::{NetView, PortInfo};
use crate::net::wire::ipvs_sync::tcp_state;
use arc_swap::ArcSwap;
use crossbeam_queue::ArrayQueue;

const VIP: [u8; 4] = [10, 0, 0, 100];
const RS: [[u8; 4]; 2] = [[10, 0, 1, 11], [10, 0, 1, 12]];

fn cfg(syncid: u8) -> SyncConfig {
    SyncConfig {
        port: 1,
        interface: "dg-back".into(),
        source: Ipv4Addr::new(10, 0, 1, 1),
        group: wire::SYNC_GROUP,
        udp_port: wire::SYNC_PORT,
        ttl: 1,
        syncid,
        peers: vec![],
        send: true,
        receive: true,
        policy: SyncPolicy::default(),
        max_message: 1472,
    }
}

fn snapshot(order: &[usize]) -> Snapshot {
    let mut ids = LbIds::new(16, 64);
    let dests = order
        .iter()
        .map(|&i| DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V4(Ipv4Addr::from(RS[i])),
                port: 80,
            },
            method: Method::Dr,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        })
        .collect();
    let mut b = SnapshotBuilder::new();
    b.service(
        ServiceSpec {
            members: Vec::new(),
            local_addresses: Vec::new(),
            key: ServiceKey {
                fwmark: 0,
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
            ops: false,
            client_address: Default::default(),
        },
        dests,
    );
    b.build(&mut ids, 1).unwrap()
}

/// One director: `workers` pipelines with sync queues of `queue` each.
fn director(workers: usize, queue: usize, order: &[usize]) -> (Arc<Shared>, Vec<WorkerPipeline>) {
    let mut addrs = OwnAddrs::new();
    let cidr = |a: [u8; 4]| Ipv4Cidr::new(u32::from_be_bytes(a), 24).unwrap();
    addrs.add_port_addr(0, cidr([10, 0, 0, 1])).unwrap();
    addrs.add_port_addr(1, cidr([10, 0, 1, 1])).unwrap();
    addrs.add_vip(u32::from_be_bytes(VIP));
    let routes = RouteTable::new(&addrs, &[]).unwrap();
    let mut neigh = NeighTable::new(NeighConfig::default());
    for (i, rs) in RS.iter().enumerate() {
        neigh
            .add_static(u32::from_be_bytes(*rs), [2, 0, 0, 0, 1, i as u8], 1)
            .unwrap();
    }
    let ports = (0..2)
        .map(|_| PortInfo {
            mac: OUR_MAC,
            mtu: 1500,
            kernel: true,
        })
        .collect();
    let view = NetView::new(
        ports,
        Arc::new(addrs),
        Arc::new(routes),
        Arc::new(neigh.snapshot()),
    );
    let mut lbs = Vec::new();
    let mut ws = Vec::new();
    for i in 0..workers {
        let mut lb = Balancer::new(
            &BalancerConfig {
                conn_capacity: 1024,
                seed: i as u32 + 7,
                ..Default::default()
            },
            64,
            16,
        );
        let mut w = WorkerShared::new(lb.stats(), 2, i as u32 + 1);
        let q = WorkerSync::new(queue);
        lb.set_sync(Some((Arc::clone(&q.out), SyncPolicy::default())));
        w.sync = Some(q);
        ws.push(w);
        lbs.push(lb);
    }
    let shared = Arc::new(Shared {
        net: Arc::new(ArcSwap::from_pointee(view)),
        lb: Arc::new(ArcSwap::from_pointee(snapshot(order))),
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

fn client_frame(client: u8, cport: u16, flags: u8) -> VecBuf {
    VecBuf::new(&tcp_frame(
        [192, 0, 2, client],
        cport,
        VIP,
        80,
        flags,
        b"data",
        64,
        true,
    ))
}

/// Everything director `a`'s workers queued, as IPVS messages.
fn messages(a: &Shared, syncid: u8) -> Vec<Vec<u8>> {
    let mut pending: Vec<ConnRepr> = a
        .workers
        .iter()
        .flat_map(|w| std::iter::from_fn(|| w.sync.as_ref().and_then(|s| s.out.pop())))
        .map(|c| to_repr(&c))
        .collect();
    let mut out = Vec::new();
    while !pending.is_empty() {
        let mut buf = vec![0u8; 1472];
        let mut w = MessageWriter::new(&mut buf, syncid);
        while let Some(c) = pending.first() {
            if !w.push(c) {
                break;
            }
            pending.remove(0);
        }
        out.push(w.finish().to_vec());
    }
    out
}

fn count(s: &SyncStats, c: SyncThreadCount) -> u64 {
    s.counts[c.index()].load(Relaxed)
}

#[test]
fn repr_round_trip_keeps_what_a_backup_needs() {
    for (m, fwd) in [
        (Method::Dr, flags::DROUTE),
        (Method::Tun, flags::TUNNEL),
        (Method::Nat, flags::MASQ),
    ] {
        let c = SyncConn {
            v6: false,
            proto: 6,
            state: TcpState::Established as u8,
            no_output: m != Method::Nat,
            method: Some(m),
            template: false,
            caddr: 0xc000_0207,
            vaddr: 0x0a00_0064,
            daddr: 0x0a00_010b,
            cport: 40000,
            vport: 80,
            dport: 8080,
            timeout_s: 900,
        };
        let r = to_repr(&c);
        assert_eq!(r.flags & flags::FWD_MASK, fwd);
        assert_eq!(r.flags & flags::INACTIVE, 0, "established is active");
        assert_eq!(r.state, tcp_state::ESTABLISHED);
        assert_eq!(r.caddr, Ipv4Addr::new(192, 0, 2, 7));
        assert_eq!(from_repr(&r), c);
        let fw = SyncConn {
            state: TcpState::FinWait as u8,
            ..c
        };
        assert_ne!(to_repr(&fw).flags & flags::INACTIVE, 0);
    }
    let mut r = to_repr(&SyncConn::default());
    r.flags = flags::LOCALNODE;
    assert_eq!(from_repr(&r).method, None);
    r.state = 300;
    assert_eq!(
        from_repr(&r).state,
        u8::MAX,
        "an impossible state stays impossible"
    );
}

#[test]
fn connections_reach_the_other_directors_owning_worker_and_are_used() {
    let (a, mut apipes) = director(2, 64, &[0, 1]);
    // the other director has its servers in the other order
    let (b, mut bpipes) = director(2, 64, &[1, 0]);
    let cfg = cfg(0);
    let stats = SyncStats::default();
    // 20 clients' handshakes on A, each on its owning worker
    let mut sent_to = Vec::new();
    for client in 1..=20u8 {
        let owner = owner_of(u32::from_be_bytes([192, 0, 2, client]), u32::MAX, 2) as usize;
        for flags in [SYN, ACK] {
            let mut f = client_frame(client, 1000 + client as u16, flags);
            let v = apipes[owner].process(&mut f, Arrival::wire(0, 1_000_000));
            assert_eq!(v, Verdict::Tx(1));
            if flags == ACK {
                sent_to.push(f.data()[0..6].to_vec());
            }
        }
    }
    let msgs = messages(&a, 0);
    assert_eq!(msgs.len(), 1, "20 connections fit one message");
    for m in &msgs {
        receive(&cfg, &b, None, &stats, m, Some(Ipv4Addr::new(10, 0, 1, 2)));
    }
    assert_eq!(count(&stats, SyncThreadCount::MessagesReceived), 1);
    assert_eq!(count(&stats, SyncThreadCount::ConnsReceived), 20);
    for p in &mut bpipes {
        p.housekeeping(2_000_000);
    }
    let installed: u64 = b
        .workers
        .iter()
        .map(|w| w.lb.sync[SyncCount::Installed.index()].load(Relaxed))
        .sum();
    assert_eq!(installed, 20);
    // the routers move the flows to B: their next segments go to the same
    // real servers, though B never saw a SYN (and has no sloppy_tcp)
    for client in 1..=20u8 {
        let owner = owner_of(u32::from_be_bytes([192, 0, 2, client]), u32::MAX, 2) as usize;
        let mut f = client_frame(client, 1000 + client as u16, ACK | PSH);
        assert_eq!(
            bpipes[owner].process(&mut f, Arrival::wire(0, 3_000_000)),
            Verdict::Tx(1)
        );
        assert_eq!(f.data()[0..6], sent_to[client as usize - 1][..]);
    }
}

#[test]
fn garbage_own_messages_and_foreign_syncids_are_counted_and_dropped() {
    let (b, _pipes) = director(1, 4, &[0, 1]);
    let stats = SyncStats::default();
    let peer = Some(Ipv4Addr::new(10, 0, 1, 2));
    receive(&cfg(0), &b, None, &stats, b"\x00\x01garbage", peer);
    receive(&cfg(0), &b, None, &stats, &[], peer);
    let bad: u64 = stats.bad.iter().map(|c| c.load(Relaxed)).sum();
    assert_eq!(bad, 2);
    // a message from our own address (multicast looped by a switch)
    let c = to_repr(&SyncConn {
        proto: 6,
        state: 1,
        method: Some(Method::Dr),
        caddr: 0xc000_0201,
        vaddr: u32::from_be_bytes(VIP).into(),
        daddr: u32::from_be_bytes(RS[0]).into(),
        cport: 5,
        vport: 80,
        dport: 80,
        timeout_s: 900,
        ..Default::default()
    });
    let mut buf = vec![0u8; 1472];
    let mut w = MessageWriter::new(&mut buf, 9);
    for _ in 0..6 {
        assert!(w.push(&c));
    }
    let msg = w.finish().to_vec();
    receive(&cfg(0), &b, None, &stats, &msg, Some(cfg(0).source));
    assert_eq!(count(&stats, SyncThreadCount::OwnIgnored), 1);
    receive(&cfg(3), &b, None, &stats, &msg, peer);
    assert_eq!(count(&stats, SyncThreadCount::SyncidMismatch), 1);
    // accepted with syncid 0 (any) or 9: the worker's queue holds 4
    receive(&cfg(9), &b, None, &stats, &msg, peer);
    assert_eq!(count(&stats, SyncThreadCount::ConnsReceived), 4);
    assert_eq!(count(&stats, SyncThreadCount::WorkerQueueFull), 2);
    // a message without entries is a director saying it started
    let mut hbuf = vec![0u8; 64];
    let hello = MessageWriter::new(&mut hbuf, 0).finish().to_vec();
    assert!(receive(&cfg(0), &b, None, &stats, &hello, peer));
    assert_eq!(count(&stats, SyncThreadCount::PeerHello), 1);
    assert!(!receive(&cfg(0), &b, None, &stats, &msg, peer));
    let names: Vec<String> = stats.named().into_iter().map(|n| n.0).collect();
    assert!(names.iter().any(|n| n == "sync_worker_queue_full"));
    assert!(names.iter().any(|n| n.starts_with("sync_bad_")));
}

#[test]
fn a_message_holds_what_the_mtu_allows() {
    assert_eq!(entry_room(1472), 1464);
    assert_eq!(entry_room(10), wire::CONN_V6_LEN, "one IPv6 entry at least");
}

/// An IPv6 connection to the VIP `2001:db8::64` from client `c`.
fn conn6(c: u128) -> SyncConn {
    SyncConn {
        v6: true,
        proto: 6,
        state: 1,
        method: Some(Method::Dr),
        caddr: 0x2001_0db8_0001_u128 << 80 | c,
        vaddr: 0x2001_0db8_u128 << 96 | 0x64,
        daddr: 0x2001_0db8_u128 << 96 | 0x11,
        cport: 1,
        vport: 80,
        dport: 80,
        timeout_s: 900,
        ..Default::default()
    }
}

#[test]
fn ipv6_entries_round_trip_and_reach_the_pipelines_ipv6_owner() {
    let c = conn6(7);
    let r = to_repr(&c);
    assert!(r.is_ipv6());
    assert_eq!(
        r.caddr,
        "2001:db8:1::7".parse::<std::net::IpAddr>().unwrap()
    );
    assert_eq!(from_repr(&r), c);
    // steered as the pipeline steers the client's IPv6 packets, NIC
    // steering or not (IPv6 is steered in software)
    let (b, _pipes) = director(2, 64, &[0, 1]);
    let nic = ClientOwner::new(&KEY, &[1, 0, 0, 1, 1, 1, 0, 0]);
    let stats = SyncStats::default();
    let mut buf = vec![0u8; 1472];
    let mut w = MessageWriter::new(&mut buf, 0);
    for i in 1..=20u128 {
        assert!(w.push(&to_repr(&conn6(i * 0x1_0000_0101))));
    }
    assert!(
        !w.push(&to_repr(&conn6(1))),
        "20 IPv6 entries fill 1472 bytes"
    );
    let msg = w.finish().to_vec();
    let peer = Some(Ipv4Addr::new(10, 0, 1, 2));
    for owner in [None, Some(&nic)] {
        receive(&cfg(0), &b, owner, &stats, &msg, peer);
        let mut seen = [0; 2];
        for (i, wk) in b.workers.iter().enumerate() {
            let q = &wk.sync.as_ref().unwrap().inbound;
            while let Some(c) = q.pop() {
                assert!(c.v6);
                assert_eq!(owner6(c.caddr, 2) as usize, i, "the IPv6 owner");
                seen[i] += 1;
            }
        }
        assert_eq!(seen[0] + seen[1], 20);
        assert!(seen[0] > 0 && seen[1] > 0, "both workers own some");
    }
}

#[test]
fn a_batch_fills_messages_by_bytes_whatever_the_mix() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut cfg = cfg(5);
    cfg.peers = vec![Ipv4Addr::LOCALHOST];
    cfg.udp_port = rx.local_addr().unwrap().port();
    cfg.max_message = 400;
    let stats = SyncStats::default();
    let mut out = Out::new(&cfg, &tx, &stats);
    let mut batch = Batch::new(cfg.max_message);
    let v4 = to_repr(&SyncConn {
        proto: 6,
        state: 1,
        method: Some(Method::Dr),
        caddr: 0xc000_0201,
        vaddr: u32::from_be_bytes(VIP).into(),
        daddr: u32::from_be_bytes(RS[0]).into(),
        ..Default::default()
    });
    // 392 bytes for entries: four IPv6 and two IPv4 entries (360 bytes),
    // then an IPv6 one does not fit and the message leaves
    let mut sent = 0;
    for i in 0..12u128 {
        let r = if i % 3 == 2 { v4 } else { to_repr(&conn6(i)) };
        sent += usize::from(batch.add(r, &mut out));
    }
    assert_eq!(sent, 1, "one full message");
    batch.flush(&mut out);
    let mut rbuf = [0u8; 2048];
    let mut entries = Vec::new();
    for want in [6, 6] {
        let n = rx.recv(&mut rbuf).unwrap();
        assert_eq!(
            n,
            wire::HEADER_LEN + 4 * wire::CONN_V6_LEN + 2 * wire::CONN_V4_LEN
        );
        assert!(n <= cfg.max_message, "{n} bytes");
        let (h, e) = wire::parse(&rbuf[..n]).unwrap();
        assert_eq!((h.syncid, h.count), (5, want));
        entries.extend(e.map(Result::unwrap));
    }
    assert_eq!(entries.len(), 12);
    assert_eq!(entries.iter().filter(|e| e.is_ipv6()).count(), 8);
    assert_eq!(count(&stats, SyncThreadCount::ConnsSent), 12);
}

#[test]
fn with_nic_steering_a_connection_goes_to_the_nics_owner() {
    let (b, _pipes) = director(2, 64, &[0, 1]);
    let stats = SyncStats::default();
    // a redirection table unlike the software hash's split
    let nic = ClientOwner::new(&KEY, &[1, 0, 0, 1, 1, 1, 0, 0]);
    let mut buf = vec![0u8; 1472];
    let mut w = MessageWriter::new(&mut buf, 0);
    let clients: Vec<u32> = (1..=30u32).map(|i| 0xc633_0000 | (i * 77)).collect();
    for &c in &clients {
        assert!(w.push(&to_repr(&SyncConn {
            proto: 6,
            state: 1,
            method: Some(Method::Dr),
            caddr: c.into(),
            vaddr: u32::from_be_bytes(VIP).into(),
            daddr: u32::from_be_bytes(RS[0]).into(),
            cport: 1,
            vport: 80,
            dport: 80,
            timeout_s: 900,
            ..Default::default()
        })));
    }
    let msg = w.finish().to_vec();
    receive(
        &cfg(0),
        &b,
        Some(&nic),
        &stats,
        &msg,
        Some(Ipv4Addr::new(10, 0, 1, 2)),
    );
    let mut differs = 0;
    for (i, wk) in b.workers.iter().enumerate() {
        let q = &wk.sync.as_ref().unwrap().inbound;
        while let Some(c) = q.pop() {
            assert_eq!(
                nic.owner(c.caddr4()) as usize,
                i,
                "the NIC's owner installs it"
            );
            differs += usize::from(owner_of(c.caddr4(), u32::MAX, 2) as usize != i);
        }
    }
    assert!(
        differs > 0,
        "the NIC's choice is not the software hash's here"
    );
}
