//! The responder against etherparse-built frames: Neighbour Solicitations
//! here, echo, the other ICMPv6 and the never-panics properties in
//! [`other`].

use super::*;
use crate::net::addr::{link_local_of, Ipv6Cidr};
use crate::net::buf::VecBuf;
use crate::net::classify::{classify, Classified};
use crate::net::wire::ndp::{ALL_NODES, HOP_LIMIT};
use etherparse::{PacketBuilder, VlanId};
use proptest::prelude::*;

const OUR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const OTHER_PORT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const CLIENT_MAC: [u8; 6] = [0x52, 0x54, 0, 0x12, 0x34, 0x56];
/// The MAC the client's NS names in its source link-layer option (not the
/// frame's source: the option wins).
const OPTION_MAC: [u8; 6] = [0x52, 0x54, 0, 0xaa, 0xbb, 0xcc];
const PORT_IP6: u128 = 0x2001_0db8_0099_0000_0000_0000_0000_0001;
const OTHER_PORT_IP6: u128 = 0x2001_0db8_0077_0000_0000_0000_0000_0001;
const CLIENT: u128 = 0x2001_0db8_0099_0000_0000_0000_0000_0002;
const CLIENT_LL: u128 = 0xfe80_0000_0000_0000_5054_00ff_fe12_3456;
const FOREIGN: u128 = 0x2001_0db8_0099_0000_0000_0000_0000_0009;

fn addrs() -> OwnAddrs {
    let mut a = OwnAddrs::new();
    a.add_port_addr6(0, Ipv6Cidr::new(link_local_of(OUR_MAC), 64).unwrap())
        .unwrap();
    a.add_port_addr6(0, Ipv6Cidr::new(PORT_IP6, 64).unwrap())
        .unwrap();
    a.add_port_addr6(1, Ipv6Cidr::new(link_local_of(OTHER_PORT_MAC), 64).unwrap())
        .unwrap();
    a.add_port_addr6(1, Ipv6Cidr::new(OTHER_PORT_IP6, 64).unwrap())
        .unwrap();
    a
}

fn ll() -> u128 {
    link_local_of(OUR_MAC)
}

fn b(a: u128) -> [u8; 16] {
    a.to_be_bytes()
}

/// An NS frame from `src` to `dst` for `target`, with options `opts`,
/// built by etherparse.
fn ns(src: u128, dst: u128, target: u128, opts: &[u8], hop: u8, vlan: bool) -> Vec<u8> {
    let dmac = if ipv6::is_multicast(dst) {
        ndp::multicast_mac(dst)
    } else {
        OUR_MAC
    };
    let mut body = b(target).to_vec();
    body.extend_from_slice(opts);
    let mut v = Vec::new();
    if vlan {
        PacketBuilder::ethernet2(CLIENT_MAC, dmac)
            .single_vlan(VlanId::try_new(7).unwrap())
            .ipv6(b(src), b(dst), hop)
            .icmpv6_raw(msg_type::NEIGHBOR_SOLICIT, 0, [0; 4])
            .write(&mut v, &body)
            .unwrap();
    } else {
        PacketBuilder::ethernet2(CLIENT_MAC, dmac)
            .ipv6(b(src), b(dst), hop)
            .icmpv6_raw(msg_type::NEIGHBOR_SOLICIT, 0, [0; 4])
            .write(&mut v, &body)
            .unwrap();
    }
    v
}

/// The source link-layer address option for `mac`.
fn sll(mac: [u8; 6]) -> Vec<u8> {
    let mut o = vec![ndp::option::SOURCE_LL_ADDR, 1];
    o.extend_from_slice(&mac);
    o
}

/// The NA dirigo must send, built by etherparse: from `target` to `dst`
/// (Ethernet `dmac`), flags `flags`, target link-layer option OUR_MAC.
fn want_na(target: u128, dst: u128, dmac: [u8; 6], flags: u8, vlan: bool) -> Vec<u8> {
    let mut body = b(target).to_vec();
    body.extend([ndp::option::TARGET_LL_ADDR, 1]);
    body.extend(OUR_MAC);
    let mut v = Vec::new();
    if vlan {
        PacketBuilder::ethernet2(OUR_MAC, dmac)
            .single_vlan(VlanId::try_new(7).unwrap())
            .ipv6(b(target), b(dst), HOP_LIMIT)
            .icmpv6_raw(msg_type::NEIGHBOR_ADVERT, 0, [flags, 0, 0, 0])
            .write(&mut v, &body)
            .unwrap();
    } else {
        PacketBuilder::ethernet2(OUR_MAC, dmac)
            .ipv6(b(target), b(dst), HOP_LIMIT)
            .icmpv6_raw(msg_type::NEIGHBOR_ADVERT, 0, [flags, 0, 0, 0])
            .write(&mut v, &body)
            .unwrap();
    }
    v
}

/// classify's offsets of an ICMPv6 frame.
fn offsets(f: &[u8]) -> (usize, usize, usize) {
    match classify(f, 0) {
        Classified::Icmpv6 {
            l3_off,
            l4_off,
            len,
            ..
        } => (l3_off as usize, l4_off as usize, len as usize),
        o => panic!("not ICMPv6: {o:?}"),
    }
}

/// Run the responder on `f` as received on `port` (room to grow).
fn run_on(f: &[u8], port: u16) -> (NdAction, Vec<u8>) {
    let (l3, l4, len) = offsets(f);
    let mut buf = VecBuf::new(f);
    let mac = if port == 0 { OUR_MAC } else { OTHER_PORT_MAC };
    let a = nd_input(&mut buf, l3, l4, len, port, mac, &addrs());
    (a, buf.to_vec())
}

fn run(f: &[u8]) -> (NdAction, Vec<u8>) {
    run_on(f, 0)
}

/// `f` is left alone and the reason is `why`.
fn ignored(f: &[u8], why: NdIgnore) {
    let (a, out) = run(f);
    assert_eq!(a, NdAction::Ignore(why));
    assert_eq!(out, f, "an ignored frame is unchanged");
}

/// The NA is right by an independent parser too: etherparse's view of
/// every field and its checksum.
fn check_na_etherparse(out: &[u8], src: u128, dst: u128, flags: u8) {
    let p = etherparse::SlicedPacket::from_ethernet(out).unwrap();
    let Some(etherparse::NetSlice::Ipv6(ip)) = p.net else {
        panic!("not IPv6")
    };
    let h = ip.header();
    assert_eq!(h.hop_limit(), 255);
    assert_eq!(h.source(), b(src));
    assert_eq!(h.destination(), b(dst));
    assert_eq!(h.payload_length(), 32);
    let Some(etherparse::TransportSlice::Icmpv6(m)) = p.transport else {
        panic!("not ICMPv6")
    };
    assert_eq!(m.type_u8(), msg_type::NEIGHBOR_ADVERT);
    assert_eq!(m.code_u8(), 0);
    assert_eq!(m.bytes5to8(), [flags, 0, 0, 0]);
    let want = m
        .icmp_type()
        .calc_checksum(b(src), b(dst), m.payload())
        .unwrap();
    assert_eq!(m.checksum(), want);
}

#[test]
fn ns_to_the_solicited_node_group_gets_a_solicited_na() {
    let f = ns(
        CLIENT,
        ndp::solicited_node(PORT_IP6),
        PORT_IP6,
        &sll(OPTION_MAC),
        255,
        false,
    );
    let (a, out) = run(&f);
    assert_eq!(
        a,
        NdAction::Advert {
            target: PORT_IP6,
            dad: false,
            learn: Some((CLIENT, OPTION_MAC)),
        }
    );
    // solicited + override, to the asker, Ethernet to the option's MAC
    let flags = ndp::FLAG_SOLICITED | ndp::FLAG_OVERRIDE;
    assert_eq!(out, want_na(PORT_IP6, CLIENT, OPTION_MAC, flags, false));
    check_na_etherparse(&out, PORT_IP6, CLIENT, flags);
}

#[test]
fn unicast_ns_without_option_grows_into_the_na() {
    // a reachability probe: to the target itself, no option (Ethernet
    // destination then is the frame's source)
    let f = ns(CLIENT, PORT_IP6, PORT_IP6, &[], 255, false);
    assert_eq!(f.len(), 14 + 40 + 24);
    let (a, out) = run(&f);
    // no source link-layer option: nothing to learn from
    assert!(matches!(
        a,
        NdAction::Advert {
            dad: false,
            learn: None,
            ..
        }
    ));
    let flags = ndp::FLAG_SOLICITED | ndp::FLAG_OVERRIDE;
    assert_eq!(out, want_na(PORT_IP6, CLIENT, CLIENT_MAC, flags, false));
    check_na_etherparse(&out, PORT_IP6, CLIENT, flags);

    // no room to grow: nothing changes
    let (l3, l4, len) = offsets(&f);
    let mut tight = VecBuf::with_room(&f, 0, 0);
    let r = nd_input(&mut tight, l3, l4, len, 0, OUR_MAC, &addrs());
    assert_eq!(r, NdAction::Ignore(NdIgnore::NoRoom));
    assert_eq!(tight.to_vec(), f);
}

#[test]
fn ns_for_the_link_local_address_behind_a_vlan_tag() {
    let f = ns(
        CLIENT_LL,
        ndp::solicited_node(ll()),
        ll(),
        &sll(CLIENT_MAC),
        255,
        true,
    );
    let (a, out) = run(&f);
    assert_eq!(
        a,
        NdAction::Advert {
            target: ll(),
            dad: false,
            learn: Some((CLIENT_LL, CLIENT_MAC)),
        }
    );
    let flags = ndp::FLAG_SOLICITED | ndp::FLAG_OVERRIDE;
    assert_eq!(out, want_na(ll(), CLIENT_LL, CLIENT_MAC, flags, true));
    check_na_etherparse(&out, ll(), CLIENT_LL, flags);
}

#[test]
fn longer_ns_is_cut_to_the_na() {
    // an option dirigo does not use (a DAD nonce, RFC 7527) after the
    // source link-layer one, and 4 bytes of Ethernet padding
    let mut opts = sll(CLIENT_MAC);
    opts.extend([14, 1, 1, 2, 3, 4, 5, 6]);
    let mut f = ns(CLIENT, PORT_IP6, PORT_IP6, &opts, 255, false);
    f.extend([0; 4]);
    let (_, out) = run(&f);
    let flags = ndp::FLAG_SOLICITED | ndp::FLAG_OVERRIDE;
    assert_eq!(out, want_na(PORT_IP6, CLIENT, CLIENT_MAC, flags, false));
}

#[test]
fn dad_probe_for_our_address_is_answered_to_all_nodes() {
    let f = ns(0, ndp::solicited_node(PORT_IP6), PORT_IP6, &[], 255, false);
    let (a, out) = run(&f);
    assert_eq!(
        a,
        NdAction::Advert {
            target: PORT_IP6,
            dad: true,
            learn: None,
        }
    );
    // not solicited, override, to ff02::1 and its MAC 33:33:00:00:00:01
    let dmac = [0x33, 0x33, 0, 0, 0, 1];
    assert_eq!(
        out,
        want_na(PORT_IP6, ALL_NODES, dmac, ndp::FLAG_OVERRIDE, false)
    );
    check_na_etherparse(&out, PORT_IP6, ALL_NODES, ndp::FLAG_OVERRIDE);
    // a probe for someone else's address is theirs
    let f = ns(0, ndp::solicited_node(FOREIGN), FOREIGN, &[], 255, false);
    ignored(&f, NdIgnore::SolicitNotForUs);
}

#[test]
fn ns_not_answered() {
    let snm = ndp::solicited_node(PORT_IP6);
    let opt = sll(CLIENT_MAC);
    // not ours; another port's (global and link-local)
    ignored(
        &ns(
            CLIENT,
            ndp::solicited_node(FOREIGN),
            FOREIGN,
            &opt,
            255,
            false,
        ),
        NdIgnore::SolicitNotForUs,
    );
    ignored(
        &ns(
            CLIENT,
            ndp::solicited_node(OTHER_PORT_IP6),
            OTHER_PORT_IP6,
            &opt,
            255,
            false,
        ),
        NdIgnore::SolicitNotForUs,
    );
    let other_ll = link_local_of(OTHER_PORT_MAC);
    ignored(
        &ns(
            CLIENT_LL,
            ndp::solicited_node(other_ll),
            other_ll,
            &opt,
            255,
            false,
        ),
        NdIgnore::SolicitNotForUs,
    );
    // crossed a router
    ignored(
        &ns(CLIENT, snm, PORT_IP6, &opt, 64, false),
        NdIgnore::BadSolicit,
    );
    // a DAD probe must not carry a source link-layer option
    ignored(
        &ns(0, snm, PORT_IP6, &opt, 255, false),
        NdIgnore::BadSolicit,
    );
    // nor go anywhere but a solicited-node group
    ignored(
        &ns(0, PORT_IP6, PORT_IP6, &[], 255, false),
        NdIgnore::BadSolicit,
    );
    // an option of length 0
    ignored(
        &ns(CLIENT, snm, PORT_IP6, &[1, 0, 0, 0, 0, 0, 0, 0], 255, false),
        NdIgnore::BadSolicit,
    );
    // a group MAC in the option
    ignored(
        &ns(
            CLIENT,
            snm,
            PORT_IP6,
            &sll([0x33, 0x33, 0, 0, 0, 1]),
            255,
            false,
        ),
        NdIgnore::BadSolicit,
    );
    // to a group that is not the target's
    ignored(
        &ns(CLIENT, ALL_NODES, PORT_IP6, &opt, 255, false),
        NdIgnore::SolicitBadDst,
    );
    ignored(
        &ns(
            CLIENT,
            ndp::solicited_node(FOREIGN),
            PORT_IP6,
            &opt,
            255,
            false,
        ),
        NdIgnore::SolicitBadDst,
    );
    // checksum
    let mut f = ns(CLIENT, snm, PORT_IP6, &opt, 255, false);
    f[14 + 40 + 2] ^= 1;
    ignored(&f, NdIgnore::BadChecksum);
    // our own frame come back
    let mut f = ns(CLIENT, snm, PORT_IP6, &opt, 255, false);
    f[6..12].copy_from_slice(&OUR_MAC);
    ignored(&f, NdIgnore::Looped);
}

mod advert;
mod other;
