//! IPv6 through the pipeline: an NS for a port address gets the NA, an
//! echo request the reply, both on the packet and the burst path, while
//! the IPv4 packets of the same burst are forwarded exactly as without
//! them.

use super::{setup, VIP};
use crate::dataplane::Arrival;
use crate::dataplane::{Pipeline, Verdict};
use crate::lb::testutil::{tcp_frame, OUR_MAC};
use crate::net::addr::link_local_of;
use crate::net::buf::{PacketBuf, VecBuf};
use crate::net::meta::tcp_flags::SYN;
use crate::net::wire::ndp;
use etherparse::{Icmpv6Type, PacketBuilder, SlicedPacket, TransportSlice};

/// Port 0's global IPv6 address (2001:db8:99::1).
pub(super) const PORT_IP6: u128 = 0x2001_0db8_0099_0000_0000_0000_0000_0001;
const CLIENT6: u128 = 0x2001_0db8_0099_0000_0000_0000_0000_0002;
const CLIENT_MAC: [u8; 6] = [2, 0, 0, 0, 1, 7];

/// The client's NS for `target`, to its solicited-node group.
fn ns(target: u128) -> Vec<u8> {
    let dst = ndp::solicited_node(target);
    let mut body = target.to_be_bytes().to_vec();
    body.extend([1, 1]);
    body.extend(CLIENT_MAC);
    let mut v = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, ndp::multicast_mac(dst))
        .ipv6(CLIENT6.to_be_bytes(), dst.to_be_bytes(), 255)
        .icmpv6_raw(135, 0, [0; 4])
        .write(&mut v, &body)
        .unwrap();
    v
}

fn echo(dst: u128) -> Vec<u8> {
    let mut v = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC)
        .ipv6(CLIENT6.to_be_bytes(), dst.to_be_bytes(), 64)
        .icmpv6_echo_request(9, 1)
        .write(&mut v, b"ping6")
        .unwrap();
    v
}

/// A router solicitation (not answered: counted).
fn rs() -> Vec<u8> {
    let mut v = Vec::new();
    let all_routers = 0xff02_0000_0000_0000_0000_0000_0000_0002u128;
    PacketBuilder::ethernet2(CLIENT_MAC, ndp::multicast_mac(all_routers))
        .ipv6(CLIENT6.to_be_bytes(), all_routers.to_be_bytes(), 255)
        .icmpv6_raw(133, 0, [0; 4])
        .write(&mut v, &[])
        .unwrap();
    v
}

/// `f` is our NA for `target` to the client, every field and checksum
/// (etherparse's view).
fn check_na(f: &[u8], target: u128) {
    assert_eq!(&f[..6], &CLIENT_MAC, "to the option's MAC");
    assert_eq!(&f[6..12], &OUR_MAC);
    let p = SlicedPacket::from_ethernet(f).unwrap();
    let Some(etherparse::NetSlice::Ipv6(ip)) = p.net else {
        panic!("not IPv6")
    };
    assert_eq!(ip.header().source(), target.to_be_bytes());
    assert_eq!(ip.header().destination(), CLIENT6.to_be_bytes());
    assert_eq!(ip.header().hop_limit(), 255);
    let Some(TransportSlice::Icmpv6(m)) = p.transport else {
        panic!("not ICMPv6")
    };
    assert_eq!((m.type_u8(), m.code_u8()), (136, 0));
    assert_eq!(m.bytes5to8(), [0x60, 0, 0, 0], "solicited, override");
    let mut body = target.to_be_bytes().to_vec();
    body.extend([2, 1]);
    body.extend(OUR_MAC);
    assert_eq!(m.payload(), &body[..]);
    let want = m
        .icmp_type()
        .calc_checksum(target.to_be_bytes(), CLIENT6.to_be_bytes(), m.payload())
        .unwrap();
    assert_eq!(m.checksum(), want);
}

fn check_reply(f: &[u8], from: u128) {
    assert_eq!((&f[..6], &f[6..12]), (&CLIENT_MAC[..], &OUR_MAC[..]));
    let p = SlicedPacket::from_ethernet(f).unwrap();
    let Some(etherparse::NetSlice::Ipv6(ip)) = p.net else {
        panic!("not IPv6")
    };
    assert_eq!(ip.header().source(), from.to_be_bytes());
    assert_eq!(ip.header().destination(), CLIENT6.to_be_bytes());
    assert_eq!(ip.header().hop_limit(), 64);
    let Some(TransportSlice::Icmpv6(m)) = p.transport else {
        panic!("not ICMPv6")
    };
    assert!(matches!(m.icmp_type(), Icmpv6Type::EchoReply(e) if (e.id, e.seq) == (9, 1)));
    assert_eq!(m.payload(), b"ping6");
    let want = m
        .icmp_type()
        .calc_checksum(from.to_be_bytes(), CLIENT6.to_be_bytes(), m.payload())
        .unwrap();
    assert_eq!(m.checksum(), want);
}

#[test]
fn ns_and_ping6_answered_on_the_packet_path() {
    let (shared, mut pipes) = setup(2);
    let ll = link_local_of(OUR_MAC);
    for target in [PORT_IP6, ll] {
        let mut b = VecBuf::new(&ns(target));
        assert_eq!(
            pipes[1].process(&mut b, Arrival::wire(0, 0)),
            Verdict::Tx(0)
        );
        check_na(b.data(), target);
    }
    let mut b = VecBuf::new(&echo(PORT_IP6));
    assert_eq!(
        pipes[1].process(&mut b, Arrival::wire(0, 0)),
        Verdict::Tx(0)
    );
    check_reply(b.data(), PORT_IP6);
    // not ours: counted drops, frames untouched
    let foreign = PORT_IP6 + 7;
    for f in [ns(foreign), echo(foreign), rs()] {
        let mut b = VecBuf::new(&f);
        assert_eq!(pipes[1].process(&mut b, Arrival::wire(0, 0)), Verdict::Drop);
        assert_eq!(b.data(), &f[..]);
    }
    // the port that has no IPv6 address does not answer for port 0's
    let mut b = VecBuf::new(&ns(PORT_IP6));
    assert_eq!(pipes[1].process(&mut b, Arrival::wire(1, 0)), Verdict::Drop);
    pipes[1].housekeeping(0);
    let c = &shared.workers[1].counters;
    assert_eq!(c.get("nd_advertised"), 2);
    assert_eq!(c.get("echo6_replied"), 1);
    assert_eq!(c.get("nd_solicit_not_for_us"), 2);
    assert_eq!(c.get("icmp6_echo_not_for_us"), 1);
    assert_eq!(c.get("nd_router"), 1);
    assert_eq!(c.get("ipv6"), 0);
    // answers are not drops; the ignored ones are
    assert_eq!(shared.workers[1].dropped(), 4);
    let drops = shared.drops(&["wan", "lan"]);
    assert!(drops.iter().all(|d| d.0 != "nd_advertised"));
}

#[test]
fn burst_with_ipv6_leaves_ipv4_unchanged() {
    let (s1, mut with) = setup(1);
    let (shared2, mut without) = setup(1);
    let v4: Vec<Vec<u8>> = (2..=20u8)
        .map(|c| tcp_frame([10, 0, 0, c], 2000 + c as u16, VIP, 80, SYN, b"", 64, true))
        .collect();
    let mut mixed = v4.clone();
    mixed.insert(3, ns(PORT_IP6));
    mixed.insert(9, echo(PORT_IP6));
    mixed.push(rs());
    let mut a: Vec<VecBuf> = mixed.iter().map(|f| VecBuf::new(f)).collect();
    let mut va = vec![Verdict::Drop; a.len()];
    with[0].process_burst(&mut a, Arrival::wire(0, 5_000_000), &mut va);
    let mut b: Vec<VecBuf> = v4.iter().map(|f| VecBuf::new(f)).collect();
    let mut vb = vec![Verdict::Drop; b.len()];
    without[0].process_burst(&mut b, Arrival::wire(0, 5_000_000), &mut vb);

    assert_eq!(va[3], Verdict::Tx(0));
    check_na(a[3].data(), PORT_IP6);
    assert_eq!(va[9], Verdict::Tx(0));
    check_reply(a[9].data(), PORT_IP6);
    assert_eq!(*va.last().unwrap(), Verdict::Drop);
    // the IPv4 packets: same verdicts, same bytes, as without IPv6 beside
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for (i, (v, buf)) in va.iter().zip(&a).enumerate() {
        if i != 3 && i != 9 && i != mixed.len() - 1 {
            ra.push((*v, buf.to_vec()));
        }
    }
    for (v, buf) in vb.iter().zip(&b) {
        rb.push((*v, buf.to_vec()));
    }
    assert_eq!(ra, rb);
    assert!(vb.iter().all(|v| *v == Verdict::Tx(1)), "{vb:?}");
    with[0].housekeeping(0);
    without[0].housekeeping(0);
    let c = &s1.workers[0].counters;
    assert_eq!(c.get("forwarded"), 19);
    assert_eq!(shared2.workers[0].counters.get("forwarded"), 19);
    assert_eq!((c.get("nd_advertised"), c.get("echo6_replied")), (1, 1));
    assert_eq!(c.get("nd_router"), 1);
}
