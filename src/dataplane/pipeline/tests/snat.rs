//! SNAT through two workers' pipelines: a real server's connection out
//! (to an address no service, VIP or port of dirigo's has) leaves from the
//! pool address with a port of its owner's share; the reply to that
//! address and port, arriving at either worker, is steered by the port to
//! the owner and goes back to the real server. What is dirigo's own, or
//! from a source of no rule, is not masqueraded.

use super::{nat_service, run, setup, RS};
use crate::dataplane::Verdict;
use crate::lb::mark::Prefix;
use crate::lb::snapshot::{LbIds, SnapshotBuilder};
use crate::lb::snat::SnatRule;
use crate::lb::testutil::{tcp_frame, udp_frame, verify};
use crate::net::buf::VecBuf;
use crate::net::classify::{classify, Classified};
use crate::net::meta::tcp_flags::{ACK, SYN};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

const POOL: [u8; 4] = [198, 51, 100, 50];

#[test]
fn snat_out_and_replies_steered_by_port() {
    let (shared, mut pipes) = setup(2);
    let mut ids = LbIds::new(16, 64);
    let mut b = SnapshotBuilder::new();
    b.snat(&[SnatRule {
        source: "172.16.0.0/24".parse::<Prefix>().unwrap(),
        pool: vec![IpAddr::V4(Ipv4Addr::from(POOL))],
        max_conns: 0,
        port_lo: 1024,
        port_hi: 65535,
    }]);
    shared.lb.store(Arc::new(b.build(&mut ids, 5).unwrap()));
    for p in pipes.iter_mut() {
        crate::dataplane::Pipeline::begin_burst(p, 2);
    }
    let mut owners = [0usize; 2];
    for c in 2..=21u8 {
        // the outside host 10.0.0.c (on port 0's network)
        let host = [10, 0, 0, c];
        let sport = 42000 + c as u16;
        let mut syn = VecBuf::new(&tcp_frame(RS, sport, host, 80, SYN, b"", 64, true));
        let (v, owner) = run(&mut pipes, (c % 2) as usize, &mut syn, 1);
        assert_eq!(v, Verdict::Tx(0), "connection out to {host:?}");
        owners[owner] += 1;
        let out = syn.to_vec();
        verify(&out);
        assert_eq!(&out[26..30], &POOL, "from the pool address");
        assert_eq!(&out[30..34], &host, "to the same host");
        let lport = u16::from_be_bytes([out[34], out[35]]);
        assert_eq!(lport as usize % 2, owner, "a port of the owner's share");
        let reply = tcp_frame(host, 80, POOL, lport, SYN | ACK, b"", 64, true);
        let mut rb = VecBuf::new(&reply);
        let (v, rowner) = run(&mut pipes, 1 - owner, &mut rb, 0);
        assert_eq!(v, Verdict::Tx(1), "reply from {host:?}");
        assert_eq!(rowner, owner, "steered to the owner by its port");
        let out = rb.to_vec();
        verify(&out);
        match classify(&out, 1) {
            Classified::Ipv4(m) => {
                assert_eq!(m.key.src, u32::from_be_bytes(host));
                assert_eq!(m.key.dst, u32::from_be_bytes(RS));
                assert_eq!((m.key.sport, m.key.dport), (80, sport));
            }
            other => panic!("{other:?}"),
        }
        // the next segment out takes the same connection
        let mut ack = VecBuf::new(&tcp_frame(RS, sport, host, 80, ACK, b"x", 64, true));
        let (v, w) = run(&mut pipes, 0, &mut ack, 1);
        assert_eq!((v, w), (Verdict::Tx(0), owner));
        assert_eq!(
            u16::from_be_bytes([ack.to_vec()[34], ack.to_vec()[35]]),
            lport
        );
    }
    assert!(owners[0] > 3 && owners[1] > 3, "{owners:?}");
    // dirigo's own address is not masqueraded, nor a source of no rule
    let mut own = VecBuf::new(&udp_frame(RS, 5000, [172, 16, 0, 1], 53, b"q"));
    assert_eq!(run(&mut pipes, 0, &mut own, 1).0, Verdict::Drop);
    let mut other = VecBuf::new(&udp_frame([172, 16, 1, 9], 5000, [10, 0, 0, 9], 53, b"q"));
    assert_eq!(run(&mut pipes, 0, &mut other, 1).0, Verdict::Drop);
    let conns: u64 = pipes
        .iter()
        .map(|p| {
            p.lb.stats()
                .snat_live
                .load(std::sync::atomic::Ordering::Relaxed) as u64
        })
        .sum();
    assert_eq!(conns, 20);
    // without rules, nothing is masqueraded
    shared.lb.store(Arc::new(nat_service(&[RS])));
    for p in pipes.iter_mut() {
        crate::dataplane::Pipeline::begin_burst(p, 3);
    }
    let mut syn = VecBuf::new(&tcp_frame(RS, 1, [10, 0, 0, 9], 80, SYN, b"", 64, true));
    assert_eq!(run(&mut pipes, 0, &mut syn, 1).0, Verdict::Drop);
}
