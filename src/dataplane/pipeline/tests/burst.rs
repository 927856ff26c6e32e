//! The burst path: the same verdicts and bytes as packet by packet, and a
//! burst's one-port summary exactly when every verdict is a Tx to that port.

use super::{nat_service, setup, RS, VIP};
use crate::dataplane::Arrival;
use crate::dataplane::{all_tx, Pipeline, Verdict};
use crate::lb::testutil::tcp_frame;
use crate::net::buf::{PacketBuf, VecBuf};
use crate::net::meta::tcp_flags::{ACK, SYN};
use std::sync::Arc;

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
        let all = one[0].process_burst(&mut a, Arrival::wire(0, 5_000_000), &mut va);
        assert_eq!(all, all_tx(&va), "the burst's summary is its verdicts'");
        let vb: Vec<Verdict> = b
            .iter_mut()
            .map(|x| other[0].process(x, Arrival::wire(0, 5_000_000)))
            .collect();
        assert_eq!(va, vb);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.data(), y.data());
        }
        assert!(va.iter().filter(|v| **v == Verdict::Tx(1)).count() >= 39);
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
        let all = p.process_burst(&mut bufs, Arrival::wire(port, 1_000_000), &mut out);
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
