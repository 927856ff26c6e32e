//! TUN with GUE and GRE through the real `dirigo` binary on DPDK virtual
//! devices (net_pcap in, net_pcap out; the harness of `vdev_modes.rs`):
//! a TUN service whose first real server tunnels with GUE (port 6080,
//! UDP checksum) and whose second with GRE (checksum), both set by the
//! config file's `tun_type`, `tun_port` and `tun_csum`. Each frame out
//! must carry the client's packet unchanged behind the outer IPv4 header
//! (checked with etherparse) and the tunnel header (checked byte by
//! byte, and its checksum recomputed here).

mod common;
// shared with vdev_modes.rs, which uses the parts this file does not
#[allow(dead_code)]
#[path = "vdev_modes/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "vdev_modes/packets.rs"]
mod packets;

use etherparse::{IpNumber, NetSlice, SlicedPacket, TransportSlice};
use harness::*;
use packets::*;

/// RFC 1071 over `data`, written here (not dirigo's).
fn sum16(data: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in data.chunks(2) {
        s += u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0));
    }
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// The lab's userspace GRE/GUE decapsulator checks what it must
/// (tests/support/tunparse.py, used by the TUN labs, issue 52): good
/// packets pass, a bad checksum, version, flag, header length, inner
/// protocol or a remote checksum offload option is refused with its
/// reason. Needs only python3.
#[test]
fn tunparse_refuses_what_it_must() {
    let o = std::process::Command::new("python3")
        .arg(common::support("tunparse_selftest.py"))
        .output()
        .expect("python3");
    let out = common::text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("tunparse self-test: all passed"), "{out}");
}

#[test]
fn gue_and_gre_real_servers_get_their_tunnels() {
    if !common::privileged("vdev TUN gue/gre") {
        return;
    }
    let pkts = three_rounds(4);
    let wan: Vec<Vec<u8>> = pkts
        .iter()
        .map(|(_, p)| padded(eth(WAN_MAC, GW_MAC, ETH_IPV4, p)))
        .collect();
    let svc = "[[service]]\nprotocol = \"tcp\"\naddress = \"10.0.0.100:80\"\nscheduler = \"rr\"\n\
        [[service.real_server]]\naddress = \"172.16.0.11\"\nmethod = \"tun\"\n\
        tun_type = \"gue\"\ntun_port = 6080\ntun_csum = \"csum\"\n\
        [[service.real_server]]\naddress = \"172.16.0.12\"\nmethod = \"tun\"\n\
        tun_type = \"gre\"\ntun_csum = \"csum\"\n";
    let r = run_with("tuntypes", svc, &wan, &[], |sock| {
        let out = std::process::Command::new(common::DIRIGOADM)
            .arg("--socket")
            .arg(sock)
            .args(["-L", "-n", "--tun-info"])
            .output()
            .expect("run dirigoadm");
        let out = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.contains("172.16.0.11:80               Tunnel  gue:6080:+c"),
            "{out}"
        );
        assert!(
            out.contains("172.16.0.12:80               Tunnel  gre:+c"),
            "{out}"
        );
    });
    assert!(r.wan_out.is_empty(), "nothing back on the wan");
    assert_eq!(
        r.lan_out.len(),
        pkts.len(),
        "every packet tunnelled:\n{}",
        r.log
    );
    let (mut gue, mut gre) = (0, 0);
    for ((f, inner), out) in pkts.iter().zip(&r.lan_out) {
        let outer = ipv4_checked(out);
        assert_eq!(outer.source, LAN_IP, "flow {f}");
        let rip = outer.destination;
        assert_eq!(out[0..6], rs_mac(rip), "flow {f}");
        let ip = &out[14..];
        let body = &ip[20..];
        if rip == RS1 {
            gue += 1;
            assert_eq!(outer.protocol, IpNumber::UDP, "flow {f}");
            assert_eq!(outer.total_len as usize, 20 + 12 + inner.len());
            let p = SlicedPacket::from_ethernet(out).unwrap();
            let (Some(NetSlice::Ipv4(o)), Some(TransportSlice::Udp(u))) = (&p.net, &p.transport)
            else {
                panic!("flow {f}: not UDP")
            };
            let h = u.to_header();
            assert_eq!(h.destination_port, 6080);
            assert!((32768..61000).contains(&h.source_port), "{}", h.source_port);
            assert_eq!(h.length as usize, 12 + inner.len());
            let want = h
                .calc_checksum_ipv4(&o.header().to_header(), u.payload())
                .unwrap();
            assert_eq!(h.checksum, want, "flow {f}: UDP checksum");
            assert_eq!(&body[8..12], &[0x00, 0x04, 0x00, 0x00], "flow {f}: GUE");
            assert_eq!(&body[12..], &inner[..], "flow {f}: inner packet");
        } else {
            gre += 1;
            assert_eq!(rip, RS2);
            assert_eq!(outer.protocol, IpNumber::GRE, "flow {f}");
            assert_eq!(outer.total_len as usize, 20 + 8 + inner.len());
            assert_eq!(&body[0..4], &[0x80, 0x00, 0x08, 0x00], "flow {f}: GRE");
            assert_eq!(&body[6..8], &[0, 0], "flow {f}: reserved1");
            assert_eq!(sum16(body), 0, "flow {f}: GRE checksum");
            assert_eq!(&body[8..], &inner[..], "flow {f}: inner packet");
        }
    }
    assert_eq!((gue, gre), (6, 6), "rr: two flows to each server");
}
