use super::*;
use crate::net::wire::error::WireError;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A message as Linux's sender lays it out, written by hand from
/// `struct ip_vs_sync_mesg`, `struct ip_vs_sync_v4` and `struct
/// ip_vs_sync_v6`: sync ID 7, three entries in 180 bytes.
#[rustfmt::skip]
const MSG: [u8; 180] = [
    // header: reserved, syncid 7, size 180, count 3, version 1, spare
    0x00, 0x07, 0x00, 0xb4, 0x03, 0x01, 0x00, 0x00,
    // 1: IPv4 TCP, size 62 (36 + a 2 + 24 byte SEQ_DATA option)
    0x00, 0x06, 0x00, 0x3e,
    0x00, 0x00, 0x06, 0x00,     // flags: MASQ | OUT_SEQ | IN_SEQ
    0x00, 0x01,                 // state ESTABLISHED
    0x9c, 0x40,                 // cport 40000
    0x00, 0x50,                 // vport 80
    0x1f, 0x90,                 // dport 8080
    0x00, 0x00, 0x00, 0x00,     // fwmark
    0x00, 0x00, 0x03, 0x84,     // timeout 900 s
    10, 0, 0, 2,                // caddr
    10, 0, 0, 100,              // vaddr
    172, 16, 0, 11,             // daddr
    0x01, 0x18,                 // IPVS_OPT_SEQ_DATA, 24 bytes
    0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, // in_seq
    0x22, 0x22, 0x22, 0x22, 0xff, 0xff, 0xff, 0xfc, 0x00, 0x00, 0x00, 0x00, // out_seq
    0x00, 0x00,                 // padding to the next 4-byte boundary
    // 2: IPv6 UDP, size 72
    0x01, 0x11, 0x00, 0x48,
    0x00, 0x00, 0x00, 0x03,     // DROUTE
    0x00, 0x00,
    0x13, 0x88, 0x00, 0x35, 0x00, 0x35,
    0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x2c,
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, // 2001:db8::2
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, // 2001:db8::100
    0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x11, // 2001:db8:1::11
    // 3: IPv4 UDP, size 36
    0x00, 0x11, 0x00, 0x24,
    0x00, 0x00, 0x00, 0x02,     // TUNNEL
    0x00, 0x00,                 // state 0
    0xd4, 0x31,                 // cport 54321
    0x00, 0x35,                 // vport 53
    0x00, 0x35,                 // dport 53
    0x00, 0x00, 0x00, 0x2a,     // fwmark 42
    0x00, 0x00, 0x01, 0x2c,     // timeout 300 s
    192, 168, 1, 50,
    10, 0, 0, 100,
    172, 16, 0, 14,
];

fn first() -> ConnRepr {
    ConnRepr {
        protocol: 6,
        flags: flags::MASQ | flags::OUT_SEQ | flags::IN_SEQ,
        state: tcp_state::ESTABLISHED,
        cport: 40000,
        vport: 80,
        dport: 8080,
        fwmark: 0,
        timeout: 900,
        caddr: Ipv4Addr::new(10, 0, 0, 2).into(),
        vaddr: Ipv4Addr::new(10, 0, 0, 100).into(),
        daddr: Ipv4Addr::new(172, 16, 0, 11).into(),
    }
}

/// The second entry of [`MSG`]: IPv6 UDP, direct routing.
fn second() -> ConnRepr {
    ConnRepr {
        protocol: 17,
        flags: flags::DROUTE,
        state: 0,
        cport: 5000,
        vport: 53,
        dport: 53,
        fwmark: 0,
        timeout: 300,
        caddr: "2001:db8::2".parse::<Ipv6Addr>().unwrap().into(),
        vaddr: "2001:db8::100".parse::<Ipv6Addr>().unwrap().into(),
        daddr: "2001:db8:1::11".parse::<Ipv6Addr>().unwrap().into(),
    }
}

fn third() -> ConnRepr {
    ConnRepr {
        protocol: 17,
        flags: flags::TUNNEL,
        state: 0,
        cport: 54321,
        vport: 53,
        dport: 53,
        fwmark: 42,
        timeout: 300,
        caddr: Ipv4Addr::new(192, 168, 1, 50).into(),
        vaddr: Ipv4Addr::new(10, 0, 0, 100).into(),
        daddr: Ipv4Addr::new(172, 16, 0, 14).into(),
    }
}

fn all(buf: &[u8]) -> Result<(HeaderRepr, Vec<Result<ConnRepr, SyncError>>), SyncError> {
    parse(buf).map(|(h, e)| (h, e.collect()))
}

/// A version 1 message around `entries` (each padded to 4 bytes), with
/// `count` in the header.
fn message(count: u8, entries: &[&[u8]]) -> Vec<u8> {
    let mut m = vec![0, 9, 0, 0, count, 1, 0, 0];
    for e in entries {
        if m.len() % 4 != 0 {
            m.resize(m.len().next_multiple_of(4), 0);
        }
        m.extend_from_slice(e);
    }
    let n = m.len() as u16;
    m[2..4].copy_from_slice(&n.to_be_bytes());
    m
}

/// The third entry of [`MSG`] (IPv4 UDP, 36 bytes).
fn v4_entry() -> Vec<u8> {
    MSG[144..180].to_vec()
}

/// [`v4_entry`] with `options` appended and the size updated.
fn with_options(mut e: Vec<u8>, options: &[u8]) -> Vec<u8> {
    e.extend_from_slice(options);
    let n = e.len() as u16;
    e[2..4].copy_from_slice(&n.to_be_bytes());
    e
}

#[test]
fn parses_a_hand_written_message() {
    let (h, entries) = all(&MSG).unwrap();
    assert_eq!(
        h,
        HeaderRepr {
            syncid: 7,
            size: 180,
            count: 3,
            version: 1
        }
    );
    assert_eq!(entries, vec![Ok(first()), Ok(second()), Ok(third())]);
}

#[test]
fn views_read_the_fields() {
    let h = Header::new_checked(&MSG[..]).unwrap();
    assert_eq!((h.reserved(), h.syncid(), h.size()), (0, 7, 180));
    assert_eq!((h.count(), h.version(), h.spare()), (3, 1, 0));
    let c = Conn::new_checked(&MSG[8..]).unwrap();
    assert_eq!((c.conn_type(), c.protocol(), c.size()), (0, 6, 62));
    assert_eq!(c.entry_version(), 0);
    assert_eq!(c.caddr(), 0x0a00_0002);
    let c6 = Conn::new_checked(&MSG[72..144]).unwrap();
    assert_eq!((c6.conn_type(), c6.size()), (conn_type::F_INET6, 72));
    assert_eq!(c6.caddr6(), 0x2001_0db8_0000_0000_0000_0000_0000_0002);
    assert_eq!(c6.vaddr6(), 0x2001_0db8_0000_0000_0000_0000_0000_0100);
    assert_eq!(c6.daddr6(), 0x2001_0db8_0001_0000_0000_0000_0000_0011);
    assert!(c6.check_len6().is_ok());
    assert_eq!(
        Conn::new_checked(&MSG[72..143]).unwrap().check_len6(),
        Err(WireError::Truncated)
    );
    assert_eq!(
        Header::new_checked(&MSG[..7]).unwrap_err(),
        WireError::Truncated
    );
    assert_eq!(
        Conn::new_checked(&MSG[..35]).unwrap_err(),
        WireError::Truncated
    );
}

/// The message dirigo writes for the three connections of [`MSG`]: no
/// options (so 36 bytes for an IPv4 entry, 72 for the IPv6 one, laid out
/// as `struct ip_vs_sync_v6`), the flags as given.
#[rustfmt::skip]
const WRITTEN: [u8; 152] = [
    0x00, 0x07, 0x00, 0x98, 0x03, 0x01, 0x00, 0x00,
    0x00, 0x06, 0x00, 0x24,
    0x00, 0x00, 0x06, 0x00,
    0x00, 0x01, 0x9c, 0x40, 0x00, 0x50, 0x1f, 0x90,
    0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x03, 0x84,
    10, 0, 0, 2, 10, 0, 0, 100, 172, 16, 0, 11,
    // IPv6: type 1 (STYPE_F_INET6), UDP, version 0 and size 72
    0x01, 0x11, 0x00, 0x48,
    0x00, 0x00, 0x00, 0x03,     // flags: DROUTE
    0x00, 0x00,                 // state
    0x13, 0x88, 0x00, 0x35, 0x00, 0x35, // cport 5000, vport 53, dport 53
    0x00, 0x00, 0x00, 0x00,     // fwmark
    0x00, 0x00, 0x01, 0x2c,     // timeout 300 s
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, // caddr 2001:db8::2
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, // vaddr 2001:db8::100
    0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x11, // daddr 2001:db8:1::11
    0x00, 0x11, 0x00, 0x24,
    0x00, 0x00, 0x00, 0x02,
    0x00, 0x00, 0xd4, 0x31, 0x00, 0x35, 0x00, 0x35,
    0x00, 0x00, 0x00, 0x2a,
    0x00, 0x00, 0x01, 0x2c,
    192, 168, 1, 50, 10, 0, 0, 100, 172, 16, 0, 14,
];

#[test]
fn writes_the_hand_written_layout() {
    let mut buf = [0xeeu8; 1472];
    let mut w = MessageWriter::new(&mut buf, 7);
    assert!(w.is_empty());
    assert_eq!(w.len(), HEADER_LEN);
    assert!(w.push(&first()));
    assert!(w.push(&second()));
    assert!(w.push(&third()));
    assert_eq!((w.count(), w.len(), w.is_empty()), (3, 152, false));
    assert_eq!(w.finish(), &WRITTEN[..]);
}

#[test]
fn an_ipv6_entry_is_72_bytes() {
    let s = second();
    assert!(s.is_ipv6() && !first().is_ipv6());
    assert_eq!(
        (s.entry_len(), first().entry_len()),
        (CONN_V6_LEN, CONN_V4_LEN)
    );
    // the entry alone, byte for byte the hand-written one of MSG
    let mut e = [0xeeu8; CONN_V6_LEN];
    s.emit(&mut Conn::new_unchecked(&mut e[..]));
    assert_eq!(e[..], MSG[72..144]);
    assert_eq!(ConnRepr::parse(&Conn::new_unchecked(&e[..])), s);
    // a buffer an IPv4 entry fits but an IPv6 one does not: nothing written
    let mut short = [0xeeu8; CONN_V6_LEN - 1];
    s.emit(&mut Conn::new_unchecked(&mut short[..]));
    assert!(short.iter().all(|&b| b == 0xee));
    let mut buf = [0xeeu8; HEADER_LEN + CONN_V4_LEN + CONN_V6_LEN - 1];
    let mut w = MessageWriter::new(&mut buf, 1);
    assert!(w.push(&third()));
    assert!(!w.push(&s), "72 bytes do not fit in 71");
    assert_eq!(w.finish().len(), HEADER_LEN + CONN_V4_LEN);
    // an IPv4 address beside IPv6 ones is written IPv4-mapped
    let mixed = ConnRepr {
        daddr: Ipv4Addr::new(172, 16, 0, 11).into(),
        ..s
    };
    let mut e = [0u8; CONN_V6_LEN];
    mixed.emit(&mut Conn::new_unchecked(&mut e[..]));
    assert_eq!(
        e[56..72],
        Ipv4Addr::new(172, 16, 0, 11).to_ipv6_mapped().octets()
    );
}

#[test]
fn parse_then_emit_round_trips() {
    for msg in [&MSG[..], &WRITTEN[..]] {
        let (h, entries) = all(msg).unwrap();
        let mut buf = [0u8; 1472];
        let mut w = MessageWriter::new(&mut buf, h.syncid);
        let ok: Vec<ConnRepr> = entries.into_iter().filter_map(Result::ok).collect();
        for c in &ok {
            assert!(w.push(c));
        }
        let again = w.finish();
        assert_eq!(again, &WRITTEN[..]);
        assert_eq!(ok, vec![first(), second(), third()]);
        let (h2, back) = all(again).unwrap();
        assert_eq!((h2.syncid, h2.count as usize), (7, ok.len()));
        assert_eq!(back, ok.into_iter().map(Ok).collect::<Vec<_>>());
    }
}

#[test]
fn writer_fills_its_buffer_exactly() {
    let mut buf = [0u8; HEADER_LEN + 3 * CONN_V4_LEN];
    let mut w = MessageWriter::new(&mut buf, 1);
    for _ in 0..3 {
        assert!(w.push(&third()));
    }
    assert_eq!(w.len(), HEADER_LEN + 3 * CONN_V4_LEN);
    assert!(!w.push(&third()), "a fourth entry does not fit");
    assert_eq!((w.count(), w.len()), (3, 116));
    let m = w.finish();
    assert_eq!(m.len(), 116);
    assert_eq!(all(m).unwrap().1.len(), 3);

    // one byte short of three: two, and the third refused untouched
    let mut buf = [0xeeu8; HEADER_LEN + 3 * CONN_V4_LEN - 1];
    let mut w = MessageWriter::new(&mut buf, 1);
    assert!(w.push(&third()) && w.push(&third()));
    assert!(!w.push(&third()));
    assert_eq!(w.finish().len(), 80);
    assert!(buf[80..].iter().all(|&b| b == 0xee), "nothing written past");

    // shorter than a header: accepts nothing, writes nothing
    let mut buf = [0xeeu8; HEADER_LEN - 1];
    let mut w = MessageWriter::new(&mut buf, 1);
    assert_eq!(w.len(), 0);
    assert!(!w.push(&third()));
    assert!(w.finish().is_empty());
    assert_eq!(buf, [0xee; 7]);

    // a header alone: an empty message, which parses
    let mut buf = [0u8; 43];
    let w = MessageWriter::new(&mut buf, 3);
    let m = w.finish();
    assert_eq!(m, &[0, 3, 0, 8, 0, 1, 0, 0]);
    let (h, e) = all(m).unwrap();
    assert_eq!((h.count, e.len()), (0, 0));
}

#[test]
fn writer_stops_at_255_entries() {
    let mut buf = vec![0u8; HEADER_LEN + 300 * CONN_V4_LEN];
    let mut w = MessageWriter::new(&mut buf, 1);
    let mut c = third();
    for i in 0..255u16 {
        c.cport = i;
        assert!(w.push(&c), "entry {i}");
    }
    assert!(!w.push(&c), "a 256th entry");
    assert_eq!(w.count(), 255);
    let m = w.finish();
    assert_eq!(m.len(), HEADER_LEN + 255 * CONN_V4_LEN);
    let (h, e) = all(m).unwrap();
    assert_eq!(h.count, 255);
    let ports: Vec<u16> = e.into_iter().map(|r| r.unwrap().cport).collect();
    assert_eq!(ports, (0..255).collect::<Vec<_>>());
}

#[test]
fn a_message_over_64_kib_is_capped() {
    let mut buf = vec![0u8; 70_000];
    let mut w = MessageWriter::new(&mut buf, 1);
    while w.push(&third()) {}
    // 255 entries come first (9188 bytes): the cap is the count here
    assert_eq!(w.count(), 255);
    assert!(w.finish().len() <= u16::MAX as usize);
}

/// Header errors: the whole message is refused.
#[test]
fn header_errors() {
    let e = |b: &[u8]| parse(b).err();
    assert_eq!(e(&MSG[..3]), Some(SyncError::Truncated));
    assert_eq!(e(&[]), Some(SyncError::Truncated));
    assert_eq!(e(&MSG[..179]), Some(SyncError::BadSize));
    let mut longer = MSG.to_vec();
    longer.push(0);
    assert_eq!(e(&longer), Some(SyncError::BadSize));
    // version 0: a count in the reserved byte; a 4-byte header
    let mut b = MSG;
    b[0] = 3;
    assert_eq!(e(&b), Some(SyncError::Version0));
    assert_eq!(e(&[0, 7, 0, 4]), Some(SyncError::Version0));
    assert_eq!(e(&[0, 7, 0, 6, 0, 1]), Some(SyncError::Version0));
    let mut b = MSG;
    b[5] = 2;
    assert_eq!(e(&b), Some(SyncError::BadVersion));
    let mut b = MSG;
    b[7] = 1;
    assert_eq!(e(&b), Some(SyncError::BadVersion));
}

/// An entry case: what, the message, the items its entries yield.
type Case = (&'static str, Vec<u8>, Vec<Result<ConnRepr, SyncError>>);

/// Entry errors, each with the items the iteration yields.
#[rustfmt::skip]
fn entry_cases() -> Vec<Case> {
    use SyncError::*;
    let ok = Ok(third());
    let v4 = v4_entry();
    let set = |mut e: Vec<u8>, at: usize, v: u8| {
        e[at] = v;
        e
    };
    let opts = |o: &[u8]| with_options(v4_entry(), o);
    let mut seq = vec![opt::SEQ_DATA, 24];
    seq.extend_from_slice(&[0x5a; 24]);
    let pe_data = [opt::PE_DATA, 4, 1, 2, 3, 4];
    let pe_name = [opt::PE_NAME, 3, b's', b'i', b'p'];
    let v6_seq = with_options(MSG[72..144].to_vec(), &seq);
    let mut v6 = MSG[72..144].to_vec();
    v6[3] = 36; // an IPv6 entry no longer than an IPv4 one
    let name17 = [&[opt::PE_NAME, 17][..], &[b'x'; 17]].concat();
    vec![
        ("count beyond the entries", message(2, &[&v4]), vec![ok, Err(Truncated)]),
        ("no entry at all", message(1, &[]), vec![Err(Truncated)]),
        ("an entry shorter than its fixed part", message(1, &[&v4[..30]]), vec![Err(Truncated)]),
        ("size past the datagram", message(1, &[&set(v4.clone(), 3, 40)]), vec![Err(Truncated)]),
        ("entry version 1", message(2, &[&set(v4.clone(), 2, 0x10), &v4]), vec![Err(BadEntry)]),
        ("type 2", message(2, &[&set(v4.clone(), 0, 2), &v4]), vec![Err(BadEntry)]),
        ("size below the fixed part", message(2, &[&set(v4.clone(), 3, 35), &v4]), vec![Err(BadEntry)]),
        ("size 0", message(1, &[&set(v4.clone(), 3, 0)]), vec![Err(BadEntry)]),
        ("IPv6 entry of 36 bytes", message(2, &[&v6, &v4]), vec![Err(BadEntry)]),
        ("type 3 is IPv6", message(2, &[&set(MSG[72..144].to_vec(), 0, 3), &v4]), vec![Ok(second()), ok]),
        ("IPv6 with sequence data", message(2, &[&v6_seq, &v4]), vec![Ok(second()), ok]),
        ("IPv6 UDP state 1", message(2, &[&set(MSG[72..144].to_vec(), 9, 1), &v4]), vec![Err(BadState), ok]),
        ("IPv6 PE data", message(2, &[&with_options(MSG[72..144].to_vec(), &pe_data), &v4]), vec![Err(PeData), ok]),
        ("option header past the entry", message(2, &[&opts(&[1]), &v4]), vec![Err(BadOption)]),
        ("option of length 0", message(2, &[&opts(&[0x41, 0]), &v4]), vec![Err(BadOption)]),
        ("option data past the entry", message(2, &[&opts(&[0x41, 3, 0]), &v4]), vec![Err(BadOption)]),
        ("sequence data of 20 bytes", message(1, &[&opts(&[&[1, 20][..], &[0; 20]].concat())]), vec![Err(BadOption)]),
        ("sequence data twice", message(1, &[&opts(&[&seq[..], &seq].concat())]), vec![Err(BadOption)]),
        ("PE data twice", message(1, &[&opts(&[&pe_data[..], &pe_data].concat())]), vec![Err(BadOption)]),
        ("PE name of 17 bytes", message(1, &[&opts(&name17)]), vec![Err(BadOption)]),
        ("PE name twice", message(1, &[&opts(&[&pe_name[..], &pe_name].concat())]), vec![Err(BadOption)]),
        ("sequence data, 0x40 set", message(1, &[&opts(&[&[0x41][..], &seq[1..]].concat())]), vec![ok]),
        ("an unknown option that may be ignored", message(1, &[&opts(&[0x45, 1, 9])]), vec![ok]),
        ("an unknown mandatory option", message(2, &[&opts(&[5, 1, 9]), &v4]), vec![Err(UnknownOption), ok]),
        ("malformed after an unknown mandatory one", message(2, &[&opts(&[5, 1, 9, 1, 2, 0, 0]), &v4]), vec![Err(UnknownOption), ok]),
        ("PE data and name", message(2, &[&opts(&[&pe_data[..], &pe_name].concat()), &v4]), vec![Err(PeData), ok]),
        ("PE data without a name", message(2, &[&opts(&pe_data), &v4]), vec![Err(PeData), ok]),
        ("a PE name alone is ignored", message(1, &[&opts(&pe_name)]), vec![ok]),
        ("SCTP", message(2, &[&set(v4.clone(), 1, 132), &v4]), vec![Err(BadProtocol), ok]),
        ("UDP state 1", message(2, &[&set(v4.clone(), 9, 1), &v4]), vec![Err(BadState), ok]),
        ("TCP state 11", message(2, &[&set(set(v4.clone(), 1, 6), 9, 11), &v4]), vec![Err(BadState), ok]),
        ("entries after the count are not read", message(1, &[&v4, &[0xff; 40]]), vec![ok]),
    ]
}

#[test]
fn entry_errors() {
    for (what, msg, want) in entry_cases() {
        let (_, got) = all(&msg).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn templates_skip_the_protocol_and_state_checks() {
    let mut t = third();
    t.protocol = 0;
    t.state = 1;
    t.flags = flags::TEMPLATE | flags::NO_CPORT | flags::DROUTE;
    t.cport = 0;
    let mut buf = [0u8; 64];
    let mut w = MessageWriter::new(&mut buf, 1);
    assert!(w.push(&t));
    assert_eq!(all(w.finish()).unwrap().1, vec![Ok(t)]);
    // the same as a connection: refused
    t.flags = flags::DROUTE;
    let mut w = MessageWriter::new(&mut buf, 1);
    assert!(w.push(&t));
    assert_eq!(
        all(w.finish()).unwrap().1,
        vec![Err(SyncError::BadProtocol)]
    );
}

#[test]
fn every_error_comes_from_some_input() {
    let mut seen = BTreeSet::new();
    for b in [
        &MSG[..3],
        &MSG[..179],
        &[0, 7, 0, 4],
        &[0, 7, 0, 8, 0, 2, 0, 0],
    ] {
        seen.insert(parse(b).unwrap_err().name());
    }
    for (_, msg, _) in entry_cases() {
        for e in parse(&msg).unwrap().1.filter_map(Result::err) {
            seen.insert(e.name());
        }
    }
    let names: BTreeSet<&str> = SyncError::ALL.iter().map(|e| e.name()).collect();
    assert_eq!(names.len(), SyncError::ALL.len(), "names are distinct");
    assert_eq!(seen, names);
    for e in SyncError::ALL {
        assert!(e
            .name()
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn constants_match_linux() {
    assert_eq!(SYNC_GROUP.octets(), [224, 0, 0, 81]);
    assert_eq!(u32::from(SYNC_GROUP), 0xe000_0051);
    assert_eq!((SYNC_PORT, SYNC_VERSION), (8848, 1));
    assert_eq!(flags::BACKUP_MASK, 0x1f87);
    assert_eq!(flags::SEQ_MASK, flags::IN_SEQ | flags::OUT_SEQ);
    assert_eq!(tcp_state::SYNACK + 1, tcp_state::LAST);
    assert_eq!(opt::F_PARAM, 0x40);
}

/// A valid connection: TCP or UDP in one of its states, or a template of
/// any protocol and state.
fn valid_conn() -> impl Strategy<Value = ConnRepr> {
    (
        prop_oneof![Just(6u8), Just(17u8), any::<u8>()],
        any::<u32>(),
        any::<u16>(),
        any::<[u16; 3]>(),
        any::<[u32; 2]>(),
        prop_oneof![
            any::<[u32; 3]>().prop_map(|a| a.map(|x| IpAddr::from(Ipv4Addr::from(x)))),
            any::<[u128; 3]>().prop_map(|a| a.map(|x| IpAddr::from(Ipv6Addr::from(x)))),
        ],
    )
        .prop_map(|(protocol, mut fl, state, p, w, a)| {
            let state = match protocol {
                6 => state % tcp_state::LAST,
                17 => 0,
                _ => {
                    fl |= flags::TEMPLATE;
                    state
                }
            };
            ConnRepr {
                protocol,
                flags: fl,
                state,
                cport: p[0],
                vport: p[1],
                dport: p[2],
                fwmark: w[0],
                timeout: w[1],
                caddr: a[0],
                vaddr: a[1],
                daddr: a[2],
            }
        })
}

/// Bytes with a valid version 1 header in front (the size right), so that
/// the entries are what varies.
fn framed() -> impl Strategy<Value = Vec<u8>> {
    (any::<u8>(), proptest::collection::vec(any::<u8>(), 0..600)).prop_map(|(count, body)| {
        let mut m = vec![0, 1, 0, 0, count, 1, 0, 0];
        m.extend(body);
        let n = m.len() as u16;
        m[2..4].copy_from_slice(&n.to_be_bytes());
        m
    })
}

/// What must hold of any parse: no more items than the count, no more
/// connections than 36-byte entries fit, nothing after an error that ends
/// the message.
fn check_parse(buf: &[u8]) -> Result<(), TestCaseError> {
    let Ok((h, entries)) = parse(buf) else {
        return Ok(());
    };
    prop_assert_eq!(h.size as usize, buf.len());
    let items: Vec<_> = entries.collect();
    prop_assert!(items.len() <= h.count as usize);
    let room = (buf.len() - HEADER_LEN) / CONN_V4_LEN;
    let ok = items.iter().filter(|r| r.is_ok()).count();
    prop_assert!(ok <= room, "{} entries in {} bytes", ok, buf.len());
    prop_assert!(items.len() <= room + 1);
    for (i, r) in items.iter().enumerate() {
        if let Err(e) = r {
            if !e.skips_entry() {
                prop_assert_eq!(i, items.len() - 1, "items after {:?}", e);
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn parse_never_panics(buf in proptest::collection::vec(any::<u8>(), 0..600)) {
        check_parse(&buf)?;
    }

    #[test]
    fn parse_never_panics_behind_a_valid_header(buf in framed()) {
        check_parse(&buf)?;
    }

    #[test]
    fn written_entries_parse_back(
        conns in proptest::collection::vec(valid_conn(), 0..300),
        cap in 0usize..12_000,
        syncid in any::<u8>(),
    ) {
        let mut buf = vec![0u8; cap];
        let mut w = MessageWriter::new(&mut buf, syncid);
        let mut taken = 0;
        for c in &conns {
            if !w.push(c) {
                break;
            }
            taken += 1;
        }
        // entries go in while the next one fits (36 or 72 bytes each)
        let room = cap.min(u16::MAX as usize);
        let (mut fit, mut end) = (0, HEADER_LEN);
        for c in conns.iter().take(MAX_ENTRIES) {
            if cap < HEADER_LEN || end + c.entry_len() > room {
                break;
            }
            end += c.entry_len();
            fit += 1;
        }
        prop_assert_eq!(taken, fit);
        prop_assert_eq!(w.count(), taken);
        let m = w.finish();
        if cap < HEADER_LEN {
            prop_assert!(m.is_empty());
            return Ok(());
        }
        prop_assert_eq!(m.len(), end);
        let (h, entries) = parse(m).unwrap();
        prop_assert_eq!(h, HeaderRepr { syncid, size: m.len() as u16, count: taken as u8, version: 1 });
        let back: Vec<ConnRepr> = entries.map(|r| r.unwrap()).collect();
        prop_assert_eq!(&back[..], &conns[..taken]);
    }
}

/// The fuzz target's seeds (fuzz/seeds.py) are the messages they are
/// meant to be.
#[test]
fn fuzz_seeds_parse_as_meant() {
    use SyncError::*;
    let kinds = |b: &[u8]| -> Vec<Result<u16, SyncError>> {
        parse(b).unwrap().1.map(|r| r.map(|c| c.cport)).collect()
    };
    let conns = include_bytes!("../../../../../../fuzz/corpus/ipvs_sync/conns");
    assert_eq!(kinds(conns), vec![Ok(40000), Ok(40001), Ok(0), Ok(5353)]);
    let options = include_bytes!("../../../../../../fuzz/corpus/ipvs_sync/options");
    assert_eq!(
        kinds(options),
        vec![Ok(40002), Ok(5000), Err(PeData), Ok(40003)]
    );
    let empty = include_bytes!("../../../../../../fuzz/corpus/ipvs_sync/empty");
    assert_eq!(kinds(empty), vec![]);
    let v0 = include_bytes!("../../../../../../fuzz/corpus/ipvs_sync/version0");
    assert_eq!(parse(v0).err(), Some(Version0));
}
