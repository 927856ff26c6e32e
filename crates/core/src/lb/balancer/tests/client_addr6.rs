//! FullNAT's `client_address` over IPv6: the PROXY v2 header (52 bytes,
//! TCP6) on the handshake's last ACK and the shift both ways, the TOA
//! option's 20-byte form, the SYN/ACK's MSS clamped; lengths and TCP
//! checksums checked against etherparse's.

use super::v6::{dest6, meta6, svc6};
use super::*;
use crate::lb::spec::ClientAddress;
use crate::net::wire::proxy;
use etherparse::{NetSlice, PacketBuilder, SlicedPacket, TcpOptionElement, TransportSlice};

const LADDR6: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0200;
const ISN: u32 = 7_000;
const SISN: u32 = 90_000;

fn csvc6(how: ClientAddress) -> ServiceSpec {
    ServiceSpec {
        local_addresses: vec![std::net::IpAddr::V6(LADDR6.into())],
        client_address: how,
        ..svc6(Proto::Tcp, 80)
    }
}

#[allow(clippy::too_many_arguments)]
fn seg6(
    src: u128,
    sport: u16,
    dst: u128,
    dport: u16,
    seq: u32,
    ack: Option<u32>,
    syn: bool,
    opts: &[TcpOptionElement],
    payload: &[u8],
) -> Vec<u8> {
    let mut b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ipv6(src.to_be_bytes(), dst.to_be_bytes(), 64)
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

/// (seq, ack, options, payload, source port, MSS) of a frame dirigo
/// wrote, its TCP checksum compared with etherparse's.
fn read6(frame: &[u8]) -> (u32, u32, Vec<u8>, Vec<u8>, u16, Option<u16>) {
    let p = SlicedPacket::from_ethernet(frame).expect("parse");
    let Some(NetSlice::Ipv6(ip)) = &p.net else {
        panic!("not IPv6")
    };
    let Some(TransportSlice::Tcp(t)) = &p.transport else {
        panic!("not TCP")
    };
    let want = t
        .to_header()
        .calc_checksum_ipv6(&ip.header().to_header(), t.payload())
        .unwrap();
    assert_eq!(t.checksum(), want, "TCP checksum");
    let mss = t.options_iterator().find_map(|o| match o {
        Ok(TcpOptionElement::MaximumSegmentSize(m)) => Some(m),
        _ => None,
    });
    (
        t.sequence_number(),
        t.acknowledgment_number(),
        t.options().to_vec(),
        t.payload().to_vec(),
        t.source_port(),
        mss,
    )
}

/// The handshake: the local port and the MSS the client was told.
fn handshake6(e: &mut Env, s: &Snapshot) -> (u16, u16) {
    let mss = [TcpOptionElement::MaximumSegmentSize(1440)];
    let syn = seg6(CLIENT6, 40000, VIP6, 80, ISN, None, true, &mss, b"");
    let (v, out) = e.send6(s, &syn, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let lport = read6(&out).4;
    let sa = seg6(
        RIP6,
        80,
        LADDR6,
        lport,
        SISN,
        Some(ISN + 1),
        true,
        &mss,
        b"",
    );
    let (v, out) = e.send6(s, &sa, 0);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    (lport, read6(&out).5.unwrap())
}

fn env6(how: ClientAddress) -> (Env, Snapshot) {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(csvc6(how), vec![dest6(RIP6, 80, Method::FullNat, 1)]);
    });
    (e, s)
}

#[test]
fn proxy_v2_over_ipv6() {
    let (mut e, s) = env6(ClientAddress::ProxyV2);
    let (lport, mss) = handshake6(&mut e, &s);
    let hl = proxy::V2_LEN_INET6 as u32;
    assert_eq!(mss, 1440 - hl as u16);
    let ack = seg6(
        CLIENT6,
        40000,
        VIP6,
        80,
        ISN + 1,
        Some(SISN + 1),
        false,
        &[],
        b"",
    );
    let (_, out) = e.send6(&s, &ack, S);
    assert_eq!(meta6(&out).ip_len as usize, 40 + 20 + hl as usize);
    let (seq, _, _, payload, _, _) = read6(&out);
    assert_eq!(seq, ISN + 1);
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
    // the server acknowledges the header and 4 bytes; the client's next
    // 4 bytes (after its first 4) go shifted
    let r = seg6(
        RIP6,
        80,
        LADDR6,
        lport,
        SISN + 1,
        Some(ISN + 1 + hl + 4),
        false,
        &[],
        b"",
    );
    let (_, out) = e.send6(&s, &r, S);
    assert_eq!(read6(&out).1, ISN + 1 + 4);
    let d = seg6(
        CLIENT6,
        40000,
        VIP6,
        80,
        ISN + 5,
        Some(SISN + 1),
        false,
        &[],
        b"more",
    );
    let (_, out) = e.send6(&s, &d, S);
    let (seq, _, _, payload, _, _) = read6(&out);
    assert_eq!((seq, payload.as_slice()), (ISN + 5 + hl, &b"more"[..]));
}

#[test]
fn toa_over_ipv6_byte_for_byte() {
    let (mut e, s) = env6(ClientAddress::Toa);
    let (_, mss) = handshake6(&mut e, &s);
    assert_eq!(mss, 1440 - 20);
    let d = seg6(
        CLIENT6,
        40000,
        VIP6,
        80,
        ISN + 1,
        Some(SISN + 1),
        false,
        &[],
        b"GET",
    );
    let (v, out) = e.send6(&s, &d, S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let (seq, _, opts, payload, _, _) = read6(&out);
    assert_eq!((seq, payload.as_slice()), (ISN + 1, &b"GET"[..]));
    // DPVS's tcpopt_ip6_addr: 254, 20, port, the 16 address bytes
    let want = [&[254u8, 20, 0x9c, 0x40][..], &CLIENT6.to_be_bytes()].concat();
    assert_eq!(&opts[..20], want.as_slice(), "{opts:?}");
}
