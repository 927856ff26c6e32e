use super::*;
use crate::net::addr::Ipv4Cidr;
use etherparse::{EtherType, Ethernet2Header, SingleVlanHeader};

const OUR_MAC: [u8; 6] = [0x02, 0xd1, 0, 0, 0, 1];
const PEER_MAC: [u8; 6] = [0x02, 0xee, 0, 0, 0, 9];
const OUR_IP: u32 = 0x0a00_0001; // 10.0.0.1
const VIP: u32 = 0xcb00_710a; // 203.0.113.10
const PEER_IP: u32 = 0x0a00_0009; // 10.0.0.9

fn addrs() -> OwnAddrs {
    let mut a = OwnAddrs::new();
    a.add_port_addr(0, Ipv4Cidr::new(OUR_IP, 24).unwrap())
        .unwrap();
    a.add_vip(VIP);
    a
}

/// A frame from PEER: Ethernet (etherparse), optional VLAN 7, then ARP bytes.
fn frame(vlan: bool, op: u16, sip: u32, tip: u32, dst: [u8; 6]) -> Vec<u8> {
    let mut f = Vec::new();
    if vlan {
        Ethernet2Header {
            source: PEER_MAC,
            destination: dst,
            ether_type: EtherType::VLAN_TAGGED_FRAME,
        }
        .write(&mut f)
        .unwrap();
        f.extend_from_slice(&[0x00, 0x07, 0x08, 0x06]);
    } else {
        Ethernet2Header {
            source: PEER_MAC,
            destination: dst,
            ether_type: EtherType::ARP,
        }
        .write(&mut f)
        .unwrap();
    }
    f.extend_from_slice(&[0, 1, 8, 0, 6, 4]);
    f.extend_from_slice(&op.to_be_bytes());
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&sip.to_be_bytes());
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&tip.to_be_bytes());
    f.extend_from_slice(&[0; 18]); // padding to 60
    f
}

#[rustfmt::skip]
fn expected_reply_arp(spa: u32) -> Vec<u8> {
    let mut v = vec![0, 1, 8, 0, 6, 4, 0, 2];
    v.extend_from_slice(&OUR_MAC);
    v.extend_from_slice(&spa.to_be_bytes());
    v.extend_from_slice(&PEER_MAC);
    v.extend_from_slice(&PEER_IP.to_be_bytes());
    v
}

#[test]
fn request_for_our_address_becomes_reply() {
    let mut f = frame(false, 1, PEER_IP, OUR_IP, MAC_BROADCAST);
    let a = arp_input(&mut f, OUR_MAC, &addrs());
    assert_eq!(
        a,
        ArpAction::Reply {
            learn: Some(ArpSender {
                ip: PEER_IP,
                mac: PEER_MAC
            }),
            target: OUR_IP
        }
    );
    assert_eq!(f.len(), 60);
    let (eth, rest) = Ethernet2Header::from_slice(&f).unwrap();
    assert_eq!(eth.destination, PEER_MAC);
    assert_eq!(eth.source, OUR_MAC);
    assert_eq!(eth.ether_type, EtherType::ARP);
    assert_eq!(&rest[..28], &expected_reply_arp(OUR_IP)[..]);
}

#[test]
fn request_for_vip_behind_vlan_keeps_tag() {
    let mut f = frame(true, 1, PEER_IP, VIP, MAC_BROADCAST);
    assert!(matches!(
        arp_input(&mut f, OUR_MAC, &addrs()),
        ArpAction::Reply { .. }
    ));
    let (eth, rest) = Ethernet2Header::from_slice(&f).unwrap();
    assert_eq!((eth.destination, eth.source), (PEER_MAC, OUR_MAC));
    assert_eq!(eth.ether_type, EtherType::VLAN_TAGGED_FRAME);
    let (v, rest) = SingleVlanHeader::from_slice(rest).unwrap();
    assert_eq!(v.vlan_id.value(), 7);
    assert_eq!(v.ether_type, EtherType::ARP);
    assert_eq!(&rest[..28], &expected_reply_arp(VIP)[..]);
}

#[test]
fn probe_for_us_is_answered_without_learning() {
    let mut f = frame(false, 1, 0, OUR_IP, MAC_BROADCAST);
    assert_eq!(
        arp_input(&mut f, OUR_MAC, &addrs()),
        ArpAction::Reply {
            learn: None,
            target: OUR_IP
        }
    );
    assert_eq!(&f[38..42], &[0, 0, 0, 0]); // tpa = 0.0.0.0
}

#[test]
fn learning() {
    let a = addrs();
    let sender = ArpSender {
        ip: PEER_IP,
        mac: PEER_MAC,
    };
    // reply to us: create
    let mut f = frame(false, 2, PEER_IP, OUR_IP, OUR_MAC);
    let orig = f.clone();
    assert_eq!(
        arp_input(&mut f, OUR_MAC, &a),
        ArpAction::Learn {
            sender,
            create: true,
            reply: true
        }
    );
    assert_eq!(f, orig, "frame untouched");
    // request for someone else / gratuitous: update only
    let mut f = frame(false, 1, PEER_IP, 0x0a00_0077, MAC_BROADCAST);
    assert_eq!(
        arp_input(&mut f, OUR_MAC, &a),
        ArpAction::Learn {
            sender,
            create: false,
            reply: false
        }
    );
    let mut f = frame(false, 1, PEER_IP, PEER_IP, MAC_BROADCAST);
    assert_eq!(
        arp_input(&mut f, OUR_MAC, &a),
        ArpAction::Learn {
            sender,
            create: false,
            reply: false
        }
    );
}

#[test]
fn ignores() {
    let a = addrs();
    let ign = |mut f: Vec<u8>, mac| match arp_input(&mut f, mac, &a) {
        ArpAction::Ignore(r) => r,
        other => panic!("{other:?}"),
    };
    let good = frame(false, 1, PEER_IP, OUR_IP, MAC_BROADCAST);
    assert_eq!(ign(good[..41].to_vec(), OUR_MAC), ArpIgnore::Malformed);
    let mut f = good.clone();
    f[13] = 0x00; // IPv4 ethertype
    assert_eq!(ign(f, OUR_MAC), ArpIgnore::Malformed);
    assert_eq!(
        ign(frame(false, 3, PEER_IP, OUR_IP, MAC_BROADCAST), OUR_MAC),
        ArpIgnore::UnknownOp
    );
    assert_eq!(ign(good.clone(), PEER_MAC), ArpIgnore::Looped);
    let mut f = good.clone();
    f[22] = 0x01; // sender hw multicast
    assert_eq!(ign(f, OUR_MAC), ArpIgnore::BadSenderMac);
    assert_eq!(
        ign(frame(false, 1, 0xe000_0001, OUR_IP, MAC_BROADCAST), OUR_MAC),
        ArpIgnore::BadSenderIp
    );
    assert_eq!(
        ign(frame(false, 2, VIP, VIP, MAC_BROADCAST), OUR_MAC),
        ArpIgnore::AddressConflict
    );
    assert_eq!(
        ign(frame(false, 1, 0, PEER_IP, MAC_BROADCAST), OUR_MAC),
        ArpIgnore::Probe
    );
    crate::counters::check::<ArpIgnore>();
    assert!(ArpIgnore::ALL.iter().all(|r| r.is_drop()));
    let names: Vec<_> = ArpIgnore::ALL.iter().map(|r| r.name()).collect();
    assert_eq!(
        names.join(" "),
        "arp_malformed arp_unknown_op arp_bad_sender_mac arp_looped arp_bad_sender_ip \
         arp_address_conflict arp_probe"
    );
}

#[test]
fn builders() {
    let mut buf = [0xaau8; 64];
    assert_eq!(build_request(&mut buf, OUR_MAC, OUR_IP, PEER_IP), Some(42));
    #[rustfmt::skip]
    let want: [u8; 42] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0xd1, 0, 0, 0, 1, 0x08, 0x06,
        0, 1, 8, 0, 6, 4, 0, 1,
        0x02, 0xd1, 0, 0, 0, 1, 10, 0, 0, 1,
        0, 0, 0, 0, 0, 0, 10, 0, 0, 9,
    ];
    assert_eq!(&buf[..42], &want[..]);
    assert_eq!(buf[42], 0xaa);
    let (eth, _) = Ethernet2Header::from_slice(&buf).unwrap();
    assert_eq!(eth.ether_type, EtherType::ARP);
    assert_eq!(eth.destination, MAC_BROADCAST);

    assert_eq!(build_gratuitous(&mut buf, OUR_MAC, VIP), Some(42));
    assert_eq!(&buf[28..32], &VIP.to_be_bytes());
    assert_eq!(&buf[38..42], &VIP.to_be_bytes());
    assert_eq!(&buf[32..38], &[0; 6]);
    assert_eq!(&buf[20..22], &[0, 1]);
    assert_eq!(
        build_request(&mut [0u8; 41], OUR_MAC, OUR_IP, PEER_IP),
        None
    );

    // our own request, answered by our own responder on another box
    let mut req = buf;
    build_request(&mut req, PEER_MAC, PEER_IP, OUR_IP).unwrap();
    assert_eq!(
        request_of(&req[..42]),
        Some(((PEER_MAC, PEER_IP), OUR_IP)),
        "a request is recognised"
    );
    let mut reply = req;
    assert!(matches!(
        arp_input(&mut reply[..42], OUR_MAC, &addrs()),
        ArpAction::Reply { .. }
    ));
    // the reply builder writes what the responder wrote
    let mut built = [0u8; 42];
    assert_eq!(
        build_reply(&mut built, OUR_MAC, OUR_IP, PEER_MAC, PEER_IP),
        Some(42)
    );
    assert_eq!(&built[..], &reply[..42]);
    assert_eq!(request_of(&built), None, "a reply is no request");
}

proptest::proptest! {
    #[test]
    fn never_panics(mut f in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80)) {
        let _ = arp_input(&mut f, OUR_MAC, &addrs());
    }
}
