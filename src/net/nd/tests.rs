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
            dad: false
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
    assert!(matches!(a, NdAction::Advert { dad: false, .. }));
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
            dad: false
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
            dad: true
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

/// An echo request (etherparse) from `src` to `dst`, Ethernet to `dmac`.
fn echo_req(src: u128, dst: u128, dmac: [u8; 6], vlan: bool) -> Vec<u8> {
    let mut v = Vec::new();
    if vlan {
        PacketBuilder::ethernet2(CLIENT_MAC, dmac)
            .single_vlan(VlanId::try_new(7).unwrap())
            .ipv6(b(src), b(dst), 61)
            .icmpv6_echo_request(0x4242, 17)
            .write(&mut v, b"0123456789abcdef")
            .unwrap();
    } else {
        PacketBuilder::ethernet2(CLIENT_MAC, dmac)
            .ipv6(b(src), b(dst), 61)
            .icmpv6_echo_request(0x4242, 17)
            .write(&mut v, b"0123456789abcdef")
            .unwrap();
    }
    v
}

/// The reply dirigo must send, built by etherparse.
fn want_reply(from: u128, to: u128, smac: [u8; 6], vlan: bool) -> Vec<u8> {
    let mut v = Vec::new();
    if vlan {
        PacketBuilder::ethernet2(smac, CLIENT_MAC)
            .single_vlan(VlanId::try_new(7).unwrap())
            .ipv6(b(from), b(to), 64)
            .icmpv6_echo_reply(0x4242, 17)
            .write(&mut v, b"0123456789abcdef")
            .unwrap();
    } else {
        PacketBuilder::ethernet2(smac, CLIENT_MAC)
            .ipv6(b(from), b(to), 64)
            .icmpv6_echo_reply(0x4242, 17)
            .write(&mut v, b"0123456789abcdef")
            .unwrap();
    }
    v
}

#[test]
fn echo_to_our_addresses_is_answered_in_place() {
    for (src, dst, vlan) in [
        (CLIENT, PORT_IP6, false),
        (CLIENT_LL, ll(), false),
        (CLIENT, PORT_IP6, true),
    ] {
        let f = echo_req(src, dst, OUR_MAC, vlan);
        let (a, out) = run(&f);
        assert_eq!(a, NdAction::EchoReply);
        assert_eq!(out, want_reply(dst, src, OUR_MAC, vlan));
        // the checksum as etherparse computes it
        let p = etherparse::SlicedPacket::from_ethernet(&out).unwrap();
        let Some(etherparse::TransportSlice::Icmpv6(m)) = p.transport else {
            panic!("not ICMPv6")
        };
        let want = m
            .icmp_type()
            .calc_checksum(b(dst), b(src), m.payload())
            .unwrap();
        assert_eq!(m.checksum(), want);
    }
    // a global address of another port is still ours (a routed path);
    // a link-local one is not (it belongs to the other link)
    let f = echo_req(CLIENT, OTHER_PORT_IP6, OUR_MAC, false);
    assert_eq!(
        run(&f).1,
        want_reply(OTHER_PORT_IP6, CLIENT, OUR_MAC, false)
    );
    ignored(
        &echo_req(CLIENT_LL, link_local_of(OTHER_PORT_MAC), OUR_MAC, false),
        NdIgnore::EchoNotForUs,
    );
}

#[test]
fn echo_not_answered() {
    ignored(
        &echo_req(CLIENT, FOREIGN, OUR_MAC, false),
        NdIgnore::EchoNotForUs,
    );
    ignored(
        &echo_req(CLIENT_LL, ALL_NODES, [0x33, 0x33, 0, 0, 0, 1], false),
        NdIgnore::EchoNotUnicast,
    );
    ignored(
        &echo_req(CLIENT, PORT_IP6, [0xff; 6], false),
        NdIgnore::EchoNotUnicast,
    );
    let mut f = echo_req(CLIENT, PORT_IP6, OUR_MAC, false);
    let n = f.len();
    f[n - 1] ^= 0x40;
    ignored(&f, NdIgnore::BadChecksum);
    // an echo reply is not answered
    let f = want_reply(CLIENT, PORT_IP6, CLIENT_MAC, false);
    let mut f = f;
    f[0..6].copy_from_slice(&OUR_MAC);
    f[6..12].copy_from_slice(&CLIENT_MAC);
    ignored(&f, NdIgnore::Other);
}

/// An IPv6 packet from CLIENT_LL to `dst` (Ethernet to all-nodes' MAC),
/// with `ext` (extension headers, next header first byte chain given by
/// `first`) then an ICMPv6 message of `t` with `body`, checksum filled.
fn raw(first: u8, ext: &[u8], dst: u128, t: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![t, 0, 0, 0];
    m.extend_from_slice(body);
    icmpv6::Packet::new_unchecked(&mut m[..]).fill_checksum(CLIENT_LL, dst);
    let mut f = Vec::new();
    f.extend(ndp::multicast_mac(dst));
    f.extend(CLIENT_MAC);
    f.extend([0x86, 0xdd]);
    let plen = (ext.len() + m.len()) as u16;
    f.extend([0x60, 0, 0, 0]);
    f.extend(plen.to_be_bytes());
    f.extend([first, 255]);
    f.extend(b(CLIENT_LL));
    f.extend(b(dst));
    f.extend_from_slice(ext);
    f.extend(m);
    f
}

#[test]
fn other_icmpv6_is_counted_by_kind() {
    let all = ALL_NODES;
    let icmp = ipv6::next_header::ICMPV6;
    ignored(
        &raw(icmp, &[], all, msg_type::ROUTER_SOLICIT, &[0; 4]),
        NdIgnore::Router,
    );
    ignored(
        &raw(icmp, &[], all, msg_type::ROUTER_ADVERT, &[0; 12]),
        NdIgnore::Router,
    );
    ignored(
        &raw(icmp, &[], all, msg_type::REDIRECT, &[0; 36]),
        NdIgnore::Router,
    );
    // an NA from another node (unsolicited, override)
    let mut na = vec![0x20, 0, 0, 0];
    na.extend(b(CLIENT_LL));
    ignored(
        &raw(icmp, &[], all, msg_type::NEIGHBOR_ADVERT, &na),
        NdIgnore::Advert,
    );
    // an MLDv2 report behind the Hop-by-Hop router alert, as Linux sends it
    let hbh = [icmp, 0, 5, 2, 0, 0, 1, 0];
    let mld2 = 0xff02_0000_0000_0000_0000_0000_0000_0016;
    ignored(&raw(0, &hbh, mld2, 143, &[0; 4]), NdIgnore::Mld);
    ignored(&raw(icmp, &[], all, 130, &[0; 20]), NdIgnore::Mld);
    // an error
    ignored(
        &raw(icmp, &[], all, msg_type::DEST_UNREACHABLE, &[0; 44]),
        NdIgnore::Error,
    );
    ignored(&raw(icmp, &[], all, 200, &[0; 4]), NdIgnore::Other);
}

#[test]
fn ns_and_echo_behind_extension_headers_are_not_answered() {
    let icmp = ipv6::next_header::ICMPV6;
    let dest_opts = [icmp, 0, 1, 4, 0, 0, 0, 0];
    let snm = ndp::solicited_node(ll());
    let mut body = vec![0, 0, 0];
    body.extend(b(ll()));
    body.extend(sll(CLIENT_MAC));
    let f = raw(60, &dest_opts, snm, msg_type::NEIGHBOR_SOLICIT, &body);
    ignored(&f, NdIgnore::ExtHeaders);
    let mut f = raw(60, &dest_opts, ll(), msg_type::ECHO_REQUEST, &[0, 1, 0, 1]);
    f[0..6].copy_from_slice(&OUR_MAC);
    ignored(&f, NdIgnore::ExtHeaders);
}

#[test]
fn offsets_that_do_not_fit_are_malformed() {
    let f = echo_req(CLIENT, PORT_IP6, OUR_MAC, false);
    let (l3, l4, len) = offsets(&f);
    for (a, b2, c) in [
        (l3 + 1, l4, len),
        (l3, l4 - 1, len),
        (l3, l4, len + 1),
        (l3, l4, 4),
        (l3, usize::MAX, len),
        (l3, l4 + 8, usize::MAX - 8),
    ] {
        let mut buf = VecBuf::new(&f);
        let r = nd_input(&mut buf, a, b2, c, 0, OUR_MAC, &addrs());
        assert_eq!(r, NdAction::Ignore(NdIgnore::Malformed), "{a} {b2} {c}");
        assert_eq!(buf.to_vec(), f);
    }
}

#[test]
fn counter_names() {
    crate::counters::check::<NdIgnore>();
    assert!(NdIgnore::ALL.iter().all(|d| d.is_drop()));
    for d in NdIgnore::ALL {
        let n = d.name();
        assert!(n.starts_with("nd_") || n.starts_with("icmp6_"), "{n}");
    }
}

fn valid_frames() -> Vec<Vec<u8>> {
    vec![
        ns(
            CLIENT,
            ndp::solicited_node(PORT_IP6),
            PORT_IP6,
            &sll(CLIENT_MAC),
            255,
            false,
        ),
        ns(0, ndp::solicited_node(PORT_IP6), PORT_IP6, &[], 255, true),
        ns(CLIENT, PORT_IP6, PORT_IP6, &[], 255, false),
        echo_req(CLIENT, PORT_IP6, OUR_MAC, false),
        echo_req(CLIENT_LL, ll(), OUR_MAC, true),
    ]
}

proptest! {
    #[test]
    fn responder_never_panics_on_random_frames(
        f in proptest::collection::vec(any::<u8>(), 0..200),
        l3 in 0usize..40,
        l4 in 0usize..120,
        len in 0usize..200,
        room in 0usize..16,
    ) {
        // classify's offsets when it finds ICMPv6, else arbitrary ones
        let (l3, l4, len) = match classify(&f, 0) {
            Classified::Icmpv6 { l3_off, l4_off, len, .. } => {
                (l3_off as usize, l4_off as usize, len as usize)
            }
            _ => (l3, l4, len),
        };
        let mut buf = VecBuf::with_room(&f, 0, room);
        let _ = nd_input(&mut buf, l3, l4, len, 0, OUR_MAC, &addrs());
    }

    #[test]
    fn responder_never_panics_on_mutated_frames(
        which in 0usize..5,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
        room in 0usize..16,
    ) {
        let mut f = valid_frames().swap_remove(which);
        for (i, v) in edits {
            let n = f.len();
            f[i % n] = v;
        }
        let n = f.len();
        f.truncate(cut % (n + 1));
        if let Classified::Icmpv6 { l3_off, l4_off, len, .. } = classify(&f, 0) {
            let mut buf = VecBuf::with_room(&f, 0, room);
            let a = nd_input(&mut buf, l3_off as usize, l4_off as usize, len as usize, 0, OUR_MAC, &addrs());
            // whatever was answered is a sound frame classify accepts again
            if !matches!(a, NdAction::Ignore(_)) {
                let out = buf.to_vec();
                let again = matches!(classify(&out, 0), Classified::Icmpv6 { .. });
                prop_assert!(again, "{a:?} gave {out:02x?}");
            }
        }
    }

    #[test]
    fn every_valid_frame_is_answered(which in 0usize..5) {
        let f = valid_frames().swap_remove(which);
        let (a, _) = run(&f);
        prop_assert!(!matches!(a, NdAction::Ignore(_)), "{a:?}");
    }
}
