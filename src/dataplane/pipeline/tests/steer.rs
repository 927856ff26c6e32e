//! Flow ownership across workers: the owner function is stable and spreads
//! clients; NAT requests and replies arriving at different workers meet at
//! the owner, are translated once and tracked once; a mixed burst hands its
//! foreign packets over; with the NIC's owner function nothing is handed over.

use super::{run, setup, RS, VIP};
use crate::dataplane::pipeline::owner_of;
use crate::dataplane::Arrival;
use crate::dataplane::{Pipeline, Verdict};
use crate::lb::testutil::{tcp_frame, verify};
use crate::net::buf::{PacketBuf, VecBuf};
use crate::net::meta::tcp_flags::{ACK, SYN};
use std::sync::atomic::Ordering;
use std::sync::Arc;

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
    let all = pipes[0].process_burst(&mut bufs, Arrival::wire(0, 1_000_000), &mut out);
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
    let all1 = pipes[1].process_burst(&mut hb, Arrival::steered(0, 1_000_000), &mut out1);
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
        let v = pipes[1 - q].process(&mut VecBuf::new(&syn), Arrival::wire(0, 1_000_000));
        assert_eq!(v, Verdict::Steer(q as u16), "client {c}");
        // on the NIC's queue: processed there
        let v = pipes[q].process(&mut VecBuf::new(&syn), Arrival::wire(0, 1_000_000));
        assert_eq!(v, Verdict::Tx(1), "request of client {c}");
        let reply = tcp_frame(RS, 8080, client, sport, SYN | ACK, b"", 64, true);
        let v = pipes[q].process(&mut VecBuf::new(&reply), Arrival::wire(1, 1_000_000));
        assert_eq!(v, Verdict::Tx(0), "reply of client {c}");
    }
    assert!(per_queue.iter().all(|&n| n > 5), "{per_queue:?}");
}
