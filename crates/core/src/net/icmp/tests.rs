use super::*;
use crate::net::addr::Ipv4Cidr;
use crate::net::classify::{classify, Classified};
use etherparse::{Icmpv4Type, NetSlice, PacketBuilder, SlicedPacket, TransportSlice};

const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0xc1];
const OUR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const CLIENT: [u8; 4] = [198, 51, 100, 7];
const VIP: [u8; 4] = [203, 0, 113, 10];
const PORT_IP: [u8; 4] = [10, 0, 0, 1];

fn addrs() -> OwnAddrs {
    let mut a = OwnAddrs::new();
    a.add_port_addr(0, Ipv4Cidr::new(u32::from_be_bytes(PORT_IP), 24).unwrap())
        .unwrap();
    a.add_vip(u32::from_be_bytes(VIP));
    a
}

fn echo(dst_mac: [u8; 6], dst: [u8; 4], vlan: bool) -> Vec<u8> {
    let mut v = Vec::new();
    let payload = b"0123456789abcdef";
    if vlan {
        PacketBuilder::ethernet2(CLIENT_MAC, dst_mac)
            .single_vlan(etherparse::VlanId::try_new(9).unwrap())
            .ipv4(CLIENT, dst, 3)
            .icmpv4_echo_request(0x4242, 17)
            .write(&mut v, payload)
            .unwrap();
    } else {
        PacketBuilder::ethernet2(CLIENT_MAC, dst_mac)
            .ipv4(CLIENT, dst, 3)
            .icmpv4_echo_request(0x4242, 17)
            .write(&mut v, payload)
            .unwrap();
    }
    v
}

fn meta_of(f: &[u8]) -> PacketMeta {
    match classify(f, 0) {
        Classified::Ipv4(m) => m,
        o => panic!("{o:?}"),
    }
}

fn check_reply(f: &[u8], from: [u8; 4]) {
    let p = SlicedPacket::from_ethernet(f).unwrap();
    let Some(etherparse::LinkHeader::Ethernet2(eth)) = p.link.unwrap().to_header() else {
        panic!("not ethernet")
    };
    assert_eq!(eth.source, OUR_MAC);
    assert_eq!(eth.destination, CLIENT_MAC);
    let Some(NetSlice::Ipv4(ip)) = p.net else {
        panic!("not ipv4")
    };
    let h = ip.header().to_header();
    assert_eq!(h.source, from);
    assert_eq!(h.destination, CLIENT);
    assert_eq!(h.time_to_live, 64);
    assert_eq!(h.header_checksum, h.calc_header_checksum());
    let Some(TransportSlice::Icmpv4(icmp)) = p.transport else {
        panic!("not icmp")
    };
    match icmp.icmp_type() {
        Icmpv4Type::EchoReply(e) => assert_eq!((e.id, e.seq), (0x4242, 17)),
        t => panic!("{t:?}"),
    }
    assert_eq!(icmp.payload(), b"0123456789abcdef");
    let want = icmp.header().icmp_type.calc_checksum(icmp.payload());
    assert_eq!(icmp.checksum(), want);
}

#[test]
fn echo_to_port_address() {
    let mut f = echo(OUR_MAC, PORT_IP, false);
    let m = meta_of(&f);
    assert_eq!(echo_input(&mut f, &m, &addrs()), IcmpAction::Reply);
    check_reply(&f, PORT_IP);
}

#[test]
fn echo_to_vip_behind_vlan() {
    let mut f = echo(OUR_MAC, VIP, true);
    let m = meta_of(&f);
    assert_eq!(echo_input(&mut f, &m, &addrs()), IcmpAction::Reply);
    check_reply(&f, VIP);
    assert_eq!(&f[12..16], &[0x81, 0x00, 0x00, 0x09]);
}

#[test]
fn ignored() {
    let a = addrs();
    let run = |mut f: Vec<u8>| {
        let m = meta_of(&f);
        let before = f.clone();
        let r = echo_input(&mut f, &m, &a);
        assert_eq!(f, before, "ignored frames are unchanged");
        r
    };
    assert_eq!(
        run(echo(OUR_MAC, [10, 0, 0, 2], false)),
        IcmpAction::Ignore(IcmpIgnore::NotForUs)
    );
    assert_eq!(
        run(echo([0xff; 6], PORT_IP, false)),
        IcmpAction::Ignore(IcmpIgnore::NotUnicast)
    );
    let mut f = echo(OUR_MAC, PORT_IP, false);
    let n = f.len();
    f[n - 1] ^= 1;
    assert_eq!(run(f), IcmpAction::Ignore(IcmpIgnore::BadChecksum));
    let mut v = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ipv4(CLIENT, PORT_IP, 3)
        .icmpv4_echo_reply(1, 1)
        .write(&mut v, &[])
        .unwrap();
    assert_eq!(run(v), IcmpAction::Ignore(IcmpIgnore::NotEchoRequest));
    // meta that does not match the frame
    let mut f = echo(OUR_MAC, PORT_IP, false);
    let mut m = meta_of(&f);
    m.l4_off += 4;
    assert_eq!(
        echo_input(&mut f, &m, &a),
        IcmpAction::Ignore(IcmpIgnore::Malformed)
    );
    m.l4_off -= 4;
    m.ip_len = 2000;
    assert_eq!(
        echo_input(&mut f, &m, &a),
        IcmpAction::Ignore(IcmpIgnore::Malformed)
    );
    crate::counters::check::<IcmpIgnore>();
    assert!(IcmpIgnore::ALL.iter().all(|r| r.is_drop()));
    let names: Vec<_> = IcmpIgnore::ALL.iter().map(|r| r.name()).collect();
    assert_eq!(
        names.join(" "),
        "icmp_malformed icmp_not_echo_request icmp_not_for_us icmp_not_unicast icmp_bad_checksum"
    );
}

proptest::proptest! {
    #[test]
    fn never_panics(
        mut f in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120),
        l3 in 0u16..130, l4 in 0u16..130, len in proptest::prelude::any::<u16>(),
    ) {
        let m = PacketMeta {
            l3_off: l3,
            l4_off: l4,
            ip_len: len,
            key: crate::net::meta::FlowKey { proto: PROTO_ICMP, ..Default::default() },
            ..Default::default()
        };
        let _ = echo_input(&mut f, &m, &addrs());
    }
}
