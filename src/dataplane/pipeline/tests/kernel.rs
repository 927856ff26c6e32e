//! The exception path's verdicts: what arrives for a port's own addresses
//! and dirigo does not answer goes to the port's kernel interface; VIP
//! traffic, ping and ARP answers stay dirigo's.

use super::{run, setup_ports, VIP};
use crate::dataplane::shared::Event;
use crate::dataplane::Arrival;
use crate::dataplane::{Pipeline, Verdict};
use crate::lb::testutil::{icmp_error, tcp_frame, udp_frame, CLIENT_MAC, OUR_MAC};
use crate::net::buf::{PacketBuf, VecBuf};
use crate::net::meta::tcp_flags::SYN;
use etherparse::{IpNumber, PacketBuilder};

/// Port 0's address (port 0 has the kernel interface in these tests).
const WAN: [u8; 4] = [10, 0, 0, 1];
/// Port 1's address.
const LAN: [u8; 4] = [172, 16, 0, 1];
const PEER: [u8; 4] = [10, 0, 0, 5];

fn ip_frame(dst_mac: [u8; 6], dst: [u8; 4], proto: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    PacketBuilder::ethernet2(CLIENT_MAC, dst_mac)
        .ipv4(PEER, dst, 1)
        .write(&mut v, IpNumber(proto), payload)
        .unwrap();
    v
}

fn echo(dst: [u8; 4], request: bool) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(CLIENT_MAC, OUR_MAC).ipv4(PEER, dst, 64);
    let b = if request {
        b.icmpv4_echo_request(9, 1)
    } else {
        b.icmpv4_echo_reply(9, 1)
    };
    let mut v = Vec::new();
    b.write(&mut v, b"ping").unwrap();
    v
}

fn arp(op: u16, sender_mac: [u8; 6], sender: [u8; 4], target: [u8; 4]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&[0xff; 6]);
    v.extend_from_slice(&sender_mac);
    v.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0, 6, 4]);
    v.extend_from_slice(&op.to_be_bytes());
    v.extend_from_slice(&sender_mac);
    v.extend_from_slice(&sender);
    v.extend_from_slice(&[0; 6]);
    v.extend_from_slice(&target);
    v.resize(60, 0);
    v
}

fn verdict(
    pipes: &mut [crate::dataplane::pipeline::WorkerPipeline],
    f: &[u8],
    port: u16,
) -> Verdict {
    let mut b = VecBuf::new(f);
    run(pipes, 0, &mut b, port).0
}

#[test]
fn own_address_traffic_dirigo_does_not_answer_goes_to_the_kernel() {
    let (shared, mut pipes) = setup_ports(2, [true, false]);
    let p = &mut pipes[..];
    // ssh and DNS to the wan address: the kernel's
    let ssh = tcp_frame(PEER, 40000, WAN, 22, SYN, b"", 64, true);
    assert_eq!(verdict(p, &ssh, 0), Verdict::Kernel(0));
    let mut b = VecBuf::new(&ssh);
    run(p, 1, &mut b, 0);
    assert_eq!(b.data(), &ssh[..], "handed over unchanged");
    assert_eq!(
        verdict(p, &udp_frame(PEER, 5353, WAN, 53, b"q"), 0),
        Verdict::Kernel(0)
    );
    // the answers to the kernel's own pings and probes
    assert_eq!(verdict(p, &echo(WAN, false), 0), Verdict::Kernel(0));
    let quoted = &udp_frame(WAN, 33434, PEER, 9, b"")[14..];
    let unreach = icmp_error(PEER, WAN, 3, 3, [0; 4], quoted);
    assert_eq!(verdict(p, &unreach, 0), Verdict::Kernel(0));
    // OSPF hellos, and a protocol dirigo does not speak to the address
    let mut ospf = ip_frame([1, 0, 0x5e, 0, 0, 5], [224, 0, 0, 5], 89, &[0; 24]);
    assert_eq!(verdict(p, &ospf, 0), Verdict::Kernel(0));
    assert_eq!(
        verdict(p, &ip_frame(OUR_MAC, WAN, 47, &[0; 8]), 0),
        Verdict::Kernel(0)
    );
    // routable multicast is not link-local: dropped
    ospf = ip_frame([1, 0, 0x5e, 0, 1, 5], [224, 0, 1, 5], 89, &[0; 24]);
    assert_eq!(verdict(p, &ospf, 0), Verdict::Drop);

    // dirigo still answers ping to its addresses and VIPs itself
    assert_eq!(verdict(p, &echo(WAN, true), 0), Verdict::Tx(0));
    assert_eq!(verdict(p, &echo(VIP, true), 0), Verdict::Tx(0));
    // VIP traffic is forwarded as before, a VIP port that is no service
    // is not the kernel's
    let web = tcp_frame(PEER, 40001, VIP, 80, SYN, b"", 64, true);
    assert_eq!(verdict(p, &web, 0), Verdict::Tx(1));
    let vip22 = tcp_frame(PEER, 40002, VIP, 22, SYN, b"", 64, true);
    assert_eq!(verdict(p, &vip22, 0), Verdict::Drop);

    // only the receiving port's addresses, only on a port with a kernel
    // interface
    let to_lan = tcp_frame(PEER, 40003, LAN, 22, SYN, b"", 64, true);
    assert_eq!(verdict(p, &to_lan, 0), Verdict::Drop);
    let on_lan = tcp_frame(PEER, 40004, LAN, 22, SYN, b"", 64, true);
    assert_eq!(verdict(p, &on_lan, 1), Verdict::Drop);
    let ospf = ip_frame([1, 0, 0x5e, 0, 0, 5], [224, 0, 0, 5], 89, &[0; 24]);
    assert_eq!(verdict(p, &ospf, 1), Verdict::Drop);
    for w in p.iter_mut() {
        w.housekeeping(0);
    }
    let drops = shared.drops(&["wan", "lan"]);
    let count = |r: &str| drops.iter().find(|d| d.0 == r).map_or(0, |d| d.1);
    assert_eq!(count("local_other"), 2, "{drops:?}");
    assert_eq!(count("not_unicast_dst"), 2);
}

#[test]
fn without_a_kernel_interface_nothing_changes() {
    let (shared, mut pipes) = setup_ports(1, [false, false]);
    let p = &mut pipes[..];
    let ssh = tcp_frame(PEER, 40000, WAN, 22, SYN, b"", 64, true);
    assert_eq!(verdict(p, &ssh, 0), Verdict::Drop);
    assert_eq!(verdict(p, &echo(WAN, false), 0), Verdict::Drop);
    let ospf = ip_frame([1, 0, 0x5e, 0, 0, 5], [224, 0, 0, 5], 89, &[0; 24]);
    assert_eq!(verdict(p, &ospf, 0), Verdict::Drop);
    let reply = arp(2, CLIENT_MAC, PEER, WAN);
    assert_eq!(verdict(p, &reply, 0), Verdict::Drop);
    assert_eq!(
        verdict(p, &arp(1, CLIENT_MAC, PEER, WAN), 0),
        Verdict::Tx(0)
    );
    let mut n = 0;
    p[0].drain_kernel_copies(&mut |_, _| n += 1);
    assert_eq!(n, 0);
    p[0].housekeeping(0);
    assert_eq!(shared.workers[0].counters.get("local_other"), 1);
    assert_eq!(shared.workers[0].counters.get("icmp_not_echo_request"), 1);
}

#[test]
fn the_kernel_sees_arp_replies_and_requests_for_the_port_address() {
    let (_shared, mut pipes) = setup_ports(1, [true, false]);
    let p = &mut pipes[..];
    // a request for the wan address: dirigo answers, the kernel gets the
    // request as it arrived
    let req = arp(1, CLIENT_MAC, PEER, WAN);
    let mut b = VecBuf::new(&req);
    assert_eq!(p[0].process(&mut b, Arrival::wire(0, 0)), Verdict::Tx(0));
    assert_ne!(b.data(), &req[..], "rewritten into the reply");
    let mut copies = Vec::new();
    p[0].drain_kernel_copies(&mut |port, f| copies.push((port, f.to_vec())));
    assert_eq!(copies, vec![(0, req.clone())]);
    p[0].drain_kernel_copies(&mut |_, _| panic!("drained twice"));
    // a request for a VIP or for someone else: no copy
    assert_eq!(
        verdict(p, &arp(1, CLIENT_MAC, PEER, VIP), 0),
        Verdict::Tx(0)
    );
    assert_eq!(
        verdict(p, &arp(1, CLIENT_MAC, PEER, [10, 0, 0, 9]), 0),
        Verdict::Drop
    );
    p[0].drain_kernel_copies(&mut |_, _| panic!("no copy"));
    // every reply: the kernel's own requests are answered through it
    assert_eq!(
        verdict(p, &arp(2, CLIENT_MAC, PEER, WAN), 0),
        Verdict::Kernel(0)
    );
    assert_eq!(
        verdict(p, &arp(2, CLIENT_MAC, PEER, [10, 0, 0, 9]), 0),
        Verdict::Kernel(0)
    );
    // on the port without one: learned and dropped
    assert_eq!(
        verdict(p, &arp(2, CLIENT_MAC, [172, 16, 0, 9], LAN), 1),
        Verdict::Drop
    );
}

#[test]
fn copies_beyond_the_slots_are_counted() {
    let (shared, mut pipes) = setup_ports(1, [true, false]);
    let n = crate::dataplane::exception::COPY_SLOTS + 3;
    for i in 0..n {
        let f = arp(1, CLIENT_MAC, [10, 0, 0, 10 + i as u8], WAN);
        assert_eq!(verdict(&mut pipes, &f, 0), Verdict::Tx(0));
    }
    let mut got = 0;
    pipes[0].drain_kernel_copies(&mut |_, _| got += 1);
    assert_eq!(got, n - 3);
    pipes[0].housekeeping(0);
    assert_eq!(shared.workers[0].counters.get("kernel_copy_lost"), 3);
}

#[test]
fn looped_arp_is_reported_once_a_second_per_port() {
    let (shared, mut pipes) = setup_ports(1, [false, false]);
    let looped = arp(1, OUR_MAC, PEER, WAN);
    let mut at = |t: u64, port: u16| {
        let mut b = VecBuf::new(&looped);
        assert_eq!(
            pipes[0].process(&mut b, Arrival::wire(port, t)),
            Verdict::Drop
        );
    };
    let events = |shared: &crate::dataplane::shared::Shared| {
        std::iter::from_fn(|| shared.events.pop())
            .filter_map(|e| match e {
                Event::Looped { port } => Some(port),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    at(5_000_000_000, 0);
    at(5_100_000_000, 0);
    at(5_200_000_000, 1);
    assert_eq!(events(&shared), vec![0, 1]);
    at(5_900_000_000, 0);
    assert_eq!(events(&shared), Vec::<u16>::new());
    at(6_000_000_001, 0);
    assert_eq!(events(&shared), vec![0]);
}

/// IPv6 for the tests below: port 0 has 2001:db8:99::1 and its link-local
/// address (see `setup_ports`); the peer is on its /64.
mod v6 {
    use super::super::ipv6::PORT_IP6;
    use super::verdict;
    use crate::dataplane::pipeline::tests::setup_ports;
    use crate::dataplane::{Pipeline, Verdict};
    use crate::lb::testutil::OUR_MAC;
    use crate::net::addr::link_local_of;
    use crate::net::wire::ndp;
    use etherparse::{IpNumber, PacketBuilder};

    const PEER6: u128 = 0x2001_0db8_0099_0000_0000_0000_0000_0005;
    const PEER_MAC: [u8; 6] = [2, 0, 0, 0, 1, 5];
    const ALL_NODES: u128 = 0xff02_0000_0000_0000_0000_0000_0000_0001;
    const OSPF6: u128 = 0xff02_0000_0000_0000_0000_0000_0000_0005;

    fn dst_mac(dst: u128) -> [u8; 6] {
        if dst >> 120 == 0xff {
            ndp::multicast_mac(dst)
        } else {
            OUR_MAC
        }
    }

    fn ip6(dst: u128, hop_limit: u8, proto: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2(PEER_MAC, dst_mac(dst))
            .ipv6(PEER6.to_be_bytes(), dst.to_be_bytes(), hop_limit)
            .write(&mut v, IpNumber(proto), payload)
            .unwrap();
        v
    }

    fn tcp6(dst: u128, port: u16) -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2(PEER_MAC, OUR_MAC)
            .ipv6(PEER6.to_be_bytes(), dst.to_be_bytes(), 64)
            .tcp(40000, port, 1, 1024)
            .syn()
            .write(&mut v, b"")
            .unwrap();
        v
    }

    fn udp6(dst: u128, port: u16) -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2(PEER_MAC, OUR_MAC)
            .ipv6(PEER6.to_be_bytes(), dst.to_be_bytes(), 64)
            .udp(40000, port)
            .write(&mut v, b"q")
            .unwrap();
        v
    }

    /// The peer's NA for its own address to `dst`: solicited when `dst`
    /// is unicast, with the target link-layer address option when `tlla`.
    fn na(dst: u128, tlla: bool) -> Vec<u8> {
        let flags = if dst >> 120 == 0xff { 0x20 } else { 0x60 };
        let mut body = PEER6.to_be_bytes().to_vec();
        if tlla {
            body.extend([2, 1]);
            body.extend(PEER_MAC);
        }
        let mut v = Vec::new();
        PacketBuilder::ethernet2(PEER_MAC, dst_mac(dst))
            .ipv6(PEER6.to_be_bytes(), dst.to_be_bytes(), 255)
            .icmpv6_raw(136, 0, [flags, 0, 0, 0])
            .write(&mut v, &body)
            .unwrap();
        v
    }

    fn echo6(dst: u128, request: bool) -> Vec<u8> {
        let b = PacketBuilder::ethernet2(PEER_MAC, OUR_MAC).ipv6(
            PEER6.to_be_bytes(),
            dst.to_be_bytes(),
            64,
        );
        let b = if request {
            b.icmpv6_echo_request(9, 1)
        } else {
            b.icmpv6_echo_reply(9, 1)
        };
        let mut v = Vec::new();
        b.write(&mut v, b"ping6").unwrap();
        v
    }

    /// A destination unreachable to `dst` quoting the kernel's echo
    /// request (no TCP/UDP in the quote: the responder's, not the core's).
    fn unreach6(dst: u128) -> Vec<u8> {
        let quoted = &echo6(PEER6, true)[14..];
        let mut v = Vec::new();
        PacketBuilder::ethernet2(PEER_MAC, OUR_MAC)
            .ipv6(PEER6.to_be_bytes(), dst.to_be_bytes(), 64)
            .icmpv6_raw(1, 3, [0; 4])
            .write(&mut v, quoted)
            .unwrap();
        v
    }

    fn ns6(target: u128) -> Vec<u8> {
        let dst = ndp::solicited_node(target);
        let mut body = target.to_be_bytes().to_vec();
        body.extend([1, 1]);
        body.extend(PEER_MAC);
        let mut v = Vec::new();
        PacketBuilder::ethernet2(PEER_MAC, ndp::multicast_mac(dst))
            .ipv6(PEER6.to_be_bytes(), dst.to_be_bytes(), 255)
            .icmpv6_raw(135, 0, [0; 4])
            .write(&mut v, &body)
            .unwrap();
        v
    }

    #[test]
    fn own_ipv6_address_traffic_goes_to_the_kernel() {
        let (shared, mut pipes) = setup_ports(2, [true, false]);
        let p = &mut pipes[..];
        let ll = link_local_of(OUR_MAC);
        // ssh and DNS to the port's global and link-local addresses
        for a in [PORT_IP6, ll] {
            assert_eq!(verdict(p, &tcp6(a, 22), 0), Verdict::Kernel(0));
            assert_eq!(verdict(p, &udp6(a, 53), 0), Verdict::Kernel(0));
        }
        // every NA (the answers to the kernel's own solicitations), with
        // or without the target's MAC (Linux leaves it out of its answer
        // to a unicast probe), learned by dirigo as well
        assert_eq!(verdict(p, &na(PORT_IP6, true), 0), Verdict::Kernel(0));
        assert_eq!(verdict(p, &na(ll, true), 0), Verdict::Kernel(0));
        assert_eq!(verdict(p, &na(ALL_NODES, true), 0), Verdict::Kernel(0));
        assert_eq!(verdict(p, &na(PORT_IP6, false), 0), Verdict::Kernel(0));
        let learned = std::iter::from_fn(|| shared.events.pop())
            .filter(
                |e| matches!(e, crate::dataplane::shared::Event::Learn6 { ip, .. } if *ip == PEER6),
            )
            .count();
        assert_eq!(learned, 3);
        // the answers to the kernel's pings, errors quoting no TCP/UDP
        assert_eq!(verdict(p, &echo6(PORT_IP6, false), 0), Verdict::Kernel(0));
        assert_eq!(verdict(p, &unreach6(PORT_IP6), 0), Verdict::Kernel(0));
        // OSPFv3 hellos (link-local multicast), a protocol dirigo does not
        // speak to the address
        assert_eq!(
            verdict(p, &ip6(OSPF6, 1, 89, &[0; 24]), 0),
            Verdict::Kernel(0)
        );
        assert_eq!(
            verdict(p, &ip6(PORT_IP6, 64, 47, &[0; 8]), 0),
            Verdict::Kernel(0)
        );
        // dirigo's own: NS and ping6; wider multicast and other addresses
        // are not the kernel's
        assert_eq!(verdict(p, &ns6(PORT_IP6), 0), Verdict::Tx(0));
        assert_eq!(verdict(p, &echo6(PORT_IP6, true), 0), Verdict::Tx(0));
        let site = 0xff05_0000_0000_0000_0000_0000_0000_0005u128;
        assert_eq!(verdict(p, &ip6(site, 1, 89, &[0; 24]), 0), Verdict::Drop);
        let other = PORT_IP6 + 7;
        assert_eq!(verdict(p, &tcp6(other, 22), 0), Verdict::Drop);
        assert_eq!(verdict(p, &echo6(other, false), 0), Verdict::Drop);
        assert_eq!(verdict(p, &ip6(other, 64, 47, &[0; 8]), 0), Verdict::Drop);
        // the port without a kernel interface: NAs learned and dropped,
        // nothing handed over
        assert_eq!(verdict(p, &na(PORT_IP6, true), 1), Verdict::Drop);
        assert_eq!(verdict(p, &ip6(OSPF6, 1, 89, &[0; 24]), 1), Verdict::Drop);
    }

    #[test]
    fn without_a_kernel_interface_ipv6_is_as_before() {
        let (shared, mut pipes) = setup_ports(1, [false, false]);
        let p = &mut pipes[..];
        for f in [
            tcp6(PORT_IP6, 22),
            udp6(PORT_IP6, 53),
            na(PORT_IP6, true),
            na(PORT_IP6, false),
            echo6(PORT_IP6, false),
            unreach6(PORT_IP6),
            ip6(OSPF6, 1, 89, &[0; 24]),
            ip6(PORT_IP6, 64, 47, &[0; 8]),
        ] {
            assert_eq!(verdict(p, &f, 0), Verdict::Drop);
        }
        p[0].housekeeping(0);
        let c = |n: &str| shared.workers[0].counters.get(n);
        assert_eq!(c("local_other"), 2, "TCP and UDP to the address");
        assert_eq!(c("nd_taken"), 1);
        assert_eq!(c("nd_advert_no_mac"), 1);
        assert_eq!(c("icmp6_other"), 1);
        assert_eq!(c("icmp6_error"), 1);
        assert_eq!(c("ipv6"), 2);
    }
}
