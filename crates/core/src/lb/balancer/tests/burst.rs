//! The burst path: the same verdicts and bytes as packet by packet, and
//! every selected packet handled whatever the caller prefetched.

use super::*;
use crate::net::meta::{PROTO_ICMP, PROTO_IPIP};

#[test]
fn burst_equals_single() {
    let mut e = env(128);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Nat, 1)]);
    });
    let frames: Vec<Vec<u8>> = (0..70).map(|p| tcp(SYN, 100 + p)).collect();
    let metas: Vec<_> = frames.iter().map(|f| meta_of(f)).collect();
    let mut bufs: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
    let mut out = vec![LbVerdict::NotForUs; 70];
    let eg = FakeEgress::default();
    e.w.process_burst(&BurstCtx::new(&s, &eg, 0), &mut bufs, &metas, &mut out);
    assert!(out.iter().all(|v| *v == LbVerdict::Tx { port: 1 }));
    for (b, p) in bufs.iter().zip(100..) {
        let want = with_eth(
            tcp_frame(CLIENT, p, RIP, 80, SYN, b"", 63, true),
            mac_of(RIP),
            OUR_MAC,
        );
        assert_eq!(b.to_vec(), want);
    }
    assert_eq!(e.w.table().len(), 70);
    // PSH without conn
    let (v, _) = e.send(&s, &tcp(PSH, 9), 0);
    assert_eq!(v, LbVerdict::Drop(LbDrop::NotTracked));
}

/// The staged path with every count of records the caller prefetched
/// already (the pipeline prefetches records while it classifies) and a
/// selection with gaps: every selected packet, and only those, is handled.
#[test]
fn prepared_burst_handles_every_selected_packet_whatever_was_touched() {
    for touched in [0, 1, 7, 8, 9, 16, 23, 24, 25, 31, 32, 40] {
        let mut e = env(128);
        let s = e.snap(1, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
        });
        let frames: Vec<Vec<u8>> = (0..32).map(|p| tcp(SYN, 100 + p)).collect();
        let metas: Vec<_> = frames.iter().map(|f| meta_of(f)).collect();
        let mut bufs: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
        let prep: Vec<Prepared> = metas.iter().map(|m| e.w.prepare(&s, m)).collect();
        // every packet but each fifth
        let sel: Vec<u8> = (0..32u8).filter(|i| i % 5 != 4).collect();
        for p in prep.iter().take(touched.min(sel.len())) {
            e.w.touch_prepared(p);
        }
        let mut out = vec![LbVerdict::NotForUs; 32];
        e.w.process_prepared(
            &BurstCtx::new(&s, &e.eg, 0),
            &mut bufs,
            &metas,
            Selected {
                prepared: &prep,
                sel: &sel,
                touched,
            },
            &mut out,
        );
        for (i, v) in out.iter().enumerate() {
            let want = if i % 5 == 4 {
                LbVerdict::NotForUs
            } else {
                LbVerdict::Tx { port: 1 }
            };
            assert_eq!(*v, want, "touched {touched}, packet {i}");
        }
        assert_eq!(e.w.table().len(), sel.len() as u32, "touched {touched}");
    }
}

/// A packet of neither TCP nor UDP is not the core's, whatever records
/// share its addresses and ports: its lookup misses (every record is TCP
/// or UDP) and the miss path answers `NotForUs`, creating nothing, packet
/// by packet and through the burst path, to a VIP and to another host.
#[test]
fn other_protocols_miss_and_are_not_for_us() {
    let mut e = env(128);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
        b.service(svc(Proto::Udp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    for p in 100..104 {
        assert_eq!(e.send(&s, &tcp(SYN, p), 0).0, LbVerdict::Tx { port: 1 });
        assert_eq!(e.send(&s, &tcp(ACK, p), 0).0, LbVerdict::Tx { port: 1 });
    }
    let before = e.w.table().len();
    let frames: Vec<Vec<u8>> = (100..104)
        .map(|p| tcp(ACK, p))
        .chain([tcp_frame(
            CLIENT,
            100,
            [192, 0, 2, 11],
            80,
            ACK,
            b"",
            64,
            false,
        )])
        .collect();
    for proto in [PROTO_ICMP, PROTO_IPIP, 47, 0, 255] {
        let metas: Vec<_> = frames
            .iter()
            .map(|f| {
                let mut m = meta_of(f);
                m.key.proto = proto;
                m
            })
            .collect();
        for (f, m) in frames.iter().zip(&metas) {
            let mut b = VecBuf::new(f);
            let v = e.w.process(&BurstCtx::new(&s, &e.eg, 0), &mut b, m);
            assert_eq!(v, LbVerdict::NotForUs, "proto {proto}");
            assert_eq!(b.to_vec(), *f, "proto {proto}: untouched");
        }
        let mut bufs: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
        let mut out = vec![LbVerdict::Tx { port: 9 }; frames.len()];
        e.w.process_burst(&BurstCtx::new(&s, &e.eg, 0), &mut bufs, &metas, &mut out);
        assert!(
            out.iter().all(|v| *v == LbVerdict::NotForUs),
            "proto {proto}: {out:?}"
        );
        assert_eq!(e.w.table().len(), before, "proto {proto}");
    }
    // and the TCP connections themselves still forward
    assert_eq!(e.send(&s, &tcp(ACK, 101), 0).0, LbVerdict::Tx { port: 1 });
}
