//! Packet builders and checkers for the vdev tests: fixtures built with
//! etherparse (an independent implementation) and checksum verification.

use etherparse::{
    Icmpv4Header, Icmpv4Type, IpNumber, Ipv4Header, Ipv4HeaderSlice, NetSlice, SlicedPacket,
    TcpHeader, TransportSlice,
};

/// A MAC address.
pub type Mac = [u8; 6];
/// An IPv4 address.
pub type Ip = [u8; 4];
/// EtherType IPv4.
pub const ETH_IPV4: u16 = 0x0800;
/// EtherType ARP.
pub const ETH_ARP: u16 = 0x0806;

/// An Ethernet II frame.
pub fn eth(dst: Mac, src: Mac, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(14 + payload.len());
    v.extend_from_slice(&dst);
    v.extend_from_slice(&src);
    v.extend_from_slice(&ethertype.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// `frame` padded to the 60-byte Ethernet minimum with non-zero junk (a
/// NIC delivers padding; its content is undefined).
pub fn padded(mut frame: Vec<u8>) -> Vec<u8> {
    while frame.len() < 60 {
        frame.push(0xee);
    }
    frame
}

/// A TCP segment description; `ip_tcp` builds the IPv4 packet.
#[derive(Clone)]
pub struct Seg {
    pub src: Ip,
    pub dst: Ip,
    pub sport: u16,
    pub dport: u16,
    pub syn: bool,
    pub ack: bool,
    pub seq: u32,
    pub ttl: u8,
    pub id: u16,
    pub df: bool,
    /// DSCP << 2 | ECN.
    pub tos: u8,
    pub payload: Vec<u8>,
}

/// A SYN `src:sport -> dst:dport` (TTL 61, DF, id 0x1234, no payload).
pub fn seg(src: Ip, dst: Ip, sport: u16, dport: u16) -> Seg {
    Seg {
        src,
        dst,
        sport,
        dport,
        syn: true,
        ack: false,
        seq: 1000,
        ttl: 61,
        id: 0x1234,
        df: true,
        tos: 0,
        payload: Vec::new(),
    }
}

/// IPv4 + TCP with correct checksums (etherparse).
pub fn ip_tcp(s: &Seg) -> Vec<u8> {
    let mut t = TcpHeader::new(s.sport, s.dport, s.seq, 64240);
    t.syn = s.syn;
    if s.ack {
        t.ack = true;
        t.psh = !s.payload.is_empty();
        t.acknowledgment_number = 0x0bad_cafe;
    }
    let mut ip = Ipv4Header::new(
        (t.header_len() + s.payload.len()) as u16,
        s.ttl,
        IpNumber::TCP,
        s.src,
        s.dst,
    )
    .unwrap();
    ip.identification = s.id;
    ip.dont_fragment = s.df;
    ip.dscp = etherparse::Ipv4Dscp::try_new(s.tos >> 2).unwrap();
    ip.ecn = etherparse::Ipv4Ecn::try_new(s.tos & 3).unwrap();
    t.checksum = t.calc_checksum_ipv4(&ip, &s.payload).unwrap();
    let mut v = Vec::new();
    ip.write(&mut v).unwrap();
    t.write(&mut v).unwrap();
    v.extend_from_slice(&s.payload);
    v
}

/// IPv4 + UDP with correct checksums (etherparse).
pub fn ip_udp(src: Ip, dst: Ip, sport: u16, dport: u16, ttl: u8, payload: &[u8]) -> Vec<u8> {
    let mut ip = Ipv4Header::new(8 + payload.len() as u16, ttl, IpNumber::UDP, src, dst).unwrap();
    ip.identification = 0x0dd;
    let u = etherparse::UdpHeader::with_ipv4_checksum(sport, dport, &ip, payload).unwrap();
    let mut v = Vec::new();
    ip.write(&mut v).unwrap();
    u.write(&mut v).unwrap();
    v.extend_from_slice(payload);
    v
}

/// An Ethernet/IPv4 ARP packet.
pub fn arp(op: u16, sha: Mac, spa: Ip, tha: Mac, tpa: Ip) -> Vec<u8> {
    let mut a = vec![0, 1, 0x08, 0, 6, 4];
    a.extend_from_slice(&op.to_be_bytes());
    a.extend_from_slice(&sha);
    a.extend_from_slice(&spa);
    a.extend_from_slice(&tha);
    a.extend_from_slice(&tpa);
    a
}

/// IPv4 + ICMP echo request (or reply) with correct checksums.
pub fn ip_echo(src: Ip, dst: Ip, ttl: u8, reply: bool, id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let ty = if reply {
        Icmpv4Type::EchoReply(etherparse::IcmpEchoHeader { id, seq })
    } else {
        Icmpv4Type::EchoRequest(etherparse::IcmpEchoHeader { id, seq })
    };
    let icmp = Icmpv4Header::with_checksum(ty, data);
    let mut ip = Ipv4Header::new(
        (icmp.header_len() + data.len()) as u16,
        ttl,
        IpNumber::ICMP,
        src,
        dst,
    )
    .unwrap();
    ip.identification = 77;
    let mut v = Vec::new();
    ip.write(&mut v).unwrap();
    icmp.write(&mut v).unwrap();
    v.extend_from_slice(data);
    v
}

/// `out` is exactly `want`, except that a frame shorter than 60 bytes may
/// carry Ethernet padding (any content) up to 60 bytes.
pub fn assert_frame(out: &[u8], want: &[u8], what: &str) {
    let n = if want.len() < 60 && out.len() == 60 {
        want.len()
    } else {
        out.len()
    };
    assert_eq!(out[..n], *want, "{what}: frame {out:02x?}");
}

/// The IPv4 header of an Ethernet frame, with its checksum verified.
pub fn ipv4_checked(frame: &[u8]) -> Ipv4Header {
    let p = SlicedPacket::from_ethernet(frame).expect("etherparse parses the frame");
    let Some(NetSlice::Ipv4(ip)) = p.net else {
        panic!("not IPv4: {frame:02x?}");
    };
    let h = ip.header().to_header();
    assert_eq!(
        h.header_checksum,
        h.calc_header_checksum(),
        "IPv4 header checksum"
    );
    h
}

/// Verify the TCP checksum of an Ethernet/IPv4/TCP frame.
pub fn tcp_checked(frame: &[u8]) -> TcpHeader {
    let ip = ipv4_checked(frame);
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(TransportSlice::Tcp(t)) = p.transport else {
        panic!("not TCP: {frame:02x?}");
    };
    let h = t.to_header();
    assert_eq!(
        h.checksum,
        h.calc_checksum_ipv4(&ip, t.payload()).unwrap(),
        "TCP checksum"
    );
    h
}

/// Verify the UDP checksum of an Ethernet/IPv4/UDP frame.
pub fn udp_checked(frame: &[u8]) {
    let ip = ipv4_checked(frame);
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(TransportSlice::Udp(u)) = p.transport else {
        panic!("not UDP: {frame:02x?}");
    };
    let h = u.to_header();
    assert_ne!(h.checksum, 0);
    assert_eq!(
        h.checksum,
        h.calc_checksum_ipv4(&ip, u.payload()).unwrap(),
        "UDP checksum"
    );
}

/// Recompute the IPv4 header checksum of `ip` (20-byte header).
pub fn fix_ip_csum(ip: &mut [u8]) {
    ip[10] = 0;
    ip[11] = 0;
    let h = Ipv4HeaderSlice::from_slice(&ip[..20]).unwrap().to_header();
    ip[10..12].copy_from_slice(&h.calc_header_checksum().to_be_bytes());
}
