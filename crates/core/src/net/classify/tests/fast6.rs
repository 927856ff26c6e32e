//! The IPv6 fast path agrees with the slow path on every input, and really
//! answers for the common IPv6 packet.

use super::fast::agree;
use crate::net::classify::fast::{classify_fast6, peek_key6, FAST6_LEN};
use crate::net::classify::slow::classify_slow;
use crate::net::classify::*;
use crate::net::meta::{tcp_flags, FlowKey6, PacketMeta6};
use etherparse::PacketBuilder;

const MAC_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0a];
const MAC_B: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0b];
const CLIENT6: u128 = 0x2001_0db8_00c0_0000_0000_0000_0000_0007;
const VIP6: u128 = 0x2001_0db8_00f0_0000_0000_0000_0000_0010;

/// An IPv6 TCP segment (`Some(flags)`) or UDP datagram (`None`) built by
/// etherparse, with `payload` bytes and `pad` zero bytes of padding.
fn frame6(tcp: Option<u8>, hop: u8, payload: usize, pad: usize) -> Vec<u8> {
    let ip =
        PacketBuilder::ethernet2(MAC_A, MAC_B).ipv6(CLIENT6.to_be_bytes(), VIP6.to_be_bytes(), hop);
    let mut v = Vec::new();
    match tcp {
        Some(flags) => {
            let mut b = ip.tcp(40000, 80, 0x0102_0304, 1024);
            if flags & tcp_flags::SYN != 0 {
                b = b.syn();
            }
            if flags & tcp_flags::ACK != 0 {
                b = b.ack(0x0a0b_0c0d);
            }
            b.write(&mut v, &vec![0x5a; payload]).unwrap();
        }
        None => ip
            .udp(5000, 53)
            .write(&mut v, &vec![0xa5; payload])
            .unwrap(),
    }
    v.resize(v.len() + pad, 0);
    v
}

/// [`agree`], the IPv6 fast path's answer is the slow path's, and the
/// burst path's early key ([`peek_key6`]) is the key classify gives a
/// TCP/UDP packet whenever it has one.
fn agree6(f: &[u8]) {
    agree(f);
    if let Some(m) = classify_fast6(f, 5) {
        assert_eq!(Classified::Ipv6(m), classify_slow(f, 5), "{f:02x?}");
    }
    if let (Some(k), Classified::Ipv6(m)) = (peek_key6(f), classify(f, 5)) {
        if m.icmp.is_none() {
            assert_eq!(k, m.key, "{f:02x?}");
        }
    }
}

#[test]
fn fast_path_answers_ipv6_tcp_and_udp() {
    let f = frame6(Some(tcp_flags::SYN | tcp_flags::ACK), 61, 0, 0);
    assert_eq!(f.len(), 74);
    let want = PacketMeta6 {
        port: 7,
        vlan: None,
        l3_off: 14,
        l4_off: 54,
        ip_len: 60,
        key: FlowKey6 {
            src: CLIENT6,
            dst: VIP6,
            sport: 40000,
            dport: 80,
            proto: 6,
        },
        tcp_flags: tcp_flags::SYN | tcp_flags::ACK,
        ttl: 61,
        df: true,
        icmp: None,
    };
    assert_eq!(classify_fast6(&f, 7), Some(want));
    assert_eq!(peek_key6(&f), Some(want.key));
    agree6(&f);
    // UDP with a payload and Ethernet padding
    let u = frame6(None, 64, 10, 4);
    let m = classify_fast6(&u, 1).expect("UDP answered");
    assert_eq!((m.key.sport, m.key.dport, m.key.proto), (5000, 53, 17));
    assert_eq!((m.ip_len, m.tcp_flags), (58, 0));
    agree6(&u);
}

#[test]
fn fast_path_declines_ipv6_it_does_not_know() {
    // an extension header (hop-by-hop, next header 0): the slow path walks it
    let mut f = frame6(Some(tcp_flags::ACK), 64, 20, 0);
    f[20] = 0;
    assert_eq!(classify_fast6(&f, 0), None);
    agree6(&f);
    // shorter than FAST6_LEN: a valid UDP datagram of 62 bytes
    let short = frame6(None, 64, 0, 0);
    assert!(short.len() < FAST6_LEN);
    assert_eq!(classify_fast6(&short, 0), None);
    assert!(matches!(classify(&short, 0), Classified::Ipv6(_)));
    // each edit makes the slow path drop: the fast path must not answer
    let cases: [(usize, u8, NetDrop); 6] = [
        (6, 0x03, NetDrop::BadSrcMac),
        (21, 0, NetDrop::TtlExpired),
        (22, 0xff, NetDrop::MartianSrc),
        (38, 0xff, NetDrop::NotUnicastDst),
        (18, 0x40, NetDrop::BadIpv6),
        (20, 47, NetDrop::Ipv6),
    ];
    for (at, v, why) in cases {
        let mut f = frame6(Some(tcp_flags::ACK), 64, 6, 0);
        f[at] = v;
        assert_eq!(classify_fast6(&f, 0), None, "edit {at}={v}");
        assert_eq!(classify(&f, 0), Classified::Drop(why), "edit {at}={v}");
    }
    // ::1 and :: as addresses
    let mut f = frame6(Some(tcp_flags::ACK), 64, 6, 0);
    f[38..54].copy_from_slice(&1u128.to_be_bytes());
    assert_eq!(classify_fast6(&f, 0), None);
    assert_eq!(classify(&f, 0), Classified::Drop(NetDrop::NotUnicastDst));
    f[38..54].copy_from_slice(&0u128.to_be_bytes());
    assert_eq!(classify(&f, 0), Classified::Drop(NetDrop::NotUnicastDst));
    let mut f = frame6(Some(tcp_flags::ACK), 64, 6, 0);
    f[22..38].copy_from_slice(&1u128.to_be_bytes());
    assert_eq!(classify_fast6(&f, 0), None);
    assert_eq!(classify(&f, 0), Classified::Drop(NetDrop::MartianSrc));
}

#[test]
fn every_single_byte_edit_of_ipv6_agrees() {
    // each byte of the first 80 set to each value, for a TCP and a UDP
    // packet (the checksums are not the classifier's to check)
    let bases = [
        frame6(Some(tcp_flags::ACK), 64, 6, 0),
        frame6(None, 64, 18, 0),
    ];
    let mut answered = 0;
    for base in &bases {
        for at in 0..80.min(base.len()) {
            for v in 0..=255u8 {
                let mut f = base.clone();
                f[at] = v;
                agree6(&f);
                answered += classify_fast6(&f, 5).is_some() as u32;
            }
        }
    }
    // most edits (addresses, ports, flags, flow label, payload) keep it valid
    assert!(
        answered > 2 * 60 * 256,
        "fast path answered only {answered}"
    );
}
