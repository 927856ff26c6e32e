//! Fuzz the IPv6 wire views (`net::wire::{ipv6, ipv6ext, icmpv6, ndp}`) the
//! way a worker's IPv6 input will run them on a packet: the fixed header,
//! the extension-header walk, ICMPv6, Neighbour Discovery. Beside "no
//! panic": the walk's offsets stay in the payload and a reported Fragment
//! header is all there; an echo request turned into a reply keeps a right
//! checksum; an NS or NA that validates, emitted again, parses back the
//! same; the NA answering a valid NS validates and says what the answer
//! said.
#![no_main]

use dirigo::net::wire::icmpv6::{self, msg_type};
use dirigo::net::wire::ipv6::{self, next_header::ICMPV6};
use dirigo::net::wire::ipv6ext::{walk, ExtError, FragmentHeader, FRAGMENT_HEADER_LEN};
use dirigo::net::wire::ndp::{Advert, NeighborAdvert, NeighborSolicit, Solicit};
use libfuzzer_sys::fuzz_target;

const OUR_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0xd1];

/// Parse what `emit` wrote into `b`: the IPv6 packet and its message.
fn reparse(b: &[u8]) -> (ipv6::Packet<&[u8]>, &[u8]) {
    let ip = ipv6::Packet::new_checked(b).expect("an emitted header checks");
    let ul = ip
        .upper_layer()
        .expect("an emitted packet has no extensions");
    assert_eq!((ul.protocol, ul.offset), (ICMPV6, 0));
    (ip, &b[ipv6::HEADER_LEN..ip.total_len()])
}

fuzz_target!(|data: &[u8]| {
    // the walk alone, the first byte as the first next header
    if let Some((&first, rest)) = data.split_first() {
        match walk(first, rest) {
            Ok(ul) => assert!(ul.offset <= rest.len()),
            Err(ExtError::Fragment { at }) => assert!(at + FRAGMENT_HEADER_LEN <= rest.len()),
            Err(_) => {}
        }
    }

    let Ok(ip) = ipv6::Packet::new_checked(data) else {
        return;
    };
    assert!(ip.total_len() <= data.len());
    let _ = ipv6::Repr::parse(&ip);
    let payload = ip.payload();
    let ul = match ip.upper_layer() {
        Ok(ul) => ul,
        Err(ExtError::Fragment { at }) => {
            let f = FragmentHeader::new_checked(&payload[at..]).expect("8 bytes");
            let _ = (
                f.next_header(),
                f.frag_offset(),
                f.more_frags(),
                f.is_atomic(),
            );
            return;
        }
        Err(_) => return,
    };
    assert!(ul.offset <= payload.len());
    if ul.protocol != ICMPV6 {
        return;
    }
    let msg = &payload[ul.offset..];
    let Ok(icmp) = icmpv6::Packet::new_checked(msg) else {
        return;
    };
    let (src, dst) = (ip.src(), ip.dst());
    let ok = icmp.verify_checksum(src, dst);
    let _ = (icmp.quoted(), icmp.mtu(), icmp.pointer(), icmp.data());
    if icmp.msg_type() == msg_type::ECHO_REQUEST && ok {
        let mut m = msg.to_vec();
        let mut r = icmpv6::Packet::new_unchecked(&mut m[..]);
        r.set_type_code_update_checksum(msg_type::ECHO_REPLY, icmp.code());
        assert!(r.verify_checksum(src, dst), "the reply's checksum");
    }

    let ns = NeighborSolicit::new_unchecked(msg);
    let na = NeighborAdvert::new_unchecked(msg);
    let _ = (ns.target(), ns.source_mac(), na.target_mac(), na.flags());
    let _ = ns.options().count();
    let mut b = [0u8; 128];
    if let Ok(s) = Solicit::parse(&ip, msg) {
        assert!(ok && NeighborSolicit::new_checked(msg).is_ok());
        let n = s.emit(&mut b).expect("128 bytes hold an NS");
        let (ip2, m2) = reparse(&b[..n]);
        assert_eq!(Solicit::parse(&ip2, m2), Ok(s));
        for (router, o) in [(false, true), (true, false)] {
            let a = Advert::answer(&s, OUR_MAC, router, o);
            let n = a.emit(&mut b).expect("128 bytes hold an NA");
            let (ip3, m3) = reparse(&b[..n]);
            assert_eq!(Advert::parse(&ip3, m3), Ok(a), "the answer validates");
            assert_eq!(a.target, s.target);
        }
    }
    if let Ok(a) = Advert::parse(&ip, msg) {
        assert!(ok && NeighborAdvert::new_checked(msg).is_ok());
        let n = a.emit(&mut b).expect("128 bytes hold an NA");
        let (ip2, m2) = reparse(&b[..n]);
        assert_eq!(Advert::parse(&ip2, m2), Ok(a));
    }
});
