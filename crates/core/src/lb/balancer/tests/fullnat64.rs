//! FullNAT from an IPv6 VIP to IPv4 real servers (issue 51): the IPv6
//! client's connection leaves as IPv4 from one of the service's IPv4
//! local addresses (NAT64's translation, its pool the service's), its
//! replies come back to the client as IPv6 from the VIP; the rules the
//! snapshot keeps; a restart's handoff keeps it.

use super::v6::{dest6, from_client, meta6, svc6};
use super::*;
use crate::lb::handoff::codec::{decode, encode};
use crate::lb::handoff::{Entry, HandoffCount};
use crate::lb::snapshot::BuildError;
use crate::lb::spec::ClientAddress;
use crate::net::wire::proxy;
use etherparse::{NetSlice, PacketBuilder, SlicedPacket, TcpOptionElement, TransportSlice};

const LADDR4: [u8; 4] = [10, 0, 0, 211];

/// An IPv6 TCP service on `port` with the local addresses `laddrs`.
fn svc64(port: u16, laddrs: &[&str]) -> ServiceSpec {
    let mut s = svc6(Proto::Tcp, port);
    s.local_addresses = laddrs.iter().map(|a| a.parse().unwrap()).collect();
    s
}

fn cfg(b: &mut SnapshotBuilder) {
    b.service(
        svc64(80, &["10.0.0.211", "2001:db8:9::1"]),
        vec![dest(RIP, 8080, Method::FullNat, 1)],
    );
}

/// The IPv4 request `out` says: source address and port.
fn source4(out: &[u8]) -> ([u8; 4], u16, [u8; 4], u16) {
    let p = etherparse::SlicedPacket::from_ethernet(out).unwrap();
    let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else {
        panic!("an IPv4 request")
    };
    let h = ip.header().to_header();
    let Some(etherparse::TransportSlice::Tcp(t)) = &p.transport else {
        panic!("tcp")
    };
    (
        h.source,
        t.source_port(),
        h.destination,
        t.destination_port(),
    )
}

#[test]
fn an_ipv6_client_reaches_an_ipv4_fullnat_server_from_its_local_address() {
    let mut e = env(1024);
    let s = e.snap(1, cfg);
    assert!(s.is_pool4(u32::from_be_bytes(LADDR4)), "replies steered");
    let (v, out) = e.send6(&s, &from_client(SYN, 40000, 80), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    verify(&out);
    let (src, lport, dst, dport) = source4(&out);
    assert_eq!(src, LADDR4, "from the service's IPv4 local address");
    assert_eq!((dst, dport), (RIP, 8080));
    assert!(lport >= 1024);
    // the server's reply to the local address comes back as IPv6 from
    // the VIP to the client
    let reply = tcp_frame(RIP, 8080, LADDR4, lport, SYN | ACK, b"hi", 64, true);
    let mut b = VecBuf::with_room(&reply, 128, 0);
    let v =
        e.w.nat64_reply(&BurstCtx::new(&s, &e.eg, S), &mut b, &meta_of(&reply));
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let out = b.to_vec();
    let m = meta6(&out);
    assert_eq!((m.key.src, m.key.sport), (VIP6, 80));
    assert_eq!((m.key.dst, m.key.dport), (CLIENT6, 40000));
    assert!(out.ends_with(b"hi"));
    let c: Vec<_> = e.w.conns(S).collect();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].state, "SYN_RECV", "the server's SYN/ACK seen");
    assert_eq!(c[0].rs.to_string(), "[::ffff:10.0.0.21]:8080");
    // an IPv6 FullNAT server in the same service leaves from the IPv6
    // local address (each family from its own)
    let mut e6 = env(1024);
    let s6 = e6.snap(1, |b| {
        b.service(
            svc64(80, &["10.0.0.211", "2001:db8:9::1"]),
            vec![dest6(RIP6, 8080, Method::FullNat, 1)],
        );
    });
    let (v, out) = e6.send6(&s6, &from_client(SYN, 40000, 80), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(
        meta6(&out).key.src,
        0x2001_0db8_0009_0000_0000_0000_0000_0001
    );
}

#[test]
fn the_snapshot_keeps_fullnat64s_rules() {
    let mut e = env(16);
    let full4 = dest(RIP, 0, Method::FullNat, 1);
    // an IPv4 server needs an IPv4 local address
    let mut b = SnapshotBuilder::new();
    b.service(svc64(80, &["2001:db8:9::1"]), vec![full4.clone()]);
    assert!(matches!(
        b.build(&mut e.ids, 1),
        Err(BuildError::FullNatNoLaddrOfFamily(..))
    ));
    // TOA cannot carry an IPv6 client to an IPv4 server
    let mut b = SnapshotBuilder::new();
    let mut spec = svc64(80, &["10.0.0.211"]);
    spec.client_address = ClientAddress::Toa;
    b.service(spec, vec![full4.clone()]);
    assert!(matches!(
        b.build(&mut e.ids, 1),
        Err(BuildError::ClientAddress64(..))
    ));
    // an IPv4 service still takes no IPv6 local address
    let mut b = SnapshotBuilder::new();
    let mut spec = svc(Proto::Tcp, 80);
    spec.local_addresses = vec!["2001:db8:9::1".parse().unwrap()];
    b.service(spec, vec![full4.clone()]);
    assert!(matches!(
        b.build(&mut e.ids, 1),
        Err(BuildError::LaddrFamily(..))
    ));
    // a NAT server behind an IPv6 VIP still needs the NAT64 pool
    let mut b = SnapshotBuilder::new();
    b.service(
        svc64(80, &["10.0.0.211"]),
        vec![dest(RIP, 0, Method::Nat, 1)],
    );
    assert!(b.build(&mut e.ids, 1).is_err());
}

#[test]
fn a_fullnat64_connection_survives_a_handoff() {
    let mut a = env(1024);
    let sa = a.snap(1, cfg);
    assert!(matches!(
        a.send6(&sa, &from_client(SYN, 40000, 80), S).0,
        LbVerdict::Tx { .. }
    ));
    let mut entries = Vec::new();
    a.w.handoff_export(&sa, 2 * S, |x| entries.push(*x));
    let f = encode(7, &entries);
    let entries: Vec<Entry> = decode(&f).expect("decodes").entries().collect();
    assert_eq!(entries.len(), 1);
    let mut b = env(1024);
    let sb = b.snap(1, cfg);
    assert_eq!(
        b.w.install_handoff(&sb, &entries[0], 100 * S),
        HandoffCount::Installed
    );
    let f = from_client(ACK, 40000, 80);
    let (va, oa) = a.send6(&sa, &f, 2 * S);
    let (vb, ob) = b.send6(&sb, &f, 100 * S);
    assert_eq!(va, vb);
    assert_eq!(
        source4(&oa),
        source4(&ob),
        "the same local address and port"
    );
    // a configuration without that local address refuses it alone
    let mut c = env(1024);
    let sc = c.snap(1, |b| {
        b.service(
            svc64(80, &["10.0.0.212"]),
            vec![dest(RIP, 8080, Method::FullNat, 1)],
        );
    });
    assert_eq!(
        c.w.install_handoff(&sc, &entries[0], 100 * S),
        HandoffCount::Nat64Pool
    );
}

/// (seq, ack, payload, source port, MSS) of a TCP frame dirigo wrote,
/// either family, its TCP checksum compared with etherparse's.
fn read(frame: &[u8]) -> (u32, u32, Vec<u8>, u16, Option<u16>) {
    let p = SlicedPacket::from_ethernet(frame).expect("parse");
    let Some(TransportSlice::Tcp(t)) = &p.transport else {
        panic!("not TCP")
    };
    let want = match &p.net {
        Some(NetSlice::Ipv4(ip)) => t
            .to_header()
            .calc_checksum_ipv4(&ip.header().to_header(), t.payload())
            .unwrap(),
        Some(NetSlice::Ipv6(ip)) => t
            .to_header()
            .calc_checksum_ipv6(&ip.header().to_header(), t.payload())
            .unwrap(),
        _ => panic!("not IP"),
    };
    assert_eq!(t.checksum(), want, "TCP checksum");
    let mss = t.options_iterator().find_map(|o| match o {
        Ok(TcpOptionElement::MaximumSegmentSize(m)) => Some(m),
        _ => None,
    });
    (
        t.sequence_number(),
        t.acknowledgment_number(),
        t.payload().to_vec(),
        t.source_port(),
        mss,
    )
}

/// A TCP segment of the client (IPv6, to the VIP) or of the real server
/// (IPv4, to the local address and port `lport`).
fn seg(
    from_client: bool,
    lport: u16,
    seq: u32,
    ack: Option<u32>,
    syn: bool,
    pay: &[u8],
) -> Vec<u8> {
    let mss = [TcpOptionElement::MaximumSegmentSize(1440)];
    let b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC);
    let mut b = if from_client {
        b.ipv6(CLIENT6.to_be_bytes(), VIP6.to_be_bytes(), 64)
            .tcp(40000, 80, seq, 64240)
    } else {
        b.ipv4(RIP, LADDR4, 64).tcp(8080, lport, seq, 64240)
    };
    if syn {
        b = b.syn();
    }
    if let Some(a) = ack {
        b = b.ack(a);
    }
    let b = b.options(if syn { &mss[..] } else { &[] }).unwrap();
    let mut v = Vec::new();
    b.write(&mut v, pay).unwrap();
    v
}

#[test]
fn an_ipv6_clients_address_reaches_an_ipv4_server_by_proxy_v2() {
    const ISN: u32 = 7_000;
    const SISN: u32 = 90_000;
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        let mut spec = svc64(80, &["10.0.0.211"]);
        spec.client_address = ClientAddress::ProxyV2;
        b.service(spec, vec![dest(RIP, 8080, Method::FullNat, 1)]);
    });
    let (v, out) = e.send6(&s, &seg(true, 0, ISN, None, true, b""), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let lport = read(&out).3;
    // the server's SYN/ACK: back to the client as IPv6, its MSS lowered
    // by the header's length
    let hl = proxy::V2_LEN_INET6 as u32;
    let to_laddr = |e: &mut Env, f: &[u8]| {
        let mut b = VecBuf::with_room(f, 128, 64);
        let v =
            e.w.nat64_reply(&BurstCtx::new(&s, &e.eg, S), &mut b, &meta_of(f));
        (v, b.to_vec())
    };
    let (v, out) = to_laddr(&mut e, &seg(false, lport, SISN, Some(ISN + 1), true, b""));
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    assert_eq!(read(&out).4, Some(1440 - hl as u16));
    // the handshake's last ACK carries the header, as IPv4, from the
    // local address: the IPv6 client and VIP in it
    let mut b = VecBuf::with_room(&seg(true, 0, ISN + 1, Some(SISN + 1), false, b""), 128, 128);
    let m = meta6(&b.to_vec());
    let v = e.w.process6(&BurstCtx::new(&s, &e.eg, S), &mut b, &m);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let out = b.to_vec();
    let (seq, _, payload, sport, _) = read(&out);
    assert_eq!((seq, sport), (ISN + 1, lport));
    assert_eq!(
        proxy::parse_v2(&payload).unwrap(),
        (
            proxy::Addrs::V6 {
                src: CLIENT6,
                dst: VIP6,
                sport: 40000,
                dport: 80
            },
            hl as usize
        )
    );
    // the server acknowledges the header and 4 bytes: the client hears
    // of its 4
    let (_, out) = to_laddr(
        &mut e,
        &seg(false, lport, SISN + 1, Some(ISN + 1 + hl + 4), false, b""),
    );
    assert_eq!(read(&out).1, ISN + 1 + 4);
    // the client's next bytes go shifted by the header
    let (_, out) = e.send6(
        &s,
        &seg(true, 0, ISN + 5, Some(SISN + 1), false, b"more"),
        S,
    );
    let (seq, _, payload, _, _) = read(&out);
    assert_eq!((seq, payload.as_slice()), (ISN + 5 + hl, &b"more"[..]));
}
