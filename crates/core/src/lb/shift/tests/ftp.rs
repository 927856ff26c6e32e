use crate::lb::shift::ftp::{
    replacement, rewrite, scan, DataConn, Endpoint, Found, FtpError, Kind, Scan, Side,
};
use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

fn ep4(a: [u8; 4], port: u16) -> Endpoint {
    Endpoint {
        addr: Some(IpAddr::V4(Ipv4Addr::from(a))),
        port,
    }
}

fn found(p: &[u8], side: Side) -> Found {
    match scan(p, side) {
        Scan::Found(f) => f,
        s => panic!("{}: {s:?}", String::from_utf8_lossy(p)),
    }
}

/// Rewrite `p` to name `to`: the new bytes and what changed.
fn rw(p: &[u8], side: Side, to: Endpoint) -> (Vec<u8>, i32) {
    let f = found(p, side);
    let mut out = [0u8; 700];
    let r = rewrite(p, &f, to, &mut out).unwrap();
    assert_eq!(r.len as i32 - p.len() as i32, r.delta());
    (out[..r.len].to_vec(), r.delta())
}

#[test]
fn port() {
    let p = b"PORT 192,168,1,2,7,138\r\n";
    let f = found(p, Side::Client);
    assert_eq!(f.kind, Kind::Port);
    assert_eq!(f.at, ep4([192, 168, 1, 2], 1930));
    assert_eq!(&p[f.start..f.end], b"192,168,1,2,7,138");
    let (b, d) = rw(p, Side::Client, ep4([10, 0, 0, 1], 40001));
    assert_eq!(b, b"PORT 10,0,0,1,156,65\r\n");
    assert_eq!(d, -2);
    // the data connection: the server opens it, to what it was told,
    // and it must reach the client's
    assert_eq!(
        f.data_conn(ep4([10, 0, 0, 1], 40001)),
        DataConn {
            opener: Side::Server,
            told: ep4([10, 0, 0, 1], 40001),
            listens: ep4([192, 168, 1, 2], 1930),
        }
    );
    // lower case, spaces, no CR
    let f = found(b"port  1,2,3,4,0,21  \n", Side::Client);
    assert_eq!(f.at, ep4([1, 2, 3, 4], 21));
    // the server's direction does not look for PORT
    assert_eq!(scan(p, Side::Server), Scan::None);
}

#[test]
fn eprt() {
    let p = b"EPRT |1|132.235.1.2|6275|\r\n";
    let f = found(p, Side::Client);
    assert_eq!((f.kind, f.at), (Kind::Eprt, ep4([132, 235, 1, 2], 6275)));
    let to6 = Endpoint {
        addr: Some(IpAddr::V6("2001:db8::1".parse().unwrap())),
        port: 5282,
    };
    let (b, _) = rw(p, Side::Client, to6);
    assert_eq!(b, b"EPRT |2|2001:db8::1|5282|\r\n");
    let f6 = found(&b, Side::Client);
    assert_eq!(f6.at, to6);
    // another delimiter is kept
    let (b, _) = rw(
        b"EPRT !1!1.2.3.4!5!\r\n",
        Side::Client,
        ep4([9, 9, 9, 9], 99),
    );
    assert_eq!(b, b"EPRT !1!9.9.9.9!99!\r\n");
    let f = found(b"EPRT |2|1080::8:800:200C:417A|5282|\r\n", Side::Client);
    let want: Ipv6Addr = "1080::8:800:200C:417A".parse().unwrap();
    assert_eq!(f.at.addr, Some(IpAddr::V6(want)));
}

#[test]
fn pasv_227() {
    let p = b"227 Entering Passive Mode (10,1,2,3,195,80).\r\n";
    let f = found(p, Side::Server);
    assert_eq!((f.kind, f.at), (Kind::Pasv, ep4([10, 1, 2, 3], 50000)));
    let (b, d) = rw(p, Side::Server, ep4([203, 0, 113, 200], 50000));
    assert_eq!(
        b,
        b"227 Entering Passive Mode (203,0,113,200,195,80).\r\n".to_vec()
    );
    assert_eq!(d, 5);
    assert_eq!(
        f.data_conn(ep4([203, 0, 113, 200], 50000)).opener,
        Side::Client
    );
    // digits in the text before the parenthesis
    let f = found(
        b"227 Entering Passive Mode 2 (10,1,2,3,0,21)\r\n",
        Side::Server,
    );
    assert_eq!(f.at, ep4([10, 1, 2, 3], 21));
    // without parentheses, as some servers write it
    let f = found(b"227 =10,1,2,3,0,20\r\n", Side::Server);
    assert_eq!(f.at, ep4([10, 1, 2, 3], 20));
}

#[test]
fn epsv_229() {
    let p = b"229 Entering Extended Passive Mode (|||6446|)\r\n";
    let f = found(p, Side::Server);
    assert_eq!(
        (f.kind, f.at),
        (
            Kind::Epsv,
            Endpoint {
                addr: None,
                port: 6446
            }
        )
    );
    let (b, d) = rw(
        p,
        Side::Server,
        Endpoint {
            addr: None,
            port: 40000,
        },
    );
    assert_eq!(
        b,
        b"229 Entering Extended Passive Mode (|||40000|)\r\n".to_vec()
    );
    assert_eq!(d, 1);
    // 229 names no address
    assert_eq!(
        replacement(&f, ep4([1, 2, 3, 4], 5)).unwrap_err(),
        FtpError::NoAddress
    );
}

#[test]
fn partial_bad_and_other_lines() {
    assert_eq!(scan(b"POR", Side::Client), Scan::Partial);
    assert_eq!(scan(b"PORT 1,2,3,4,", Side::Client), Scan::Partial);
    assert_eq!(scan(b"227 Entering", Side::Server), Scan::Partial);
    assert_eq!(scan(b"", Side::Client), Scan::Partial);
    for bad in [
        &b"PORT 1,2,3,4,5\r\n"[..],
        b"PORT 1,2,3,256,0,1\r\n",
        b"PORT 1,2,3,4,5,6,7\r\n",
        b"PORT 1,2,3,4,5,6 x\r\n",
        b"PORT 000001,2,3,4,5,6\r\n",
        b"EPRT |3|1.2.3.4|5|\r\n",
        b"EPRT |1|1.2.3|5|\r\n",
        b"EPRT |1|1.2.3.4|65536|\r\n",
        b"EPRT |1|1.2.3.4|5\r\n",
        b"EPRT 1|1.2.3.4|5|\r\n",
    ] {
        assert_eq!(
            scan(bad, Side::Client),
            Scan::Bad(found_kind(bad)),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    assert_eq!(
        scan(b"227 no numbers\r\n", Side::Server),
        Scan::Bad(Kind::Pasv)
    );
    assert_eq!(
        scan(b"229 (|||x|)\r\n", Side::Server),
        Scan::Bad(Kind::Epsv)
    );
    assert_eq!(
        scan(b"229 (||6446|)\r\n", Side::Server),
        Scan::Bad(Kind::Epsv)
    );
    assert_eq!(scan(b"USER anonymous\r\n", Side::Client), Scan::None);
    assert_eq!(scan(b"230 Login successful.\r\n", Side::Server), Scan::None);
    // a line longer than the bound without an end: bad, not partial
    let mut long = b"PORT ".to_vec();
    long.resize(600, b'1');
    assert_eq!(scan(&long, Side::Client), Scan::Bad(Kind::Port));
    // PORT takes IPv4 only
    let f = found(b"PORT 1,2,3,4,5,6\r\n", Side::Client);
    let v6 = Endpoint {
        addr: Some(IpAddr::V6(Ipv6Addr::LOCALHOST)),
        port: 1,
    };
    assert_eq!(replacement(&f, v6).unwrap_err(), FtpError::Family);
    // an output buffer too short
    let mut small = [0u8; 10];
    assert_eq!(
        rewrite(
            b"PORT 1,2,3,4,5,6\r\n",
            &f,
            ep4([1, 2, 3, 4], 1),
            &mut small
        )
        .unwrap_err(),
        FtpError::NoRoom
    );
    // a found range from another payload
    assert_eq!(
        rewrite(b"PORT", &f, ep4([1, 2, 3, 4], 1), &mut [0u8; 64]).unwrap_err(),
        FtpError::Range
    );
}

fn found_kind(b: &[u8]) -> Kind {
    if b[..4].eq_ignore_ascii_case(b"EPRT") {
        Kind::Eprt
    } else {
        Kind::Port
    }
}

#[test]
fn the_change_for_the_shift() {
    let p = b"PORT 192,168,1,2,7,138\r\n";
    let f = found(p, Side::Client);
    let mut out = [0u8; 64];
    let r = rewrite(p, &f, ep4([10, 0, 0, 1], 40001), &mut out).unwrap();
    let c = r.change(u32::MAX - 2);
    assert_eq!(c.pos, 2); // MAX - 2 + 5, wrapped
    assert_eq!((c.old_len, c.new_len), (17, 15));
    assert_eq!(c.delta(), -2);
}

fn endpoint() -> impl Strategy<Value = Endpoint> {
    (any::<[u8; 4]>(), any::<u16>()).prop_map(|(a, p)| ep4(a, p))
}

fn endpoint_any() -> impl Strategy<Value = Endpoint> {
    prop_oneof![
        endpoint(),
        (any::<u128>(), any::<u16>()).prop_map(|(a, port)| Endpoint {
            addr: Some(IpAddr::V6(Ipv6Addr::from(a))),
            port
        }),
    ]
}

proptest! {
    #[test]
    fn round_trips(from in endpoint(), to in endpoint(), to_any in endpoint_any(), port: u16, cr: bool) {
        let eol: &[u8] = if cr { b"\r\n" } else { b"\n" };
        let [a, b, c, d] = match from.addr { Some(IpAddr::V4(a)) => a.octets(), _ => unreachable!() };
        let [p1, p2] = from.port.to_be_bytes();
        let nums = format!("{a},{b},{c},{d},{p1},{p2}");
        let lines: [(Vec<u8>, Side, Endpoint, Endpoint); 4] = [
            ([format!("PORT {nums}").as_bytes(), eol].concat(), Side::Client, from, to),
            ([format!("227 Entering Passive Mode ({nums})").as_bytes(), eol].concat(), Side::Server, from, to),
            ([format!("EPRT |1|{a}.{b}.{c}.{d}|{}|", from.port).as_bytes(), eol].concat(), Side::Client, from, to_any),
            ([format!("229 Entering Extended Passive Mode (|||{}|)", from.port).as_bytes(), eol].concat(), Side::Server,
                Endpoint { addr: None, port: from.port }, Endpoint { addr: None, port }),
        ];
        for (line, side, was, now) in lines {
            let f = found(&line, side);
            prop_assert_eq!(f.at, was);
            let (b, delta) = rw(&line, side, now);
            prop_assert_eq!(b.len() as i32, line.len() as i32 + delta);
            // the rewritten line says the new endpoint; back again is the line
            prop_assert_eq!(found(&b, side).at, now);
            let (back, _) = rw(&b, side, was);
            prop_assert_eq!(back, line);
        }
    }

    #[test]
    fn never_panics(b in proptest::collection::vec(any::<u8>(), 0..80), head in 0usize..4, to in endpoint_any()) {
        let heads: [&[u8]; 4] = [b"PORT ", b"EPRT ", b"227 ", b"229 ("];
        let p = [heads[head], &b].concat();
        for side in [Side::Client, Side::Server] {
            for q in [&p[..], &b[..]] {
                if let Scan::Found(f) = scan(q, side) {
                    prop_assert!(f.start <= f.end && f.end <= q.len());
                    let mut out = [0u8; 200];
                    let _ = rewrite(q, &f, to, &mut out);
                }
            }
        }
    }
}

/// How the FTP helper will use the pieces on a control connection: the
/// PORT line found and rewritten, its change recorded in the shift, the
/// next segments' numbers moved in place.
#[test]
fn a_port_line_through_the_shift_on_segments() {
    use crate::lb::shift::adjust::{Dir, Recorded, Shift};
    use crate::lb::shift::segment;
    use crate::net::wire::tcp;
    let (c, s) = ([192, 168, 1, 2], [10, 0, 0, 21]);
    let seg = |seq: u32, ack: u32, payload: &[u8]| {
        let mut t = etherparse::TcpHeader::new(40000, 21, seq, 65535);
        t.ack = true;
        t.acknowledgment_number = ack;
        t.checksum = t.calc_checksum_ipv4_raw(c, s, payload).unwrap();
        let mut b = t.to_bytes().to_vec();
        b.extend_from_slice(payload);
        b
    };
    let mut shift = Shift::<2>::NONE;
    let line = b"PORT 192,168,1,2,7,138\r\n";
    let seq = u32::MAX - 10; // across the wrap
    let f = found(line, Side::Client);
    let mut out = [0u8; 64];
    let r = rewrite(line, &f, ep4([203, 0, 113, 9], 61000), &mut out).unwrap();
    assert_eq!(&out[..r.len], b"PORT 203,0,113,9,238,72\r\n");
    assert_eq!(shift.record(Dir::Orig, r.change(seq)), Ok(Recorded::New));
    // the same segment retransmitted: rewritten again, a repeat
    assert_eq!(shift.record(Dir::Orig, r.change(seq)), Ok(Recorded::Repeat));
    // the segment itself keeps its number (it holds the change)
    assert_eq!(shift.seq(Dir::Orig, seq), seq);
    // the next client segment moves by +1
    let next = seq.wrapping_add(line.len() as u32);
    let mut b = seg(next, 500, b"LIST\r\n");
    segment::apply(
        &mut tcp::Packet::new_checked(&mut b[..]).unwrap(),
        &shift,
        Dir::Orig,
    );
    let t = tcp::Packet::new_checked(&b[..]).unwrap();
    assert_eq!(t.seq_number(), next.wrapping_add(1));
    assert_eq!(t.ack_number(), 500);
    assert!(t.verify_checksum(u32::from_be_bytes(c), u32::from_be_bytes(s)));
    // the server's acknowledgment of the rewritten line moves back by 1
    let mut b = seg(
        500,
        next.wrapping_add(1),
        b"200 PORT command successful\r\n",
    );
    segment::apply(
        &mut tcp::Packet::new_checked(&mut b[..]).unwrap(),
        &shift,
        Dir::Reply,
    );
    let t = tcp::Packet::new_checked(&b[..]).unwrap();
    assert_eq!((t.seq_number(), t.ack_number()), (500, next));
    // and the data connection to expect: the server opens it to what it
    // was told; it must reach the client's listener
    let d = f.data_conn(ep4([203, 0, 113, 9], 61000));
    assert_eq!(d.opener, Side::Server);
    assert_eq!(d.listens, ep4([192, 168, 1, 2], 1930));
}
