//! The FTP helper on an IPv4 NAT service (port 21): the `227` reply
//! rewritten to name the VIP and the numbers shifted both ways after it
//! (SACK edges too), a retransmitted `227` rewritten identically, `229`,
//! `PORT` and `EPRT` left as they are; the data connections they make
//! expected opened (passive: client → VIP:p to the control connection's
//! real server; active: RIP:20 → client, leaving as VIP:20), an
//! expectation used once and expiring; a NAT service of another port
//! untouched. Frames built and read by etherparse (checksums verified).

use super::*;
use crate::lb::shift::ftp_state::{FtpCount, EXPECT_MS};
use etherparse::{PacketBuilder, SlicedPacket, TcpOptionElement, TransportSlice};

const ISN: u32 = 0xffff_fff0; // the client's numbers wrap inside the stream
const SISN: u32 = 7_000;
const CPORT: u16 = 40000;

#[allow(clippy::too_many_arguments)]
fn seg(
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    seq: u32,
    ack: Option<u32>,
    flags: u8,
    sack: Option<(u32, u32)>,
    payload: &[u8],
) -> Vec<u8> {
    let mut b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ipv4(src, dst, 64)
        .tcp(sport, dport, seq, 64240);
    if flags & SYN != 0 {
        b = b.syn();
    }
    if let Some(a) = ack {
        b = b.ack(a);
    }
    let opts: Vec<_> = sack
        .map(|b| TcpOptionElement::SelectiveAcknowledgement(b, [None; 3]))
        .into_iter()
        .collect();
    let b = b.options(&opts).unwrap();
    let mut v = Vec::new();
    b.write(&mut v, payload).unwrap();
    v
}

#[derive(Debug, PartialEq)]
struct Out {
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    seq: u32,
    ack: u32,
    sack: Option<(u32, u32)>,
    payload: Vec<u8>,
}

fn read(frame: &[u8]) -> Out {
    verify(frame);
    let p = SlicedPacket::from_ethernet(frame).expect("parse");
    let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else {
        panic!("not IPv4")
    };
    let (src, dst) = (ip.header().source(), ip.header().destination());
    let Some(TransportSlice::Tcp(t)) = &p.transport else {
        panic!("not TCP")
    };
    Out {
        src,
        dst,
        sport: t.source_port(),
        dport: t.destination_port(),
        seq: t.sequence_number(),
        ack: t.acknowledgment_number(),
        sack: t.options_iterator().find_map(|o| match o {
            Ok(TcpOptionElement::SelectiveAcknowledgement(b, _)) => Some(b),
            _ => None,
        }),
        payload: t.payload().to_vec(),
    }
}

fn ftp_env() -> (Env, Snapshot) {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 21), vec![dest(RIP, 21, Method::Nat, 1)]);
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 80, Method::Nat, 1)]);
    });
    (e, s)
}

fn tx(e: &mut Env, s: &Snapshot, f: &[u8], now: u64) -> Out {
    let (v, out) = e.send(s, f, now);
    assert!(matches!(v, LbVerdict::Tx { .. }), "{v:?}");
    read(&out)
}

/// The control connection's handshake (client port `cport`, VIP port
/// `vport`).
fn handshake(e: &mut Env, s: &Snapshot, vport: u16) {
    let o = tx(
        e,
        s,
        &seg(CLIENT, CPORT, VIP, vport, ISN, None, SYN, None, b""),
        0,
    );
    assert_eq!((o.dst, o.dport), (RIP, vport));
    let sa = seg(
        RIP,
        vport,
        CLIENT,
        CPORT,
        SISN,
        Some(ISN.wrapping_add(1)),
        SYN,
        None,
        b"",
    );
    let o = tx(e, s, &sa, 0);
    assert_eq!((o.src, o.sport, o.seq), (VIP, vport, SISN));
}

/// A server segment at `off` bytes into its stream, acknowledging all
/// the client sent.
fn server(e: &mut Env, s: &Snapshot, vport: u16, off: u32, data: &[u8]) -> Out {
    let f = seg(
        RIP,
        vport,
        CLIENT,
        CPORT,
        SISN + 1 + off,
        Some(ISN.wrapping_add(1)),
        ACK,
        None,
        data,
    );
    tx(e, s, &f, S)
}

fn count(e: &Env, c: FtpCount) -> u64 {
    e.w.stats().ftp[c.index()].load(Relaxed)
}

const PASV: &[u8] = b"227 Entering Passive Mode (10,0,0,21,195,80).\r\n";
const PASV_VIP: &[u8] = b"227 Entering Passive Mode (192,0,2,10,195,80).\r\n";

#[test]
fn pasv_rewritten_shifted_both_ways_and_its_data_connection_expected() {
    let (mut e, s) = ftp_env();
    assert_eq!(e.w.ftp_len(), None, "allocated when the snapshot is seen");
    handshake(&mut e, &s, 21);
    assert_eq!(e.w.ftp_len(), Some((1, 0)));
    assert_eq!(count(&e, FtpCount::Controls), 1);
    let o = server(&mut e, &s, 21, 0, b"220 hello\r\n");
    assert_eq!(
        (o.seq, o.payload.as_slice()),
        (SISN + 1, &b"220 hello\r\n"[..])
    );
    let at = 11;
    let o = server(&mut e, &s, 21, at, PASV);
    assert_eq!(o.payload, PASV_VIP, "the VIP in place of the real server");
    assert_eq!(o.seq, SISN + 1 + at);
    assert_eq!(count(&e, FtpCount::Rewritten), 1);
    // retransmitted: rewritten again, the same bytes at the same place
    let again = server(&mut e, &s, 21, at, PASV);
    assert_eq!(again, o, "a retransmission is rewritten identically");
    assert_eq!(count(&e, FtpCount::Expected), 1, "expected once");
    // later server bytes move by one (10,0,0,21 -> 192,0,2,10)
    let next = at + PASV.len() as u32;
    let o = server(&mut e, &s, 21, next, b"150 go\r\n");
    assert_eq!(o.seq, SISN + 1 + next + 1);
    // the client's acknowledgments and SACK edges move back
    let sent = SISN + 1 + next + 1 + 8; // all the client has seen
    let f = seg(
        CLIENT,
        CPORT,
        VIP,
        21,
        ISN.wrapping_add(1),
        Some(sent),
        ACK,
        Some((sent - 8, sent)),
        b"",
    );
    let o = tx(&mut e, &s, &f, S);
    assert_eq!(o.ack, SISN + 1 + next + 8);
    assert_eq!(o.sack, Some((SISN + 1 + next, SISN + 1 + next + 8)));
    // an acknowledgment of the 227 only (before the shift's place + new
    // bytes): the old bytes in proportion
    let f = seg(
        CLIENT,
        CPORT,
        VIP,
        21,
        ISN.wrapping_add(1),
        Some(SISN + 1 + at),
        ACK,
        None,
        b"",
    );
    assert_eq!(tx(&mut e, &s, &f, S).ack, SISN + 1 + at);
    let shift = e.w.ftp_shift(&FlowKey {
        src: ip(CLIENT),
        dst: ip(VIP),
        sport: CPORT,
        dport: 21,
        proto: PROTO_TCP,
    });
    assert_eq!(shift.unwrap().dir(crate::lb::shift::Dir::Reply).offset(), 1);
    // the client's data connection to VIP:50000 reaches RIP:50000
    let syn = seg(CLIENT, 40001, VIP, 50000, 1, None, SYN, None, b"");
    let o = tx(&mut e, &s, &syn, 2 * S);
    assert_eq!((o.dst, o.dport, o.sport), (RIP, 50000, 40001));
    assert_eq!(count(&e, FtpCount::DataOpened), 1);
    let sa = seg(RIP, 50000, CLIENT, 40001, 9, Some(2), SYN, None, b"");
    let o = tx(&mut e, &s, &sa, 2 * S);
    assert_eq!(
        (o.src, o.sport, o.dst, o.dport),
        (VIP, 50000, CLIENT, 40001)
    );
    let data = seg(
        RIP,
        50000,
        CLIENT,
        40001,
        10,
        Some(2),
        ACK,
        None,
        b"file bytes",
    );
    let o = tx(&mut e, &s, &data, 2 * S);
    assert_eq!(
        (o.seq, o.payload.as_slice()),
        (10, &b"file bytes"[..]),
        "data untouched"
    );
    // the expectation opened one connection: another is not a service's
    let (v, _) = e.send(
        &s,
        &seg(CLIENT, 40002, VIP, 50000, 1, None, SYN, None, b""),
        2 * S,
    );
    assert_eq!(v, LbVerdict::Drop(LbDrop::NotAService));
}

#[test]
fn epsv_port_and_eprt_are_left_as_they_are_and_expected() {
    let (mut e, s) = ftp_env();
    handshake(&mut e, &s, 21);
    let epsv = b"229 Entering Extended Passive Mode (|||50001|)\r\n";
    let o = server(&mut e, &s, 21, 0, epsv);
    assert_eq!((o.payload.as_slice(), o.seq), (&epsv[..], SISN + 1));
    let o = tx(
        &mut e,
        &s,
        &seg(CLIENT, 41000, VIP, 50001, 1, None, SYN, None, b""),
        S,
    );
    assert_eq!((o.dst, o.dport), (RIP, 50001));
    // active: PORT names the client's own address, port 156*256+65
    let port = b"PORT 198,51,100,7,156,65\r\n";
    let f = seg(
        CLIENT,
        CPORT,
        VIP,
        21,
        ISN.wrapping_add(1),
        Some(SISN + 1 + epsv.len() as u32),
        ACK,
        None,
        port,
    );
    let o = tx(&mut e, &s, &f, S);
    assert_eq!(
        (o.payload.as_slice(), o.seq),
        (&port[..], ISN.wrapping_add(1))
    );
    // the real server connects from port 20: it leaves as VIP:20
    let syn = seg(RIP, 20, CLIENT, 40001, 77, None, SYN, None, b"");
    let o = tx(&mut e, &s, &syn, S);
    assert_eq!((o.src, o.sport, o.dst, o.dport), (VIP, 20, CLIENT, 40001));
    let sa = seg(CLIENT, 40001, VIP, 20, 5, Some(78), SYN, None, b"");
    let o = tx(&mut e, &s, &sa, S);
    assert_eq!((o.dst, o.dport, o.sport), (RIP, 20, 40001));
    // EPRT the same
    let eprt = b"EPRT |1|198.51.100.7|40002|\r\n";
    let f = seg(
        CLIENT,
        CPORT,
        VIP,
        21,
        ISN.wrapping_add(1).wrapping_add(port.len() as u32),
        Some(SISN + 1 + epsv.len() as u32),
        ACK,
        None,
        eprt,
    );
    assert_eq!(tx(&mut e, &s, &f, S).payload, eprt);
    let o = tx(
        &mut e,
        &s,
        &seg(RIP, 20, CLIENT, 40002, 1, None, SYN, None, b""),
        S,
    );
    assert_eq!((o.src, o.sport), (VIP, 20));
    assert_eq!(count(&e, FtpCount::DataOpened), 3);
    // a PORT naming another host is not followed
    let other = b"PORT 203,0,113,9,156,67\r\n";
    let seq = ISN
        .wrapping_add(1)
        .wrapping_add((port.len() + eprt.len()) as u32);
    let f = seg(
        CLIENT,
        CPORT,
        VIP,
        21,
        seq,
        Some(SISN + 1 + epsv.len() as u32),
        ACK,
        None,
        other,
    );
    assert_eq!(tx(&mut e, &s, &f, S).payload, other);
    assert_eq!(count(&e, FtpCount::Unparsed), 1);
    let (v, _) = e.send(
        &s,
        &seg(RIP, 20, [203, 0, 113, 9], 40003, 1, None, SYN, None, b""),
        S,
    );
    assert_eq!(v, LbVerdict::NotForUs);
}

#[test]
fn an_expectation_expires() {
    let (mut e, s) = ftp_env();
    handshake(&mut e, &s, 21);
    server(&mut e, &s, 21, 0, PASV);
    assert_eq!(e.w.ftp_len(), Some((1, 1)));
    let late = S + (EXPECT_MS as u64 + 1) * 1_000_000;
    let syn = seg(CLIENT, 40001, VIP, 50000, 1, None, SYN, None, b"");
    let (v, _) = e.send(&s, &syn, late);
    assert_eq!(v, LbVerdict::Drop(LbDrop::NotAService));
    // only a SYN opens one
    let (mut e, s) = ftp_env();
    handshake(&mut e, &s, 21);
    server(&mut e, &s, 21, 0, PASV);
    let ack = seg(CLIENT, 40001, VIP, 50000, 1, Some(1), ACK, None, b"");
    let (v, _) = e.send(&s, &ack, S);
    assert_eq!(v, LbVerdict::Drop(LbDrop::NotAService));
}

#[test]
fn other_ports_and_services_without_port_21_are_untouched() {
    let (mut e, s) = ftp_env();
    handshake(&mut e, &s, 80);
    let o = server(&mut e, &s, 80, 0, PASV);
    assert_eq!((o.payload.as_slice(), o.seq), (PASV, SISN + 1));
    assert_eq!(e.w.ftp_len(), Some((0, 0)));
    // no port-21 service: nothing allocated, a 227 passes as it is
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 80, Method::Nat, 1)]);
    });
    handshake(&mut e, &s, 80);
    assert_eq!(server(&mut e, &s, 80, 0, PASV).payload, PASV);
    assert_eq!(e.w.ftp_len(), None);
}

#[test]
fn no_tailroom_is_a_counted_drop() {
    let (mut e, s) = ftp_env();
    handshake(&mut e, &s, 21);
    let f = seg(
        RIP,
        21,
        CLIENT,
        CPORT,
        SISN + 1,
        Some(ISN.wrapping_add(1)),
        ACK,
        None,
        PASV,
    );
    let m = meta_of(&f);
    let mut b = VecBuf::with_room(&f, 128, 0);
    let v = e.w.process(&BurstCtx::new(&s, &e.eg, S), &mut b, &m);
    assert_eq!(v, LbVerdict::Drop(LbDrop::FtpNoRoom));
}
