use super::*;
use crate::net::family::{V4, V6};
use crate::net::wire::tcpopt;

#[test]
fn rescale_keeps_bytes_and_clamps() {
    assert_eq!(rescale(100, 9, 7), 400);
    assert_eq!(rescale(400, 7, 9), 100);
    assert_eq!(rescale(u16::MAX, 14, 0), u16::MAX);
    assert_eq!(rescale(1234, 7, 7), 1234);
    assert_eq!(rescale(1234, 0, 0), 1234);
}

#[test]
fn synack_options_follow_the_syn() {
    let mut o = tcpopt::TcpOptions {
        mss: Some(1400),
        wscale: Some(3),
        sack_perm: true,
        ts: Some(tcpopt::Timestamps {
            val: 42,
            ecr: 0,
            at: 24,
        }),
        sack: None,
    };
    let s = synack_options::<V4>(&o, 1_000_000);
    assert_eq!(s.mss, 1300);
    // IPv6: Linux's IPv6 table, at most 1440
    assert_eq!(synack_options::<V6>(&o, 1_000_000).mss, 1220);
    o.mss = Some(9000);
    assert_eq!(synack_options::<V6>(&o, 1_000_000).mss, 1440);
    assert_eq!(synack_options::<V4>(&o, 1_000_000).mss, 1460);
    o.mss = Some(1400);
    assert_eq!(s.wscale, Some(SynProxy::WSCALE));
    assert!(s.sack_perm);
    let (val, ecr) = s.ts.unwrap();
    assert_eq!(ecr, 42);
    assert_eq!(
        cookie::ts_decode(val),
        cookie::TsOptions {
            wscale: Some(3),
            sack: true
        }
    );
    o.ts = None;
    let s = synack_options::<V4>(&o, 1_000_000);
    assert_eq!((s.wscale, s.sack_perm, s.ts), (None, false, None));
}

#[test]
fn the_reset_queue_is_bounded() {
    let mut sp = SynProxy::new(4, 2, [1, 2]);
    for i in 0..RESET_QUEUE as u32 {
        assert!(sp.queue_reset(Reset {
            seq: i,
            ..Reset::default()
        }));
    }
    assert!(!sp.queue_reset(Reset::default()));
    assert_eq!(sp.take_resets().count(), RESET_QUEUE);
    assert_eq!(sp.take_resets().count(), 0);
    assert!(sp.aux(3).is_some() && sp.aux(4).is_none());
    assert!(sp.lane::<V6>().aux(1).is_some() && sp.lane::<V6>().aux(2).is_none());
    assert_eq!(sp.memory_bytes(), 6 * 12);
}
