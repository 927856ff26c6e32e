//! The GRE packets TUN sends (IPv4 and IPv6 outer headers, with and
//! without the checksum), written to a pcap and decoded by tshark's GRE
//! dissector, an independent reader: every field it shows must be what
//! Linux IPVS's `ipvs_gre_encap` writes, and the client's packet inside
//! must come out whole (tshark decodes the inner IP and TCP headers and
//! checks the GRE checksum). Wireshark has no GUE dissector: GUE is
//! checked byte by byte in `tests_encap` and `v6::tests::encap`.
//!
//! Needs tshark (scripts/install-deps.sh installs it): a failure in CI
//! (`CI=true`) without it, a printed skip elsewhere.

use crate::lb::testutil::*;
use crate::lb::tunnel::{TunCsum, TunType, Tunnel};
use crate::lb::xmit::{tun, v6};
use crate::net::buf::VecBuf;
use crate::net::meta::tcp_flags::{ACK, PSH};
use crate::net::meta::{Flow, PacketMeta6, PROTO_TCP};
use etherparse::PacketBuilder;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use std::process::Command;
use std::time::Duration;

fn may_run() -> bool {
    if Command::new("tshark").arg("--version").output().is_ok() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("gre tshark test: cannot run in CI: tshark is not installed");
    }
    eprintln!("SKIP gre tshark test: tshark is not installed");
    false
}

fn gre(csum: TunCsum) -> Tunnel {
    Tunnel {
        tun_type: TunType::Gre,
        tun_port: 0,
        tun_csum: csum,
    }
}

/// An IPv4 TCP segment wrapped in GRE.
fn frame4(csum: TunCsum) -> Vec<u8> {
    let f = tcp_frame(
        CLIENT,
        40000,
        VIP,
        80,
        ACK | PSH,
        b"hello over gre",
        57,
        true,
    );
    let m = meta_of(&f);
    let mut b = VecBuf::new(&f);
    let e = FakeEgress::default();
    tun::tun(&mut b, &m, ip(RIP), None, &e, &mut 0x0101, gre(csum)).unwrap();
    b.to_vec()
}

/// An IPv6 TCP segment wrapped in GRE.
fn frame6(csum: TunCsum) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(OUR_MAC, CLIENT_MAC)
        .ipv6(CLIENT6.to_be_bytes(), VIP6.to_be_bytes(), 57)
        .tcp(40000, 80, 1000, 65535)
        .ack(7)
        .psh();
    let mut f = Vec::new();
    b.write(&mut f, b"hello over gre6").unwrap();
    // what classify gives TUN: the IPv6 header at 14, its length, the flow
    let m = PacketMeta6 {
        port: 0,
        vlan: None,
        l3_off: 14,
        l4_off: 54,
        ip_len: (f.len() - 14) as u16,
        key: Flow {
            src: CLIENT6,
            dst: VIP6,
            sport: 40000,
            dport: 80,
            proto: PROTO_TCP,
        },
        tcp_flags: ACK | PSH,
        ttl: 57,
        df: true,
        icmp: None,
    };
    let mut buf = VecBuf::new(&f);
    let e = FakeEgress::default();
    v6::tun6(&mut buf, &m, RIP6, None, &e, gre(csum)).unwrap();
    buf.to_vec()
}

const FIELDS: [&str; 11] = [
    "frame.protocols",
    "gre.flags.checksum",
    "gre.flags.key",
    "gre.flags.sequence_number",
    "gre.flags.version",
    "gre.proto",
    "gre.checksum.status",
    "ip.src",
    "ipv6.src",
    "tcp.dstport",
    "tcp.payload",
];

#[test]
fn tshark_decodes_the_gre_packets() {
    if !may_run() {
        return;
    }
    let frames = [
        frame4(TunCsum::None),
        frame4(TunCsum::Csum),
        frame6(TunCsum::None),
        frame6(TunCsum::Csum),
    ];
    let dir = std::env::temp_dir().join(format!("dirigo-gre-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("gre.pcap");
    {
        let f = std::fs::File::create(&pcap).unwrap();
        let mut w = PcapWriter::with_header(f, PcapHeader::default()).unwrap();
        for (i, fr) in frames.iter().enumerate() {
            let t = Duration::from_micros(i as u64);
            w.write_packet(&PcapPacket::new(t, fr.len() as u32, fr))
                .unwrap();
        }
    }
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(&pcap);
    cmd.args(["-T", "fields", "-E", "separator=|", "-E", "aggregator=,"]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "tshark: {}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    let want = [
        (
            "eth:ethertype:ip:gre:ip:tcp",
            "0",
            "0x0800",
            "10.0.0.1,",
            "",
        ),
        (
            "eth:ethertype:ip:gre:ip:tcp",
            "1",
            "0x0800",
            "10.0.0.1,",
            "1",
        ),
        ("eth:ethertype:ipv6:gre:ipv6:tcp", "0", "0x86dd", "", ""),
        ("eth:ethertype:ipv6:gre:ipv6:tcp", "1", "0x86dd", "", "1"),
    ];
    for (i, (line, w)) in lines.iter().zip(want).enumerate() {
        let c: Vec<&str> = line.split('|').collect();
        assert_eq!(c.len(), FIELDS.len(), "frame {i}: {line}");
        let (protos, csum, proto, src4, status) = w;
        assert!(c[0].starts_with(protos), "frame {i}: {line}");
        assert_eq!(c[1], csum, "C bit, frame {i}: {line}");
        assert_eq!((c[2], c[3], c[4]), ("0", "0", "0"), "frame {i}: {line}");
        assert_eq!(c[5], proto, "protocol type, frame {i}: {line}");
        // 1: Wireshark's "good" checksum status
        assert_eq!(c[6], status, "checksum status, frame {i}: {line}");
        if i < 2 {
            // the outer source (the egress port's address), then the client
            assert_eq!(c[7], format!("{src4}198.51.100.7"), "frame {i}: {line}");
        } else {
            assert_eq!(c[8], "2001:db8:1::1,2001:db8:c0::7", "frame {i}: {line}");
        }
        assert_eq!(c[9], "80", "inner TCP, frame {i}: {line}");
        assert!(!c[10].is_empty(), "inner payload, frame {i}: {line}");
    }
}
