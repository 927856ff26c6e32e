//! IPv6 for the balancer: TCP/UDP and ICMPv6 errors quoting them become
//! `Classified::Ipv6` with offsets, tuple and quote right (frames built by
//! etherparse); and on any extension-header chain classify stays inside
//! the frame (property test).

use super::ipv6::udp6;
use super::*;
use crate::net::meta::{FlowKey6, PacketMeta6, PROTO_ICMPV6};

const C6: [u8; 16] = [0x20, 1, 0x0d, 0xb8, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7];
const V6: [u8; 16] = [
    0x20, 1, 0x0d, 0xb8, 0, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

fn b128(a: [u8; 16]) -> u128 {
    u128::from_be_bytes(a)
}

fn tcp6(flags_syn: bool, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv6(C6, V6, 64)
        .tcp(40000, 80, 7, 1000);
    let b = if flags_syn { b.syn() } else { b.ack(1) };
    b.write(&mut v, payload).unwrap();
    v
}

fn meta6(f: &[u8]) -> PacketMeta6 {
    match classify(f, 3) {
        Classified::Ipv6(m) => m,
        other => panic!("not for the balancer: {other:?}"),
    }
}

#[test]
fn tcp_and_udp_to_the_balancer() {
    let f = tcp6(true, b"");
    let m = meta6(&f);
    assert_eq!(
        m,
        PacketMeta6 {
            port: 3,
            vlan: None,
            l3_off: 14,
            l4_off: 54,
            ip_len: 60,
            key: FlowKey6 {
                src: b128(C6),
                dst: b128(V6),
                sport: 40000,
                dport: 80,
                proto: PROTO_TCP,
            },
            tcp_flags: tcp_flags::SYN,
            ttl: 64,
            df: true,
            icmp: None,
        }
    );
    // the burst path leaves it to the packet path, its meta untouched
    let mut m4 = PacketMeta::default();
    assert_eq!(classify_into(&f, 3, &mut m4), Some(Classified::Ipv6(m)));
    assert_eq!(m4, PacketMeta::default());
    // padding after the payload is not counted
    let mut p = tcp6(false, b"abc");
    let want = meta6(&p);
    p.extend([0; 9]);
    assert_eq!(meta6(&p), want);
    assert_eq!(want.ip_len, 40 + 20 + 3);
    assert_eq!(want.tcp_flags, tcp_flags::ACK);
    // UDP, also behind a VLAN tag
    let u = meta6(&udp6(false));
    assert_eq!((u.key.proto, u.key.sport, u.key.dport), (PROTO_UDP, 1, 2));
    let uv = meta6(&udp6(true));
    assert_eq!((uv.vlan, uv.l3_off, uv.l4_off), (Some(5), 18, 58));
}

/// The TCP frame with `ext` (extension headers, the first one's type
/// `first`) between the fixed header and TCP.
fn with_ext(first: u8, ext: &[u8]) -> Vec<u8> {
    let f = tcp6(true, b"");
    let mut b = f[..54].to_vec();
    b[20] = first;
    let plen = (ext.len() + 20) as u16;
    b[18..20].copy_from_slice(&plen.to_be_bytes());
    b.extend_from_slice(ext);
    b.extend_from_slice(&f[54..]);
    b
}

#[test]
fn extension_headers_and_drops() {
    // Hop-by-Hop then Destination Options, then TCP
    let ext = [60, 0, 1, 4, 0, 0, 0, 0, 6, 0, 1, 4, 0, 0, 0, 0];
    let m = meta6(&with_ext(0, &ext));
    assert_eq!((m.l4_off, m.key.dport, m.ip_len), (70, 80, 76));
    // a fragment is not reassembled
    assert_eq!(
        drop_of(&with_ext(44, &[6, 0, 0, 0, 0, 0, 0, 1])),
        NetDrop::Ipv6Fragment
    );
    // TCP header cut short, data offset below 5
    let f = tcp6(true, b"");
    let mut t = f[..14 + 40 + 10].to_vec();
    t[18..20].copy_from_slice(&10u16.to_be_bytes());
    assert_eq!(drop_of(&t), NetDrop::L4Truncated);
    let mut d = f.clone();
    d[54 + 12] = 4 << 4;
    assert_eq!(drop_of(&d), NetDrop::BadL4Header);
    // UDP length below 8
    let mut u = udp6(false);
    u[54 + 4..54 + 6].copy_from_slice(&7u16.to_be_bytes());
    assert_eq!(drop_of(&u), NetDrop::BadL4Header);
    // multicast destination, hop limit 0
    let mut mc = f.clone();
    mc[38] = 0xff;
    assert_eq!(drop_of(&mc), NetDrop::NotUnicastDst);
    let mut h0 = f.clone();
    h0[21] = 0;
    assert_eq!(drop_of(&h0), NetDrop::TtlExpired);
}

/// An ICMPv6 error of `typ` from `src` to `dst` quoting `quoted` (an IPv6
/// packet without Ethernet), cut to `cut` bytes.
fn icmp6_error(typ: u8, src: [u8; 16], dst: [u8; 16], quoted: &[u8], cut: usize) -> Vec<u8> {
    let q = &quoted[..cut.min(quoted.len())];
    let mut v = Vec::new();
    let t = match typ {
        2 => etherparse::Icmpv6Type::PacketTooBig { mtu: 1400 },
        1 => etherparse::Icmpv6Type::DestinationUnreachable(
            etherparse::icmpv6::DestUnreachableCode::Port,
        ),
        _ => etherparse::Icmpv6Type::TimeExceeded(
            etherparse::icmpv6::TimeExceededCode::HopLimitExceeded,
        ),
    };
    PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv6(src, dst, 64)
        .icmpv6(t)
        .write(&mut v, q)
        .unwrap();
    v
}

#[test]
fn icmpv6_errors_carry_their_quote() {
    // a router's Packet Too Big about the VIP's reply to the client
    let mut reply = Vec::new();
    PacketBuilder::ipv6(V6, C6, 64)
        .tcp(80, 40000, 1, 1000)
        .ack(1)
        .write(&mut reply, &[0u8; 1300])
        .unwrap();
    let router = [0x20, 1, 0x0d, 0xb8, 0, 0xee, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let e = icmp6_error(2, router, V6, &reply, 1232);
    let m = meta6(&e);
    assert_eq!(m.key.proto, PROTO_ICMPV6);
    assert_eq!((m.key.sport, m.key.dport), (0, 0));
    let q = m.icmp.expect("a quote");
    assert_eq!((q.icmp_type, q.code), (2, 0));
    assert_eq!(
        (q.inner_l3_off, q.inner_l4_off),
        (14 + 40 + 8, 14 + 40 + 8 + 40)
    );
    assert_eq!(
        q.inner_key,
        FlowKey6 {
            src: b128(V6),
            dst: b128(C6),
            sport: 80,
            dport: 40000,
            proto: PROTO_TCP,
        }
    );
    // 8 bytes of TCP are enough; 7 are not (the responder gets it)
    assert!(meta6(&icmp6_error(1, router, V6, &reply, 48))
        .icmp
        .is_some());
    assert!(matches!(
        classify(&icmp6_error(1, router, V6, &reply, 47), 0),
        Classified::Icmpv6 { .. }
    ));
    // a quote that is not IPv6
    let mut bad = reply.clone();
    bad[0] = 0x45;
    assert!(matches!(
        classify(&icmp6_error(3, router, V6, &bad, 64), 0),
        Classified::Icmpv6 { .. }
    ));
    // echo and neighbour discovery stay the responder's
    assert!(matches!(
        classify(&super::ipv6::icmpv6_echo(), 0),
        Classified::Icmpv6 { .. }
    ));
}

fn ext_chain() -> impl Strategy<Value = Vec<(u8, u8, Vec<u8>)>> {
    // (next header of this extension, its length byte, its body bytes)
    prop::collection::vec(
        (
            prop_oneof![
                Just(0u8),
                Just(43u8),
                Just(44u8),
                Just(51u8),
                Just(60u8),
                Just(6u8),
                Just(17u8),
                Just(58u8),
                any::<u8>()
            ],
            any::<u8>(),
            prop::collection::vec(any::<u8>(), 0..48),
        ),
        0..10,
    )
}

proptest! {
    /// Any chain of extension headers (right or wrong lengths, any next
    /// headers, cut anywhere) in front of any bytes: classify never
    /// panics, and every offset it returns lies inside the frame, with the
    /// L4 header (8 bytes of it for a quote) inside too.
    #[test]
    fn any_extension_chain_stays_in_bounds(
        first in prop_oneof![Just(0u8), Just(60u8), Just(43u8), Just(6u8), Just(58u8), any::<u8>()],
        chain in ext_chain(),
        tail in prop::collection::vec(any::<u8>(), 0..80),
        cut in any::<prop::sample::Index>(),
        quote in any::<bool>(),
    ) {
        let mut body = Vec::new();
        for (nh, len, bytes) in &chain {
            body.push(*nh);
            body.push(*len);
            body.extend_from_slice(bytes);
        }
        body.extend_from_slice(&tail);
        let mut f = Vec::new();
        f.extend(MAC_B);
        f.extend(MAC_A);
        f.extend([0x86, 0xdd]);
        let mut inner = vec![0x60, 0, 0, 0];
        inner.extend(((body.len()) as u16).to_be_bytes());
        inner.extend([first, 64]);
        inner.extend(C6);
        inner.extend(V6);
        inner.extend(&body);
        if quote {
            // the same bytes as the quote of an ICMPv6 error
            let mut outer = vec![0x60, 0, 0, 0];
            outer.extend(((inner.len() + 8) as u16).to_be_bytes());
            outer.extend([58, 64]);
            outer.extend(V6);
            outer.extend(C6);
            outer.extend([1, 4, 0, 0, 0, 0, 0, 0]);
            outer.extend(&inner);
            f.extend(outer);
        } else {
            f.extend(inner);
        }
        let n = cut.index(f.len() + 1);
        let f = &f[..n.max(1)];
        match classify(f, 0) {
            Classified::Ipv6(m) => {
                prop_assert!(m.l3_off < m.l4_off);
                prop_assert!(m.l3_off as usize + m.ip_len as usize <= f.len());
                if let Some(q) = m.icmp {
                    prop_assert!(m.l4_off < q.inner_l3_off);
                    prop_assert!(q.inner_l3_off < q.inner_l4_off);
                    prop_assert!(q.inner_l4_off as usize + 8 <= f.len());
                } else {
                    let l4 = if m.key.proto == PROTO_TCP { 20 } else { 8 };
                    prop_assert!(m.l4_off as usize + l4 <= f.len());
                }
            }
            Classified::Icmpv6 { l4_off, len, .. } => {
                prop_assert!(l4_off as usize + len as usize <= f.len());
            }
            _ => {}
        }
    }
}
