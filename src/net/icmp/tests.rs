use super::*;
use crate::net::addr::Ipv4Cidr;
use crate::net::classify::{classify, Classified};
use etherparse::{Icmpv4Type, NetSlice, PacketBuilder, SlicedPacket, TransportSlice};

const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0xc1];
const OUR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const CLIENT: [u8; 4] = [198, 51, 100, 7];
const VIP: [u8; 4] = [203, 0, 113, 10];
const PORT_IP: [u8; 4] = [10, 0, 0, 1];

fn addrs() -> OwnAddrs {
    let mut a = OwnAddrs::new();
    a.add_port_addr(0, Ipv4Cidr::new(u32::from_be_bytes(PORT_IP), 24).unwrap())
        .unwrap();
    a.add_vip(u32::from_be_bytes(VIP));
    a
}

fn echo(dst_mac: [u8; 6], dst: [u8; 4], vlan: bool) -> Vec<u8> {
    let mut v = Vec::new();
    let payload = b"0123456789abcdef";
    if vlan {
        PacketBuilder::ethernet2(CLIENT_MAC, dst_mac)
            .single_vlan(etherparse::VlanId::try_new(9).unwrap())
            .ipv4(CLIENT, dst, 3)
            .icmpv4_echo_request(0x4242, 17)
            .write(&mut v, payload)
            .unwrap();
    } else {
        PacketBuilder::ethernet2(CLIENT_MAC, dst_mac)
            .ipv4(CLIENT, dst, 3)
            .icmpv4_echo_request(0x4242, 17)
            .write(&mut v, payload)
            .unwrap();
    }
    v
}

fn meta_of(f: &[u8]) -> PacketMeta {
    match classify(f, 0) {
        Classified::Ipv4(m) => m,
        o => panic!("{o:?}"),
    }
}

fn check_reply(f: &[u8], from: [u8; 4]) {
    let p = SlicedPacket::from_ethernet(f).unwrap();
    let Some(etherparse::LinkHeader::Ethernet2(eth)) = p.link.unwrap().to_header() else {
        panic!("not ethernet")
    };
    assert_eq!(eth.source, OUR_MAC);
    assert_eq!(eth.destination, CLIENT_MAC);
    let Some(NetSlice::Ipv4(ip)) = p.net else {
        panic!("not ipv4")
    };
    let h = ip.header().to_header();
    assert_eq!(h.source, from);
    assert_eq!(h.destination, CLIENT);
    assert_eq!(h.time_to_live, 64);
    assert_eq!(h.header_checksum, h.calc_header_checksum());
    let Some(TransportSlice::Icmpv4(icmp)) = p.transport else {
        panic!("not icmp")
    };
    match icmp.icmp_type() {
        Icmpv4Type::EchoReply(e) => assert_eq!((e.id, e.seq), (0x4242, 17)),
        t => panic!("{t:?}"),
    }
    assert_eq!(icmp.payload(), b"0123456789abcdef");
    let want = icmp.header().icmp_type.calc_checksum(icmp.payload());
    assert_eq!(icmp.checksum(), want);
}

#[test]
fn echo_to_port_address() {
    let mut f = echo(OUR_MAC, PORT_IP, false);
    let m = meta_of(&f);
    assert_eq!(echo_input(&mut f, &m, &addrs()), IcmpAction::Reply);
    check_reply(&f, PORT_IP);
}

#[test]
fn echo_to_vip_behind_vlan() {
    let mut f = echo(OUR_MAC, VIP, true);
    let m = meta_of(&f);
    assert_eq!(echo_input(&mut f, &m, &addrs()), IcmpAction::Reply);
    check_reply(&f, VIP);
    assert_eq!(&f[12..16], &[0x81, 0x00, 0x00, 0x09]);
}

#[test]
fn ignored() {
    let a = addrs();
    let run = |mut f: Vec<u8>| {
        let m = meta_of(&f);
        let before = f.clone();
        let r = echo_input(&mut f, &m, &a);
        assert_eq!(f, before, "ignored frames are unchanged");
        r
    };
    assert_eq!(
        run(echo(OUR_MAC, [10, 0, 0, 2], false)),
        IcmpAction::Ignore(IcmpIgnore::NotForUs)
    );
    assert_eq!(
        run(echo([0xff; 6], PORT_IP, false)),
        IcmpAction::Ignore(IcmpIgnore::NotUnicast)
    );
    let mut f = echo(OUR_MAC, PORT_IP, false);
    let n = f.len();
    f[n - 1] ^= 1;
    assert_eq!(run(f), IcmpAction::Ignore(IcmpIgnore::BadChecksum));
    let mut v = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ipv4(CLIENT, PORT_IP, 3)
        .icmpv4_echo_reply(1, 1)
        .write(&mut v, &[])
        .unwrap();
    assert_eq!(run(v), IcmpAction::Ignore(IcmpIgnore::NotEchoRequest));
    // meta that does not match the frame
    let mut f = echo(OUR_MAC, PORT_IP, false);
    let mut m = meta_of(&f);
    m.l4_off += 4;
    assert_eq!(
        echo_input(&mut f, &m, &a),
        IcmpAction::Ignore(IcmpIgnore::Malformed)
    );
    m.l4_off -= 4;
    m.ip_len = 2000;
    assert_eq!(
        echo_input(&mut f, &m, &a),
        IcmpAction::Ignore(IcmpIgnore::Malformed)
    );
    crate::counters::check::<IcmpIgnore>();
    assert!(IcmpIgnore::ALL.iter().all(|r| r.is_drop()));
    let names: Vec<_> = IcmpIgnore::ALL.iter().map(|r| r.name()).collect();
    assert_eq!(
        names.join(" "),
        "icmp_malformed icmp_not_echo_request icmp_not_for_us icmp_not_unicast icmp_bad_checksum"
    );
}

#[test]
fn rate_limiter() {
    const S: u64 = 1_000_000_000;
    let mut r = RateLimiter::new(10, 3);
    // starts with a full burst
    assert!(r.allow(0) && r.allow(0) && r.allow(0));
    assert!(!r.allow(0));
    // one token per 100 ms
    assert!(!r.allow(S / 10 - 1));
    assert!(r.allow(S / 10));
    assert!(!r.allow(S / 10));
    // a long pause refills only up to the burst
    let t = 1_000 * S;
    assert_eq!((0..10).filter(|_| r.allow(t)).count(), 3);
    // time going backwards neither panics nor refills
    assert!(!r.allow(5));
    // huge elapsed time does not overflow
    let mut r = RateLimiter::new(u32::MAX, u32::MAX);
    assert!(r.allow(u64::MAX));
    let mut z = RateLimiter::new(0, 0);
    assert!(!z.allow(u64::MAX));
    // 1000 calls over 1 s at 10/s with burst 3 allow exactly 3 + 10
    let mut r = RateLimiter::new(10, 3);
    let n = (0..=1000u64).filter(|i| r.allow(i * S / 1000)).count();
    assert_eq!(n, 13);
}

proptest::proptest! {
    #[test]
    fn never_panics(
        mut f in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120),
        l3 in 0u16..130, l4 in 0u16..130, len in proptest::prelude::any::<u16>(),
    ) {
        let m = PacketMeta {
            l3_off: l3,
            l4_off: l4,
            ip_len: len,
            key: crate::net::meta::FlowKey { proto: PROTO_ICMP, ..Default::default() },
            ..Default::default()
        };
        let _ = echo_input(&mut f, &m, &addrs());
    }
}

fn tcp_frame(payload_len: usize, vlan: bool) -> Vec<u8> {
    let mut v = Vec::new();
    let payload = vec![0x5a; payload_len];
    let b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC);
    if vlan {
        b.single_vlan(etherparse::VlanId::try_new(9).unwrap())
            .ipv4(CLIENT, VIP, 50)
            .tcp(40000, 80, 1, 1000)
            .write(&mut v, &payload)
            .unwrap();
    } else {
        b.ipv4(CLIENT, VIP, 50)
            .tcp(40000, 80, 1, 1000)
            .write(&mut v, &payload)
            .unwrap();
    }
    v
}

#[test]
fn frag_needed_error_in_place() {
    use crate::net::buf::VecBuf;
    for (plen, vlan) in [(10usize, false), (1400, true)] {
        let orig = tcp_frame(plen, vlan);
        let m = meta_of(&orig);
        let mut b = VecBuf::new(&orig);
        let src = u32::from_be_bytes(PORT_IP);
        assert!(error_in_place(&mut b, &m, 3, 4, 1480, src));
        let f = b.to_vec();
        let l3 = m.l3_off as usize;
        let ip_len = (m.ip_len as usize).min(576 - 28);
        assert_eq!(f.len(), l3 + 28 + ip_len);
        // etherparse reads the result
        let p = SlicedPacket::from_ethernet(&f).unwrap();
        let Some(etherparse::LinkHeader::Ethernet2(eth)) = p.link.unwrap().to_header() else {
            panic!()
        };
        assert_eq!((eth.source, eth.destination), (OUR_MAC, CLIENT_MAC));
        assert_eq!(p.vlan.is_some(), vlan);
        let Some(NetSlice::Ipv4(ip)) = p.net else {
            panic!()
        };
        let h = ip.header().to_header();
        assert_eq!((h.source, h.destination), (PORT_IP, CLIENT));
        assert_eq!(h.total_len as usize, 28 + ip_len);
        assert_eq!(h.header_checksum, h.calc_header_checksum());
        assert_eq!(h.protocol, etherparse::IpNumber::ICMP);
        let Some(TransportSlice::Icmpv4(icmp)) = p.transport else {
            panic!()
        };
        match icmp.icmp_type() {
            Icmpv4Type::DestinationUnreachable(
                etherparse::icmpv4::DestUnreachableHeader::FragmentationNeeded { next_hop_mtu },
            ) => assert_eq!(next_hop_mtu, 1480),
            t => panic!("{t:?}"),
        }
        assert_eq!(icmp.payload(), &orig[l3..l3 + ip_len]);
        let want = icmp.header().icmp_type.calc_checksum(icmp.payload());
        assert_eq!(icmp.checksum(), want);
        // and our classify sees the quote
        let q = meta_of(&f).icmp.unwrap();
        assert_eq!(q.inner_key, m.key);
        assert_eq!(q.inner_l3_off as usize, l3 + 28);
    }
}

#[test]
fn no_error_about_an_error_or_without_headroom() {
    use crate::net::buf::VecBuf;
    let mut v = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ipv4(CLIENT, VIP, 50)
        .icmpv4(Icmpv4Type::TimeExceeded(
            etherparse::icmpv4::TimeExceededCode::TtlExceededInTransit,
        ))
        .write(&mut v, &[0x45; 28])
        .unwrap();
    let m = meta_of(&v);
    let mut b = VecBuf::new(&v);
    assert!(!error_in_place(&mut b, &m, 3, 1, 0, 1));
    assert_eq!(b.to_vec(), v);
    let orig = tcp_frame(10, false);
    let m = meta_of(&orig);
    let mut b = VecBuf::with_room(&orig, 27, 0);
    assert!(!error_in_place(&mut b, &m, 3, 1, 0, 1));
    assert_eq!(b.to_vec(), orig);
    let mut bad = m;
    bad.ip_len += 1;
    let mut b = VecBuf::new(&orig);
    assert!(!error_in_place(&mut b, &bad, 3, 1, 0, 1));
    assert_eq!(b.to_vec(), orig);
}
