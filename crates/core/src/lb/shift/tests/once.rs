use crate::lb::shift::once::{ClientSeg, HeaderInsert, Out, Phase};
use crate::lb::shift::segment;
use crate::net::meta::tcp_flags::{ACK, FIN, PSH, RST, SYN};
use crate::net::wire::tcp;

const ISN: u32 = u32::MAX - 1; // the first byte at MAX, the header across the wrap
const LEN: u16 = 28;

fn seg(seq: u32, flags: u8) -> ClientSeg {
    ClientSeg { seq, flags }
}

fn prepend(seq: u32) -> Out {
    Out { prepend: true, seq }
}

fn keep(seq: u32) -> Out {
    Out {
        prepend: false,
        seq,
    }
}

#[test]
fn the_handshake_ack_carries_it_then_data_is_shifted() {
    let mut h = HeaderInsert::new(ISN, LEN);
    let at = ISN.wrapping_add(1);
    assert_eq!(h.phase(), Phase::Pending);
    // a retransmitted SYN: unchanged
    assert_eq!(h.client(seg(ISN, SYN)), keep(ISN));
    assert_eq!(h.phase(), Phase::Pending);
    // the handshake's ACK: the header rides on it
    assert_eq!(h.client(seg(at, ACK)), prepend(at));
    assert_eq!(h.phase(), Phase::Sent);
    // the first data, before the server acknowledged: again (it may
    // have been lost), at the same place
    assert_eq!(h.client(seg(at, ACK | PSH)), prepend(at));
    // the rest of a split segment: shifted, never the header
    assert_eq!(
        h.client(seg(at.wrapping_add(100), ACK)),
        keep(at.wrapping_add(100 + 28))
    );
    // the server acknowledges 10 bytes of the header: none of the client's
    assert_eq!(h.server_ack(at.wrapping_add(10)), at);
    assert_eq!(h.phase(), Phase::Sent);
    // the whole header and 5 bytes
    assert_eq!(h.server_ack(at.wrapping_add(33)), at.wrapping_add(5));
    assert_eq!(h.phase(), Phase::Done);
    // a retransmission of the first data now: shifted, no header
    assert_eq!(h.client(seg(at, ACK | PSH)), keep(at.wrapping_add(28)));
    // an old ack (the SYN/ACK's) is unmoved
    assert_eq!(h.server_ack(at), at);
    assert_eq!(h.phase(), Phase::Done);
}

#[test]
fn rst_and_fin() {
    let at = ISN.wrapping_add(1);
    // an RST before anything was sent: where the server expects it
    let mut h = HeaderInsert::new(ISN, LEN);
    assert_eq!(h.client(seg(at, RST)), keep(at));
    assert_eq!(h.client(seg(at, RST | ACK)), keep(at));
    assert_eq!(h.phase(), Phase::Pending);
    // a FIN without data carries the header (the FIN after it)
    assert_eq!(h.client(seg(at, FIN | ACK)), prepend(at));
    // an RST once sent: after the header
    assert_eq!(h.client(seg(at, RST)), keep(at.wrapping_add(28)));
    // no header at all: nothing moves
    let mut z = HeaderInsert::new(ISN, 0);
    assert_eq!(z.phase(), Phase::Done);
    assert_eq!(z.client(seg(at, ACK)), keep(at));
    assert_eq!(
        z.client(seg(at.wrapping_add(9), ACK)),
        keep(at.wrapping_add(9))
    );
    assert_eq!(z.server_ack(at.wrapping_add(9)), at.wrapping_add(9));
}

#[test]
fn on_a_segment_in_place() {
    let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let at = 1001u32;
    let mut h = HeaderInsert::new(1000, LEN);
    let build = |seq: u32, ack: u32, sack: Option<(u32, u32)>| {
        let mut t = etherparse::TcpHeader::new(5000, 80, seq, 65535);
        t.ack = true;
        t.acknowledgment_number = ack;
        if let Some(b) = sack {
            t.set_options(&[
                etherparse::TcpOptionElement::Noop,
                etherparse::TcpOptionElement::Noop,
                etherparse::TcpOptionElement::SelectiveAcknowledgement(b, [None, None, None]),
            ])
            .unwrap();
        }
        t.checksum = t.calc_checksum_ipv4_raw(src, dst, b"data").unwrap();
        let mut b = t.to_bytes().to_vec();
        b.extend_from_slice(b"data");
        b
    };
    let ok = |b: &mut Vec<u8>| {
        let t = tcp::Packet::new_checked(&mut b[..]).unwrap();
        assert!(t.verify_checksum(u32::from_be_bytes(src), u32::from_be_bytes(dst)));
        (t.seq_number(), t.ack_number(), t.u32_at(24), t.u32_at(28))
    };
    // a client segment after the first: shifted, checksum right
    let mut b = build(at + 50, 7, None);
    let out = segment::client_segment(&mut tcp::Packet::new_checked(&mut b[..]).unwrap(), &mut h);
    assert_eq!(out, keep(at + 78));
    assert_eq!(ok(&mut b).0, at + 78);
    // a server segment: ack and SACK moved back
    let mut b = build(7, at + 28, Some((at + 78, at + 128)));
    segment::server_segment(&mut tcp::Packet::new_checked(&mut b[..]).unwrap(), &mut h);
    assert_eq!(ok(&mut b), (7, at, at + 50, at + 100));
    assert_eq!(h.phase(), Phase::Done);
}

#[test]
fn the_header_goes_before_the_payload_in_place() {
    let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let mut h = HeaderInsert::new(1000, 6);
    let mut t = etherparse::TcpHeader::new(5000, 80, 1001, 65535);
    t.ack = true;
    t.acknowledgment_number = 9;
    t.set_options(&[
        etherparse::TcpOptionElement::Noop,
        etherparse::TcpOptionElement::Noop,
        etherparse::TcpOptionElement::Timestamp(1, 2),
    ])
    .unwrap();
    let mut seg = t.to_bytes().to_vec();
    seg.extend_from_slice(b"hello");
    let len = seg.len();
    seg.resize(len + 6, 0);
    let out = segment::client_segment(
        &mut tcp::Packet::new_checked(&mut seg[..len]).unwrap(),
        &mut h,
    );
    assert_eq!(out, prepend(1001));
    assert_eq!(
        segment::prepend(&mut seg[..len + 5], len, b"HEADER"),
        Err(crate::net::wire::WireError::Truncated)
    );
    let n = segment::prepend(&mut seg, len, b"HEADER").unwrap();
    assert_eq!(n, len + 6);
    let mut p = tcp::Packet::new_checked(&mut seg[..n]).unwrap();
    p.fill_checksum(u32::from_be_bytes(src), u32::from_be_bytes(dst));
    let (e, rest) = etherparse::TcpHeader::from_slice(&seg[..n]).unwrap();
    assert_eq!(rest, b"HEADERhello");
    assert_eq!(e.sequence_number, 1001);
    assert_eq!(
        e.calc_checksum_ipv4_raw(src, dst, rest).unwrap(),
        e.checksum
    );
}
