use super::*;
use crate::net::wire::ethernet;
use etherparse::PacketBuilder;

const CLIENT: u128 = 0x2001_0db8_0000_0000_0000_0000_0000_0001;
const CLIENT_MAC: [u8; 6] = [0x52, 0x54, 0, 0x12, 0x34, 0x56];
const VIP: u128 = 0x2001_0db8_0000_0000_0000_0000_c0a8_0105;
const OUR_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x0a];
const VIP_SNMC: u128 = 0xff02_0000_0000_0000_0000_0001_ffa8_0105;

// the client's NS for the VIP, to its solicited-node address, with a
// source link-layer address option (built with Python's struct)
const NS: [u8; 72] = [
    0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0xff, 0xa8, 0x01, 0x05, 0x87, 0x00, 0xd4, 0x14, 0x00, 0x00, 0x00, 0x00,
    0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0xa8, 0x01, 0x05,
    0x01, 0x01, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56,
];
// dirigo's answer: VIP -> client, S and O, target link-layer address
const NA: [u8; 72] = [
    0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0xc0, 0xa8, 0x01, 0x05, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0x00, 0x07, 0x12, 0x60, 0x00, 0x00, 0x00,
    0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0xa8, 0x01, 0x05,
    0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a,
];

/// The ICMPv6 message of an IPv6 packet, found by the extension walk.
fn message(p: &[u8]) -> (ipv6::Packet<&[u8]>, &[u8]) {
    let ip = ipv6::Packet::new_checked(p).unwrap();
    let ul = ip.upper_layer().unwrap();
    assert_eq!(ul.protocol, ICMPV6);
    (ip, &p[ipv6::HEADER_LEN + ul.offset..ip.total_len()])
}

/// `p` with the ICMPv6 checksum recomputed.
fn refill(mut p: Vec<u8>) -> Vec<u8> {
    let ip = ipv6::Packet::new_checked(&p[..]).unwrap();
    let (s, d) = (ip.src(), ip.dst());
    icmpv6::Packet::new_unchecked(&mut p[40..]).fill_checksum(s, d);
    p
}

#[test]
fn addresses() {
    assert_eq!(solicited_node(VIP), VIP_SNMC);
    assert_eq!(
        std::net::Ipv6Addr::from(VIP_SNMC),
        "ff02::1:ffa8:105".parse::<std::net::Ipv6Addr>().unwrap()
    );
    assert!(is_solicited_node(VIP_SNMC) && !is_solicited_node(ALL_NODES));
    assert!(!is_solicited_node(VIP));
    assert_eq!(
        multicast_mac(VIP_SNMC),
        [0x33, 0x33, 0xff, 0xa8, 0x01, 0x05]
    );
    assert_eq!(multicast_mac(ALL_NODES), [0x33, 0x33, 0, 0, 0, 1]);
}

#[test]
fn parse_solicit() {
    let (ip, m) = message(&NS);
    let v = NeighborSolicit::new_checked(m).unwrap();
    assert_eq!(v.target(), VIP);
    assert_eq!(v.source_mac(), Some(CLIENT_MAC));
    let o: Vec<_> = v.options().collect();
    assert_eq!(
        o,
        [Ok(NdOption {
            kind: option::SOURCE_LL_ADDR,
            body: &CLIENT_MAC[..]
        })]
    );
    let s = Solicit::parse(&ip, m).unwrap();
    assert_eq!(
        s,
        Solicit {
            src: CLIENT,
            dst: VIP_SNMC,
            target: VIP,
            source_mac: Some(CLIENT_MAC)
        }
    );
    assert_eq!(s.dst_mac([0; 6]), [0x33, 0x33, 0xff, 0xa8, 0x01, 0x05]);
    // an NS is not an NA
    assert_eq!(
        NeighborAdvert::new_checked(m).unwrap_err(),
        WireError::Unsupported
    );
    assert_eq!(
        Advert::parse(&ip, m).unwrap_err(),
        NdpError::Wire(WireError::Unsupported)
    );
}

#[test]
fn emit_solicit() {
    let s = Solicit::multicast(CLIENT, VIP, CLIENT_MAC);
    let mut b = [0xa5u8; 80];
    assert_eq!(s.emit(&mut b), Ok(72));
    assert_eq!(&b[..72], &NS);
    assert_eq!(&b[72..], &[0xa5; 8]);
    let (ip, m) = message(&b[..72]);
    assert_eq!(Solicit::parse(&ip, m), Ok(s));
    // too short: nothing written
    let mut t = [0u8; 71];
    assert_eq!(s.emit(&mut t), Err(WireError::Truncated));
    assert_eq!(t, [0; 71]);
}

#[test]
fn solicit_matches_etherparse() {
    let s = Solicit::multicast(CLIENT, VIP, CLIENT_MAC);
    let dmac = s.dst_mac([0; 6]);
    let mut e = Vec::new();
    let mut body = VIP.to_be_bytes().to_vec();
    body.extend([1, 1]);
    body.extend(CLIENT_MAC);
    PacketBuilder::ethernet2(CLIENT_MAC, dmac)
        .ipv6(CLIENT.to_be_bytes(), VIP_SNMC.to_be_bytes(), HOP_LIMIT)
        .icmpv6_raw(NEIGHBOR_SOLICIT, 0, [0; 4])
        .write(&mut e, &body)
        .unwrap();
    // ours: the Ethernet header by its view, the rest by `emit`
    let mut f = [0u8; 86];
    let mut eth = ethernet::Frame::new_unchecked(&mut f[..]);
    eth.set_dst(dmac);
    eth.set_src(CLIENT_MAC);
    eth.set_outer_ethertype(ethernet::ethertype::IPV6);
    assert_eq!(s.emit(&mut f[14..]), Ok(72));
    assert_eq!(&f[..], &e[..]);
    // etherparse's checksum is the one we verify
    let (ip, m) = message(&e[14..]);
    assert!(icmpv6::Packet::new_checked(m)
        .unwrap()
        .verify_checksum(ip.src(), ip.dst()));
    let h = etherparse::Icmpv6Slice::from_slice(m).unwrap();
    assert_eq!(
        h.checksum(),
        icmpv6::Packet::new_checked(m).unwrap().checksum()
    );
}

#[test]
fn answer_and_round_trip() {
    let (ip, m) = message(&NS);
    let ns = Solicit::parse(&ip, m).unwrap();
    let a = Advert::answer(&ns, OUR_MAC, false, true);
    assert_eq!(
        a,
        Advert {
            src: VIP,
            dst: CLIENT,
            target: VIP,
            router: false,
            solicited: true,
            override_flag: true,
            target_mac: Some(OUR_MAC)
        }
    );
    assert_eq!(a.dst_mac(ns.source_mac.unwrap()), CLIENT_MAC);
    let mut b = [0u8; 72];
    assert_eq!(a.emit(&mut b), Ok(72));
    assert_eq!(b, NA);
    // parse -> emit
    let (ip, m) = message(&NA);
    let v = NeighborAdvert::new_checked(m).unwrap();
    assert!(v.solicited() && v.override_flag() && !v.router());
    assert_eq!((v.target(), v.target_mac()), (VIP, Some(OUR_MAC)));
    let p = Advert::parse(&ip, m).unwrap();
    assert_eq!(p, a);
    let mut c = [0u8; 72];
    p.emit(&mut c).unwrap();
    assert_eq!(c, NA);
    // R flag, no option
    let r = Advert {
        router: true,
        target_mac: None,
        ..a
    };
    let mut d = [0u8; 64];
    assert_eq!(r.emit(&mut d), Ok(64));
    let (ip, m) = message(&d);
    assert_eq!(Advert::parse(&ip, m), Ok(r));
    assert_eq!(m[4], FLAG_ROUTER | FLAG_SOLICITED | FLAG_OVERRIDE);
}

#[test]
fn advert_matches_etherparse() {
    let (ip, m) = message(&NS);
    let a = Advert::answer(&Solicit::parse(&ip, m).unwrap(), OUR_MAC, false, true);
    let mut e = Vec::new();
    let mut body = VIP.to_be_bytes().to_vec();
    body.extend([2, 1]);
    body.extend(OUR_MAC);
    PacketBuilder::ethernet2(OUR_MAC, CLIENT_MAC)
        .ipv6(VIP.to_be_bytes(), CLIENT.to_be_bytes(), HOP_LIMIT)
        .icmpv6_raw(NEIGHBOR_ADVERT, 0, [0x60, 0, 0, 0])
        .write(&mut e, &body)
        .unwrap();
    let mut f = [0u8; 86];
    let mut eth = ethernet::Frame::new_unchecked(&mut f[..]);
    eth.set_dst(a.dst_mac(CLIENT_MAC));
    eth.set_src(OUR_MAC);
    eth.set_outer_ethertype(ethernet::ethertype::IPV6);
    a.emit(&mut f[14..]).unwrap();
    assert_eq!(&f[..], &e[..]);
    assert_eq!(&e[14..], &NA);
}

#[test]
fn duplicate_address_detection() {
    // an NS from :: to the solicited-node address, no option
    let s = Solicit {
        src: ipv6::UNSPECIFIED,
        dst: VIP_SNMC,
        target: VIP,
        source_mac: None,
    };
    let mut b = [0u8; 64];
    assert_eq!(s.emit(&mut b), Ok(64));
    let (ip, m) = message(&b);
    let ns = Solicit::parse(&ip, m).unwrap();
    assert_eq!(ns, s);
    // answered to all-nodes, not solicited
    let a = Advert::answer(&ns, OUR_MAC, false, true);
    assert_eq!(
        (a.dst, a.solicited, a.override_flag),
        (ALL_NODES, false, true)
    );
    assert_eq!(a.dst_mac([0; 6]), [0x33, 0x33, 0, 0, 0, 1]);
    let mut c = [0u8; 72];
    a.emit(&mut c).unwrap();
    let (ip, m) = message(&c);
    assert_eq!(Advert::parse(&ip, m), Ok(a));
    // from :: with a source link-layer option, or to a unicast address
    for bad in [
        Solicit {
            source_mac: Some(CLIENT_MAC),
            ..s
        },
        Solicit { dst: VIP, ..s },
    ] {
        let mut b = [0u8; 72];
        let n = bad.emit(&mut b).unwrap();
        let (ip, m) = message(&b[..n]);
        assert_eq!(Solicit::parse(&ip, m), Err(NdpError::BadDad));
    }
}

#[test]
fn rfc4861_validation() {
    let (ip, m) = message(&NS);
    assert!(Solicit::parse(&ip, m).is_ok());
    // crossed a router
    let mut b = NS;
    b[7] = 254;
    let (ip, m) = message(&b);
    assert_eq!(Solicit::parse(&ip, m), Err(NdpError::HopLimit));
    // bad checksum
    let mut b = NS;
    b[43] ^= 1;
    let (ip, m) = message(&b);
    assert_eq!(Solicit::parse(&ip, m), Err(NdpError::Checksum));
    // code not 0
    let mut b = NS.to_vec();
    b[41] = 1;
    let b = refill(b);
    let (ip, m) = message(&b);
    assert_eq!(
        Solicit::parse(&ip, m),
        Err(NdpError::Wire(WireError::Unsupported))
    );
    // multicast target
    let mut b = NS.to_vec();
    b[48] = 0xff;
    let b = refill(b);
    let (ip, m) = message(&b);
    assert_eq!(Solicit::parse(&ip, m), Err(NdpError::MulticastTarget));
    // from a multicast source
    let mut b = NS.to_vec();
    b[8] = 0xff;
    let b = refill(b);
    let (ip, m) = message(&b);
    assert_eq!(Solicit::parse(&ip, m), Err(NdpError::MulticastSource));
    // a solicited NA to a multicast address
    let mut b = NA.to_vec();
    b[24..40].copy_from_slice(&ALL_NODES.to_be_bytes());
    let b = refill(b);
    let (ip, m) = message(&b);
    assert_eq!(Advert::parse(&ip, m), Err(NdpError::SolicitedMulticast));
    // short
    let (ip, _) = message(&NS);
    assert_eq!(
        Solicit::parse(&ip, &NS[40..63]),
        Err(NdpError::Wire(WireError::Truncated))
    );
}

#[test]
fn options_walk() {
    let m = &NS[40..];
    // an option of length 0 is rejected (RFC 4861 §4.6)
    let mut b = m.to_vec();
    b[25] = 0;
    assert_eq!(
        NeighborSolicit::new_checked(&b[..]).unwrap_err(),
        WireError::BadHeaderLen
    );
    assert_eq!(
        NeighborSolicit::new_unchecked(&b[..])
            .options()
            .collect::<Vec<_>>(),
        [Err(WireError::BadHeaderLen)]
    );
    // an option longer than the message, or cut in its header
    b[25] = 2;
    assert_eq!(
        NeighborSolicit::new_checked(&b[..]).unwrap_err(),
        WireError::Truncated
    );
    assert_eq!(
        NeighborSolicit::new_checked(&m[..25]).unwrap_err(),
        WireError::Truncated
    );
    // unknown options are skipped; the first SLLA counts
    let mut b = m[..24].to_vec();
    b.extend([14, 1, 9, 9, 9, 9, 9, 9]); // nonce (RFC 3971)
    b.extend([1, 1, 1, 2, 3, 4, 5, 6]);
    b.extend([1, 1, 7, 7, 7, 7, 7, 7]);
    b.extend([1, 2, 8, 8, 8, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0]);
    let v = NeighborSolicit::new_checked(&b[..]).unwrap();
    assert_eq!(v.options().count(), 4);
    assert_eq!(v.source_mac(), Some([1, 2, 3, 4, 5, 6]));
    // an SLLA of length 2 has no Ethernet MAC
    let mut c = m[..24].to_vec();
    c.extend([1, 2, 8, 8, 8, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        NeighborSolicit::new_checked(&c[..]).unwrap().source_mac(),
        None
    );
    // at most MAX_OPTIONS options
    let mut c = m[..24].to_vec();
    for _ in 0..MAX_OPTIONS {
        c.extend([14, 1, 0, 0, 0, 0, 0, 0]);
    }
    assert!(NeighborSolicit::new_checked(&c[..]).is_ok());
    c.extend([14, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        NeighborSolicit::new_checked(&c[..]).unwrap_err(),
        WireError::Unsupported
    );
}

proptest::proptest! {
    #[test]
    fn views_never_panic(
        kind in proptest::prop_oneof![
            proptest::prelude::Just(NEIGHBOR_SOLICIT),
            proptest::prelude::Just(NEIGHBOR_ADVERT)
        ],
        mut b in proptest::collection::vec(
            proptest::prop_oneof![0u8..3, proptest::prelude::any::<u8>()], 0..200)
    ) {
        if b.len() > 1 {
            b[0] = kind;
            b[1] = 0;
        }
        let ns = NeighborSolicit::new_unchecked(&b[..]);
        let na = NeighborAdvert::new_unchecked(&b[..]);
        let _ = (ns.target(), ns.source_mac(), na.flags(), na.target_mac());
        let n = ns.options().count();
        proptest::prop_assert!(n <= MAX_OPTIONS + 1);
        if NeighborSolicit::new_checked(&b[..]).is_ok()
            || NeighborAdvert::new_checked(&b[..]).is_ok()
        {
            proptest::prop_assert!(ns.options().all(|o| o.is_ok()));
        }
        let mut ip = [0u8; 40];
        ip[0] = 0x60;
        ip[7] = HOP_LIMIT;
        let ip = ipv6::Packet::new_unchecked(&ip[..]);
        let _ = (Solicit::parse(&ip, &b), Advert::parse(&ip, &b));
    }
}

#[test]
fn fuzz_seeds_parse_as_meant() {
    use crate::net::wire::ipv6ext::ExtError;
    let seed = |b: &'static [u8]| {
        let ip = ipv6::Packet::new_checked(b).unwrap();
        let ul = ip.upper_layer();
        (ip, ul)
    };
    let msg = |b: &'static [u8]| {
        let (ip, ul) = seed(b);
        let ul = ul.unwrap();
        assert_eq!(ul.protocol, ICMPV6);
        (ip, &b[ipv6::HEADER_LEN + ul.offset..ip.total_len()])
    };
    let vip = 0x2001_0db8_0000_0000_0000_0000_0000_0064;
    let (ip, m) = msg(include_bytes!("../../../../../../fuzz/corpus/ipv6_wire/ns"));
    let ns = Solicit::parse(&ip, m).unwrap();
    assert_eq!((ns.target, ns.dst), (vip, solicited_node(vip)));
    assert!(ns.source_mac.is_some());
    let (ip, m) = msg(include_bytes!(
        "../../../../../../fuzz/corpus/ipv6_wire/ns_dad"
    ));
    assert_eq!(Solicit::parse(&ip, m).unwrap().src, ipv6::UNSPECIFIED);
    let (ip, m) = msg(include_bytes!(
        "../../../../../../fuzz/corpus/ipv6_wire/ns_unicast"
    ));
    assert_eq!(Solicit::parse(&ip, m).unwrap().dst, vip);
    let (ip, m) = msg(include_bytes!("../../../../../../fuzz/corpus/ipv6_wire/na"));
    let na = Advert::parse(&ip, m).unwrap();
    assert!(na.solicited && na.override_flag && na.target_mac.is_some());
    for (b, t) in [
        (
            &include_bytes!("../../../../../../fuzz/corpus/ipv6_wire/echo")[..],
            128,
        ),
        (
            include_bytes!("../../../../../../fuzz/corpus/ipv6_wire/too_big"),
            2,
        ),
        (
            include_bytes!("../../../../../../fuzz/corpus/ipv6_wire/ext_chain"),
            128,
        ),
    ] {
        let ip = ipv6::Packet::new_checked(b).unwrap();
        let ul = ip.upper_layer().unwrap();
        let p = icmpv6::Packet::new_checked(&ip.payload()[ul.offset..]).unwrap();
        assert_eq!(p.msg_type(), t);
        assert!(p.verify_checksum(ip.src(), ip.dst()));
    }
    let (_, ul) = seed(include_bytes!(
        "../../../../../../fuzz/corpus/ipv6_wire/ext_chain"
    ));
    assert_eq!(ul.unwrap().offset, 56);
    let (_, ul) = seed(include_bytes!(
        "../../../../../../fuzz/corpus/ipv6_wire/fragment"
    ));
    assert_eq!(ul, Err(ExtError::Fragment { at: 0 }));
}

proptest::proptest! {
    /// Any NS dirigo could be asked (unicast or DAD, with or without a
    /// source link-layer option) parses back from its emitted bytes, and
    /// the NA answering it validates as what `answer` built.
    #[test]
    fn answers_validate(
        src in proptest::prelude::any::<u128>(),
        target in proptest::prelude::any::<u128>(),
        mac in proptest::prelude::any::<[u8; 6]>(),
        dad in proptest::prelude::any::<bool>(),
        with_mac in proptest::prelude::any::<bool>(),
        unicast in proptest::prelude::any::<bool>(),
        router in proptest::prelude::any::<bool>(),
        o in proptest::prelude::any::<bool>(),
    ) {
        let src = if dad { ipv6::UNSPECIFIED } else { src & !(0xff << 120) };
        let target = target & !(0xff << 120);
        let s = Solicit {
            src,
            dst: if unicast && !dad { target } else { solicited_node(target) },
            target,
            source_mac: if with_mac && !dad { Some(mac) } else { None },
        };
        let mut b = [0u8; 72];
        let n = s.emit(&mut b).unwrap();
        proptest::prop_assert_eq!(n, 40 + s.message_len());
        let (ip, m) = message(&b[..n]);
        proptest::prop_assert_eq!(Solicit::parse(&ip, m), Ok(s));
        let a = Advert::answer(&s, OUR_MAC, router, o);
        proptest::prop_assert_eq!(a.solicited, !dad);
        let n = a.emit(&mut b).unwrap();
        let (ip, m) = message(&b[..n]);
        proptest::prop_assert_eq!(Advert::parse(&ip, m), Ok(a));
        proptest::prop_assert_eq!(ip.dst(), if dad { ALL_NODES } else { src });
    }
}
