//! The IPv6 topology of the vdev tests (`vdev_modes6.rs`) on the two-port
//! harness of `vdev_modes.rs`: addresses, routes and static neighbours,
//! IPv6 services, a run that checks and removes the start-up unsolicited
//! Neighbour Advertisements, and the expected frames of a tunnel and of a
//! Packet Too Big.

use crate::common;
use crate::harness::*;
use crate::packets::*;
use crate::packets6::*;
use etherparse::{Icmpv6Type, IpNumber, Ipv6FlowLabel, Ipv6Header, Ipv6HeaderSlice};
use std::path::Path;
use std::process::Command;
pub const WAN6: &str = "2001:db8:1::1";
/// The lan's first global address (not the real servers' prefix).
pub const LAN6_FIRST: &str = "2001:db8:3::1";
/// The lan's address in the real servers' prefix.
pub const LAN6: &str = "2001:db8:2::1";
pub const GW6: &str = "2001:db8:1::fe";
/// A router on the lan toward 2001:db8:9::/64.
pub const LAN_GW6: &str = "2001:db8:2::fe";
pub const LAN_GW_MAC: Mac = [0x02, 0x00, 0x00, 0x00, 0xfe, 0x02];
pub const VIP6: &str = "2001:db8::10";
pub const RS6_1: &str = "2001:db8:2::11";
pub const RS6_2: &str = "2001:db8:2::12";
/// A TUN real server behind the lan router.
pub const RS6_FAR: &str = "2001:db8:9::13";

pub fn vip6() -> Ip6 {
    ip6(VIP6)
}

/// Client `i` (behind the gateway).
pub fn client6(i: u8) -> Ip6 {
    let mut a = ip6("2001:db8:ff::");
    a[15] = 10 + i;
    a
}

/// The MAC of IPv6 real server `rip`.
pub fn rs6_mac(rip: Ip6) -> Mac {
    match ip6_str(rip).as_str() {
        RS6_1 => RS1_MAC,
        RS6_2 => RS2_MAC,
        other => panic!("not a real server: {other}"),
    }
}

/// The two-port configuration with IPv6 addresses, routes and static
/// neighbours added.
pub fn cfg6(c: common::DaemonConfig) -> common::DaemonConfig {
    c.edit(
        r#"addresses = ["10.0.0.1/24"]"#,
        &format!(r#"addresses = ["10.0.0.1/24", "{WAN6}/64"]"#),
    )
    .edit(
        r#"addresses = ["172.16.0.1/24"]"#,
        &format!(r#"addresses = ["172.16.0.1/24", "{LAN6_FIRST}/64", "{LAN6}/64"]"#),
    )
    .route("::/0", GW6)
    .route("2001:db8:9::/64", LAN_GW6)
    .neighbor(GW6, "02:00:00:00:fe:01", "wan")
    .neighbor(LAN_GW6, "02:00:00:00:fe:02", "lan")
    .neighbor(RS6_1, "02:00:00:00:00:11", "lan")
    .neighbor(RS6_2, "02:00:00:00:00:12", "lan")
}

/// An IPv6 `[[service]]` (TCP, rr) at `[VIP6]:port` with real servers
/// `(RIP, port)` of `method`.
pub fn rules6(port: u16, method: &str, rss: &[(&str, Option<u16>)]) -> String {
    let addrs: Vec<String> = rss
        .iter()
        .map(|(a, p)| match p {
            Some(p) => format!("[{a}]:{p}"),
            None => a.to_string(),
        })
        .collect();
    let rs: Vec<(&str, &str)> = addrs.iter().map(|a| (a.as_str(), method)).collect();
    common::service_toml("tcp", &format!("[{VIP6}]:{port}"), "rr", &rs)
}

/// Remove the unsolicited Neighbour Advertisements from the frames a port
/// with MAC `mac` sent, checking each byte for byte; the targets, sorted.
pub fn strip_nas(frames: Vec<Vec<u8>>, mac: Mac) -> (Vec<Vec<u8>>, Vec<String>) {
    let mut targets = Vec::new();
    let rest = frames
        .into_iter()
        .filter(|f| {
            // Ethernet/IPv6, next header ICMPv6, type 136
            let na = f.len() >= 62 && f[12..14] == [0x86, 0xdd] && f[20] == 58 && f[54] == 136;
            if na {
                let target: Ip6 = f[62..78].try_into().unwrap();
                assert_eq!(*f, unsolicited_na(mac, target), "unsolicited NA");
                targets.push(ip6_str(target));
            }
            !na
        })
        .collect();
    targets.sort();
    (rest, targets)
}

pub fn sorted(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// [`run_cfg`] on [`cfg6`] with `services`; the
/// unsolicited NAs are checked (port addresses and `vips` on every port)
/// and removed from the outs.
pub fn run6(
    name: &str,
    services: &str,
    vips: &[&str],
    wan: &[Vec<u8>],
    lan: &[Vec<u8>],
    during: impl FnOnce(&Path),
) -> Run {
    let mut r = run_cfg(name, |c| cfg6(c).raw(services), wan, lan, during);
    let (w, wt) = strip_nas(std::mem::take(&mut r.wan_out), WAN_MAC);
    let (l, lt) = strip_nas(std::mem::take(&mut r.lan_out), LAN_MAC);
    assert_eq!(wt, sorted(&[&[WAN6][..], vips].concat()), "NAs on the wan");
    assert_eq!(
        lt,
        sorted(&[&[LAN6_FIRST, LAN6][..], vips].concat()),
        "NAs on the lan"
    );
    r.wan_out = w;
    r.lan_out = l;
    r
}

/// Flows alternate real servers, and each flow sticks to one: returns the
/// real server of each flow.
pub fn check_rr(flow_of_out: &[(usize, Ip6)], flows: usize, a: Ip6, b: Ip6) -> Vec<Ip6> {
    let mut rs: Vec<Option<Ip6>> = vec![None; flows];
    for &(f, r) in flow_of_out {
        match rs[f] {
            None => rs[f] = Some(r),
            Some(prev) => assert_eq!(prev, r, "flow {f} changed real server"),
        }
    }
    let rs: Vec<Ip6> = rs
        .into_iter()
        .map(|r| r.expect("every flow forwarded"))
        .collect();
    let txt: Vec<String> = rs.iter().map(|r| ip6_str(*r)).collect();
    for w in rs.windows(2) {
        assert_ne!(w[0], w[1], "rr: consecutive flows must alternate: {txt:?}");
    }
    assert!(rs.contains(&a) && rs.contains(&b), "{txt:?}");
    rs
}

/// SYN, then ACK, then ACK+data from each of `flows` clients to
/// [VIP6]:80 in three rounds, with the flow index of each. What DR and TUN
/// must leave alone varies: hop limit, traffic class, flow label, and a
/// Destination Options header before TCP (flow 3).
pub fn three_rounds6(flows: u8) -> Vec<(usize, Vec<u8>)> {
    let mut v = Vec::new();
    for round in 0..3u32 {
        for f in 0..flows {
            let mut s = seg6(client6(f), vip6(), 40000 + f as u16, 80);
            s.hop = 60 + f;
            s.tc = if f == 2 { 0xb9 } else { 0 };
            s.flow = [0, 0x12345, 0, 0xfffff][f as usize % 4];
            s.dest_opts = f == 3;
            s.seq = 1000 + round;
            if round > 0 {
                s.syn = false;
                s.ack = true;
            }
            if round == 2 {
                s.payload = format!("GET /{f} HTTP/1.0\r\n\r\n").into_bytes();
            }
            v.push((f as usize, ip6_tcp(&s)));
        }
    }
    v
}

/// Counter `name` of the first worker's `extra` list (`dirigoctl lcores`).
pub fn extra(sock: &Path, name: &str) -> u64 {
    let l = ctl(sock, &["lcores"]);
    l[0]["extra"]
        .as_array()
        .unwrap_or_else(|| panic!("no extra counters: {l}"))
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no counter {name}: {l}"))["value"]
        .as_u64()
        .unwrap()
}

/// `dirigoadm --socket S ARGS`: its stdout.
pub fn adm(sock: &Path, args: &[&str]) -> String {
    let o = Command::new(crate::common::DIRIGOADM)
        .arg("--socket")
        .arg(sock)
        .args(args)
        .output()
        .expect("run dirigoadm");
    assert!(
        o.status.success(),
        "dirigoadm {args:?}: {}",
        common::text(&o)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The frame tunnel of `inner` to `rip` from `src`, toward MAC `mac`: the
/// outer header copies traffic class, flow label and hop limit.
pub fn tunnelled(inner: &[u8], src: Ip6, rip: Ip6, mac: Mac) -> Vec<u8> {
    let ih = Ipv6HeaderSlice::from_slice(inner).unwrap().to_header();
    let outer = Ipv6Header {
        traffic_class: ih.traffic_class,
        flow_label: ih.flow_label,
        payload_length: inner.len() as u16,
        next_header: IpNumber::IPV6,
        hop_limit: ih.hop_limit,
        source: src,
        destination: rip,
    };
    let mut v = Vec::new();
    outer.write(&mut v).unwrap();
    v.extend_from_slice(inner);
    eth(mac, LAN_MAC, ETH_IPV6, &v)
}

/// The Packet Too Big dirigo owes `client` for `big` (to VIP6), with `mtu`.
pub fn packet_too_big(client: Ip6, big: &[u8], mtu: u32) -> Vec<u8> {
    let quote = &big[..big.len().min(1232)];
    let ip = ip6_icmp(vip6(), client, 64, Icmpv6Type::PacketTooBig { mtu }, quote);
    eth(GW_MAC, WAN_MAC, ETH_IPV6, &ip)
}

/// Check a Packet Too Big frame field by field (independently of the
/// byte comparison): from the VIP to `client`, hop limit 64, the MTU, a
/// quote of at most 1232 bytes starting with the packet's header.
pub fn check_ptb(out: &[u8], client: Ip6, big: &[u8], mtu: u32) {
    let ip = ipv6_of(out);
    assert_eq!((ip.source, ip.destination), (vip6(), client));
    assert_eq!((ip.hop_limit, ip.next_header), (64, IpNumber::IPV6_ICMP));
    assert_eq!((ip.traffic_class, ip.flow_label), (0, Ipv6FlowLabel::ZERO));
    let (h, quote) = icmp6_checked(out);
    assert_eq!(h.icmp_type, Icmpv6Type::PacketTooBig { mtu });
    assert_eq!(quote.len(), big.len().min(1232), "quote length");
    assert!(
        out.len() - 14 <= 1280,
        "the error fits the IPv6 minimum MTU"
    );
    assert_eq!(quote[..], big[..quote.len()]);
    let q = Ipv6HeaderSlice::from_slice(&quote).expect("quoted header parses");
    assert_eq!((q.source(), q.destination()), (client, vip6()));
}

/// The `-L -n --stats --exact` line of service `svc`: Conns, InPkts,
/// OutPkts, InBytes, OutBytes.
pub fn stats_of(listing: &str, svc: &str) -> Vec<u64> {
    let line = listing
        .lines()
        .find(|l| l.starts_with(svc))
        .unwrap_or_else(|| panic!("no {svc:?} in:\n{listing}"));
    line.split_whitespace()
        .skip(2)
        .map(|x| x.parse().unwrap_or_else(|_| panic!("{line}")))
        .collect()
}
