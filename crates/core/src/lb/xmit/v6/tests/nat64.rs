//! NAT64's ICMP errors about replies (ICMPv6 → ICMPv4, [`n64::icmp_to4`])
//! and its replies too big for the client's link ([`n64::to6`]): the
//! expected frames built with etherparse in full and compared byte for
//! byte, checksums included.

use super::*;
use crate::lb::testutil::{mac_of, meta_of, verify, CLIENT6, RIP, VIP6};
use crate::lb::xmit::v6::nat64::{self as n64, Leg4};
use crate::net::buf::VecBuf;
use etherparse::{Ipv4Dscp, Ipv4Ecn, Ipv4Header};

/// The NAT64 pool address the connection's requests leave from.
const POOL: [u8; 4] = [10, 0, 0, 200];
/// The pool port of the connection.
const LPORT: u16 = 4097;

/// The IPv4 leg of the test connection: pool:LPORT → RIP:8080.
fn leg() -> Leg4 {
    Leg4 {
        src: u32::from_be_bytes(POOL),
        sport: LPORT,
        dst: u32::from_be_bytes(RIP),
        dport: 8080,
    }
}

/// An IPv4 header with the test's fields (the builder sets the length and
/// the checksum).
fn ip4(src: [u8; 4], dst: [u8; 4], ttl: u8, tos: u8, ident: u16, df: bool) -> Ipv4Header {
    let mut h = Ipv4Header::new(0, ttl, IpNumber::TCP, src, dst).unwrap();
    h.dscp = Ipv4Dscp::try_new(tos >> 2).unwrap();
    h.ecn = Ipv4Ecn::try_new(tos & 3).unwrap();
    h.identification = ident;
    h.dont_fragment = df;
    h
}

/// An IPv4 packet (no Ethernet) with the transport of [`packet6`]'s, its
/// checksums computed by etherparse.
fn packet4(h: Ipv4Header, l4: L4, payload: &[u8]) -> Vec<u8> {
    super::packet_ip(IpHeaders::Ipv4(h, Default::default()), l4, payload)
}

/// The ICMPv4 error dirigo should send the real server: from the pool to
/// RIP, TTL 64, identification `ident`, quoting `quoted`, behind an
/// Ethernet header toward RIP (one 802.1Q tag when `vlan` is given).
fn want4(
    typ: u8,
    code: u8,
    rest: [u8; 4],
    ident: u16,
    quoted: &[u8],
    vlan: Option<u16>,
) -> Vec<u8> {
    let b = PacketBuilder::ip(IpHeaders::Ipv4(
        ip4(POOL, RIP, 64, 0, ident, false),
        Default::default(),
    ))
    .icmpv4_raw(typ, code, rest);
    let mut ip = Vec::new();
    b.write(&mut ip, quoted).unwrap();
    let mut f = eth(&ip, vlan);
    // eth() writes an IPv6 frame from the client: IPv4 toward the server
    let et = f.len() - ip.len() - 2;
    f[et..et + 2].copy_from_slice(&[0x08, 0x00]);
    with_eth(f, mac_of(RIP), OUR_MAC)
}

/// `icmp_to4` on a copy of frame `f` with the fake egress (MTU `mtu`) and
/// identification 0x4242: the result, the frame after it, the next
/// identification.
fn run_to4(f: &[u8], mtu: u16) -> (Result<u16, XmitError>, Vec<u8>, u16) {
    let m = meta6_of(f);
    assert!(m.icmp.is_some(), "an ICMPv6 error with a quote");
    let mut b = VecBuf::new(f);
    let mut ident = 0x4242;
    let eg = FakeEgress {
        mtu,
        ..Default::default()
    };
    let r = n64::icmp_to4(&mut b, &m, leg(), &mut ident, &eg);
    (r, b.to_vec(), ident)
}

/// The reply as the real server sent it (RIP:8080 → pool:LPORT, TTL 64),
/// and as dirigo sent it on to the client (VIP:80 → client:40000, hop
/// limit 63), both built by etherparse.
fn reply_both(l4: [L4; 2], tos: u8, payload: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let v4 = packet4(ip4(RIP, POOL, 64, tos, 0x4141, true), l4[0], payload);
    let v6 = packet6(ip6(VIP6, CLIENT6, 63, tos, 0), l4[1], payload);
    (v4, v6)
}

const TCP4: L4 = L4::Tcp(8080, LPORT);
const TCP6: L4 = L4::Tcp(80, 40000);

#[test]
fn packet_too_big_about_a_reply_becomes_frag_needed_for_the_server() {
    // a full-size reply met a 1400-byte link toward the client: the
    // router's Packet Too Big quotes it as dirigo sent it (1232 bytes)
    let (_, sent) = reply_both([TCP4, TCP6], 0x2e, &[7; 1440]);
    let e = icmp6_error(
        ROUTER6,
        VIP6,
        60,
        2,
        0,
        1400u32.to_be_bytes(),
        &sent[..1232],
    );
    let (r, out, ident) = run_to4(&eth(&e, None), 1500);
    assert_eq!(r, Ok(1), "toward the real server's port");
    assert_eq!(ident, 0x4243, "one identification used");
    // the server reads fragmentation needed, MTU 1380 (its packets grow
    // by 20 bytes on the way), about its own packet: its header rebuilt
    // (TTL and TOS from the quote, identification 0, DF), the TCP bytes
    // with its ports and its checksum again, 1192 of them
    let quoted = packet4(ip4(RIP, POOL, 63, 0x2e, 0, true), TCP4, &[7; 1440]);
    let want = want4(3, 4, [0, 0, 0x05, 0x64], 0x4242, &quoted[..20 + 1192], None);
    assert_eq!(out, want);
    verify(&out);
    // etherparse reads the message as fragmentation needed, 1380
    let p = SlicedPacket::from_ethernet(&out).unwrap();
    let Some(TransportSlice::Icmpv4(i)) = &p.transport else {
        panic!("ICMPv4")
    };
    assert_eq!(
        i.icmp_type(),
        etherparse::Icmpv4Type::DestinationUnreachable(
            etherparse::icmpv4::DestUnreachableHeader::FragmentationNeeded { next_hop_mtu: 1380 }
        )
    );
    // the quoted TCP checksum is the one the server computed
    let orig = packet4(ip4(RIP, POOL, 64, 0x2e, 0x4141, true), TCP4, &[7; 1440]);
    assert_eq!(&out[14 + 48 + 16..14 + 48 + 18], &orig[36..38]);
}

#[test]
fn packet_too_big_mtu_is_at_most_the_ipv4_links() {
    // a Packet Too Big larger than the IPv4 link can carry reports the
    // IPv4 link's MTU; the quote is cut to fit it
    let (_, sent) = reply_both([TCP4, TCP6], 0, &[1; 1000]);
    let e = icmp6_error(ROUTER6, VIP6, 60, 2, 0, 9000u32.to_be_bytes(), &sent);
    let (r, out, _) = run_to4(&eth(&e, None), 600);
    assert_eq!(r, Ok(1));
    let quoted = packet4(ip4(RIP, POOL, 63, 0, 0, true), TCP4, &[1; 1000]);
    let want = want4(3, 4, [0, 0, 0x02, 0x58], 0x4242, &quoted[..600 - 28], None);
    assert_eq!(out, want);
    assert_eq!(out.len(), 14 + 600);
    verify(&out);
}

/// An ICMPv6 error's type, code and type-specific word.
type Icmp6 = (u8, u8, u32);
/// An ICMPv4 error's type, code and type-specific bytes.
type Icmp4 = (u8, u8, [u8; 4]);

#[test]
fn icmpv6_errors_map_to_icmpv4_by_rfc_7915() {
    // (type, code, rest) in ICMPv6 -> (type, code, rest) in ICMPv4
    let cases: &[(Icmp6, Icmp4)] = &[
        ((1, 0, 0), (3, 1, [0; 4])),          // no route -> host unreachable
        ((1, 1, 0), (3, 10, [0; 4])),         // administratively prohibited
        ((1, 2, 0), (3, 1, [0; 4])),          // beyond scope
        ((1, 3, 0), (3, 1, [0; 4])),          // address unreachable
        ((1, 4, 0), (3, 3, [0; 4])),          // port unreachable
        ((3, 0, 0), (11, 0, [0; 4])),         // hop limit exceeded
        ((3, 1, 0), (11, 1, [0; 4])),         // reassembly time exceeded
        ((4, 1, 0), (3, 2, [0; 4])),          // unrecognised next header
        ((4, 0, 6), (12, 0, [9, 0, 0, 0])),   // next header -> protocol
        ((4, 0, 7), (12, 0, [8, 0, 0, 0])),   // hop limit -> TTL
        ((4, 0, 4), (12, 0, [2, 0, 0, 0])),   // payload length -> length
        ((4, 0, 30), (12, 0, [16, 0, 0, 0])), // destination
        ((4, 0, 8), (12, 0, [12, 0, 0, 0])),  // source
        ((2, 0, 1280), (3, 4, [0, 0, 0x04, 0xec])), // 1260
    ];
    // UDP, a quote of 48 bytes (the UDP header and 8 bytes of payload)
    let u4 = L4::Udp(8080, LPORT);
    let u6 = L4::Udp(80, 40000);
    let (_, sent) = reply_both([u4, u6], 0, b"an answer");
    for &((t6, c6, r6), (t4, c4, r4)) in cases {
        // DF on the quoted header says "fragmentation needed and DF set"
        let df = (t4, c4) == (3, 4);
        let quoted = packet4(ip4(RIP, POOL, 63, 0, 0, df), u4, b"an answer");
        let e = icmp6_error(ROUTER6, VIP6, 60, t6, c6, r6.to_be_bytes(), &sent[..56]);
        let (r, out, _) = run_to4(&eth(&e, Some(9)), 1500);
        assert_eq!(r, Ok(1), "{t6}/{c6}");
        // the UDP header as the server sent it, checksum included
        let want = want4(t4, c4, r4, 0x4242, &quoted[..20 + 16], Some(9));
        assert_eq!(out, want, "{t6}/{c6}/{r6} -> {t4}/{c4}/{r4:?}");
        verify(&untag(&out));
    }
    // what RFC 7915 does not translate is dropped, the frame untouched
    for (t6, c6, r6) in [
        (1, 5, 0),
        (1, 6, 0),
        (3, 2, 0),
        (4, 2, 0),
        (4, 0, 2),
        (4, 0, 40),
    ] {
        let f = eth(
            &icmp6_error(
                ROUTER6,
                VIP6,
                60,
                t6,
                c6,
                (r6 as u32).to_be_bytes(),
                &sent[..56],
            ),
            None,
        );
        let (r, out, ident) = run_to4(&f, 1500);
        assert_eq!(r, Err(XmitError::Malformed), "{t6}/{c6}/{r6}");
        assert_eq!((out, ident), (f, 0x4242));
    }
}

/// Frame `f` without its 802.1Q tag.
fn untag(f: &[u8]) -> Vec<u8> {
    let mut v = f[..12].to_vec();
    v.extend_from_slice(&f[16..]);
    v
}

#[test]
fn a_short_quote_behind_an_extension_header() {
    // the quoted reply carries a Destination Options header (8 bytes) and
    // only 8 bytes of TCP: ports and sequence number, no checksum
    let (_, mut sent) = reply_both([TCP4, TCP6], 0, b"hello");
    sent[6] = 60;
    sent.splice(40..40, [6, 0, 1, 4, 0, 0, 0, 0]);
    let plen = be16(&sent, 4) + 8;
    sent[4..6].copy_from_slice(&plen.to_be_bytes());
    let e = icmp6_error(ROUTER6, VIP6, 60, 1, 4, [0; 4], &sent[..40 + 8 + 8]);
    let (r, out, _) = run_to4(&eth(&e, None), 1500);
    assert_eq!(r, Ok(1));
    // the IPv4 header's length is the TCP segment's (no extension header)
    let quoted = packet4(ip4(RIP, POOL, 63, 0, 0, false), TCP4, b"hello");
    let want = want4(3, 3, [0; 4], 0x4242, &quoted[..20 + 8], None);
    assert_eq!(out, want);
    verify(&out);
}

#[test]
fn icmp_to4_errors_leave_the_frame() {
    let (_, sent) = reply_both([TCP4, TCP6], 0, b"hello");
    let f = eth(
        &icmp6_error(ROUTER6, VIP6, 60, 2, 0, 1400u32.to_be_bytes(), &sent),
        None,
    );
    let m = meta6_of(&f);
    let run = |f: &[u8], m: &PacketMeta6, eg: &FakeEgress, want| {
        let mut b = VecBuf::new(f);
        let mut ident = 7;
        let r = n64::icmp_to4(&mut b, m, leg(), &mut ident, eg);
        assert_eq!(r, Err(want));
        assert_eq!((b.to_vec(), ident), (f.to_vec(), 7));
    };
    let rip = u32::from_be_bytes(RIP);
    let eg = FakeEgress::default();
    // the real server unresolved or unroutable
    let unresolved = FakeEgress {
        unresolved: vec![rip],
        ..Default::default()
    };
    run(&f, &m, &unresolved, XmitError::Unresolved);
    let noroute = FakeEgress {
        noroute: vec![rip],
        ..Default::default()
    };
    run(&f, &m, &noroute, XmitError::NoRoute);
    // a damaged message: its ICMPv6 checksum no longer matches
    let mut bad = f.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0x10;
    run(&bad, &meta6_of(&bad), &eg, XmitError::Malformed);
    // not an error with a quote, or metadata beyond the frame
    run(
        &f,
        &PacketMeta6 { icmp: None, ..m },
        &eg,
        XmitError::Malformed,
    );
    let long = PacketMeta6 {
        ip_len: m.ip_len + 1,
        ..m
    };
    run(&f, &long, &eg, XmitError::Malformed);
    // a quote without the 8 bytes of the ports and sequence number
    let short = eth(
        &icmp6_error(ROUTER6, VIP6, 60, 2, 0, 1400u32.to_be_bytes(), &sent[..44]),
        None,
    );
    run(&short, &meta6_of(&short), &eg, XmitError::Malformed);
    // the quoted packet neither TCP nor UDP
    let mut other = m;
    if let Some(q) = other.icmp.as_mut() {
        q.inner_key.proto = 58;
    }
    run(&f, &other, &eg, XmitError::Malformed);
}

/// An Ethernet/IPv4 frame from the real server's MAC to ours.
fn frame4(ip: &[u8]) -> Vec<u8> {
    let mut f = eth(ip, None);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    with_eth(f, OUR_MAC, mac_of(RIP))
}

/// `to6` on frame `f` (the reply to the client) with the fake egress.
fn run_to6(f: &[u8]) -> (Result<u16, XmitError>, Vec<u8>) {
    let m = meta_of(f);
    let mut b = VecBuf::with_room(f, 64, 0);
    let r = n64::to6(&mut b, &m, VIP6, 80, CLIENT6, 40000, &FakeEgress::default());
    (r, b.to_vec())
}

#[test]
fn a_reply_too_big_for_the_client_link_needs_fragmentation() {
    // 1480 bytes of IPv4 make 1500 of IPv6: they fit the 1500-byte link
    let fits = frame4(&packet4(ip4(RIP, POOL, 64, 0, 1, true), TCP4, &[5; 1440]));
    let (r, out) = run_to6(&fits);
    assert_eq!(r, Ok(0));
    let want = packet6(ip6(VIP6, CLIENT6, 63, 0, 0), TCP6, &[5; 1440]);
    assert_eq!(out, with_eth(eth(&want, None), GW_MAC, OUR_MAC));
    // 1500 bytes of IPv4 would make 1520: with DF, the server is to hear
    // "fragmentation needed" with the IPv4 MTU that fits, 1480
    let big = frame4(&packet4(ip4(RIP, POOL, 64, 0, 1, true), TCP4, &[5; 1460]));
    let (r, out) = run_to6(&big);
    assert_eq!(r, Err(XmitError::NeedFrag { mtu: 1480 }));
    assert_eq!(out, big, "the frame untouched, to be quoted");
    // without DF, nothing to tell it: dropped (dirigo does not fragment)
    let big_nodf = frame4(&packet4(ip4(RIP, POOL, 64, 0, 1, false), TCP4, &[5; 1460]));
    let (r, out) = run_to6(&big_nodf);
    assert_eq!(r, Err(XmitError::TooBig));
    assert_eq!(out, big_nodf);
    // IPv4 options are dropped in translation: the server may send 4
    // bytes more with its 24-byte header
    let mut h = ip4(RIP, POOL, 64, 0, 1, true);
    h.options = (&[1u8, 1, 1, 0][..]).try_into().unwrap();
    let opts = frame4(&packet4(h, TCP4, &[5; 1456]));
    assert_eq!(meta_of(&opts).l4_off, 14 + 24);
    let (r, _) = run_to6(&opts);
    assert_eq!(r, Err(XmitError::NeedFrag { mtu: 1484 }));
    let mut h = ip4(RIP, POOL, 64, 0, 1, true);
    h.options = (&[1u8, 1, 1, 0][..]).try_into().unwrap();
    let (r, _) = run_to6(&frame4(&packet4(h, TCP4, &[5; 1440])));
    assert_eq!(r, Ok(0), "1484 bytes with options make 1500 of IPv6");
}
