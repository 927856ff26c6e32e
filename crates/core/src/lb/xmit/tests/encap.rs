//! IPv4 TUN with GUE and GRE: the outer IPv4 and UDP headers checked
//! against etherparse (an independent parser and checksum), the GUE and
//! GRE headers on literal bytes.

use crate::lb::testutil::*;
use crate::lb::tunnel::{TunCsum, TunType, Tunnel};
use crate::lb::xmit::{tun, XmitError};
use crate::net::buf::{PacketBuf, VecBuf};
use crate::net::checksum;
use crate::net::meta::tcp_flags::{ACK, PSH};
use etherparse::{IpNumber, NetSlice, SlicedPacket, TransportSlice};

fn gue(port: u16, csum: TunCsum) -> Tunnel {
    Tunnel {
        tun_type: TunType::Gue,
        tun_port: port,
        tun_csum: csum,
    }
}

fn gre(csum: bool) -> Tunnel {
    Tunnel {
        tun_type: TunType::Gre,
        tun_port: 0,
        tun_csum: if csum { TunCsum::Csum } else { TunCsum::None },
    }
}

/// Encapsulate a TCP segment in `t`; the frame in and the frame out.
fn encap(t: Tunnel, df: bool) -> (Vec<u8>, Vec<u8>) {
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK | PSH, b"hello", 57, df);
    let m = meta_of(&f);
    let mut b = VecBuf::new(&f);
    let mut id = 0x0101;
    let port = tun::tun(
        &mut b,
        &m,
        ip(RIP),
        None,
        &FakeEgress::default(),
        &mut id,
        t,
    );
    assert_eq!(port, Ok(1));
    (f, b.to_vec())
}

/// The outer IPv4 header as etherparse reads it, checked: addresses,
/// protocol, lengths, TTL and DF copied, header checksum.
fn outer_ip(out: &[u8], inner: &[u8], proto: IpNumber, extra: usize) {
    assert_eq!(&out[..6], &mac_of(RIP));
    assert_eq!(&out[6..12], &OUR_MAC);
    let p = SlicedPacket::from_ethernet(out).unwrap();
    let Some(NetSlice::Ipv4(o)) = &p.net else {
        panic!("not ipv4")
    };
    let h = o.header().to_header();
    assert_eq!(h.protocol, proto);
    assert_eq!((h.source, h.destination), (OUR_IP, RIP));
    assert_eq!(h.total_len as usize, 20 + extra + inner.len());
    assert_eq!(h.time_to_live, 57, "TTL copied");
    assert!(h.dont_fragment, "DF copied");
    assert_eq!(h.header_checksum, h.calc_header_checksum());
    assert_eq!(&out[34 + extra..], inner, "inner packet unchanged");
}

/// The outer UDP header as etherparse reads it: GUE's ports and length,
/// and the checksum (0, or right under the outer pseudo header).
fn outer_udp(out: &[u8], inner: &[u8], sum: bool) -> etherparse::UdpHeader {
    let p = SlicedPacket::from_ethernet(out).unwrap();
    let (Some(NetSlice::Ipv4(o)), Some(TransportSlice::Udp(u))) = (&p.net, &p.transport) else {
        panic!("not ipv4/udp")
    };
    let h = u.to_header();
    assert_eq!(h.destination_port, 6080);
    assert!((32768..61000).contains(&h.source_port), "{}", h.source_port);
    assert_eq!(h.length as usize, 8 + 4 + inner.len());
    if sum {
        let want = h
            .calc_checksum_ipv4(&o.header().to_header(), u.payload())
            .unwrap();
        assert_eq!(h.checksum, want);
        assert_ne!(h.checksum, 0);
    } else {
        assert_eq!(h.checksum, 0);
    }
    h
}

#[test]
fn gue_nocsum_is_udp_then_a_version_zero_header_with_protocol_4() {
    let (f, out) = encap(gue(6080, TunCsum::None), true);
    let inner = &f[14..];
    outer_ip(&out, inner, IpNumber::UDP, 12);
    outer_udp(&out, inner, false);
    // GUE, byte by byte: version 0, C 0, Hlen 0; proto 4 (IPv4); flags 0
    assert_eq!(&out[42..46], &[0x00, 0x04, 0x00, 0x00]);
}

#[test]
fn gue_csum_and_remcsum_fill_the_udp_checksum() {
    for c in [TunCsum::Csum, TunCsum::Remcsum] {
        let (f, out) = encap(gue(6080, c), true);
        outer_ip(&out, &f[14..], IpNumber::UDP, 12);
        outer_udp(&out, &f[14..], true);
        // remcsum adds no option to a forwarded packet (as Linux): Hlen 0
        assert_eq!(&out[42..46], &[0x00, 0x04, 0x00, 0x00]);
    }
}

#[test]
fn gue_source_port_is_one_per_flow() {
    let (_, a) = encap(gue(6080, TunCsum::None), true);
    let (_, b) = encap(gue(6080, TunCsum::None), true);
    assert_eq!(a[34..36], b[34..36]);
    let f = tcp_frame(CLIENT, 40001, VIP, 80, ACK, b"x", 57, true);
    let m = meta_of(&f);
    let mut c = VecBuf::new(&f);
    let t = gue(6080, TunCsum::None);
    tun::tun(&mut c, &m, ip(RIP), None, &FakeEgress::default(), &mut 0, t).unwrap();
    assert_ne!(a[34..36], c.data()[34..36], "another flow, another port");
}

#[test]
fn gre_plain_is_four_bytes_with_protocol_type_ipv4() {
    let (f, out) = encap(gre(false), true);
    outer_ip(&out, &f[14..], IpNumber::GRE, 4);
    assert_eq!(&out[34..38], &[0x00, 0x00, 0x08, 0x00]);
}

#[test]
fn gre_csum_sets_the_c_bit_and_a_checksum_over_header_and_payload() {
    let (f, out) = encap(gre(true), true);
    outer_ip(&out, &f[14..], IpNumber::GRE, 8);
    assert_eq!(&out[34..36], &[0x80, 0x00]);
    assert_eq!(&out[36..38], &[0x08, 0x00]);
    assert_eq!(&out[40..42], &[0x00, 0x00], "reserved1");
    assert_ne!(&out[38..40], &[0x00, 0x00]);
    // RFC 1071 over the GRE header and the inner packet sums to 0
    assert_eq!(checksum::checksum(&out[34..]), 0);
}

#[test]
fn the_tunnel_bytes_count_against_the_mtu() {
    // 1500-byte inner packet: IPIP needs 1520, GUE 1532, GRE 1524/1528
    let payload = vec![0xab; 1460];
    for (t, outer) in [
        (Tunnel::IPIP, 20),
        (gue(6080, TunCsum::None), 32),
        (gre(false), 24),
        (gre(true), 28),
    ] {
        let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK, &payload, 64, true);
        let m = meta_of(&f);
        let mut b = VecBuf::new(&f);
        let e = tun::tun(&mut b, &m, ip(RIP), None, &FakeEgress::default(), &mut 0, t);
        assert_eq!(e, Err(XmitError::NeedFrag { mtu: 1500 - outer }));
        assert_eq!(b.to_vec(), f, "untouched");
    }
    // 1468 bytes fit GUE exactly (1468 + 32 = 1500)
    let f = tcp_frame(CLIENT, 40000, VIP, 80, ACK, &payload[..1428], 64, true);
    let m = meta_of(&f);
    let mut b = VecBuf::new(&f);
    let t = gue(6080, TunCsum::Csum);
    assert_eq!(
        tun::tun(&mut b, &m, ip(RIP), None, &FakeEgress::default(), &mut 0, t),
        Ok(1)
    );
    assert_eq!(b.len(), 14 + 1500);
}

#[test]
fn gre_remcsum_is_gre_without_a_checksum_as_linux() {
    let t = Tunnel {
        tun_type: TunType::Gre,
        tun_port: 0,
        tun_csum: TunCsum::Remcsum,
    };
    let (f, out) = encap(t, true);
    outer_ip(&out, &f[14..], IpNumber::GRE, 4);
    assert_eq!(&out[34..38], &[0x00, 0x00, 0x08, 0x00]);
}
