//! IPv6 TUN with GUE and GRE: the outer IPv6 and UDP headers against
//! etherparse, GUE and GRE on literal bytes, the MTU.

use super::*;
use crate::lb::testutil::{CLIENT6, OUR_IP6, RIP6, VIP6};
use crate::lb::tunnel::{TunCsum, TunType, Tunnel};
use crate::net::buf::VecBuf;

fn t(tun_type: TunType, tun_port: u16, tun_csum: TunCsum) -> Tunnel {
    Tunnel {
        tun_type,
        tun_port,
        tun_csum,
    }
}

/// Encapsulate a TCP segment in `tn`: the inner packet and the frame out.
fn encap(tn: Tunnel) -> (Vec<u8>, Vec<u8>) {
    let inner = packet6(
        ip6(CLIENT6, VIP6, 57, 0xb8, 0x12345),
        L4::Tcp(40000, 80),
        b"hello",
    );
    let f = eth(&inner, None);
    let m = meta6_of(&f);
    let mut b = VecBuf::new(&f);
    assert_eq!(
        tun6(&mut b, &m, RIP6, None, &FakeEgress::default(), tn),
        Ok(1)
    );
    (inner, b.to_vec())
}

/// The outer header, checked; `extra` bytes of tunnel header follow it.
fn outer(out: &[u8], inner: &[u8], nh: IpNumber, extra: usize) -> Ipv6Header {
    assert_eq!(&out[..6], &mac6_of(RIP6));
    let o = etherparse::Ipv6HeaderSlice::from_slice(&out[14..])
        .unwrap()
        .to_header();
    assert_eq!(o.next_header, nh);
    assert_eq!(o.payload_length as usize, extra + inner.len());
    assert_eq!(
        (o.source, o.destination),
        (OUR_IP6.to_be_bytes(), RIP6.to_be_bytes())
    );
    assert_eq!(o.hop_limit, 57);
    assert_eq!(&out[54 + extra..], inner, "inner packet unchanged");
    o
}

#[test]
fn gue6_carries_protocol_41_with_a_checksum_or_zero_as_linux() {
    for (c, sum) in [
        (TunCsum::None, false),
        (TunCsum::Csum, true),
        (TunCsum::Remcsum, true),
    ] {
        let (inner, out) = encap(t(TunType::Gue, 6080, c));
        let o = outer(&out, &inner, IpNumber::UDP, 12);
        let p = SlicedPacket::from_ethernet(&out).unwrap();
        let Some(TransportSlice::Udp(u)) = &p.transport else {
            panic!("no udp")
        };
        let h = u.to_header();
        assert_eq!(h.destination_port, 6080);
        assert!((32768..61000).contains(&h.source_port));
        assert_eq!(h.length as usize, 12 + inner.len());
        if sum {
            assert_eq!(h.checksum, h.calc_checksum_ipv6(&o, u.payload()).unwrap());
        } else {
            // RFC 6935's zero checksum, as Linux's udp6_set_csum(nocheck)
            assert_eq!(h.checksum, 0);
        }
        assert_eq!(&out[62..66], &[0x00, 0x29, 0x00, 0x00], "GUE v0, proto 41");
    }
}

#[test]
fn gre6_carries_protocol_type_86dd() {
    let (inner, out) = encap(t(TunType::Gre, 0, TunCsum::None));
    outer(&out, &inner, IpNumber::GRE, 4);
    assert_eq!(&out[54..58], &[0x00, 0x00, 0x86, 0xdd]);
    let (inner, out) = encap(t(TunType::Gre, 0, TunCsum::Csum));
    outer(&out, &inner, IpNumber::GRE, 8);
    assert_eq!(&out[54..58], &[0x80, 0x00, 0x86, 0xdd]);
    assert_eq!(&out[60..62], &[0, 0]);
    assert_eq!(crate::net::checksum::checksum(&out[54..]), 0);
    // remcsum: GRE without a checksum, as ipvs_gre_encap
    let (inner, out) = encap(t(TunType::Gre, 0, TunCsum::Remcsum));
    outer(&out, &inner, IpNumber::GRE, 4);
    assert_eq!(&out[54..58], &[0x00, 0x00, 0x86, 0xdd]);
}

#[test]
fn gue6_and_gre6_bytes_count_against_the_mtu() {
    // 1500-byte inner packet, 1500-byte egress MTU
    let inner = packet6(
        ip6(CLIENT6, VIP6, 64, 0, 0),
        L4::Tcp(40000, 80),
        &[7u8; 1440],
    );
    assert_eq!(inner.len(), 1500);
    let f = eth(&inner, None);
    let m = meta6_of(&f);
    for (tn, over) in [
        (Tunnel::IPIP, 40),
        (t(TunType::Gue, 6080, TunCsum::None), 52),
        (t(TunType::Gre, 0, TunCsum::None), 44),
        (t(TunType::Gre, 0, TunCsum::Csum), 48),
    ] {
        let mut b = VecBuf::new(&f);
        let e = tun6(&mut b, &m, RIP6, None, &FakeEgress::default(), tn);
        assert_eq!(e, Err(XmitError::NeedFrag { mtu: 1500 - over }));
        assert_eq!(b.to_vec(), f, "untouched");
    }
}
