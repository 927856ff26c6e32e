//! FullNAT's `client_address` in the balancer (IPv4): the PROXY header
//! on the handshake's last ACK and exactly once in the stream, the
//! numbers shifted both ways (SACK edges too), retransmissions, the
//! SYN/ACK's MSS clamped; the TOA option byte for byte; no tailroom
//! counted; a plain FullNAT service beside untouched. Frames are built
//! and read by etherparse (every checksum verified), the headers read
//! back by `net::wire::proxy`'s parsers.

use super::*;
use crate::lb::spec::ClientAddress;
use crate::net::wire::proxy;
use etherparse::{PacketBuilder, SlicedPacket, TcpOptionElement, TransportSlice};

const LADDR: [u8; 4] = [10, 0, 0, 200];
const ISN: u32 = 0xffff_fff0; // wraps inside the stream
const SISN: u32 = 5_000;

fn csvc(port: u16, how: ClientAddress) -> ServiceSpec {
    ServiceSpec {
        local_addresses: vec![std::net::IpAddr::V4(Ipv4Addr::from(LADDR))],
        client_address: how,
        ..svc(Proto::Tcp, port)
    }
}

/// A client → VIP (or server → local address) segment.
#[allow(clippy::too_many_arguments)]
fn seg(
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    seq: u32,
    ack: Option<u32>,
    syn: bool,
    opts: &[TcpOptionElement],
    payload: &[u8],
) -> Vec<u8> {
    let mut b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ipv4(src, dst, 64)
        .tcp(sport, dport, seq, 64240);
    if syn {
        b = b.syn();
    }
    if let Some(a) = ack {
        b = b.ack(a);
    }
    let b = b.options(opts).unwrap();
    let mut v = Vec::new();
    b.write(&mut v, payload).unwrap();
    v
}

/// The TCP view of a frame dirigo wrote (checksums verified): seq, ack,
/// options, payload, destination port.
struct Out {
    seq: u32,
    ack: u32,
    opts: Vec<u8>,
    payload: Vec<u8>,
    sport: u16,
    dport: u16,
    /// The first SACK block (etherparse's reading of the options).
    sack: Option<(u32, u32)>,
}

fn read(frame: &[u8]) -> Out {
    verify(frame);
    let p = SlicedPacket::from_ethernet(frame).expect("parse");
    let Some(TransportSlice::Tcp(t)) = &p.transport else {
        panic!("not TCP")
    };
    Out {
        seq: t.sequence_number(),
        ack: t.acknowledgment_number(),
        opts: t.options().to_vec(),
        payload: t.payload().to_vec(),
        sport: t.source_port(),
        dport: t.destination_port(),
        sack: t.options_iterator().find_map(|o| match o {
            Ok(TcpOptionElement::SelectiveAcknowledgement(b, _)) => Some(b),
            _ => None,
        }),
    }
}

fn mss_of(opts: &[u8]) -> Option<u16> {
    let at = crate::net::wire::toa::mss_at(opts)? - 20;
    Some(u16::from_be_bytes([opts[at + 2], opts[at + 3]]))
}

fn to_laddr(e: &mut Env, s: &Snapshot, frame: &[u8], now: u64) -> (LbVerdict, Vec<u8>) {
    let m = meta_of(frame);
    let mut b = VecBuf::new(frame);
    let v = e.w.nat64_reply(&BurstCtx::new(s, &e.eg, now), &mut b, &m);
    (v, b.to_vec())
}

/// The handshake through dirigo: the local port, the SYN/ACK's MSS as
/// the client got it.
fn handshake(e: &mut Env, s: &Snapshot, cport: u16) -> (u16, u16) {
    let mss = [TcpOptionElement::MaximumSegmentSize(1460)];
    let syn = seg(CLIENT, cport, VIP, 80, ISN, None, true, &mss, b"");
    let (v, out) = e.send(s, &syn, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let o = read(&out);
    assert_eq!(
        (o.seq, o.payload.len()),
        (ISN, 0),
        "the SYN passes unchanged"
    );
    assert_eq!(mss_of(&o.opts), Some(1460));
    let lport = o.sport;
    let sa = seg(
        RIP,
        80,
        LADDR,
        lport,
        SISN,
        Some(ISN.wrapping_add(1)),
        true,
        &mss,
        b"",
    );
    let (v, out) = to_laddr(e, s, &sa, 0);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let o = read(&out);
    assert_eq!((o.ack, o.dport), (ISN.wrapping_add(1), cport));
    (lport, mss_of(&o.opts).unwrap())
}

fn client(e: &mut Env, s: &Snapshot, cport: u16, off: u32, data: &[u8]) -> Out {
    let f = seg(
        CLIENT,
        cport,
        VIP,
        80,
        ISN.wrapping_add(1).wrapping_add(off),
        Some(SISN + 1),
        false,
        &[],
        data,
    );
    let (v, out) = e.send(s, &f, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    read(&out)
}

fn server_ack(e: &mut Env, s: &Snapshot, lport: u16, ack: u32, sack: Option<(u32, u32)>) -> Out {
    let opts: Vec<_> = sack
        .map(|b| TcpOptionElement::SelectiveAcknowledgement(b, [None; 3]))
        .into_iter()
        .collect();
    let f = seg(
        RIP,
        80,
        LADDR,
        lport,
        SISN + 1,
        Some(ack),
        false,
        &opts,
        b"",
    );
    let (v, out) = to_laddr(e, s, &f, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    read(&out)
}

fn proxy_env(how: ClientAddress) -> (Env, Snapshot) {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(csvc(80, how), vec![dest(RIP, 80, Method::FullNat, 1)]);
    });
    (e, s)
}

#[test]
fn proxy_v2_once_before_the_first_byte_and_shifted_both_ways() {
    let (mut e, s) = proxy_env(ClientAddress::ProxyV2);
    let (lport, mss) = handshake(&mut e, &s, 40000);
    let hl = proxy::V2_LEN_INET as u32;
    assert_eq!(
        mss,
        1460 - hl as u16,
        "the SYN/ACK's MSS leaves room for the header"
    );
    let base = ISN.wrapping_add(1);
    // the handshake's last ACK carries the header (a banner-first server
    // gets it before it speaks)
    let o = client(&mut e, &s, 40000, 0, b"");
    assert_eq!((o.seq, o.payload.len() as u32), (base, hl));
    let (a, n) = proxy::parse_v2(&o.payload).unwrap();
    assert_eq!(n, hl as usize);
    assert_eq!(
        a,
        proxy::Addrs::V4 {
            src: u32::from_be_bytes(CLIENT),
            dst: u32::from_be_bytes(VIP),
            sport: 40000,
            dport: 80
        }
    );
    // the first data segment before the server acknowledged the header:
    // the header again, at the same place (the server keeps one copy)
    let o = client(&mut e, &s, 40000, 0, b"GET");
    assert_eq!(o.seq, base);
    assert_eq!(proxy::parse_v2(&o.payload).unwrap().1, hl as usize);
    assert!(o.payload.ends_with(b"GET") && o.payload.len() as u32 == hl + 3);
    // the server acknowledges header and "GET", SACKs a later block: the
    // client sees its own numbers
    let o = server_ack(
        &mut e,
        &s,
        lport,
        base.wrapping_add(hl + 3),
        Some((base.wrapping_add(hl + 10), base.wrapping_add(hl + 20))),
    );
    assert_eq!(o.ack, base.wrapping_add(3));
    assert_eq!(o.sack, Some((base.wrapping_add(10), base.wrapping_add(20))));
    // the next segment is shifted, never given the header
    let o = client(&mut e, &s, 40000, 3, b" / HTTP/1.0\r\n");
    assert_eq!(
        (o.seq, o.payload.as_slice()),
        (base.wrapping_add(3 + hl), &b" / HTTP/1.0\r\n"[..])
    );
    // the first segment retransmitted after the header was acknowledged:
    // shifted, no header (exactly once)
    let o = client(&mut e, &s, 40000, 0, b"GET");
    assert_eq!(
        (o.seq, o.payload.as_slice()),
        (base.wrapping_add(hl), &b"GET"[..])
    );
    // an acknowledgment inside the header acknowledges nothing of the client's
    let o = server_ack(&mut e, &s, lport, base.wrapping_add(5), None);
    assert_eq!(o.ack, base);
}

#[test]
fn proxy_v1_first_data_lost_split_and_resent() {
    let (mut e, s) = proxy_env(ClientAddress::ProxyV1);
    let (lport, mss) = handshake(&mut e, &s, 40001);
    let line = b"PROXY TCP4 198.51.100.7 192.0.2.10 40001 80\r\n";
    let hl = line.len() as u32;
    assert_eq!(mss, 1460 - hl as u16);
    let base = ISN.wrapping_add(1);
    // the handshake's ACK (lost on the way to the server, say)
    let o = client(&mut e, &s, 40001, 0, b"");
    assert_eq!(o.payload, line);
    // the rest of a split first segment overtakes its start: shifted only
    let o = client(&mut e, &s, 40001, 2, b"LO");
    assert_eq!(
        (o.seq, o.payload.as_slice()),
        (base.wrapping_add(hl + 2), &b"LO"[..])
    );
    // the start (resent): the header before it
    let o = client(&mut e, &s, 40001, 0, b"HE");
    assert_eq!(o.seq, base);
    assert_eq!(o.payload, [&line[..], b"HE"].concat());
    // the server has it all: the stream it holds is line + "HELO", and
    // a retransmission now carries no header
    let o = server_ack(&mut e, &s, lport, base.wrapping_add(hl + 4), None);
    assert_eq!(o.ack, base.wrapping_add(4));
    let o = client(&mut e, &s, 40001, 0, b"HE");
    assert_eq!(
        (o.seq, o.payload.as_slice()),
        (base.wrapping_add(hl), &b"HE"[..])
    );
}

#[test]
fn toa_on_the_first_segments_byte_for_byte() {
    let (mut e, s) = proxy_env(ClientAddress::Toa);
    let (_, mss) = handshake(&mut e, &s, 40002);
    assert_eq!(
        mss,
        1460 - 8,
        "the SYN/ACK's MSS leaves room for the option"
    );
    let base = ISN.wrapping_add(1);
    // DPVS's tcpopt_ip4_addr first in the options: 254, 8, port, address
    let want = [254, 8, 0x9c, 0x42, 198, 51, 100, 7];
    for data in [&b""[..], b"GET"] {
        let o = client(&mut e, &s, 40002, 0, data);
        assert_eq!(o.seq, base, "TOA moves no sequence number");
        assert_eq!(&o.opts[..8], &want, "{:?}", o.opts);
        assert_eq!(o.payload, data);
    }
    // a later segment goes as it came
    let o = client(&mut e, &s, 40002, 3, b"x");
    assert!(o.opts.is_empty(), "{:?}", o.opts);
    assert_eq!(
        (o.seq, o.payload.as_slice()),
        (base.wrapping_add(3), &b"x"[..])
    );
}

#[test]
fn no_tailroom_is_a_counted_drop_and_plain_fullnat_is_untouched() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(
            csvc(80, ClientAddress::ProxyV2),
            vec![dest(RIP, 80, Method::FullNat, 1)],
        );
        b.service(
            csvc(81, ClientAddress::None),
            vec![dest(RIP, 81, Method::FullNat, 1)],
        );
    });
    handshake(&mut e, &s, 40003);
    let ack = seg(
        CLIENT,
        40003,
        VIP,
        80,
        ISN.wrapping_add(1),
        Some(SISN + 1),
        false,
        &[],
        b"",
    );
    let m = meta_of(&ack);
    let mut b = VecBuf::with_room(&ack, 128, 0);
    let v = e.w.process(&BurstCtx::new(&s, &e.eg, S), &mut b, &m);
    assert_eq!(v, LbVerdict::Drop(LbDrop::ClientAddrNoRoom));
    assert_eq!(
        e.w.stats().drops[LbDrop::ClientAddrNoRoom.index()].load(Relaxed),
        1
    );
    // the plain FullNAT service: nothing added, nothing moved
    let mss = [TcpOptionElement::MaximumSegmentSize(1460)];
    let syn = seg(CLIENT, 40004, VIP, 81, ISN, None, true, &mss, b"");
    let o = read(&e.send(&s, &syn, 0).1);
    let sa = seg(
        RIP,
        81,
        LADDR,
        o.sport,
        SISN,
        Some(ISN.wrapping_add(1)),
        true,
        &mss,
        b"",
    );
    let o = read(&to_laddr(&mut e, &s, &sa, 0).1);
    assert_eq!(mss_of(&o.opts), Some(1460));
    let f = seg(
        CLIENT,
        40004,
        VIP,
        81,
        ISN.wrapping_add(1),
        Some(SISN + 1),
        false,
        &[],
        b"GET",
    );
    let o = read(&e.send(&s, &f, S).1);
    assert_eq!(
        (o.seq, o.payload.as_slice()),
        (ISN.wrapping_add(1), &b"GET"[..])
    );
}

#[test]
fn client_address_is_for_tcp_fullnat_only() {
    let mut e = env(1024);
    let mut b = SnapshotBuilder::new();
    b.service(
        csvc(80, ClientAddress::ProxyV1),
        vec![dest(RIP, 80, Method::Nat, 1)],
    );
    let err = b.build(&mut e.ids, 1).unwrap_err().to_string();
    assert!(err.contains("client_address = \"proxy-v1\""), "{err}");
    let mut b = SnapshotBuilder::new();
    let mut u = csvc(53, ClientAddress::Toa);
    u.key.proto = Proto::Udp;
    b.service(u, vec![dest(RIP, 53, Method::FullNat, 1)]);
    assert!(b.build(&mut e.ids, 1).is_err());
}

/// An RST at the header's place never carries it; a FIN without data
/// does (the server learns the client's address even for a connection
/// the client closes at once).
#[test]
fn rst_never_fin_does_carry_the_header() {
    let (mut e, s) = proxy_env(ClientAddress::ProxyV2);
    handshake(&mut e, &s, 40010);
    let base = ISN.wrapping_add(1);
    let mut b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ipv4(CLIENT, VIP, 64)
        .tcp(40010, 80, base, 64240)
        .ack(SISN + 1);
    b = b.rst();
    let mut rst = Vec::new();
    b.write(&mut rst, b"").unwrap();
    let (v, out) = e.send(&s, &rst, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let o = read(&out);
    assert_eq!((o.seq, o.payload.len()), (base, 0), "an RST as it came");

    handshake(&mut e, &s, 40011);
    let mut fin = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ipv4(CLIENT, VIP, 64)
        .tcp(40011, 80, base, 64240)
        .ack(SISN + 1)
        .fin()
        .write(&mut fin, b"")
        .unwrap();
    let (_, out) = e.send(&s, &fin, S);
    let o = read(&out);
    assert_eq!(o.seq, base);
    assert_eq!(proxy::parse_v2(&o.payload).unwrap().1, o.payload.len());
}

/// The per-record state: none for plain FullNAT, allocated by the first
/// snapshot with a `client_address` service (housekeeping's
/// `see_snapshot`), or from the start when the configuration says so.
#[test]
fn state_only_when_a_service_needs_it() {
    let mut e = env(1024);
    let plain = e.snap(1, |b| {
        b.service(
            csvc(81, ClientAddress::None),
            vec![dest(RIP, 81, Method::FullNat, 1)],
        );
    });
    let syn = seg(CLIENT, 40020, VIP, 81, ISN, None, true, &[], b"");
    assert_eq!(e.send(&plain, &syn, 0).0, LbVerdict::Tx { port: 1 });
    assert!(e.w.cip.is_none(), "plain FullNAT keeps no state");
    let proxied = e.snap(2, |b| {
        b.service(
            csvc(80, ClientAddress::ProxyV1),
            vec![dest(RIP, 80, Method::FullNat, 1)],
        );
    });
    e.w.see_snapshot(&proxied);
    assert!(e.w.cip.is_some(), "housekeeping reserves it");
    let cfg = BalancerConfig {
        conn_capacity: 1024,
        client_address: true,
        ..BalancerConfig::default()
    };
    let w = Balancer::new(&cfg, 16, 16);
    assert!(w.cip.is_some(), "reserved from the start");
}

/// A PROXY connection handed to the next process (issue 53): its header's
/// state goes with it — sent, not yet acknowledged — so the server's
/// acknowledgment and the client's next segment are shifted there as
/// they are here. A service that no longer sends the client's address
/// that way refuses the entry.
#[test]
fn proxy_state_survives_a_handoff() {
    use crate::lb::handoff::codec::{decode, encode};
    use crate::lb::handoff::{Entry, HandoffCount};
    let (mut a, sa) = proxy_env(ClientAddress::ProxyV2);
    let (lport, _) = handshake(&mut a, &sa, 40000);
    let hl = proxy::V2_LEN_INET as u32;
    let base = ISN.wrapping_add(1);
    // the handshake's last ACK carries the header: sent, not acknowledged
    let o = client(&mut a, &sa, 40000, 0, b"");
    assert_eq!(o.payload.len() as u32, hl);
    let mut entries = Vec::new();
    a.w.handoff_export(&sa, S, |e| entries.push(*e));
    let f = encode(1, &entries);
    let entries: Vec<Entry> = decode(&f).unwrap().entries().collect();
    let Some(Entry::Conn(c)) = entries.first() else {
        panic!("{entries:?}")
    };
    assert_eq!(c.cip, ClientAddress::ProxyV2 as u8);
    assert_eq!(c.insert.map(|i| (i.0, i.1)), Some((base, hl as u16)));

    let (mut b, sb) = proxy_env(ClientAddress::ProxyV2);
    let got: Vec<_> = entries
        .iter()
        .map(|e| b.w.install_handoff(&sb, e, S))
        .collect();
    assert_eq!(got, [HandoffCount::Installed]);
    // the client's first data, before the server acknowledged the header:
    // the header again in both; then the server's acknowledgment and the
    // next segment, shifted alike
    for (e, s) in [(&mut a, &sa), (&mut b, &sb)] {
        let o = client(e, s, 40000, 0, b"GET");
        assert_eq!((o.seq, o.payload.len() as u32), (base, hl + 3));
        let o = server_ack(e, s, lport, base.wrapping_add(hl + 3), None);
        assert_eq!(o.ack, base.wrapping_add(3));
        let o = client(e, s, 40000, 3, b" /");
        assert_eq!(
            (o.seq, o.payload.as_slice()),
            (base.wrapping_add(3 + hl), &b" /"[..])
        );
    }
    // the service now sends TOA instead: refused, never mistranslated
    let (mut c, sc) = proxy_env(ClientAddress::Toa);
    assert_eq!(
        c.w.install_handoff(&sc, &entries[0], S),
        HandoffCount::MethodChanged
    );
}
