//! IPv6 balancing (issue 18) on DPDK virtual devices, byte for byte: the
//! real `dirigo` binary on net_pcap ports (the topology and harness of
//! `vdev_modes.rs`), IPv6 fixtures in, captures out, for DR, TUN
//! (IPv6-in-IPv6 and the ICMPv6 Packet Too Big a tunnel too small for a
//! packet answers), NAT (both directions, TCP and UDP), IPv4 and IPv6
//! services side by side, and garbage IPv6.
//!
//! Port 0 "wan" has 10.0.0.1/24 and 2001:db8:1::1/64, default route via
//! 2001:db8:1::fe (the gateway, GW_MAC); port 1 "lan" has 172.16.0.1/24,
//! 2001:db8:3::1/64 and 2001:db8:2::1/64 (the real servers' prefix is
//! not the first one, so the tunnel source is the address that holds the
//! destination's prefix) and a route to 2001:db8:9::/64 via 2001:db8:2::fe
//! (a real server off the lan's prefixes: tunnelled from the lan's first
//! global address). Every next hop is a static `[[neighbor]]`: an IPv6
//! packet whose next hop is unresolved is dropped, not held.
//!
//! Expected frames are built independently with etherparse (checksums
//! computed by it) and compared byte for byte. dirigo announces its IPv6
//! port addresses and VIPs with unsolicited Neighbour Advertisements at
//! start; each run checks them exactly and removes them from the outs.
//! One worker, one daemon at a time (as `vdev_modes.rs`).

mod common;
// shared with vdev_modes.rs, which uses the IPv4 parts this file does not
#[allow(dead_code)]
#[path = "vdev_modes/harness.rs"]
mod harness;
#[path = "vdev_modes/harness6.rs"]
mod harness6;
#[allow(dead_code)]
#[path = "vdev_modes/packets.rs"]
mod packets;
#[path = "vdev_modes/packets6.rs"]
mod packets6;

use etherparse::{icmpv6::DestUnreachableCode, Icmpv6Type};
use harness::*;
use harness6::*;
use packets::*;
use packets6::*;
use std::collections::HashMap;

// ---------------------------------------------------------------- tests

#[test]
fn dr6_rewrites_only_the_macs() {
    if !common::privileged("vdev IPv6 DR") {
        return;
    }
    let mut pkts = three_rounds6(4);
    // The gateway's Packet Too Big about a reply of flow 1 (the real
    // server's VIP:80 -> client): it is for the connection's real server,
    // forwarded unchanged like the flow's packets.
    let mut quoted = seg6(vip6(), client6(1), 80, 40001);
    quoted.ack = true;
    quoted.payload = vec![0x42; 1400];
    let ptb = ip6_icmp(
        ip6(GW6),
        vip6(),
        63,
        Icmpv6Type::PacketTooBig { mtu: 1400 },
        &ip6_tcp(&quoted)[..1232],
    );
    pkts.push((1, ptb));
    let wan: Vec<Vec<u8>> = pkts
        .iter()
        .map(|(_, p)| eth(WAN_MAC, GW_MAC, ETH_IPV6, p))
        .collect();
    let r = run6(
        "dr6",
        &rules6(80, "dr", &[(RS6_1, None), (RS6_2, None)]),
        &[VIP6],
        &wan,
        &[],
        |sock| {
            let l = ctl(sock, &["lcores"]);
            let w = &l[0];
            assert_eq!(
                (w["conns"].as_u64(), w["conns_created"].as_u64()),
                (Some(4), Some(4)),
                "{l}"
            );
        },
    );
    assert!(
        r.wan_out.is_empty(),
        "nothing on the wan: {:02x?}",
        r.wan_out
    );
    assert_eq!(r.lan_out.len(), pkts.len(), "every packet:\n{}", r.log);
    let mut seen = Vec::new();
    for ((f, ip), out) in pkts.iter().zip(&r.lan_out) {
        let dst6 = ipv6_of(out).destination;
        assert_eq!(dst6, vip6(), "flow {f}: the IPv6 destination stays the VIP");
        let dst: Mac = out[0..6].try_into().unwrap();
        let rip = if dst == RS1_MAC {
            ip6(RS6_1)
        } else {
            assert_eq!(dst, RS2_MAC, "flow {f}: dst MAC is a real server's");
            ip6(RS6_2)
        };
        seen.push((*f, rip));
        assert_eq!(*out, eth(dst, LAN_MAC, ETH_IPV6, ip), "flow {f}");
    }
    for out in &r.lan_out[..12] {
        tcp6_checked(out);
    }
    icmp6_checked(&r.lan_out[12]);
    check_rr(&seen, 4, ip6(RS6_1), ip6(RS6_2));
    assert_eq!(r.drop_count("unresolved6"), 0);
}

#[test]
fn tun6_encapsulates_and_answers_packet_too_big() {
    if !common::privileged("vdev IPv6 TUN") {
        return;
    }
    let mut pkts = three_rounds6(4);
    // Flow 4: a SYN, then the largest inner packet a 1500-MTU lan takes
    // (1460 + 40), then two that do not fit: Packet Too Big back to the
    // client (IPv6 has no fragmenting on the way).
    let mut syn = seg6(client6(4), vip6(), 40004, 80);
    pkts.push((4, ip6_tcp(&syn)));
    syn.syn = false;
    syn.ack = true;
    syn.payload = (0..1400u32).map(|i| i as u8).collect();
    let fits = ip6_tcp(&syn);
    assert_eq!(fits.len(), 1460);
    pkts.push((4, fits));
    syn.payload.push(0x55);
    let big1 = ip6_tcp(&syn);
    assert_eq!(big1.len(), 1461);
    syn.payload = (0..1440u32).map(|i| (i * 7) as u8).collect();
    let big2 = ip6_tcp(&syn);
    assert_eq!(big2.len(), 1500);
    let mut wan: Vec<Vec<u8>> = pkts
        .iter()
        .map(|(_, p)| eth(WAN_MAC, GW_MAC, ETH_IPV6, p))
        .collect();
    // trailing bytes after the IPv6 payload (as Ethernet padding) must not
    // end up inside the tunnel
    wan[8].extend_from_slice(&[0xee; 6]);
    wan.push(eth(WAN_MAC, GW_MAC, ETH_IPV6, &big1));
    wan.push(eth(WAN_MAC, GW_MAC, ETH_IPV6, &big2));
    // a second service whose real server is off the lan's prefixes
    let far = ip6_tcp(&seg6(client6(5), vip6(), 40005, 443));
    wan.push(eth(WAN_MAC, GW_MAC, ETH_IPV6, &far));
    let services = rules6(80, "tun", &[(RS6_1, None), (RS6_2, None)])
        + &rules6(443, "tun", &[(RS6_FAR, None)]);
    let r = run6("tun6", &services, &[VIP6], &wan, &[], |sock| {
        assert_eq!(extra(sock, "icmp_frag_needed_sent"), 2, "PTBs sent");
    });
    assert_eq!(r.ports["lan"]["mtu"], 1500, "lan MTU");
    assert_eq!(
        r.lan_out.len(),
        pkts.len() + 1,
        "tunnelled packets:\n{}",
        r.log
    );
    let mut seen = Vec::new();
    for ((f, inner), out) in pkts.iter().zip(&r.lan_out) {
        let rip = ipv6_of(out).destination;
        seen.push((*f, rip));
        // outer: src = the lan address holding the RS's prefix
        assert_eq!(
            *out,
            tunnelled(inner, ip6(LAN6), rip, rs6_mac(rip)),
            "flow {f}"
        );
        tcp6_checked(
            &out[..14]
                .iter()
                .chain(&out[54..])
                .copied()
                .collect::<Vec<u8>>(),
        );
    }
    let rs = check_rr(&seen, 5, ip6(RS6_1), ip6(RS6_2));
    assert_eq!(rs.len(), 5);
    // off-link: the lan's first global address, through the lan router
    assert_eq!(
        *r.lan_out.last().unwrap(),
        tunnelled(&far, ip6(LAN6_FIRST), ip6(RS6_FAR), LAN_GW_MAC),
        "the off-link real server"
    );
    // Packet Too Big: exactly two frames back on the wan, to the gateway
    assert_eq!(r.wan_out.len(), 2, "PTBs only: {:02x?}", r.wan_out);
    for (out, big) in r.wan_out.iter().zip([&big1, &big2]) {
        check_ptb(out, client6(4), big, 1460);
        assert_eq!(*out, packet_too_big(client6(4), big, 1460));
    }
    assert_eq!(r.drop_count("lb_too_big"), 0, "{:?}", r.drops);
}

#[test]
fn nat6_rewrites_both_directions() {
    if !common::privileged("vdev IPv6 NAT") {
        return;
    }
    // As the IPv4 NAT test: the wan packets are in the first burst, which
    // the one worker processes before the lan's, so the connections exist
    // before the replies are looked up.
    let cip = client6(0);
    let mut req = seg6(cip, vip6(), 40000, 80);
    req.hop = 60;
    req.tc = 0x28;
    req.flow = 0xabcde;
    let mut req2 = req.clone();
    req2.syn = false;
    req2.ack = true;
    req2.seq = 1001;
    req2.payload = b"GET / HTTP/1.0\r\n\r\n".to_vec();
    // TCP is found behind an extension header, its checksum still right
    req2.dest_opts = true;
    let mut rep = seg6(ip6(RS6_1), cip, 8080, 40000);
    rep.ack = true; // SYN-ACK
    rep.seq = 5000;
    rep.hop = 64;
    // UDP: client6(1):5000 -> VIP6:53 -> RS6_2:5353 and back
    let c1 = client6(1);
    let q = b"udp query".to_vec();
    let a = b"udp answer".to_vec();
    // a UDP datagram without a checksum (0: invalid in IPv6), and a SYN
    // that has no hop left: both dropped, counted
    let mut zero = ip6_udp(client6(2), vip6(), 5002, 53, 50, b"no checksum");
    zero[46..48].copy_from_slice(&[0, 0]);
    let mut last_hop = seg6(client6(3), vip6(), 40003, 80);
    last_hop.hop = 1;
    // ICMPv6 errors about the UDP connection, translated as IPVS does:
    // the client's port unreachable about our answer (VIP:53 -> client,
    // as it arrived) goes to the real server with the quote restored to
    // what the RS sent; the RS's about the request (client -> RIP:5353,
    // as dirigo sent it) goes to the client from the VIP, quoting the
    // client's request to VIP:53.
    let unreach = Icmpv6Type::DestinationUnreachable(DestUnreachableCode::Port);
    let client_err = ip6_icmp(
        c1,
        vip6(),
        64,
        unreach,
        &ip6_udp(vip6(), c1, 53, 5000, 63, &a),
    );
    let rs_err = ip6_icmp(
        ip6(RS6_2),
        c1,
        64,
        unreach,
        &ip6_udp(c1, ip6(RS6_2), 5000, 5353, 49, &q),
    );
    let frame = |ip: &[u8]| eth(WAN_MAC, GW_MAC, ETH_IPV6, ip);
    let wan = vec![
        frame(&ip6_tcp(&req)),
        frame(&ip6_tcp(&req2)),
        frame(&ip6_udp(c1, vip6(), 5000, 53, 50, &q)),
        frame(&zero),
        frame(&ip6_tcp(&last_hop)),
        frame(&client_err),
    ];
    let lan = vec![
        eth(LAN_MAC, RS1_MAC, ETH_IPV6, &ip6_tcp(&rep)),
        eth(
            LAN_MAC,
            RS2_MAC,
            ETH_IPV6,
            &ip6_udp(ip6(RS6_2), c1, 5353, 5000, 64, &a),
        ),
        eth(LAN_MAC, RS2_MAC, ETH_IPV6, &rs_err),
    ];
    let udp_svc = common::service_toml(
        "udp",
        &format!("[{VIP6}]:53"),
        "rr",
        &[(&format!("[{RS6_2}]:5353"), "nat")],
    );
    let r = run6(
        "nat6",
        &(rules6(80, "nat", &[(RS6_1, Some(8080))]) + &udp_svc),
        &[VIP6],
        &wan,
        &lan,
        |_| {},
    );
    // requests: dst VIP:80 -> RIP:8080, hop limit - 1, the rest unchanged
    assert_eq!(r.lan_out.len(), 4, "requests on the lan:\n{}", r.log);
    for (s, out) in [&req, &req2].iter().zip(&r.lan_out) {
        let mut w = (*s).clone();
        w.dst = ip6(RS6_1);
        w.dport = 8080;
        w.hop -= 1;
        assert_eq!(
            *out,
            eth(RS1_MAC, LAN_MAC, ETH_IPV6, &ip6_tcp(&w)),
            "request"
        );
        let t = tcp6_checked(out);
        assert_eq!(t.destination_port, 8080);
    }
    let udp_req = ip6_udp(c1, ip6(RS6_2), 5000, 5353, 49, &q);
    assert_eq!(r.lan_out[2], eth(RS2_MAC, LAN_MAC, ETH_IPV6, &udp_req));
    udp6_checked(&r.lan_out[2]);
    // replies: src RIP:rport -> VIP:vport, out on the wan to the gateway
    assert_eq!(r.wan_out.len(), 3, "replies on the wan:\n{}", r.log);
    let mut w = rep.clone();
    w.src = vip6();
    w.sport = 80;
    w.hop -= 1;
    assert_eq!(r.wan_out[0], eth(GW_MAC, WAN_MAC, ETH_IPV6, &ip6_tcp(&w)));
    let t = tcp6_checked(&r.wan_out[0]);
    assert_eq!((t.source_port, t.syn, t.ack), (80, true, true));
    let udp_rep = ip6_udp(vip6(), c1, 53, 5000, 63, &a);
    assert_eq!(r.wan_out[1], eth(GW_MAC, WAN_MAC, ETH_IPV6, &udp_rep));
    udp6_checked(&r.wan_out[1]);
    // the client's error: dst VIP -> RIP, hop limit - 1, quote src
    // VIP:53 -> RIP:5353 (its UDP checksum right again), to the RS
    let want = ip6_icmp(
        c1,
        ip6(RS6_2),
        63,
        unreach,
        &ip6_udp(ip6(RS6_2), c1, 5353, 5000, 63, &a),
    );
    assert_eq!(r.lan_out[3], eth(RS2_MAC, LAN_MAC, ETH_IPV6, &want));
    icmp6_checked(&r.lan_out[3]);
    // the RS's error: src RIP -> VIP, hop limit - 1, quote dst RIP:5353 ->
    // VIP:53, to the client through the gateway
    let want = ip6_icmp(
        vip6(),
        c1,
        63,
        unreach,
        &ip6_udp(c1, vip6(), 5000, 53, 49, &q),
    );
    assert_eq!(r.wan_out[2], eth(GW_MAC, WAN_MAC, ETH_IPV6, &want));
    icmp6_checked(&r.wan_out[2]);
    assert_eq!(r.drop_count("lb_malformed"), 1, "{:?}", r.drops);
    assert_eq!(r.drop_count("lb_ttl_exceeded"), 1, "{:?}", r.drops);
}

#[test]
fn dual_stack_services_count_apart() {
    if !common::privileged("vdev dual stack") {
        return;
    }
    // IPv4 DR: 3 flows, SYN + ACK each; IPv6 TUN: 2 flows, SYN + ACK +
    // data each; interleaved on the wan
    let mut v4 = Vec::new();
    for f in 0..3u8 {
        let mut s = seg(client(f), VIP, 41000 + f as u16, 80);
        v4.push(ip_tcp(&s));
        s.syn = false;
        s.ack = true;
        v4.push(ip_tcp(&s));
    }
    let v6: Vec<Vec<u8>> = three_rounds6(2).into_iter().map(|(_, p)| p).collect();
    let mut wan = Vec::new();
    let mut order = Vec::new();
    for i in 0..v4.len().max(v6.len()) {
        if let Some(p) = v4.get(i) {
            wan.push(padded(eth(WAN_MAC, GW_MAC, ETH_IPV4, p)));
            order.push((4, p.clone()));
        }
        if let Some(p) = v6.get(i) {
            wan.push(eth(WAN_MAC, GW_MAC, ETH_IPV6, p));
            order.push((6, p.clone()));
        }
    }
    let services = rules(
        "10.0.0.100:80",
        "dr",
        &[("172.16.0.11", None), ("172.16.0.12", None)],
    ) + &rules6(80, "tun", &[(RS6_1, None), (RS6_2, None)]);
    let mut stats = String::new();
    let mut conns = String::new();
    let r = run6("dual", &services, &[VIP6], &wan, &[], |sock| {
        stats = adm(sock, &["-L", "-n", "--stats", "--exact"]);
        conns = adm(sock, &["-L", "-n", "-c"]);
    });
    assert!(r.wan_out.is_empty(), "{:02x?}", r.wan_out);
    assert_eq!(r.lan_out.len(), wan.len(), "all forwarded:\n{}", r.log);
    for ((fam, ip), out) in order.iter().zip(&r.lan_out) {
        if *fam == 4 {
            let rip = ipv4_checked(out).destination;
            assert_eq!(rip, VIP, "DR keeps the VIP");
            let mac: Mac = out[0..6].try_into().unwrap();
            assert!(mac == RS1_MAC || mac == RS2_MAC);
            assert_frame(out, &eth(mac, LAN_MAC, ETH_IPV4, ip), "IPv4 DR");
        } else {
            let rip = ipv6_of(out).destination;
            assert_eq!(
                *out,
                tunnelled(ip, ip6(LAN6), rip, rs6_mac(rip)),
                "IPv6 TUN"
            );
        }
    }
    // per service: Conns InPkts OutPkts InBytes OutBytes, each family its own
    let bytes = |fam: u8| -> u64 {
        order
            .iter()
            .filter(|(f, _)| *f == fam)
            .map(|(_, p)| p.len() as u64)
            .sum()
    };
    assert_eq!(
        stats_of(&stats, "TCP  10.0.0.100:80"),
        [3, 6, 0, bytes(4), 0],
        "{stats}"
    );
    assert_eq!(
        stats_of(&stats, &format!("TCP  [{VIP6}]:80")),
        [2, 6, 0, bytes(6), 0],
        "{stats}"
    );
    // one IPv6 flow (SYN, ACK, data) per real server
    for rs in [RS6_1, RS6_2] {
        assert_eq!(
            stats_of(&stats, &format!("  -> [{rs}]:80")),
            [1, 3, 0, bytes(6) / 2, 0],
            "{stats}"
        );
    }
    // the connection listing holds both families' entries, established
    let entries = |vip: &str| -> Vec<Vec<String>> {
        conns
            .lines()
            .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
            .filter(|f| f.len() == 6 && f[4] == vip)
            .collect()
    };
    let v4c = entries("10.0.0.100:80");
    let v6c = entries(&format!("[{VIP6}]:80"));
    assert_eq!((v4c.len(), v6c.len()), (3, 2), "{conns}");
    for (i, e) in v6c.iter().enumerate() {
        let client = format!("[{}]:{}", ip6_str(client6(i as u8)), 40000 + i);
        assert_eq!(
            (e[0].as_str(), e[2].as_str()),
            ("TCP", "ESTABLISHED"),
            "{conns}"
        );
        assert_eq!(e[3], client, "{conns}");
        assert!(
            [RS6_1, RS6_2].iter().any(|r| e[5] == format!("[{r}]:80")),
            "{conns}"
        );
    }
}

// ------------------------------------------------------------- garbage

/// IPv6 fixed header + `payload` with next header `next`, hop limit 64,
/// from client6(0) to the VIP.
fn raw6(next: u8, payload: &[u8]) -> Vec<u8> {
    raw6_to(client6(0), vip6(), next, 64, payload)
}

#[test]
fn garbage6_is_counted_and_dropped() {
    if !common::privileged("vdev IPv6 garbage") {
        return;
    }
    let vip = vip6();
    let good = ip6_tcp(&seg6(client6(0), vip, 40000, 80));
    let tcp = good[40..].to_vec();
    let frame = |ip: &[u8]| eth(WAN_MAC, GW_MAC, ETH_IPV6, ip);
    // an extension header of 8 bytes: next header, length 0, PadN
    let ext = |next: u8| vec![next, 0, 1, 4, 0, 0, 0, 0];
    let chain = |kinds: &[u8], last: u8| -> Vec<u8> {
        let mut v = Vec::new();
        for (i, _) in kinds.iter().enumerate() {
            v.extend(ext(kinds.get(i + 1).copied().unwrap_or(last)));
        }
        v.extend_from_slice(&tcp);
        v
    };
    let mut too_long = good.clone();
    too_long[4..6].copy_from_slice(&500u16.to_be_bytes());
    let mut bad_version = good.clone();
    bad_version[0] = 0x40;
    let mut hop0 = good.clone();
    hop0[7] = 0;
    // Fragment header: first fragment (offset 0, M), and a later one
    let frag = |off_m: u16| {
        let mut v = vec![6, 0];
        v.extend_from_slice(&off_m.to_be_bytes());
        v.extend_from_slice(&0x1234_5678u32.to_be_bytes());
        v.extend_from_slice(&tcp);
        raw6(44, &v)
    };
    let mut bad_doff = tcp.clone();
    bad_doff[12] = 0x40; // data offset 4
    let ack = ip6_tcp(&Seg6 {
        syn: false,
        ack: true,
        ..seg6(client6(1), vip, 40001, 80)
    });
    let frames: Vec<(&str, Vec<u8>)> = vec![
        ("bad_ipv6", frame(&good[..30])),
        ("bad_ipv6", frame(&too_long)),
        ("bad_ipv6", frame(&bad_version)),
        ("ipv6", frame(&raw6(59, &[0; 8]))),
        // Hop-by-Hop after Destination Options
        ("ipv6_ext_header", frame(&raw6(60, &chain(&[60, 0], 6)))),
        // Destination Options saying 48 bytes, 28 there
        (
            "ipv6_ext_header",
            frame(&raw6(60, &{
                let mut v = chain(&[60], 6);
                v[1] = 5;
                v
            })),
        ),
        // an extension header dirigo does not walk (253, experimental)
        ("ipv6_ext_header", frame(&raw6(253, &chain(&[253], 6)))),
        // nine Destination Options headers: past the walk's bound of 8
        ("ipv6_ext_header", frame(&raw6(60, &chain(&[60; 9], 6)))),
        ("ipv6_fragment", frame(&frag(1))),
        ("ipv6_fragment", frame(&frag(1448))),
        ("ttl_expired", frame(&hop0)),
        (
            "martian_src",
            frame(&raw6_to(ip6("ff02::1"), vip, 6, 64, &tcp)),
        ),
        (
            "not_unicast_dst",
            frame(&raw6_to(client6(0), ip6("ff05::1"), 6, 64, &tcp)),
        ),
        (
            "not_unicast_dst",
            frame(&raw6_to(client6(0), [0; 16], 6, 64, &tcp)),
        ),
        ("l4_truncated", frame(&raw6(6, &tcp[..10]))),
        ("bad_l4_header", frame(&raw6(6, &bad_doff))),
        ("lb_not_tracked", frame(&ack)),
        (
            "lb_not_a_service",
            frame(&ip6_tcp(&seg6(client6(1), vip, 40001, 81))),
        ),
        (
            "not_for_us",
            frame(&ip6_tcp(&seg6(client6(1), ip6("2001:db8::99"), 40001, 80))),
        ),
    ];
    let wan: Vec<Vec<u8>> = frames.iter().map(|(_, f)| f.clone()).collect();
    let r = garbage_run("garbage6", &wan);
    // each frame counted under its reason, exactly, and nothing else
    let mut want: HashMap<&str, u64> = HashMap::new();
    for (reason, _) in &frames {
        *want.entry(reason).or_default() += 1;
    }
    for reason in want.keys() {
        r.drop_count(reason); // a reason dirigo has
    }
    let got: HashMap<&str, u64> = r
        .drops
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| (k.as_str(), *n))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn random_ipv6_is_counted_and_dropped() {
    if !common::privileged("vdev random IPv6") {
        return;
    }
    // deterministic random IPv6 packets (LCG) to dirigo's MAC: version 6,
    // a payload length that fits, a next header from the interesting ones
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rnd = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 56) as u8
    };
    let mut frames = Vec::new();
    for i in 0..60usize {
        let n = (i * 37) % 200;
        let mut p: Vec<u8> = (0..40 + n).map(|_| rnd()).collect();
        p[0] = 0x60 | (p[0] & 0x0f);
        p[4..6].copy_from_slice(&(n as u16).to_be_bytes());
        p[6] = [0, 43, 44, 60, 6, 17, 58, 59, p[6]][i % 9];
        p[8] &= 0xfe; // not a multicast source
        frames.push(eth(WAN_MAC, GW_MAC, ETH_IPV6, &p));
    }
    let r = garbage_run("random6", &frames);
    // every frame counted under exactly one reason
    let nonzero: HashMap<&String, &u64> = r.drops.iter().filter(|(_, n)| **n > 0).collect();
    let total: u64 = r.drops.values().sum();
    assert_eq!(total, frames.len() as u64, "drops {nonzero:?}");
}

/// Run `garbage` through a daemon with a DR service at [VIP6]:80, then
/// two echo requests (to the VIP, to the wan's address): nothing may be
/// forwarded, the only frames out are the echo replies (still alive and
/// processing after the garbage).
fn garbage_run(name: &str, garbage: &[Vec<u8>]) -> Run {
    let data: Vec<u8> = (0..24u8).collect();
    let echoes = [(vip6(), 1u16), (ip6(WAN6), 2)];
    let mut wan = garbage.to_vec();
    for (to, seq) in echoes {
        let req = ip6_echo(client6(0), to, 64, false, 7, seq, &data);
        wan.push(eth(WAN_MAC, GW_MAC, ETH_IPV6, &req));
    }
    let r = run6(
        name,
        &rules6(80, "dr", &[(RS6_1, None)]),
        &[VIP6],
        &wan,
        &[],
        |_| {},
    );
    assert!(r.lan_out.is_empty(), "forwarded: {:02x?}", r.lan_out);
    assert_eq!(r.wan_out.len(), 2, "echo replies only: {:02x?}", r.wan_out);
    for (out, (from, seq)) in r.wan_out.iter().zip(echoes) {
        icmp6_checked(out);
        let reply = ip6_echo(from, client6(0), 64, true, 7, seq, &data);
        assert_eq!(*out, eth(GW_MAC, WAN_MAC, ETH_IPV6, &reply));
    }
    r
}
