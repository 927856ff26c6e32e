//! Property tests: arbitrary frames and metadata never panic, and an error
//! never leaves a half-rewritten frame; valid frames always come out with
//! right checksums.

use super::*;
use crate::lb::testutil::{CLIENT6, OUR_IP6, RIP6, RIP6_2, VIP6};
use crate::lb::tunnel::Tunnel;
use crate::lb::xmit::nat::{nat as nat_rw, Side};
use crate::net::buf::{PacketBuf, VecBuf};
use proptest::prelude::*;

/// Addresses the functions are asked about: routable, unresolved
/// (RIP6_2), without route (GW6's low bits), or anything.
fn addr() -> impl Strategy<Value = u128> {
    prop_oneof![
        Just(CLIENT6),
        Just(VIP6),
        Just(RIP6),
        Just(RIP6_2),
        Just(crate::lb::testutil::GW6),
        any::<u128>(),
    ]
}

fn egress(mtu: u16) -> FakeEgress {
    FakeEgress {
        mtu,
        unresolved: vec![RIP6_2 as u32],
        noroute: vec![crate::lb::testutil::GW6 as u32],
    }
}

fn side() -> impl Strategy<Value = Side> {
    prop_oneof![Just(Side::Dst), Just(Side::Src)]
}

/// Metadata with offsets anywhere near (and past) a frame of `len` bytes.
fn meta(len: u16) -> impl Strategy<Value = PacketMeta6> {
    let off = 0..len.saturating_add(64);
    let quote = proptest::option::of((
        off.clone(),
        off.clone(),
        prop_oneof![Just(6u8), Just(17), any::<u8>()],
    ));
    (
        off.clone(),
        off.clone(),
        off,
        prop_oneof![Just(6u8), Just(17), Just(58), any::<u8>()],
        quote,
    )
        .prop_map(|(l3, l4, ip_len, proto, quote)| PacketMeta6 {
            l3_off: l3,
            l4_off: l4,
            ip_len,
            key: FlowKey6 {
                proto,
                ..Default::default()
            },
            icmp: quote.map(|(il3, il4, p)| IcmpQuote6 {
                inner_l3_off: il3,
                inner_l4_off: il4,
                inner_key: FlowKey6 {
                    proto: p,
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        })
}

/// One transmit function applied to a buffer.
type Call<'a> = &'a dyn Fn(&mut VecBuf) -> Result<u16, XmitError>;

/// Run every function on a copy of `frame` with `room` bytes of head and
/// tail room; an error must leave the frame as it was.
#[allow(clippy::too_many_arguments)]
fn run_all(
    frame: &[u8],
    m: &PacketMeta6,
    room: usize,
    eg: &FakeEgress,
    side: Side,
    a: u128,
    port: u16,
    mtu: u16,
) -> Result<(), TestCaseError> {
    let calls: [Call; 6] = [
        &|b| dr(b, a, eg),
        &|b| tun6(b, m, a, None, eg, Tunnel::IPIP),
        &|b| tun6(b, m, a, Some(OUR_IP6), eg, Tunnel::IPIP),
        &|b| packet_too_big6(b, m, mtu, eg),
        &|b| nat_rw(b, m, side, a, port, a, eg),
        &|b| nat6_icmp(b, m, side, a, port, eg),
    ];
    for (i, call) in calls.iter().enumerate() {
        let mut b = VecBuf::with_room(frame, room, room);
        if call(&mut b).is_err() {
            prop_assert_eq!(b.data(), frame, "call {} changed the frame", i);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_and_metadata_never_panic(
        (frame, m) in proptest::collection::vec(any::<u8>(), 0..160)
            .prop_flat_map(|f| { let n = f.len() as u16; (Just(f), meta(n)) }),
        room in 0usize..64,
        mtu in any::<u16>(),
        side in side(),
        a in addr(),
        port in any::<u16>(),
    ) {
        run_all(&frame, &m, room, &egress(mtu), side, a, port, mtu)?;
    }

    #[test]
    fn real_frames_with_mutated_metadata_never_panic(
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        udp in any::<bool>(),
        vlan in proptest::option::of(0u16..4096),
        cut in 0usize..200,
        icmp in any::<bool>(),
        mutate in proptest::option::of(meta(200)),
        room in 0usize..64,
        mtu in any::<u16>(),
        side in side(),
        a in addr(),
        port in any::<u16>(),
    ) {
        let l4 = if udp { L4::Udp(5353, 53) } else { L4::Tcp(40000, 80) };
        let mut ip = packet6(ip6(CLIENT6, VIP6, 64, 0, 0), l4, &payload);
        if icmp {
            ip = icmp6_error(ROUTER6, VIP6, 64, 1, 4, [0; 4], &ip);
        }
        let mut frame = eth(&ip, vlan);
        let m = mutate.unwrap_or_else(|| meta6_of(&frame));
        frame.truncate(frame.len().saturating_sub(cut));
        run_all(&frame, &m, room, &egress(mtu), side, a, port, mtu)?;
    }

    #[test]
    fn nat_output_checksums_are_always_right(
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        udp in any::<bool>(),
        src in any::<u128>(),
        sport in any::<u16>(),
        dport in any::<u16>(),
        hop in 2u8..,
        side in side(),
        new in any::<u128>(),
        port in any::<u16>(),
    ) {
        let l4 = if udp { L4::Udp(sport, dport) } else { L4::Tcp(sport, dport) };
        let f = eth(&packet6(ip6(src, VIP6, hop, 0, 0), l4, &payload), None);
        let m = meta6_of(&f);
        let mut b = VecBuf::new(&f);
        let r = nat_rw(&mut b, &m, side, new, port, RIP6, &FakeEgress::default());
        prop_assert_eq!(r, Ok(1));
        verify6(b.data());
        let out = meta6_of(b.data());
        let (want_src, want_dst, want_ports) = match side {
            Side::Dst => (src, new, (sport, port)),
            Side::Src => (new, VIP6, (port, dport)),
        };
        prop_assert_eq!((out.key.src, out.key.dst), (want_src, want_dst));
        prop_assert_eq!((out.key.sport, out.key.dport), want_ports);
        prop_assert_eq!(out.ttl, hop - 1);
    }

    #[test]
    fn nat_icmp_output_checksums_are_always_right(
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        udp in any::<bool>(),
        cut in 0usize..40,
        side in side(),
        new in any::<u128>(),
        port in any::<u16>(),
    ) {
        let l4 = if udp { L4::Udp(80, 40000) } else { L4::Tcp(80, 40000) };
        let q = packet6(ip6(VIP6, CLIENT6, 64, 0, 0), l4, &payload);
        let q = &q[..(q.len() - cut).max(44)];
        let f = eth(&icmp6_error(ROUTER6, VIP6, 64, 1, 4, [0; 4], q), None);
        let m = meta6_of(&f);
        let mut b = VecBuf::new(&f);
        let r = nat6_icmp(&mut b, &m, side, new, port, &FakeEgress::default());
        prop_assert!(r.is_ok() || r == Err(XmitError::NoRoute) || r == Err(XmitError::Unresolved));
        if r.is_ok() {
            verify6(b.data());
        }
    }
}
