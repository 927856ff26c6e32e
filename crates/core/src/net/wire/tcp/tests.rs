use super::*;

// 40000 -> 80, seq 1, ack 0, doff 5, SYN, win 0xffff, 2 data bytes
const SEG: [u8; 22] = [
    0x9c, 0x40, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0, 0xaa, 0xbb,
];

#[test]
fn parse() {
    let p = Packet::new_checked(&SEG[..]).unwrap();
    assert_eq!(p.src_port(), 40000);
    assert_eq!(p.dst_port(), 80);
    assert_eq!(p.seq_number(), 1);
    assert_eq!(p.ack_number(), 0);
    assert_eq!(p.header_len(), 20);
    assert_eq!(p.flags(), crate::net::meta::tcp_flags::SYN);
    assert_eq!(p.window(), 0xffff);
    assert_eq!(p.payload(), &[0xaa, 0xbb]);
}

#[test]
fn rejects() {
    assert_eq!(
        Packet::new_checked(&SEG[..19]).unwrap_err(),
        WireError::Truncated
    );
    let mut b = SEG;
    b[12] = 0x40;
    assert_eq!(
        Packet::new_checked(&b[..]).unwrap_err(),
        WireError::BadHeaderLen
    );
    b[12] = 0x60; // 24-byte header in 22 bytes
    assert_eq!(
        Packet::new_checked(&b[..]).unwrap_err(),
        WireError::Truncated
    );
}

#[test]
fn checksum_matches_etherparse() {
    let mut b = SEG;
    let (s, d) = (0x0a00_0002, 0x0a00_0001);
    let mut p = Packet::new_checked(&mut b[..]).unwrap();
    p.fill_checksum(s, d);
    assert!(p.verify_checksum(s, d));
    let h = etherparse::TcpHeader::from_slice(&b).unwrap().0;
    let want = h
        .calc_checksum_ipv4_raw([10, 0, 0, 2], [10, 0, 0, 1], &[0xaa, 0xbb])
        .unwrap();
    assert_eq!(h.checksum, want);
    assert!(h.syn && !h.ack);
    assert_eq!((h.source_port, h.destination_port), (40000, 80));
    b[21] ^= 1;
    assert!(!Packet::new_checked(&b[..]).unwrap().verify_checksum(s, d));
}

// SEG with its checksum for 10.0.0.2 -> 10.0.0.1, then after NAT of
// each side (checksums recomputed in full by an independent script).
const VALID: [u8; 22] = [
    0x9c, 0x40, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0x54, 0x91, 0, 0, 0xaa,
    0xbb,
];
// destination 10.0.0.1:80 -> 172.16.0.5:8080
const DNAT: [u8; 22] = [
    0x9c, 0x40, 0x1f, 0x90, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0x93, 0x3c, 0, 0, 0xaa,
    0xbb,
];
// source 10.0.0.2:40000 -> 192.0.2.10:443
const SNAT: [u8; 22] = [
    0x01, 0xbb, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0x37, 0x0e, 0, 0, 0xaa,
    0xbb,
];

#[test]
fn word_setters_keep_the_checksum_at_any_alignment() {
    let (s, d) = (0x0a00_0002, 0x0a00_0001);
    // 32-byte header (12 option bytes) + 3 data bytes
    let mut b = [0u8; 35];
    b[..20].copy_from_slice(&VALID[..20]);
    b[12] = 0x80;
    b[20..32].copy_from_slice(&[1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8]);
    b[32..].copy_from_slice(&[9, 8, 7]);
    Packet::new_unchecked(&mut b[..]).fill_checksum(s, d);
    for (at, v) in [
        (4, 0xdead_beef),
        (8, 7),
        (24, 0xffff_ffff),
        (21, 0x1234_5678),
        (31, 1),
    ] {
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_u32_update_checksum(at, v);
        assert!(p.verify_checksum(s, d), "at {at}");
        assert_eq!(u32::from_be_bytes(b[at..at + 4].try_into().unwrap()), v);
    }
    let mut p = Packet::new_unchecked(&mut b[..]);
    p.set_window_update_checksum(1234);
    p.set_seq_number_update_checksum(99);
    p.set_ack_number_update_checksum(100);
    assert!(p.verify_checksum(s, d));
    assert_eq!(
        (p.window(), p.seq_number(), p.ack_number()),
        (1234, 99, 100)
    );
    assert_eq!(p.options().len(), 12);
    // past the end: nothing written
    let before = b;
    Packet::new_unchecked(&mut b[..]).set_u32_update_checksum(33, 5);
    assert_eq!(b, before);
}

const SRC6: u128 = 0x2001_0db8_00c0_0000_0000_0000_0000_0007;
const VIP6: u128 = 0x2001_0db8_00f0_0000_0000_0000_0000_0010;
const RIP6: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0021;

/// etherparse's checksum of segment `b` under the IPv6 pseudo header.
fn etherparse_v6(b: &[u8], src: u128, dst: u128) -> u16 {
    let (h, rest) = etherparse::TcpHeader::from_slice(b).unwrap();
    h.calc_checksum_ipv6_raw(src.to_be_bytes(), dst.to_be_bytes(), rest)
        .unwrap()
}

#[test]
fn ipv6_checksum_matches_etherparse() {
    let mut b = SEG;
    let mut p = Packet::new_checked(&mut b[..]).unwrap();
    p.fill_checksum_v6(SRC6, VIP6);
    assert!(p.verify_checksum_v6(SRC6, VIP6));
    assert!(!p.verify_checksum_v6(SRC6, RIP6));
    assert_eq!(p.checksum(), etherparse_v6(&b, SRC6, VIP6));
    b[21] ^= 1;
    assert!(!Packet::new_checked(&b[..])
        .unwrap()
        .verify_checksum_v6(SRC6, VIP6));
}

#[test]
fn ipv6_port_setters_update_checksum() {
    let mut b = SEG;
    Packet::new_unchecked(&mut b[..]).fill_checksum_v6(SRC6, VIP6);
    let valid = b;
    // destination VIP6:80 -> RIP6:8080, checked against a full sum
    let mut p = Packet::new_unchecked(&mut b[..]);
    p.set_dst_port_update_checksum_v6(8080, VIP6, RIP6);
    assert_eq!(p.dst_port(), 8080);
    assert!(p.verify_checksum_v6(SRC6, RIP6));
    assert_eq!(p.checksum(), etherparse_v6(&b, SRC6, RIP6));
    // source (the reply) RIP6:8080 -> VIP6:80
    let mut r = valid;
    Packet::new_unchecked(&mut r[..]).fill_checksum_v6(RIP6, SRC6);
    let mut p = Packet::new_unchecked(&mut r[..]);
    p.set_src_port_update_checksum_v6(443, RIP6, VIP6);
    assert_eq!(p.src_port(), 443);
    assert_eq!(p.checksum(), etherparse_v6(&r, VIP6, SRC6));
    // a short buffer: the port is written, the checksum is not there
    let mut s = [0u8; 17];
    Packet::new_unchecked(&mut s[..]).set_dst_port_update_checksum_v6(8080, VIP6, RIP6);
    assert_eq!(&s[..4], &[0, 0, 0x1f, 0x90]);
    assert_eq!(&s[4..], &[0; 13]);
}

#[test]
fn port_setters_update_checksum() {
    let (s, d) = (0x0a00_0002, 0x0a00_0001);
    assert!(Packet::new_checked(&VALID[..])
        .unwrap()
        .verify_checksum(s, d));
    let mut b = VALID;
    Packet::new_unchecked(&mut b[..]).set_dst_port_update_checksum(8080, d, 0xac10_0005);
    assert_eq!(b, DNAT);
    assert!(Packet::new_unchecked(&b[..]).verify_checksum(s, 0xac10_0005));
    let mut b = VALID;
    Packet::new_unchecked(&mut b[..]).set_src_port_update_checksum(443, s, 0xc000_020a);
    assert_eq!(b, SNAT);
    // a short buffer: the port is written, the checksum is not there
    let mut b = [0u8; 4];
    Packet::new_unchecked(&mut b[..]).set_dst_port_update_checksum(8080, d, 1);
    assert_eq!(b, [0, 0, 0x1f, 0x90]);
}

// A Linux SYN: 40000 -> 80, seq 0x01020304, doff 10, SYN, window 64240,
// MSS 1460, SACK-permitted, TS 0x0a0b0c0d/0, NOP, window scale 7.
#[rustfmt::skip]
const SYN: [u8; 40] = [
    0x9c, 0x40, 0x00, 0x50, 0x01, 0x02, 0x03, 0x04, 0, 0, 0, 0,
    0xa0, 0x02, 0xfa, 0xf0, 0, 0, 0, 0,
    2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0x0a, 0x0b, 0x0c, 0x0d, 0, 0, 0, 0, 1, 3, 3, 7,
];

fn syn_repr() -> Repr {
    Repr {
        src_port: 40000,
        dst_port: 80,
        seq_number: 0x0102_0304,
        ack_number: 0,
        flags: crate::net::meta::tcp_flags::SYN,
        window: 64240,
        options: tcpopt::Options {
            mss: Some(1460),
            wscale: Some(7),
            sack_perm: true,
            ts: Some((0x0a0b_0c0d, 0)),
        },
    }
}

// An ACK with timestamps only: 80 -> 40000, seq 7, ack 0x01020305, doff
// 8, ACK, window 502, NOP NOP TS 5/0x0a0b0c0d.
#[rustfmt::skip]
const ACK_TS: [u8; 32] = [
    0x00, 0x50, 0x9c, 0x40, 0, 0, 0, 7, 0x01, 0x02, 0x03, 0x05,
    0x80, 0x10, 0x01, 0xf6, 0, 0, 0, 0,
    1, 1, 8, 10, 0, 0, 0, 5, 0x0a, 0x0b, 0x0c, 0x0d,
];

#[test]
fn repr_parses_and_emits_a_linux_syn() {
    let r = Repr::parse(&Packet::new_unchecked(&SYN[..])).unwrap();
    assert_eq!(r, syn_repr());
    assert_eq!((r.header_len(), r.buffer_len()), (40, 40));
    let mut b = [0u8; 40];
    r.emit(&mut Packet::new_unchecked(&mut b[..]));
    assert_eq!(b, SYN);
}

#[test]
fn repr_round_trips_timestamps_alone_and_no_options() {
    let r = Repr::parse(&Packet::new_checked(&ACK_TS[..]).unwrap()).unwrap();
    assert_eq!(
        r,
        Repr {
            src_port: 80,
            dst_port: 40000,
            seq_number: 7,
            ack_number: 0x0102_0305,
            flags: crate::net::meta::tcp_flags::ACK,
            window: 502,
            options: tcpopt::Options {
                ts: Some((5, 0x0a0b_0c0d)),
                ..tcpopt::Options::default()
            },
        }
    );
    let mut b = [0xeeu8; 32];
    b[12] = 0; // the reserved bits emit leaves alone
    r.emit(&mut Packet::new_unchecked(&mut b[..]));
    assert_eq!(b, ACK_TS);
    // SEG (no options, 2 data bytes): the header comes back, the payload
    // is left alone
    let r = Repr::parse(&Packet::new_unchecked(&SEG[..])).unwrap();
    assert_eq!(r.options, tcpopt::Options::default());
    assert_eq!(r.header_len(), MIN_HEADER_LEN);
    let mut b = [0u8; 22];
    b[20..].copy_from_slice(&SEG[20..]);
    r.emit(&mut Packet::new_unchecked(&mut b[..]));
    assert_eq!(b, SEG);
}

#[test]
fn repr_parse_refuses_what_check_len_refuses() {
    let p = |b: &[u8]| Repr::parse(&Packet::new_unchecked(b));
    assert_eq!(p(&SYN[..19]), Err(WireError::Truncated));
    assert_eq!(p(&SYN[..39]), Err(WireError::Truncated));
    let mut b = SYN;
    b[12] = 0x40;
    assert_eq!(p(&b), Err(WireError::BadHeaderLen));
    // a malformed option ends the list; what came before it counts
    let mut b = SYN;
    b[25] = 0; // SACK-permitted's length
    let r = p(&b).unwrap();
    assert_eq!(r.options.mss, Some(1460));
    assert!(!r.options.sack_perm && r.options.ts.is_none() && r.options.wscale.is_none());
}

#[test]
fn repr_emit_writes_nothing_to_a_short_buffer() {
    let mut b = [0u8; 39];
    syn_repr().emit(&mut Packet::new_unchecked(&mut b[..]));
    assert_eq!(b, [0; 39]);
}

/// etherparse's header for `r` (checksum 0).
fn etherparse_header(r: &Repr) -> etherparse::TcpHeader {
    use crate::net::meta::tcp_flags as f;
    use etherparse::TcpOptionElement as E;
    let mut h = etherparse::TcpHeader::new(r.src_port, r.dst_port, r.seq_number, r.window);
    h.acknowledgment_number = r.ack_number;
    h.syn = r.flags & f::SYN != 0;
    h.ack = r.flags & f::ACK != 0;
    h.rst = r.flags & f::RST != 0;
    h.fin = r.flags & f::FIN != 0;
    let o = r.options;
    let mut opts = Vec::new();
    if let Some(m) = o.mss {
        opts.push(E::MaximumSegmentSize(m));
    }
    match (o.ts, o.sack_perm) {
        (Some((v, e)), sack) => {
            if sack {
                opts.push(E::SelectiveAcknowledgementPermitted);
            } else {
                opts.extend([E::Noop, E::Noop]);
            }
            opts.push(E::Timestamp(v, e));
        }
        (None, true) => opts.extend([E::Noop, E::Noop, E::SelectiveAcknowledgementPermitted]),
        (None, false) => {}
    }
    if let Some(w) = o.wscale {
        opts.extend([E::Noop, E::WindowScale(w)]);
    }
    h.set_options(&opts).unwrap();
    h
}

#[test]
fn repr_matches_etherparse() {
    let (s, d) = (0x0a00_0001, 0x0a00_0002);
    let synack = Repr {
        src_port: 80,
        dst_port: 40000,
        seq_number: 0xdead_beef,
        ack_number: 0x0102_0305,
        flags: crate::net::meta::tcp_flags::SYN | crate::net::meta::tcp_flags::ACK,
        window: 65535,
        options: tcpopt::Options {
            mss: Some(1400),
            wscale: Some(9),
            sack_perm: false,
            ts: Some((1, 0x0a0b_0c0d)),
        },
    };
    for r in [syn_repr(), synack] {
        let h = etherparse_header(&r);
        let mut b = vec![0u8; r.buffer_len()];
        r.emit(&mut Packet::new_unchecked(&mut b[..]));
        assert_eq!(&b[..], &h.to_bytes()[..]);
        // etherparse reads back what we emit, and we read what it writes
        let (back, rest) = etherparse::TcpHeader::from_slice(&b).unwrap();
        assert_eq!((back, rest.len()), (h.clone(), 0));
        let theirs = h.to_bytes();
        assert_eq!(Repr::parse(&Packet::new_unchecked(&theirs[..])), Ok(r));
        // and the checksum filled after emit is theirs
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.fill_checksum(s, d);
        let want = h
            .calc_checksum_ipv4_raw(s.to_be_bytes(), d.to_be_bytes(), &[])
            .unwrap();
        assert_eq!(p.checksum(), want);
    }
}

proptest::proptest! {
    #[test]
    fn repr_round_trips(
        ports in proptest::prelude::any::<(u16, u16)>(),
        seq in proptest::prelude::any::<(u32, u32)>(),
        flags in proptest::prelude::any::<u8>(),
        window in proptest::prelude::any::<u16>(),
        mss in proptest::prelude::any::<Option<u16>>(),
        wscale in proptest::option::of(0u8..=tcpopt::MAX_WSCALE),
        sack_perm in proptest::prelude::any::<bool>(),
        ts in proptest::prelude::any::<Option<(u32, u32)>>(),
        junk in proptest::prelude::any::<u8>(),
    ) {
        let r = Repr {
            src_port: ports.0,
            dst_port: ports.1,
            seq_number: seq.0,
            ack_number: seq.1,
            flags,
            window,
            options: tcpopt::Options { mss, wscale, sack_perm, ts },
        };
        let mut b = [junk; MAX_HEADER_LEN];
        b[12] = 0; // the reserved bits emit leaves alone
        let n = r.header_len();
        proptest::prop_assert!(n % 4 == 0 && n <= MAX_HEADER_LEN);
        r.emit(&mut Packet::new_unchecked(&mut b[..n]));
        let p = Packet::new_checked(&b[..n]).unwrap();
        proptest::prop_assert_eq!(p.header_len(), n);
        proptest::prop_assert_eq!(Repr::parse(&p), Ok(r));
    }
}
