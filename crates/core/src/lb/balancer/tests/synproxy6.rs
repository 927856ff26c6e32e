//! The SYN proxy for IPv6 services through the balancer's IPv6 path:
//! the cookie SYN/ACK, the proving ACK turned into the SYN to the real
//! server, the splice, the translation both ways, refusals and the
//! sweep's RST. Reference packets are built and read with etherparse
//! (its own checksums over the IPv6 pseudo header).

use super::v6::{dest6, svc6};
use super::*;
use crate::lb::snapshot::BuildError;
use crate::lb::synproxy::{cookie, SynProxy, SynproxyCount, MSS_TABLE6, PENDING_MS};
use crate::net::meta::FlowKey6;
use etherparse::{
    IpHeaders, IpNumber, Ipv6FlowLabel, Ipv6Header, PacketBuilder, SlicedPacket, TcpHeader,
    TcpOptionElement as O, TransportSlice,
};

const MS: u64 = 1_000_000;
const T0: u64 = 5_000 * S;
const C_ISN: u32 = 0x1000_0000;
const C_TS: u32 = 900_000;
const S_ISN: u32 = 0x7777_0000;
const S_TS: u32 = 12_345;

fn sp_env() -> Env {
    let ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        conn_capacity: 64,
        conn6_capacity: 64,
        seed: 42,
        synproxy: true,
        synproxy_secret: [7, 11],
        ..BalancerConfig::default()
    };
    let w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
    Env {
        ids,
        w,
        eg: FakeEgress::default(),
    }
}

fn sp_snap(e: &mut Env) -> Snapshot {
    e.snap(1, |b| {
        let mut s = svc6(Proto::Tcp, 80);
        s.synproxy = true;
        b.synproxy(true)
            .service(s, vec![dest6(RIP6, 8080, Method::Nat, 1)]);
    })
}

struct Seg<'a> {
    src: (u128, u16),
    dst: (u128, u16),
    seq: u32,
    ack: Option<u32>,
    syn: bool,
    rst: bool,
    window: u16,
    opts: &'a [O],
    payload: &'a [u8],
    macs: ([u8; 6], [u8; 6]),
}

impl Default for Seg<'_> {
    fn default() -> Self {
        Seg {
            src: (CLIENT6, 40000),
            dst: (VIP6, 80),
            seq: 0,
            ack: None,
            syn: false,
            rst: false,
            window: 502,
            opts: &[],
            payload: b"",
            macs: (CLIENT_MAC, OUR_MAC),
        }
    }
}

fn frame(s: &Seg) -> Vec<u8> {
    let mut t = TcpHeader::new(s.src.1, s.dst.1, s.seq, s.window);
    t.syn = s.syn;
    t.rst = s.rst;
    if let Some(a) = s.ack {
        t.ack = true;
        t.acknowledgment_number = a;
    }
    t.set_options(s.opts).unwrap();
    let h = Ipv6Header {
        traffic_class: 0,
        flow_label: Ipv6FlowLabel::ZERO,
        payload_length: 0,
        next_header: IpNumber::TCP,
        hop_limit: 64,
        source: s.src.0.to_be_bytes(),
        destination: s.dst.0.to_be_bytes(),
    };
    let mut v = Vec::new();
    PacketBuilder::ethernet2(s.macs.0, s.macs.1)
        .ip(IpHeaders::Ipv6(h, Default::default()))
        .tcp_header(t)
        .write(&mut v, s.payload)
        .unwrap();
    v
}

/// What dirigo sent: addresses, TCP header, payload, destination MAC;
/// the checksum checked against etherparse's over the IPv6 pseudo header.
struct Out {
    src: u128,
    dst: u128,
    hop_limit: u8,
    tcp: TcpHeader,
    payload: Vec<u8>,
    dst_mac: [u8; 6],
}

fn read(f: &[u8]) -> Out {
    let p = SlicedPacket::from_ethernet(f).unwrap();
    let Some(etherparse::NetSlice::Ipv6(ip)) = &p.net else {
        panic!("not ipv6")
    };
    let Some(TransportSlice::Tcp(t)) = &p.transport else {
        panic!("not tcp")
    };
    let h = ip.header();
    assert_eq!(
        t.calc_checksum_ipv6(h.source(), h.destination()).unwrap(),
        t.checksum(),
        "tcp checksum over the IPv6 pseudo header"
    );
    assert_eq!(
        f.len(),
        14 + 40 + h.payload_length() as usize,
        "payload length"
    );
    Out {
        src: u128::from_be_bytes(h.source()),
        dst: u128::from_be_bytes(h.destination()),
        hop_limit: h.hop_limit(),
        tcp: t.to_header(),
        payload: t.payload().to_vec(),
        dst_mac: f[0..6].try_into().unwrap(),
    }
}

fn opts(h: &TcpHeader) -> Vec<O> {
    h.options_iterator().map(|o| o.unwrap()).collect()
}

fn ts_of(h: &TcpHeader) -> Option<(u32, u32)> {
    opts(h).into_iter().find_map(|o| match o {
        O::Timestamp(a, b) => Some((a, b)),
        _ => None,
    })
}

fn client_syn(mss: u16) -> Vec<u8> {
    frame(&Seg {
        seq: C_ISN,
        syn: true,
        window: 64800,
        opts: &[
            O::MaximumSegmentSize(mss),
            O::SelectiveAcknowledgementPermitted,
            O::Timestamp(C_TS, 0),
            O::Noop,
            O::WindowScale(7),
        ],
        ..Seg::default()
    })
}

fn client_ack(cookie: u32, ts: u32, payload: &[u8]) -> Vec<u8> {
    frame(&Seg {
        seq: C_ISN + 1,
        ack: Some(cookie.wrapping_add(1)),
        opts: &[O::Noop, O::Noop, O::Timestamp(C_TS + 1, ts)],
        payload,
        ..Seg::default()
    })
}

fn server_synack() -> Vec<u8> {
    frame(&Seg {
        src: (RIP6, 8080),
        dst: (CLIENT6, 40000),
        seq: S_ISN,
        ack: Some(C_ISN + 1),
        syn: true,
        window: 64800,
        opts: &[
            O::MaximumSegmentSize(1440),
            O::SelectiveAcknowledgementPermitted,
            O::Timestamp(S_TS, C_TS + 1),
            O::Noop,
            O::WindowScale(SynProxy::WSCALE),
        ],
        macs: (mac_of([0, 0, 0, 0x21]), OUR_MAC),
        ..Seg::default()
    })
}

fn count(e: &Env, c: SynproxyCount) -> u64 {
    e.w.stats().synproxy[c.index()].load(Relaxed)
}

fn drops(e: &Env, d: LbDrop) -> u64 {
    e.w.stats().drops[d.index()].load(Relaxed)
}

/// SYN -> the IPv6 SYN/ACK with a cookie; returns (cookie, dirigo's TSval).
fn handshake(e: &mut Env, snap: &Snapshot, now: u64) -> (u32, u32) {
    let (v, out) = e.send6(snap, &client_syn(1440), now);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let o = read(&out);
    assert_eq!((o.src, o.dst), (VIP6, CLIENT6));
    assert!(o.tcp.syn && o.tcp.ack && !o.tcp.rst);
    assert_eq!(o.tcp.acknowledgment_number, C_ISN + 1);
    assert_eq!((o.tcp.source_port, o.tcp.destination_port), (80, 40000));
    assert_eq!(o.hop_limit, 64);
    assert_eq!(o.dst_mac, GW_MAC, "routed back toward the client");
    let (tsval, ecr) = ts_of(&o.tcp).expect("timestamps");
    assert_eq!(ecr, C_TS);
    let op = opts(&o.tcp);
    assert!(op.contains(&O::MaximumSegmentSize(1440)), "{op:?}");
    assert!(op.contains(&O::WindowScale(SynProxy::WSCALE)));
    assert!(op.contains(&O::SelectiveAcknowledgementPermitted));
    assert!(o.payload.is_empty());
    (o.tcp.sequence_number, tsval)
}

/// SYN, ACK, the server's SYN/ACK: a spliced IPv6 connection.
fn splice(e: &mut Env, snap: &Snapshot) -> (u32, u32) {
    let (cookie, ts) = handshake(e, snap, T0);
    assert_eq!(e.w.table6().len(), 0, "a SYN creates no state");
    let (v, out) = e.send6(snap, &client_ack(cookie, ts, b""), T0 + MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let o = read(&out);
    assert_eq!((o.src, o.dst), (CLIENT6, RIP6));
    assert_eq!((o.tcp.source_port, o.tcp.destination_port), (40000, 8080));
    assert!(o.tcp.syn && !o.tcp.ack);
    assert_eq!(o.tcp.sequence_number, C_ISN, "the client's own ISN");
    let op = opts(&o.tcp);
    assert!(op.contains(&O::MaximumSegmentSize(1440)), "{op:?}");
    assert!(op.contains(&O::WindowScale(7)));
    assert!(op.contains(&O::SelectiveAcknowledgementPermitted));
    assert_eq!(ts_of(&o.tcp), Some((C_TS + 1, 0)));
    assert_eq!(o.dst_mac, mac_of([0, 0, 0, 0x21]));
    assert_eq!(o.hop_limit, 63, "NATed like any request");
    assert_eq!(e.w.table6().len(), 1);
    assert_eq!(e.w.table().len(), 0);
    assert_eq!(e.states(T0 + MS)[0].0, "SYN_RECV");
    let (v, out) = e.send6(snap, &server_synack(), T0 + 2 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let o = read(&out);
    assert_eq!((o.src, o.dst), (CLIENT6, RIP6));
    assert_eq!((o.tcp.source_port, o.tcp.destination_port), (40000, 8080));
    assert!(o.tcp.ack && !o.tcp.syn);
    assert_eq!(o.tcp.sequence_number, C_ISN + 1);
    assert_eq!(o.tcp.acknowledgment_number, S_ISN + 1);
    assert_eq!(o.tcp.window_size, 502, "the client's window");
    assert_eq!(ts_of(&o.tcp), Some((C_TS + 1, S_TS)));
    assert_eq!(e.states(T0 + 2 * MS)[0].0, "ESTABLISHED");
    (cookie, ts)
}

#[test]
fn ipv6_cookie_handshake_splice_and_translation_both_ways() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = splice(&mut e, &snap);
    let body = b"GET / HTTP/1.0\r\n\r\n";
    let f = frame(&Seg {
        seq: C_ISN + 1,
        ack: Some(cookie.wrapping_add(101)),
        opts: &[
            O::Noop,
            O::Noop,
            O::Timestamp(C_TS + 9, ts.wrapping_add(40)),
            O::Noop,
            O::Noop,
            O::SelectiveAcknowledgement(
                (cookie.wrapping_add(201), cookie.wrapping_add(301)),
                [None, None, None],
            ),
        ],
        payload: body,
        ..Seg::default()
    });
    let (v, out) = e.send6(&snap, &f, T0 + 3 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let o = read(&out);
    assert_eq!(
        (o.src, o.dst, o.tcp.destination_port),
        (CLIENT6, RIP6, 8080)
    );
    assert_eq!(
        o.tcp.sequence_number,
        C_ISN + 1,
        "client sequence untouched"
    );
    assert_eq!(o.tcp.acknowledgment_number, S_ISN.wrapping_add(101));
    assert_eq!(ts_of(&o.tcp), Some((C_TS + 9, S_TS + 40)));
    assert!(opts(&o.tcp).contains(&O::SelectiveAcknowledgement(
        (S_ISN.wrapping_add(201), S_ISN.wrapping_add(301)),
        [None, None, None],
    )));
    assert_eq!(o.payload, body);
    // the server's data: sequence and TSval back in the client's view
    let f = frame(&Seg {
        src: (RIP6, 8080),
        dst: (CLIENT6, 40000),
        seq: S_ISN.wrapping_add(1),
        ack: Some(C_ISN + 1 + body.len() as u32),
        window: 509,
        opts: &[O::Noop, O::Noop, O::Timestamp(S_TS + 77, C_TS + 9)],
        payload: b"HTTP/1.0 200 OK\r\n",
        macs: (mac_of([0, 0, 0, 0x21]), OUR_MAC),
        ..Seg::default()
    });
    let (v, out) = e.send6(&snap, &f, T0 + 4 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let o = read(&out);
    assert_eq!((o.src, o.tcp.source_port, o.dst), (VIP6, 80, CLIENT6));
    assert_eq!(o.tcp.sequence_number, cookie.wrapping_add(1));
    assert_eq!(o.tcp.acknowledgment_number, C_ISN + 1 + body.len() as u32);
    assert_eq!(ts_of(&o.tcp), Some((ts.wrapping_add(77), C_TS + 9)));
    assert_eq!(o.tcp.window_size, 509, "same scale: window untouched");
    assert_eq!(o.payload, b"HTTP/1.0 200 OK\r\n");
    // established: the IPv6 shortcut translates too (a second segment)
    let (v, out) = e.send6(&snap, &f, T0 + 5 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    assert_eq!(read(&out).tcp.sequence_number, cookie.wrapping_add(1));
    assert_eq!(count(&e, SynproxyCount::CookiesSent), 1);
    assert_eq!(count(&e, SynproxyCount::CookiesValid), 1);
    assert_eq!(count(&e, SynproxyCount::Opened), 1);
    assert_eq!(e.load(&snap, 0, 0), (1, 0), "active once spliced");
}

#[test]
fn the_ipv6_cookie_is_the_cookie_of_the_full_tuple() {
    // the SYN/ACK's sequence number is what CookieKeys makes of the
    // 128-bit tuple, with the MSS of Linux's IPv6 table
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (c, _) = handshake(&mut e, &snap, T0);
    let keys = cookie::CookieKeys::new([7, 11]);
    let key = FlowKey6 {
        src: CLIENT6,
        dst: VIP6,
        sport: 40000,
        dport: 80,
        proto: 6,
    };
    let count = cookie::count_of(crate::lb::conn::tick_of(T0));
    assert_eq!(keys.check(&key, C_ISN, c, count), Ok(MSS_TABLE6[2]));
    assert_eq!(c, keys.make(&key, C_ISN, 1440, count));
}

#[test]
fn a_bad_ipv6_cookie_is_a_counted_drop_and_opens_nothing() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = handshake(&mut e, &snap, T0);
    let (v, _) = e.send6(&snap, &client_ack(cookie ^ 0x0040_0000, ts, b""), T0 + MS);
    assert_eq!(v, LbVerdict::Drop(LbDrop::SynproxyBadCookie));
    // a forged ACK (no SYN first) from another client address
    let f = frame(&Seg {
        src: (CLIENT6 + 1, 40000),
        seq: 5,
        ack: Some(12345),
        ..Seg::default()
    });
    let (v, _) = e.send6(&snap, &f, T0 + MS);
    assert_eq!(v, LbVerdict::Drop(LbDrop::SynproxyBadCookie));
    assert_eq!(drops(&e, LbDrop::SynproxyBadCookie), 2);
    // the real cookie, too late
    let late = T0 + 3 * 60 * S;
    let (v, _) = e.send6(&snap, &client_ack(cookie, ts, b""), late);
    assert_eq!(v, LbVerdict::Drop(LbDrop::SynproxyCookieExpired));
    assert_eq!(e.w.table6().len(), 0);
    assert_eq!(count(&e, SynproxyCount::CookiesValid), 0);
}

#[test]
fn ipv6_data_waits_and_a_silent_server_gets_the_client_an_ipv6_rst() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = handshake(&mut e, &snap, T0);
    e.send6(&snap, &client_ack(cookie, ts, b""), T0 + MS);
    // data before the server answers is held
    let (v, _) = e.send6(&snap, &client_ack(cookie, ts, b"early"), T0 + 2 * MS);
    // held under a key no IPv4 record has (the hold area counts per key)
    assert!(
        matches!(v, LbVerdict::Wait { conn } if conn & (1 << 31) != 0),
        "{v:?}"
    );
    // the sweep after the pending time queues the client's RST
    let late = T0 + (PENDING_MS as u64 + 100) * MS;
    e.w.expire6(late, 1000);
    assert_eq!(e.w.table6().len(), 0);
    let mut frames = Vec::new();
    e.w.drain_resets(&e.eg, &mut |p, f| frames.push((p, f.to_vec())));
    assert_eq!(frames.len(), 1);
    let (p, f) = &frames[0];
    assert_eq!(*p, 0);
    let o = read(f);
    assert!(o.tcp.rst && !o.tcp.syn);
    assert_eq!((o.src, o.tcp.source_port), (VIP6, 80));
    assert_eq!((o.dst, o.tcp.destination_port), (CLIENT6, 40000));
    assert_eq!(o.tcp.sequence_number, cookie.wrapping_add(1));
    assert_eq!(o.dst_mac, GW_MAC);
    assert_eq!(count(&e, SynproxyCount::ServerTimeout), 1);
    let mut again = 0;
    e.w.drain_resets(&e.eg, &mut |_, _| again += 1);
    assert_eq!(again, 0, "drained once");
}

#[test]
fn a_refusing_ipv6_server_gets_the_client_an_rst() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = handshake(&mut e, &snap, T0);
    e.send6(&snap, &client_ack(cookie, ts, b""), T0 + MS);
    let f = frame(&Seg {
        src: (RIP6, 8080),
        dst: (CLIENT6, 40000),
        seq: 0,
        ack: Some(C_ISN + 1),
        rst: true,
        macs: (mac_of([0, 0, 0, 0x21]), OUR_MAC),
        ..Seg::default()
    });
    let (v, out) = e.send6(&snap, &f, T0 + 2 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let o = read(&out);
    assert!(o.tcp.rst);
    assert_eq!((o.src, o.dst), (VIP6, CLIENT6));
    assert_eq!(o.tcp.sequence_number, cookie.wrapping_add(1));
    assert_eq!(e.w.table6().len(), 0);
    assert_eq!(count(&e, SynproxyCount::ServerReset), 1);
}

#[test]
fn the_snapshot_takes_ipv6_synproxy_but_not_with_nat64() {
    let mut e = sp_env();
    let _ = sp_snap(&mut e);
    let pool = [std::net::Ipv4Addr::new(10, 0, 0, 200)];
    let mut s = svc6(Proto::Tcp, 81);
    s.synproxy = true;
    let mut b = SnapshotBuilder::new();
    b.synproxy(true)
        .nat64_pool(&pool)
        .service(s, vec![dest(RIP, 8080, Method::Nat, 1)]);
    assert!(matches!(
        b.build(&mut e.ids, 2),
        Err(BuildError::Ipv6Unsupported(_, _))
    ));
}

proptest::proptest! {
    /// Any flags, numbers and option bytes in an IPv6 segment of a pending
    /// proxied connection, from either side: no panic, at most the one
    /// connection.
    #[test]
    fn arbitrary_ipv6_segments_to_a_proxied_service_never_panic(
        seq in proptest::prelude::any::<u32>(),
        ack in proptest::prelude::any::<u32>(),
        flags in proptest::prelude::any::<u8>(),
        opts in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
        from_server in proptest::prelude::any::<bool>(),
    ) {
        let mut e = sp_env();
        let snap = sp_snap(&mut e);
        let (cookie, ts) = handshake(&mut e, &snap, T0);
        e.send6(&snap, &client_ack(cookie, ts, b""), T0 + MS);
        let mut f = if from_server { server_synack() } else { client_ack(cookie, ts, b"x") };
        let l4 = 14 + 40;
        f[l4 + 4..l4 + 8].copy_from_slice(&seq.to_be_bytes());
        f[l4 + 8..l4 + 12].copy_from_slice(&ack.to_be_bytes());
        f[l4 + 13] = flags;
        let room = (f[l4 + 12] >> 4) as usize * 4 - 20;
        for (i, b) in opts.iter().take(room).enumerate() {
            f[l4 + 20 + i] = *b;
        }
        let _ = e.send6(&snap, &f, T0 + 2 * MS);
        proptest::prop_assert!(e.w.table6().len() <= 1);
    }
}
