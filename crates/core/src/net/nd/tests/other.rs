//! Echo, the ICMPv6 the responder does not answer, offsets that do not
//! fit, and the properties: no input makes it panic.

use super::*;

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
    // an NA from another node (unsolicited, override) without a target
    // link-layer address: nothing to learn
    let mut na = vec![0x20, 0, 0, 0];
    na.extend(b(CLIENT_LL));
    ignored(
        &raw(icmp, &[], all, msg_type::NEIGHBOR_ADVERT, &na),
        NdIgnore::AdvertNoMac,
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

/// The exception path's answer to the kernel's solicitation for an IPv6
/// VIP (a via-VIP health check): a solicited NA of the VIP at the port's
/// MAC, to the kernel's address and MAC; nothing for a target that is
/// not a VIP, for a DAD probe, or for what is not an NS.
#[test]
fn the_kernels_solicitation_for_a_vip_is_answered_for_the_exception_path() {
    const VIP6: u128 = 0x2001_0db8_0099_0000_0000_0000_0000_0100;
    let mut a = addrs();
    a.set_vips6([VIP6]);
    let mut out = [0u8; ND_FRAME_LEN];
    // the kernel interface: the port's address, its option the port's MAC
    let f = ns(
        PORT_IP6,
        ndp::solicited_node(VIP6),
        VIP6,
        &sll(OPTION_MAC),
        255,
        false,
    );
    let n = kernel_vip_solicit(&f, OUR_MAC, &a, &mut out).expect("answered");
    let flags = ndp::FLAG_SOLICITED | ndp::FLAG_OVERRIDE;
    assert_eq!(
        out[..n].to_vec(),
        want_na(VIP6, PORT_IP6, OPTION_MAC, flags, false)
    );
    check_na_etherparse(&out[..n], VIP6, PORT_IP6, flags);
    // not a VIP: the client, which the kernel resolves through the port
    let f = ns(
        PORT_IP6,
        ndp::solicited_node(CLIENT),
        CLIENT,
        &sll(OPTION_MAC),
        255,
        false,
    );
    assert_eq!(kernel_vip_solicit(&f, OUR_MAC, &a, &mut out), None);
    // a DAD probe for the VIP is not the kernel resolving it
    let f = ns(0, ndp::solicited_node(VIP6), VIP6, &[], 255, false);
    assert_eq!(kernel_vip_solicit(&f, OUR_MAC, &a, &mut out), None);
    // hop limit not 255: not a valid NS (RFC 4861 §7.1.1)
    let f = ns(
        PORT_IP6,
        ndp::solicited_node(VIP6),
        VIP6,
        &sll(OPTION_MAC),
        64,
        false,
    );
    assert_eq!(kernel_vip_solicit(&f, OUR_MAC, &a, &mut out), None);
    // garbage and truncations never panic and answer nothing
    for cut in 0..f.len() {
        assert_eq!(kernel_vip_solicit(&f[..cut], OUR_MAC, &a, &mut out), None);
    }
}
