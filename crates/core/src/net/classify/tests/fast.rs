//! The fast path agrees with the slow path on every input, and really
//! answers for the common packet.

use crate::net::classify::fast::{classify_fast, FAST_LEN};
use crate::net::classify::slow::classify_slow;
use crate::net::classify::*;
use crate::net::meta::{tcp_flags, FlowKey, PacketMeta, PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use etherparse::PacketBuilder;
use proptest::prelude::*;

const MAC_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0a];
const MAC_B: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0b];
const CLIENT: [u8; 4] = [198, 51, 100, 7];
const VIP: [u8; 4] = [203, 0, 113, 10];

/// The transport of a [`frame`].
#[derive(Clone, Copy)]
enum L4 {
    /// TCP with these flags (`tcp_flags::*`).
    Tcp(u8),
    Udp,
}
use L4::{Tcp, Udp};

/// A TCP segment or UDP datagram built by etherparse, with `payload` bytes
/// (0x5a for TCP, 0xa5 for UDP) and `pad` zero bytes of Ethernet padding.
#[allow(clippy::too_many_arguments)]
fn frame(
    l4: L4,
    src: [u8; 4],
    dst: [u8; 4],
    ttl: u8,
    sport: u16,
    dport: u16,
    payload: usize,
    pad: usize,
) -> Vec<u8> {
    let ip = PacketBuilder::ethernet2(MAC_A, MAC_B).ipv4(src, dst, ttl);
    let mut v = Vec::new();
    match l4 {
        Tcp(flags) => {
            let mut b = ip.tcp(sport, dport, 0x0102_0304, 1024);
            if flags & tcp_flags::SYN != 0 {
                b = b.syn();
            }
            if flags & tcp_flags::ACK != 0 {
                b = b.ack(0x0a0b_0c0d);
            }
            if flags & tcp_flags::FIN != 0 {
                b = b.fin();
            }
            if flags & tcp_flags::RST != 0 {
                b = b.rst();
            }
            if flags & tcp_flags::PSH != 0 {
                b = b.psh();
            }
            b.write(&mut v, &vec![0x5a; payload]).unwrap();
        }
        Udp => ip
            .udp(sport, dport)
            .write(&mut v, &vec![0xa5; payload])
            .unwrap(),
    }
    v.resize(v.len() + pad, 0);
    v
}

/// Recompute the IPv4 header checksum of the untagged frame `f` (IHL as
/// the header says, capped to the frame).
fn fix_ip_csum(f: &mut [u8]) {
    if f.len() < 34 {
        return;
    }
    let hl = (((f[14] & 0x0f) as usize) * 4).clamp(20, f.len() - 14);
    f[24] = 0;
    f[25] = 0;
    let c = crate::net::checksum::checksum(&f[14..14 + hl]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
}

/// The property: whenever the fast path answers, the slow path gives the
/// same packet; `classify` always equals the slow path.
pub(super) fn agree(f: &[u8]) {
    let slow = classify_slow(f, 5);
    if let Some(m) = classify_fast(f, 5) {
        assert_eq!(Classified::Ipv4(m), slow, "fast path disagrees on {f:02x?}");
    }
    assert_eq!(classify(f, 5), slow, "classify disagrees on {f:02x?}");
    // classify_into: IPv4 lands in the slot, anything else is returned and
    // leaves the slot as it was
    let sentinel = PacketMeta {
        port: 0xdead,
        ..PacketMeta::default()
    };
    let mut slot = sentinel;
    match classify_into(f, 5, &mut slot) {
        None => assert_eq!(Classified::Ipv4(slot), slow, "classify_into on {f:02x?}"),
        Some(c) => {
            assert_eq!(c, slow, "classify_into on {f:02x?}");
            assert!(!matches!(c, Classified::Ipv4(_)));
            assert_eq!(slot, sentinel, "slot written on {f:02x?}");
        }
    }
    // classify_into_fast: the same answer, and `Placed::Fast` exactly when
    // the fast path answered (the burst path hashes `meta.key` then, so it
    // must be no ICMP error)
    let mut slot = sentinel;
    match classify_into_fast(f, 5, &mut slot) {
        Placed::Other(c) => {
            assert_eq!(c, slow, "classify_into_fast on {f:02x?}");
            assert_eq!(slot, sentinel, "slot written on {f:02x?}");
        }
        placed => {
            let fast = placed == Placed::Fast;
            assert_eq!(
                Classified::Ipv4(slot),
                slow,
                "classify_into_fast on {f:02x?}"
            );
            assert_eq!(fast, classify_fast(f, 5).is_some(), "{f:02x?}");
            assert!(!fast || slot.icmp.is_none(), "{f:02x?}");
        }
    }
}

fn syn_ack() -> Vec<u8> {
    let syn_ack = Tcp(tcp_flags::SYN | tcp_flags::ACK);
    frame(syn_ack, CLIENT, VIP, 61, 40000, 80, 0, 6)
}

#[test]
fn fast_path_answers_tcp_syn_ack() {
    let f = syn_ack();
    assert_eq!(f.len(), 60);
    let want = PacketMeta {
        port: 7,
        vlan: None,
        l3_off: 14,
        l4_off: 34,
        ip_len: 40,
        key: FlowKey {
            src: 0xc633_6407,
            dst: 0xcb00_710a,
            sport: 40000,
            dport: 80,
            proto: PROTO_TCP,
        },
        tcp_flags: tcp_flags::SYN | tcp_flags::ACK,
        ttl: 61,
        df: true,
        icmp: None,
    };
    assert_eq!(classify_fast(&f, 7), Some(want));
    assert_eq!(classify_slow(&f, 7), Classified::Ipv4(want));
    assert_eq!(classify(&f, 7), Classified::Ipv4(want));
}

#[test]
fn fast_path_answers_udp() {
    let f = frame(Udp, CLIENT, VIP, 64, 5000, 53, 10, 0);
    let want = PacketMeta {
        port: 1,
        vlan: None,
        l3_off: 14,
        l4_off: 34,
        ip_len: 38,
        key: FlowKey {
            src: 0xc633_6407,
            dst: 0xcb00_710a,
            sport: 5000,
            dport: 53,
            proto: PROTO_UDP,
        },
        tcp_flags: 0,
        ttl: 64,
        df: true,
        icmp: None,
    };
    assert_eq!(classify_fast(&f, 1), Some(want));
    assert_eq!(classify_slow(&f, 1), Classified::Ipv4(want));
    // DF clear is reported as such
    let mut g = f.clone();
    g[20] = 0;
    fix_ip_csum(&mut g);
    assert_eq!(classify_fast(&g, 1).map(|m| m.df), Some(false));
    agree(&g);
}

#[test]
fn fast_path_declines_what_it_does_not_handle() {
    // VLAN tag
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B)
        .single_vlan(etherparse::VlanId::try_new(42).unwrap())
        .ipv4(CLIENT, VIP, 64)
        .udp(5000, 53);
    let mut vlan = Vec::new();
    b.write(&mut vlan, &[9; 20]).unwrap();
    assert_eq!(classify_fast(&vlan, 0), None);
    assert_eq!(meta_vlan(classify(&vlan, 0)), Some(42));

    // IP options (IHL 6)
    let mut ip =
        etherparse::Ipv4Header::new(28, 64, etherparse::IpNumber::TCP, CLIENT, VIP).unwrap();
    ip.options = [1u8, 1, 1, 0][..].try_into().unwrap();
    ip.total_len = 24 + 20;
    ip.header_checksum = ip.calc_header_checksum();
    let mut opts = Vec::new();
    etherparse::Ethernet2Header {
        source: MAC_A,
        destination: MAC_B,
        ether_type: etherparse::EtherType::IPV4,
    }
    .write(&mut opts)
    .unwrap();
    ip.write(&mut opts).unwrap();
    etherparse::TcpHeader::new(1, 2, 3, 4)
        .write(&mut opts)
        .unwrap();
    assert_eq!(opts.len(), 14 + 24 + 20);
    assert_eq!(classify_fast(&opts, 0), None);
    match classify(&opts, 0) {
        Classified::Ipv4(m) => assert_eq!((m.l4_off, m.key.sport, m.key.dport), (38, 1, 2)),
        other => panic!("expected Ipv4, got {other:?}"),
    }

    // ICMP echo
    let b = PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv4(CLIENT, VIP, 64)
        .icmpv4_echo_request(7, 1);
    let mut icmp = Vec::new();
    b.write(&mut icmp, &[0; 32]).unwrap();
    assert_eq!(classify_fast(&icmp, 0), None);
    assert!(matches!(classify(&icmp, 0), Classified::Ipv4(m) if m.key.proto == PROTO_ICMP));

    // shorter than FAST_LEN: a valid minimal UDP datagram (42 bytes)
    let short = frame(Udp, CLIENT, VIP, 64, 1, 2, 0, 0);
    assert!(short.len() < FAST_LEN);
    assert_eq!(classify_fast(&short, 0), None);
    assert!(matches!(classify(&short, 0), Classified::Ipv4(_)));
}

fn meta_vlan(c: Classified) -> Option<u16> {
    match c {
        Classified::Ipv4(m) => m.vlan,
        other => panic!("expected Ipv4, got {other:?}"),
    }
}

#[test]
fn fast_path_declines_every_drop() {
    // each edit makes the slow path drop; the fast path must not answer
    let cases: [(usize, u8, bool, NetDrop); 12] = [
        (6, 0x03, true, NetDrop::BadSrcMac),
        (14, 0x55, true, NetDrop::BadVersion),
        (14, 0x44, true, NetDrop::BadIhl),
        (25, 0x00, false, NetDrop::BadIpChecksum),
        (17, 19, true, NetDrop::BadTotalLen),
        (17, 47, true, NetDrop::BadTotalLen),
        (20, 0x20, true, NetDrop::Fragment),
        (21, 0x01, true, NetDrop::Fragment),
        (22, 0x00, true, NetDrop::TtlExpired),
        (26, 127, true, NetDrop::MartianSrc),
        (30, 224, true, NetDrop::NotUnicastDst),
        (23, 47, true, NetDrop::UnsupportedProto),
    ];
    for (at, v, fix, why) in cases {
        let mut f = frame(Tcp(tcp_flags::ACK), CLIENT, VIP, 64, 1, 2, 6, 0);
        assert_eq!(f.len(), 60);
        f[at] = v;
        if fix {
            fix_ip_csum(&mut f);
        }
        assert_eq!(classify_fast(&f, 0), None, "edit {at}={v}");
        assert_eq!(classify(&f, 0), Classified::Drop(why), "edit {at}={v}");
    }
    // L4: TCP data offset 4 and beyond the IP payload; UDP length 7 and too long
    let mut f = frame(Tcp(tcp_flags::ACK), CLIENT, VIP, 64, 1, 2, 6, 0);
    for (doff, why) in [(0x40, NetDrop::BadL4Header), (0x70, NetDrop::L4Truncated)] {
        f[46] = doff;
        assert_eq!(classify_fast(&f, 0), None);
        assert_eq!(classify(&f, 0), Classified::Drop(why));
    }
    f[46] = 0x60; // exactly the 26-byte IP payload
    assert!(classify_fast(&f, 0).is_some());
    agree(&f);
    let mut u = frame(Udp, CLIENT, VIP, 64, 1, 2, 10, 0);
    for (ulen, why) in [(7u8, NetDrop::BadL4Header), (19, NetDrop::L4Truncated)] {
        u[39] = ulen;
        assert_eq!(classify_fast(&u, 0), None);
        assert_eq!(classify(&u, 0), Classified::Drop(why));
    }
    u[39] = 8; // UDP length shorter than the IP payload is fine
    assert!(classify_fast(&u, 0).is_some());
    agree(&u);
}

#[test]
fn every_single_byte_edit_agrees() {
    // each byte of the first 60 set to each value, with and without a
    // fixed-up IP checksum, for a TCP and a UDP packet
    let bases = [
        frame(Tcp(tcp_flags::ACK), CLIENT, VIP, 64, 40000, 80, 6, 0),
        frame(Udp, CLIENT, VIP, 64, 5000, 53, 18, 0),
    ];
    let mut answered = 0;
    for base in &bases {
        for at in 0..60 {
            for v in 0..=255u8 {
                for fix in [false, true] {
                    let mut f = base.clone();
                    f[at] = v;
                    if fix {
                        fix_ip_csum(&mut f);
                    }
                    agree(&f);
                    answered += classify_fast(&f, 5).is_some() as u32;
                }
            }
        }
    }
    // most edits (payload, ports, flags, ident, ...) keep the packet valid
    assert!(
        answered > 2 * 60 * 256,
        "fast path answered only {answered}"
    );
}

#[test]
fn every_address_octet_agrees() {
    // the fast path's first-octet tables against is_martian_src /
    // is_not_unicast_dst, with varied low bits
    for o in 0..=255u8 {
        for low in [[0, 0, 0], [255, 255, 255], [1, 2, 3]] {
            let a = [o, low[0], low[1], low[2]];
            for (src, dst) in [(a, VIP), (CLIENT, a)] {
                let f = frame(Tcp(tcp_flags::ACK), src, dst, 64, 1, 2, 6, 0);
                agree(&f);
                let bad = is_martian_src(u32::from_be_bytes(src))
                    || is_not_unicast_dst(u32::from_be_bytes(dst));
                assert_eq!(classify_fast(&f, 0).is_some(), !bad, "{src:?} -> {dst:?}");
            }
        }
    }
}

#[test]
fn every_truncation_agrees() {
    for base in [
        frame(Tcp(tcp_flags::SYN), CLIENT, VIP, 64, 40000, 80, 10, 4),
        frame(Udp, CLIENT, VIP, 64, 5000, 53, 18, 4),
    ] {
        for n in 0..=base.len() {
            agree(&base[..n]);
        }
    }
}

fn addr() -> impl Strategy<Value = [u8; 4]> {
    prop_oneof![
        3 => (1u8..224, any::<[u8; 3]>()).prop_map(|(a, r)| [a, r[0], r[1], r[2]]),
        1 => any::<[u8; 4]>(),
    ]
}

/// An XOR mask: one bit (to reach single-flag cases) or any byte.
fn flip() -> impl Strategy<Value = u8> {
    prop_oneof![(0u8..8).prop_map(|b| 1 << b), any::<u8>()]
}

/// A valid frame (when its addresses are unicast and TTL non-zero).
fn base_frame() -> impl Strategy<Value = (Vec<u8>, bool)> {
    (
        any::<bool>(),
        addr(),
        addr(),
        any::<u8>(),
        any::<(u16, u16)>(),
        any::<u8>(),
        0usize..40,
        0usize..8,
    )
        .prop_map(|(is_tcp, s, d, ttl, (sp, dp), fl, pl, pad)| {
            let l4 = if is_tcp { Tcp(fl) } else { Udp };
            let f = frame(l4, s, d, ttl, sp, dp, pl, pad);
            let valid = ttl != 0
                && !is_martian_src(u32::from_be_bytes(s))
                && !is_not_unicast_dst(u32::from_be_bytes(d));
            (f, valid)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn fast_path_equals_slow_path(
        (base, valid) in base_frame(),
        flips in proptest::collection::vec((0usize..60, flip()), 0..4),
        ip_len in proptest::option::of(any::<u16>()),
        l4_len in proptest::option::of(any::<u8>()),
        frag in proptest::option::of(prop_oneof![
            Just(0x0000u16), Just(0x4000), Just(0x2000), Just(0x6000), Just(0x0001), any::<u16>()
        ]),
        cut in proptest::option::of(any::<usize>()),
        fix in any::<bool>(),
    ) {
        // the unmutated packet really takes the fast path
        agree(&base);
        if valid && base.len() >= FAST_LEN {
            prop_assert!(classify_fast(&base, 5).is_some());
        }
        let mut f = base;
        for (at, x) in flips {
            if let Some(b) = f.get_mut(at) {
                *b ^= x;
            }
        }
        if let (Some(x), Some(b)) = (frag, f.get_mut(20..22)) {
            // DF, MF and fragment offset
            b.copy_from_slice(&x.to_be_bytes());
        }
        if let (Some(l), Some(b)) = (ip_len, f.get_mut(16..18)) {
            // often near the real length, sometimes anything
            let l = if l & 1 == 0 { (b[1] as u16 + (l >> 12)).wrapping_sub(8) } else { l };
            b.copy_from_slice(&l.to_be_bytes());
        }
        if let Some(l) = l4_len {
            // TCP data offset byte or UDP length low byte
            let at = if f.get(23) == Some(&PROTO_TCP) { 46 } else { 39 };
            if let Some(b) = f.get_mut(at) {
                *b = l;
            }
        }
        if fix {
            fix_ip_csum(&mut f);
        }
        if let Some(c) = cut {
            let n = f.len();
            f.truncate(c % (n + 1));
        }
        agree(&f);
    }

    #[test]
    fn random_frames_agree(f in proptest::collection::vec(any::<u8>(), 0..100), fix in any::<bool>()) {
        let mut f = f;
        if f.len() > 14 {
            // make the common prefix likely so deeper checks are reached
            f[12] = 0x08;
            f[13] = 0x00;
            f[14] = 0x45;
            f[6] &= 0xfe;
        }
        if fix {
            fix_ip_csum(&mut f);
        }
        agree(&f);
    }
}
