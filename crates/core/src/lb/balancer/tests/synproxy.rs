//! The SYN proxy on the sans-IO core: cookies, the splice, byte-exact
//! sequence/SACK/timestamp translation, timeouts and refusals. Reference
//! packets are built and read with etherparse.

use super::*;
use crate::lb::synproxy::{SynProxy, SynproxyCount, PENDING_MS};
use etherparse::{
    IpHeaders, IpNumber, Ipv4Header, PacketBuilder, SlicedPacket, TcpHeader, TcpOptionElement as O,
    TransportSlice,
};

const MS: u64 = 1_000_000;
const T0: u64 = 5_000 * S; // a clock far from 0

fn sp_env() -> Env {
    sp_env_of(64)
}

/// [`sp_env`] with a table of `cap` connections.
fn sp_env_of(cap: u32) -> Env {
    let ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        conn_capacity: cap,
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
        let mut s = svc(Proto::Tcp, 80);
        s.synproxy = true;
        b.synproxy(true)
            .service(s, vec![dest(RIP, 8080, Method::Nat, 1)]);
    })
}

struct Seg<'a> {
    src: ([u8; 4], u16),
    dst: ([u8; 4], u16),
    seq: u32,
    ack: Option<u32>,
    syn: bool,
    rst: bool,
    window: u16,
    opts: &'a [O],
    payload: &'a [u8],
}

impl Default for Seg<'_> {
    fn default() -> Self {
        Seg {
            src: (CLIENT, 40000),
            dst: (VIP, 80),
            seq: 0,
            ack: None,
            syn: false,
            rst: false,
            window: 502,
            opts: &[],
            payload: b"",
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
    let mut h = Ipv4Header::new(0, 64, IpNumber::TCP, s.src.0, s.dst.0).unwrap();
    h.dont_fragment = true;
    let mut v = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ip(IpHeaders::Ipv4(h, Default::default()))
        .tcp_header(t)
        .write(&mut v, s.payload)
        .unwrap();
    v
}

/// The TCP header, addresses and payload of a frame dirigo sent.
struct Out {
    src: [u8; 4],
    dst: [u8; 4],
    tcp: TcpHeader,
    payload: Vec<u8>,
    dst_mac: [u8; 6],
}

fn read(f: &[u8]) -> Out {
    verify(f);
    let p = SlicedPacket::from_ethernet(f).unwrap();
    let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else {
        panic!("not ipv4")
    };
    let Some(TransportSlice::Tcp(t)) = &p.transport else {
        panic!("not tcp")
    };
    Out {
        src: ip.header().source(),
        dst: ip.header().destination(),
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

const C_ISN: u32 = 0x1000_0000;
const C_TS: u32 = 900_000;
const S_ISN: u32 = 0x7777_0000;
const S_TS: u32 = 12_345;

fn client_syn() -> Vec<u8> {
    frame(&Seg {
        seq: C_ISN,
        syn: true,
        window: 64240,
        opts: &[
            O::MaximumSegmentSize(1460),
            O::SelectiveAcknowledgementPermitted,
            O::Timestamp(C_TS, 0),
            O::Noop,
            O::WindowScale(7),
        ],
        ..Seg::default()
    })
}

/// SYN -> SYN/ACK; returns (cookie, dirigo's TSval).
fn handshake(e: &mut Env, snap: &Snapshot, now: u64) -> (u32, u32) {
    let (v, out) = e.send(snap, &client_syn(), now);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let o = read(&out);
    assert_eq!((o.src, o.dst), (VIP, CLIENT));
    assert!(o.tcp.syn && o.tcp.ack && !o.tcp.rst);
    assert_eq!(o.tcp.acknowledgment_number, C_ISN + 1);
    assert_eq!((o.tcp.source_port, o.tcp.destination_port), (80, 40000));
    assert_eq!(o.dst_mac, GW_MAC, "routed back toward the client");
    let (tsval, ecr) = ts_of(&o.tcp).expect("timestamps");
    assert_eq!(ecr, C_TS);
    let op = opts(&o.tcp);
    assert!(op.contains(&O::MaximumSegmentSize(1460)));
    assert!(op.contains(&O::WindowScale(SynProxy::WSCALE)));
    assert!(op.contains(&O::SelectiveAcknowledgementPermitted));
    assert!(o.payload.is_empty());
    (o.tcp.sequence_number, tsval)
}

fn client_ack(cookie: u32, ts: u32, payload: &[u8]) -> Vec<u8> {
    frame(&Seg {
        seq: C_ISN + 1,
        ack: Some(cookie.wrapping_add(1)),
        window: 502,
        opts: &[O::Noop, O::Noop, O::Timestamp(C_TS + 1, ts)],
        payload,
        ..Seg::default()
    })
}

fn server_synack(wscale: u8) -> Vec<u8> {
    let mut f = frame(&Seg {
        src: (RIP, 8080),
        dst: (CLIENT, 40000),
        seq: S_ISN,
        ack: Some(C_ISN + 1),
        syn: true,
        window: 65160,
        opts: &[
            O::MaximumSegmentSize(1460),
            O::SelectiveAcknowledgementPermitted,
            O::Timestamp(S_TS, C_TS + 1),
            O::Noop,
            O::WindowScale(wscale),
        ],
        ..Seg::default()
    });
    f[0..6].copy_from_slice(&OUR_MAC);
    f[6..12].copy_from_slice(&mac_of(RIP));
    f
}

/// SYN, ACK, the server's SYN/ACK: a spliced connection. Returns the
/// cookie and dirigo's TSval.
fn splice(e: &mut Env, snap: &Snapshot, wscale: u8) -> (u32, u32) {
    let (cookie, ts) = handshake(e, snap, T0);
    assert_eq!(e.w.table().len(), 0, "a SYN creates no state");
    let (v, out) = e.send(snap, &client_ack(cookie, ts, b""), T0 + MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let o = read(&out);
    assert_eq!((o.src, o.dst), (CLIENT, RIP));
    assert_eq!((o.tcp.source_port, o.tcp.destination_port), (40000, 8080));
    assert!(o.tcp.syn && !o.tcp.ack);
    assert_eq!(o.tcp.sequence_number, C_ISN, "the client's own ISN");
    let op = opts(&o.tcp);
    assert!(op.contains(&O::MaximumSegmentSize(1460)));
    assert!(
        op.contains(&O::WindowScale(7)),
        "the client's scale: {op:?}"
    );
    assert!(op.contains(&O::SelectiveAcknowledgementPermitted));
    assert_eq!(ts_of(&o.tcp), Some((C_TS + 1, 0)));
    assert_eq!(o.dst_mac, mac_of(RIP));
    assert_eq!(e.w.table().len(), 1);
    assert_eq!(e.states(T0 + MS)[0].0, "SYN_RECV");
    // the server answers; dirigo completes the server's handshake
    let (v, out) = e.send(snap, &server_synack(wscale), T0 + 2 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let o = read(&out);
    assert_eq!((o.src, o.dst), (CLIENT, RIP));
    assert!(o.tcp.ack && !o.tcp.syn);
    assert_eq!(o.tcp.sequence_number, C_ISN + 1);
    assert_eq!(o.tcp.acknowledgment_number, S_ISN + 1);
    assert_eq!(o.tcp.window_size, 502, "the client's window");
    assert_eq!(ts_of(&o.tcp), Some((C_TS + 1, S_TS)));
    assert_eq!(e.states(T0 + 2 * MS)[0].0, "ESTABLISHED");
    (cookie, ts)
}

fn count(e: &Env, c: SynproxyCount) -> u64 {
    e.w.stats().synproxy[c.index()].load(Relaxed)
}

#[test]
fn cookie_handshake_splice_and_byte_exact_translation() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = splice(&mut e, &snap, SynProxy::WSCALE);
    // client data: ack, a SACK block and TSecr in the client's view
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
                [
                    Some((cookie.wrapping_add(401), cookie.wrapping_add(501))),
                    None,
                    None,
                ],
            ),
        ],
        payload: body,
        ..Seg::default()
    });
    let (v, out) = e.send(&snap, &f, T0 + 3 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let o = read(&out);
    assert_eq!((o.dst, o.tcp.destination_port), (RIP, 8080));
    assert_eq!(
        o.tcp.sequence_number,
        C_ISN + 1,
        "client sequence untouched"
    );
    assert_eq!(o.tcp.acknowledgment_number, S_ISN.wrapping_add(101));
    assert_eq!(ts_of(&o.tcp), Some((C_TS + 9, S_TS + 40)));
    assert!(opts(&o.tcp).contains(&O::SelectiveAcknowledgement(
        (S_ISN.wrapping_add(201), S_ISN.wrapping_add(301)),
        [
            Some((S_ISN.wrapping_add(401), S_ISN.wrapping_add(501))),
            None,
            None
        ],
    )));
    assert_eq!(o.payload, body);
    // server data back: sequence and TSval in the client's view
    let mut f = frame(&Seg {
        src: (RIP, 8080),
        dst: (CLIENT, 40000),
        seq: S_ISN.wrapping_add(1),
        ack: Some(C_ISN + 1 + body.len() as u32),
        window: 509,
        opts: &[O::Noop, O::Noop, O::Timestamp(S_TS + 77, C_TS + 9)],
        payload: b"HTTP/1.0 200 OK\r\n",
        ..Seg::default()
    });
    f[0..6].copy_from_slice(&OUR_MAC);
    let (v, out) = e.send(&snap, &f, T0 + 4 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let o = read(&out);
    assert_eq!((o.src, o.tcp.source_port), (VIP, 80));
    assert_eq!(o.tcp.sequence_number, cookie.wrapping_add(1));
    assert_eq!(o.tcp.acknowledgment_number, C_ISN + 1 + body.len() as u32);
    assert_eq!(ts_of(&o.tcp), Some((ts.wrapping_add(77), C_TS + 9)));
    assert_eq!(o.tcp.window_size, 509, "same scale: window untouched");
    assert_eq!(o.payload, b"HTTP/1.0 200 OK\r\n");
    // a retransmitted ACK of the handshake is translated too
    let (v, out) = e.send(&snap, &client_ack(cookie, ts, b""), T0 + 5 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(read(&out).tcp.acknowledgment_number, S_ISN + 1);
    assert_eq!(count(&e, SynproxyCount::CookiesSent), 1);
    assert_eq!(count(&e, SynproxyCount::CookiesValid), 1);
    assert_eq!(count(&e, SynproxyCount::Opened), 1);
    assert_eq!(e.load(&snap, 0, 0), (1, 0), "active once spliced");
}

/// Connections opened through the proxy keep their translation when the
/// one-line table moves their records to make room for later ones: a
/// table for 32 connections (48 record slots) fills to its capacity with
/// NAT connections waiting for their server, which makes it move records;
/// then every server answers, and each
/// connection's segments carry its own cookie. Fails if the proxy's
/// per-record state does not follow a move.
#[test]
fn proxied_connections_keep_their_state_when_their_records_move() {
    let mut e = sp_env_of(32);
    let snap = sp_snap(&mut e);
    const N: u16 = 32;
    let mut opened = Vec::new();
    for p in 0..N {
        let cport = 30_000 + p;
        let now = T0 + u64::from(p) * MS;
        let mut syn = client_syn();
        let ack_of = |f: &mut Vec<u8>| {
            // the client port, and the TCP checksum for it
            let mut s = Seg {
                src: (CLIENT, cport),
                ..Seg::default()
            };
            let o = read(f);
            s.seq = o.tcp.sequence_number;
            s.ack = o.tcp.ack.then_some(o.tcp.acknowledgment_number);
            s.syn = o.tcp.syn;
            s.window = o.tcp.window_size;
            let opts = opts(&o.tcp);
            s.opts = &opts;
            *f = frame(&s);
        };
        ack_of(&mut syn);
        let (v, out) = e.send(&snap, &syn, now);
        assert_eq!(v, LbVerdict::Tx { port: 0 }, "{p}: SYN/ACK");
        let o = read(&out);
        let (cookie, ts) = (o.tcp.sequence_number, ts_of(&o.tcp).expect("ts").0);
        let mut ack = client_ack(cookie, ts, b"");
        ack_of(&mut ack);
        let (v, _) = e.send(&snap, &ack, now);
        assert_eq!(v, LbVerdict::Tx { port: 1 }, "{p}: SYN to the server");
        opened.push((cport, cookie));
    }
    assert_eq!(e.w.table().len(), u32::from(N));
    assert!(e.w.table().moved() > 0, "the table never moved a record");
    let now = T0 + 100 * MS;
    for &(cport, cookie) in &opened {
        let mut f = server_synack(SynProxy::WSCALE);
        let o = read(&f);
        let mut s = Seg {
            src: (RIP, 8080),
            dst: (CLIENT, cport),
            seq: o.tcp.sequence_number,
            ack: Some(o.tcp.acknowledgment_number),
            syn: true,
            window: o.tcp.window_size,
            ..Seg::default()
        };
        let op = opts(&o.tcp);
        s.opts = &op;
        f = frame(&s);
        f[0..6].copy_from_slice(&OUR_MAC);
        f[6..12].copy_from_slice(&mac_of(RIP));
        let (v, out) = e.send(&snap, &f, now);
        assert_eq!(
            v,
            LbVerdict::Tx { port: 1 },
            "{cport}: the server's SYN/ACK"
        );
        let o = read(&out);
        assert_eq!(o.tcp.acknowledgment_number, S_ISN + 1, "{cport}");
        // server data: its sequence in this client's view (its cookie)
        let mut d = frame(&Seg {
            src: (RIP, 8080),
            dst: (CLIENT, cport),
            seq: S_ISN.wrapping_add(1),
            ack: Some(C_ISN + 1),
            window: 509,
            payload: b"hello",
            ..Seg::default()
        });
        d[0..6].copy_from_slice(&OUR_MAC);
        let (v, out) = e.send(&snap, &d, now + MS);
        assert_eq!(v, LbVerdict::Tx { port: 0 }, "{cport}: server data");
        let o = read(&out);
        assert_eq!(o.tcp.destination_port, cport);
        assert_eq!(o.tcp.sequence_number, cookie.wrapping_add(1), "{cport}");
    }
}

#[test]
fn another_server_window_scale_is_rescaled() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, _) = splice(&mut e, &snap, 9);
    let mut f = frame(&Seg {
        src: (RIP, 8080),
        dst: (CLIENT, 40000),
        seq: S_ISN.wrapping_add(1),
        ack: Some(C_ISN + 1),
        window: 100, // 100 << 9 bytes
        ..Seg::default()
    });
    f[0..6].copy_from_slice(&OUR_MAC);
    let (_, out) = e.send(&snap, &f, T0 + 3 * MS);
    let o = read(&out);
    assert_eq!(o.tcp.sequence_number, cookie.wrapping_add(1));
    assert_eq!(o.tcp.window_size, 400, "100 << 9 >> 7");
}

#[test]
fn data_before_the_server_answers_waits() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = handshake(&mut e, &snap, T0);
    let (v, _) = e.send(&snap, &client_ack(cookie, ts, b""), T0 + MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let data = client_ack(cookie, ts, b"early");
    let (v, _) = e.send(&snap, &data, T0 + 2 * MS);
    assert!(matches!(v, LbVerdict::Wait { .. }), "{v:?}");
    // the held packet, processed again after the splice, goes through
    e.send(&snap, &server_synack(7), T0 + 3 * MS);
    let (v, out) = e.send(&snap, &data, T0 + 4 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let o = read(&out);
    assert_eq!(o.payload, b"early");
    assert_eq!(o.tcp.acknowledgment_number, S_ISN + 1);
    // the ACK again while pending re-sends the SYN
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = handshake(&mut e, &snap, T0);
    e.send(&snap, &client_ack(cookie, ts, b""), T0 + MS);
    let (v, out) = e.send(&snap, &client_ack(cookie, ts, b""), T0 + 2 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert!(read(&out).tcp.syn);
    assert_eq!(e.w.table().len(), 1);
}

#[test]
fn forged_old_and_stray_acks_are_refused() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = handshake(&mut e, &snap, T0);
    let (v, _) = e.send(&snap, &client_ack(cookie ^ 0x0010_0000, ts, b""), T0 + MS);
    assert_eq!(v, LbVerdict::Drop(LbDrop::SynproxyBadCookie));
    let (v, _) = e.send(&snap, &client_ack(cookie, ts, b""), T0 + 125 * S);
    assert_eq!(v, LbVerdict::Drop(LbDrop::SynproxyCookieExpired));
    // another worker's secret does not validate it
    let mut other = sp_env();
    other.w = Balancer::new(
        &BalancerConfig {
            conn_capacity: 64,
            synproxy: true,
            synproxy_secret: [8, 11],
            ..BalancerConfig::default()
        },
        other.ids.dests.capacity(),
        other.ids.services.capacity(),
    );
    let snap2 = sp_snap(&mut other);
    let (v, _) = other.send(&snap2, &client_ack(cookie, ts, b""), T0 + MS);
    assert_eq!(v, LbVerdict::Drop(LbDrop::SynproxyBadCookie));
    // a bare RST or FIN to the service creates nothing
    let f = frame(&Seg {
        seq: 5,
        rst: true,
        ..Seg::default()
    });
    assert_eq!(e.send(&snap, &f, T0).0, LbVerdict::Drop(LbDrop::NotTracked));
    assert_eq!(e.w.table().len(), 0);
    // the cookie still works within its two minutes
    let (v, _) = e.send(&snap, &client_ack(cookie, ts, b""), T0 + 90 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
}

#[test]
fn a_syn_flood_leaves_no_state_and_reaches_no_server() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    for i in 0..10_000u32 {
        let f = frame(&Seg {
            src: (
                [198, 18, (i >> 8) as u8, i as u8],
                1024 + (i % 50_000) as u16,
            ),
            seq: i.wrapping_mul(0x9e37_79b9),
            syn: true,
            ..Seg::default()
        });
        let (v, out) = e.send(&snap, &f, T0 + i as u64 * 1000);
        assert_eq!(v, LbVerdict::Tx { port: 0 });
        assert_ne!(read(&out).dst, RIP);
    }
    assert_eq!(e.w.table().len(), 0);
    assert_eq!(count(&e, SynproxyCount::CookiesSent), 10_000);
}

#[test]
fn a_server_that_never_answers_gets_the_client_an_rst() {
    // from the client's next packet
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = handshake(&mut e, &snap, T0);
    e.send(&snap, &client_ack(cookie, ts, b""), T0 + MS);
    let late = T0 + MS + PENDING_MS as u64 * MS + MS;
    let (v, out) = e.send(&snap, &client_ack(cookie, ts, b"data"), late);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let o = read(&out);
    assert!(o.tcp.rst);
    assert_eq!((o.src, o.dst), (VIP, CLIENT));
    assert_eq!(o.tcp.sequence_number, cookie.wrapping_add(1));
    assert_eq!(e.w.table().len(), 0);
    assert_eq!(count(&e, SynproxyCount::ServerTimeout), 1);
    // a server's SYN/ACK after the deadline: too late, the client's RST
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = handshake(&mut e, &snap, T0);
    e.send(&snap, &client_ack(cookie, ts, b""), T0 + MS);
    let (v, out) = e.send(&snap, &server_synack(7), late);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let o = read(&out);
    assert!(o.tcp.rst && (o.src, o.dst) == (VIP, CLIENT));
    assert_eq!(o.tcp.sequence_number, cookie.wrapping_add(1));
    assert_eq!(e.w.table().len(), 0);
    // from the sweep
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = handshake(&mut e, &snap, T0);
    e.send(&snap, &client_ack(cookie, ts, b""), T0 + MS);
    e.w.expire(late, 1000);
    assert_eq!(e.w.table().len(), 0);
    let mut frames = Vec::new();
    e.w.drain_resets(&e.eg, &mut |p, f| frames.push((p, f.to_vec())));
    assert_eq!(frames.len(), 1);
    let (p, f) = &frames[0];
    assert_eq!(*p, 0);
    let o = read(f);
    assert!(o.tcp.rst && !o.tcp.syn);
    assert_eq!((o.src, o.tcp.source_port), (VIP, 80));
    assert_eq!((o.dst, o.tcp.destination_port), (CLIENT, 40000));
    assert_eq!(o.tcp.sequence_number, cookie.wrapping_add(1));
    assert_eq!(o.dst_mac, GW_MAC);
    let mut again = 0;
    e.w.drain_resets(&e.eg, &mut |_, _| again += 1);
    assert_eq!(again, 0, "drained once");
    assert_eq!(count(&e, SynproxyCount::ServerTimeout), 1);
}

#[test]
fn a_refusing_server_gets_the_client_an_rst() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let (cookie, ts) = handshake(&mut e, &snap, T0);
    e.send(&snap, &client_ack(cookie, ts, b""), T0 + MS);
    let mut f = frame(&Seg {
        src: (RIP, 8080),
        dst: (CLIENT, 40000),
        seq: 0,
        ack: Some(C_ISN + 1),
        rst: true,
        ..Seg::default()
    });
    f[0..6].copy_from_slice(&OUR_MAC);
    let (v, out) = e.send(&snap, &f, T0 + 2 * MS);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let o = read(&out);
    assert!(o.tcp.rst);
    assert_eq!((o.src, o.dst), (VIP, CLIENT));
    assert_eq!(o.tcp.sequence_number, cookie.wrapping_add(1));
    assert_eq!(e.w.table().len(), 0);
    assert_eq!(count(&e, SynproxyCount::ServerReset), 1);
}

#[test]
fn a_client_without_options_gets_a_plain_cookie() {
    let mut e = sp_env();
    let snap = sp_snap(&mut e);
    let syn = frame(&Seg {
        seq: C_ISN,
        syn: true,
        ..Seg::default()
    });
    let (_, out) = e.send(&snap, &syn, T0);
    let o = read(&out);
    assert_eq!(opts(&o.tcp), vec![O::MaximumSegmentSize(536)]);
    let cookie = o.tcp.sequence_number;
    let ack = frame(&Seg {
        seq: C_ISN + 1,
        ack: Some(cookie.wrapping_add(1)),
        ..Seg::default()
    });
    let (v, out) = e.send(&snap, &ack, T0 + MS);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(opts(&read(&out).tcp), vec![O::MaximumSegmentSize(536)]);
}

#[test]
fn synproxy_is_refused_where_it_cannot_work() {
    let mut ids = LbIds::new(16, 64);
    let mut s = svc(Proto::Tcp, 80);
    s.synproxy = true;
    let build = |ids: &mut LbIds, s: ServiceSpec, m: Method, on: bool| {
        let mut b = SnapshotBuilder::new();
        b.synproxy(on).service(s, vec![dest(RIP, 80, m, 1)]);
        b.build(ids, 1).map(|_| ()).map_err(|e| e.to_string())
    };
    let e = build(&mut ids, s.clone(), Method::Dr, true).unwrap_err();
    assert!(e.contains("NAT (-m)") && e.contains("DR (-g)"), "{e}");
    let e = build(&mut ids, s.clone(), Method::Tun, true).unwrap_err();
    assert!(e.contains("TUN (-i)"), "{e}");
    let e = build(&mut ids, s.clone(), Method::Nat, false).unwrap_err();
    assert!(e.contains("[dataplane] synproxy = true"), "{e}");
    let mut u = svc(Proto::Udp, 53);
    u.synproxy = true;
    let e = build(&mut ids, u, Method::Nat, true).unwrap_err();
    assert!(e.contains("TCP services"), "{e}");
    build(&mut ids, s, Method::Nat, true).unwrap();
}

#[test]
fn reserved_state_is_twelve_bytes_per_record_slot() {
    assert_eq!(std::mem::size_of::<crate::lb::synproxy::Aux>(), 12);
    let e = sp_env();
    // one per record index: the table has three slots per two connections
    let slots = crate::lb::conn::lines::slots_for(64) as usize;
    assert_eq!(slots, 96);
    // and one per IPv6 record (the IPv6 table's default: 1024 records)
    assert_eq!(e.w.table6().capacity(), 1024);
    assert_eq!(e.w.synproxy().unwrap().memory_bytes(), (slots + 1024) * 12);
    assert!(env(64).w.synproxy().is_none());
}

proptest::proptest! {
    #[test]
    fn arbitrary_segments_to_a_proxied_service_never_panic(
        seq in proptest::prelude::any::<u32>(),
        ack in proptest::prelude::any::<u32>(),
        flags in proptest::prelude::any::<u8>(),
        opts in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
        from_server in proptest::prelude::any::<bool>(),
    ) {
        let mut e = sp_env();
        let snap = sp_snap(&mut e);
        let (cookie, ts) = handshake(&mut e, &snap, T0);
        e.send(&snap, &client_ack(cookie, ts, b""), T0 + MS);
        let mut f = if from_server { server_synack(7) } else { client_ack(cookie, ts, b"x") };
        // overwrite flags, numbers and the option bytes in place
        let l4 = 34;
        f[l4 + 4..l4 + 8].copy_from_slice(&seq.to_be_bytes());
        f[l4 + 8..l4 + 12].copy_from_slice(&ack.to_be_bytes());
        f[l4 + 13] = flags;
        let room = (f[l4 + 12] >> 4) as usize * 4 - 20;
        for (i, b) in opts.iter().take(room).enumerate() {
            f[l4 + 20 + i] = *b;
        }
        let m = meta_of(&f);
        let mut b = VecBuf::new(&f);
        let _ = e.w.process(&BurstCtx::new(&snap, &e.eg, T0 + 2 * MS), &mut b, &m);
        proptest::prop_assert!(e.w.table().len() <= 1);
    }
}

/// Servers of the service in [`spliced_connections_move_the_tree_too`]:
/// enough for the scheduler's winner tree.
const MANY: usize = 40;

fn many_rs(i: usize) -> [u8; 4] {
    [10, 0, 0, 30 + i as u8]
}

fn many_weight(i: usize) -> u32 {
    1 + (i % 3) as u32
}

/// Connections the SYN proxy opens over a 40-server wlc service go where
/// the walk over the live counters says, before and after their servers
/// answer: the server's SYN/ACK makes a connection active (a state change
/// the proxy makes itself), and the scheduler's winner tree hears of it.
/// Each SYN/ACK comes after the next connection's pick, so that its
/// server's note from its own pick has been read already. Fails with that
/// hook removed (in release builds by its own assertion, in debug builds by
/// the tree == walk one).
#[test]
fn spliced_connections_move_the_tree_too() {
    use crate::lb::sched::{self, Cursor, DestLoad, Prepared};
    const { assert!(MANY >= super::super::trees::TREE_MIN) };
    let mut e = sp_env_of(4096);
    let snap = e.snap(1, |b| {
        let mut s = svc(Proto::Tcp, 80);
        s.synproxy = true;
        s.sched = SchedKind::Wlc;
        let ds = (0..MANY)
            .map(|i| dest(many_rs(i), 8080, Method::Nat, many_weight(i)))
            .collect();
        b.synproxy(true).service(s, ds);
    });
    let weights: Vec<u32> = (0..MANY).map(many_weight).collect();
    let prep = Prepared::build(SchedKind::Wlc, SchedFlags::default(), &weights);
    let walk = |e: &Env| {
        let loads: Vec<DestLoad> = (0..MANY)
            .map(|i| {
                let (active, inactive) = e.load(&snap, 0, i);
                DestLoad {
                    weight: weights[i],
                    active: active as u32,
                    inactive: inactive as u32,
                    overloaded: false,
                }
            })
            .collect();
        sched::pick(&prep, &mut Cursor::default(), &loads, &FlowKey::default())
    };
    let mut now = T0;
    let mut answered = 0;
    let mut pending = None;
    for p in 0..120u16 {
        let cport = 20_000 + p;
        now += MS;
        // the client's SYN: a cookie, no state
        let syn = frame(&Seg {
            src: (CLIENT, cport),
            seq: C_ISN,
            syn: true,
            window: 64240,
            opts: &[O::MaximumSegmentSize(1460), O::Timestamp(C_TS, 0)],
            ..Seg::default()
        });
        let (v, out) = e.send(&snap, &syn, now);
        assert_eq!(v, LbVerdict::Tx { port: 0 }, "{p}: SYN/ACK");
        let o = read(&out);
        let (cookie, ts) = (o.tcp.sequence_number, ts_of(&o.tcp).expect("ts").0);
        // its ACK opens the connection toward the scheduler's pick
        let want = walk(&e).expect("a server is available");
        let ack = frame(&Seg {
            src: (CLIENT, cport),
            seq: C_ISN + 1,
            ack: Some(cookie.wrapping_add(1)),
            opts: &[O::Noop, O::Noop, O::Timestamp(C_TS + 1, ts)],
            ..Seg::default()
        });
        let (v, out) = e.send(&snap, &ack, now);
        assert_eq!(v, LbVerdict::Tx { port: 1 }, "{p}: SYN to the server");
        let o = read(&out);
        assert!(o.tcp.syn && !o.tcp.ack, "{p}");
        assert_eq!(o.dst, many_rs(want), "connection {p}: the walk's server");
        // two of three servers answer, the one of the previous connection
        // now (after this pick: a server noted by the pick of its own
        // connection is read again at the next pick anyway), and the
        // connection becomes active
        if let Some((q, rs)) = pending.take() {
            let mut f = frame(&Seg {
                src: (many_rs(rs), 8080),
                dst: (CLIENT, 20_000 + q),
                seq: S_ISN,
                ack: Some(C_ISN + 1),
                syn: true,
                window: 65160,
                opts: &[O::MaximumSegmentSize(1460), O::Timestamp(S_TS, C_TS + 1)],
                ..Seg::default()
            });
            f[0..6].copy_from_slice(&OUR_MAC);
            f[6..12].copy_from_slice(&mac_of(many_rs(rs)));
            let (v, _) = e.send(&snap, &f, now);
            assert_eq!(v, LbVerdict::Tx { port: 1 }, "{q}: the server's SYN/ACK");
            answered += 1;
        }
        if p % 3 != 2 {
            pending = Some((p, want));
        }
    }
    assert_eq!(count(&e, SynproxyCount::Opened), answered);
}

/// A persistent connection is never taken for a SYN-proxied one: the
/// persistence bits are none of a connection's own flags, so whatever the
/// proxy keeps for its slot (here a stale sequence delta), its segments
/// pass untranslated. (The persistence flag once shared F_SYNPROXY's bit,
/// and its netmask tag F_SP_PENDING's and F_SYNCED's.)
#[test]
fn a_persistent_connection_is_never_translated_by_the_proxy() {
    use crate::lb::balancer::F_PERSIST;
    use crate::lb::conn::{F_ACTIVE, F_NOOUTPUT, F_SP_PENDING, F_SYNCED, F_SYNPROXY, F_USED};
    let own = F_USED | F_NOOUTPUT | F_ACTIVE | F_SYNPROXY | F_SP_PENDING | F_SYNCED;
    assert_eq!(F_PERSIST & own, 0);
    let mut e = sp_env_of(1024);
    let s = e.snap(1, |b| {
        b.service(
            ServiceSpec {
                persistent: Some(300),
                ..svc(Proto::Tcp, 80)
            },
            vec![dest(RIP, 8080, Method::Nat, 1)],
        );
    });
    let syn = tcp_frame(CLIENT, 1000, VIP, 80, SYN, b"", 64, true);
    assert!(matches!(e.send(&s, &syn, 0).0, LbVerdict::Tx { .. }));
    let t = e.w.table();
    let idx = (0..t.slots())
        .find(|&i| t.get(i).is_some())
        .expect("a record");
    assert_ne!(t.get(idx).unwrap().flags & F_PERSIST, 0, "attached");
    if let Some(a) = e.w.sp.as_mut().and_then(|p| p.aux_mut(idx)) {
        a.seq = 1000; // a former SYN-proxied connection's, say
    }
    let data = tcp_frame(CLIENT, 1000, VIP, 80, ACK, b"data", 64, true);
    let (v, out) = e.send(&s, &data, S);
    assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
    assert_eq!(out[38..42], data[38..42], "the sequence number untouched");
}
