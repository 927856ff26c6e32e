//! Neighbour Advertisements: what the responder learns from them (the
//! answers to dirigo's own solicitations), against etherparse-built NAs.

use super::*;

/// An NA frame from `src` (a host with MAC CLIENT_MAC) to `dst` for
/// `target`, flags `flags`, options `opts`, hop limit `hop`, built by
/// etherparse.
fn na(src: u128, dst: u128, target: u128, flags: u8, opts: &[u8], hop: u8) -> Vec<u8> {
    let dmac = if ipv6::is_multicast(dst) {
        ndp::multicast_mac(dst)
    } else {
        OUR_MAC
    };
    let mut body = b(target).to_vec();
    body.extend_from_slice(opts);
    let mut v = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, dmac)
        .ipv6(b(src), b(dst), hop)
        .icmpv6_raw(msg_type::NEIGHBOR_ADVERT, 0, [flags, 0, 0, 0])
        .write(&mut v, &body)
        .unwrap();
    v
}

/// The target link-layer address option for `mac`.
fn tll(mac: [u8; 6]) -> Vec<u8> {
    let mut o = vec![ndp::option::TARGET_LL_ADDR, 1];
    o.extend_from_slice(&mac);
    o
}

const SO: u8 = ndp::FLAG_SOLICITED | ndp::FLAG_OVERRIDE;

#[test]
fn a_solicited_na_teaches_the_target_and_its_mac() {
    // the answer to dirigo's NS: from the target to our address
    let f = na(CLIENT, PORT_IP6, CLIENT, SO, &tll(OPTION_MAC), 255);
    let (a, out) = run(&f);
    assert_eq!(
        a,
        NdAction::Learn {
            ip: CLIENT,
            mac: OPTION_MAC,
            solicited: true
        }
    );
    assert_eq!(out, f, "the NA is not rewritten");
    // to the link-local address, the target a global one of the sender
    let f = na(CLIENT_LL, ll(), FOREIGN, SO, &tll(CLIENT_MAC), 255);
    assert_eq!(
        run(&f).0,
        NdAction::Learn {
            ip: FOREIGN,
            mac: CLIENT_MAC,
            solicited: true
        }
    );
}

#[test]
fn an_unsolicited_na_to_all_nodes_is_learned_as_such() {
    let f = na(
        CLIENT,
        ALL_NODES,
        CLIENT,
        ndp::FLAG_OVERRIDE,
        &tll(CLIENT_MAC),
        255,
    );
    assert_eq!(
        run(&f).0,
        NdAction::Learn {
            ip: CLIENT,
            mac: CLIENT_MAC,
            solicited: false
        }
    );
}

#[test]
fn invalid_nas_teach_nothing() {
    // RFC 4861 §7.1.2: hop limit 255
    ignored(
        &na(CLIENT, PORT_IP6, CLIENT, SO, &tll(CLIENT_MAC), 64),
        NdIgnore::BadAdvert,
    );
    // solicited to a multicast address
    ignored(
        &na(CLIENT, ALL_NODES, CLIENT, SO, &tll(CLIENT_MAC), 255),
        NdIgnore::BadAdvert,
    );
    // a multicast target
    ignored(
        &na(CLIENT, PORT_IP6, ALL_NODES, SO, &tll(CLIENT_MAC), 255),
        NdIgnore::BadAdvert,
    );
    // a zero-length option
    ignored(
        &na(CLIENT, PORT_IP6, CLIENT, SO, &[2, 0, 0, 0, 0, 0, 0, 0], 255),
        NdIgnore::BadAdvert,
    );
    // a group MAC as the target's address
    ignored(
        &na(
            CLIENT,
            PORT_IP6,
            CLIENT,
            SO,
            &tll([0x33, 0x33, 0, 0, 0, 1]),
            255,
        ),
        NdIgnore::BadAdvert,
    );
    // no target link-layer option
    ignored(
        &na(CLIENT, PORT_IP6, CLIENT, SO, &[], 255),
        NdIgnore::AdvertNoMac,
    );
    // a source link-layer option is not the target's
    ignored(
        &na(CLIENT, PORT_IP6, CLIENT, SO, &sll(CLIENT_MAC), 255),
        NdIgnore::AdvertNoMac,
    );
    // a wrong checksum
    let mut f = na(CLIENT, PORT_IP6, CLIENT, SO, &tll(CLIENT_MAC), 255);
    let last = f.len() - 1;
    f[last] ^= 1;
    ignored(&f, NdIgnore::BadChecksum);
}

#[test]
fn another_host_advertising_our_address_is_a_conflict() {
    ignored(
        &na(
            CLIENT,
            ALL_NODES,
            PORT_IP6,
            ndp::FLAG_OVERRIDE,
            &tll(CLIENT_MAC),
            255,
        ),
        NdIgnore::AdvertConflict,
    );
    // the same address on another port is not this port's: learned
    let f = na(CLIENT, PORT_IP6, OTHER_PORT_IP6, SO, &tll(CLIENT_MAC), 255);
    assert!(matches!(run(&f).0, NdAction::Learn { .. }));
}

#[test]
fn our_own_na_looped_back_is_not_learned() {
    let mut f = na(CLIENT, PORT_IP6, CLIENT, SO, &tll(CLIENT_MAC), 255);
    f[6..12].copy_from_slice(&OUR_MAC);
    ignored(&f, NdIgnore::Looped);
}

#[test]
fn dirigos_solicitation_is_a_valid_ns_that_teaches_its_sender() {
    let mut buf = [0u8; 128];
    let n = build_solicit(&mut buf, CLIENT_MAC, CLIENT, PORT_IP6).unwrap();
    assert_eq!(n, ND_FRAME_LEN);
    let f = &buf[..n];
    // etherparse: addresses, hop limit, the checksum over the pseudo-header
    let p = etherparse::SlicedPacket::from_ethernet(f).unwrap();
    let Some(etherparse::LinkSlice::Ethernet2(eth)) = p.link else {
        panic!("not Ethernet II")
    };
    let snm = ndp::solicited_node(PORT_IP6);
    assert_eq!(eth.destination(), ndp::multicast_mac(snm));
    assert_eq!(eth.source(), CLIENT_MAC);
    let Some(etherparse::NetSlice::Ipv6(ip)) = p.net else {
        panic!("not IPv6")
    };
    let h = ip.header();
    assert_eq!(
        (h.source(), h.destination(), h.hop_limit()),
        (b(CLIENT), b(snm), 255)
    );
    let Some(etherparse::TransportSlice::Icmpv6(icmp)) = p.transport else {
        panic!("not ICMPv6")
    };
    assert_eq!(icmp.type_u8(), msg_type::NEIGHBOR_SOLICIT);
    let want = icmp
        .icmp_type()
        .calc_checksum(b(CLIENT), b(snm), icmp.payload())
        .unwrap();
    assert_eq!(icmp.checksum(), want);
    // and the responder of the port that owns the target answers it and
    // learns the asker from its option
    let (a, _) = run(f);
    assert_eq!(
        a,
        NdAction::Advert {
            target: PORT_IP6,
            dad: false,
            learn: Some((CLIENT, CLIENT_MAC)),
        }
    );
    assert_eq!(
        build_solicit(&mut [0u8; 85], CLIENT_MAC, CLIENT, PORT_IP6),
        None
    );
}

#[test]
fn dirigos_unsolicited_advert_is_learned_by_a_peer() {
    let mut buf = [0u8; 128];
    let n = build_unsolicited_advert(&mut buf, CLIENT_MAC, FOREIGN).unwrap();
    let f = &buf[..n];
    assert_eq!(&f[..6], &[0x33, 0x33, 0, 0, 0, 1]);
    let p = etherparse::SlicedPacket::from_ethernet(f).unwrap();
    let Some(etherparse::TransportSlice::Icmpv6(icmp)) = p.transport else {
        panic!("not ICMPv6")
    };
    assert_eq!(icmp.type_u8(), msg_type::NEIGHBOR_ADVERT);
    // override, not solicited
    assert_eq!(icmp.bytes5to8()[0], ndp::FLAG_OVERRIDE);
    let want = icmp
        .icmp_type()
        .calc_checksum(b(FOREIGN), b(ALL_NODES), icmp.payload())
        .unwrap();
    assert_eq!(icmp.checksum(), want);
    assert_eq!(
        run(f).0,
        NdAction::Learn {
            ip: FOREIGN,
            mac: CLIENT_MAC,
            solicited: false
        }
    );
    assert_eq!(
        build_unsolicited_advert(&mut [0u8; 60], CLIENT_MAC, FOREIGN),
        None
    );
}
