//! The PROXY protocol headers `net::wire::proxy` writes, as another
//! implementation reads them: version 1 and 2, IPv4 and IPv6, each at the
//! start of a TCP segment's payload (as a FullNAT service sends the
//! client's first bytes), written to a pcap and decoded by tshark's PROXY
//! dissector (its heuristic on TCP, tried first: `-o
//! tcp.try_heuristic_first:TRUE`). Every field it shows must be the
//! connection the header was made for; a header with one byte of its
//! signature wrong must not be decoded as PROXY at all.
//!
//! And the TOA option `net::wire::toa::insert` puts into a segment (the
//! client's address as DPVS gives it to a FullNAT real server): tshark
//! must show it byte for byte as the first option, the options after it
//! and the payload unchanged, and the checksum right.
//!
//! Needs tshark (scripts/install-deps.sh installs it): a failure in CI
//! (`CI=true`) without it, a printed skip elsewhere.

use dirigo_core::net::wire::proxy::Addrs;
use dirigo_core::net::wire::{tcp, toa};
use etherparse::PacketBuilder;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::process::Command;
use std::time::Duration;

const FIELDS: [&str; 10] = [
    "frame.protocols",
    "proxy.v2.version",
    "proxy.v2.cmd",
    "proxy.v2.addr_family",
    "proxy.v2.protocol",
    "proxy.v1.proto",
    "proxy.src.ipv4",
    "proxy.dst.ipv4",
    "proxy.src.ipv6",
    "proxy.dst.ipv6",
];
const PORTS: [&str; 2] = ["proxy.srcport", "proxy.dstport"];

/// An Ethernet frame of one TCP segment from the director (port
/// `sport`, one connection per frame) to a real server (port 80)
/// carrying `payload`.
fn frame(v6: bool, sport: u16, payload: &[u8]) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    let b = if v6 {
        b.ipv6(
            Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 0x10).octets(),
            Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 0x20).octets(),
            64,
        )
    } else {
        b.ipv4([10, 1, 0, 10], [10, 1, 0, 20], 64)
    };
    let b = b.tcp(sport, 80, 1_000_001, 65535).ack(7).psh();
    let mut out = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut out, payload).unwrap();
    out
}

/// A number as tshark prints it (decimal, or hex with 0x).
fn num(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap_or(u64::MAX),
        None => s.parse().unwrap_or(u64::MAX),
    }
}

fn may_run() -> bool {
    if Command::new("tshark").arg("--version").output().is_ok() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("proxy_tshark: cannot run in CI: tshark is not installed");
    }
    eprintln!("SKIP proxy_tshark: tshark is not installed");
    false
}

struct Case {
    addrs: Addrs,
    v2: bool,
    header: Vec<u8>,
}

fn cases() -> Vec<Case> {
    let v4 = Addrs::V4 {
        src: u32::from(Ipv4Addr::new(198, 51, 100, 7)),
        dst: u32::from(Ipv4Addr::new(203, 0, 113, 80)),
        sport: 51234,
        dport: 443,
    };
    let v6 = Addrs::V6 {
        src: u128::from("2001:db8:1::7".parse::<Ipv6Addr>().unwrap()),
        dst: u128::from("2001:db8:2::80".parse::<Ipv6Addr>().unwrap()),
        sport: 65535,
        dport: 8443,
    };
    let mut out = Vec::new();
    for addrs in [v4, v6] {
        for v2 in [true, false] {
            let mut b = [0u8; 128];
            let n = if v2 {
                addrs.emit_v2(&mut b).unwrap()
            } else {
                addrs.emit_v1(&mut b).unwrap()
            };
            out.push(Case {
                addrs,
                v2,
                header: b[..n].to_vec(),
            });
        }
    }
    out
}

/// Write `frames` to a pcap and run tshark on it with `args` and the
/// `fields`: one line per frame, `|` between fields, `,` between the
/// values of one field.
fn tshark(name: &str, frames: &[Vec<u8>], args: &[&str], fields: &[&str]) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("dirigo-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("t.pcap");
    {
        let f = std::fs::File::create(&pcap).unwrap();
        let mut w = PcapWriter::with_header(f, PcapHeader::default()).unwrap();
        for (i, fr) in frames.iter().enumerate() {
            w.write_packet(&PcapPacket::new(
                Duration::from_micros(i as u64),
                fr.len() as u32,
                fr,
            ))
            .unwrap();
        }
    }
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(&pcap);
    cmd.args(args);
    cmd.args(["-T", "fields", "-E", "separator=|", "-E", "aggregator=,"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tshark: {}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), frames.len(), "one line per frame:\n{text}");
    lines
}

#[test]
fn tshark_decodes_the_headers() {
    if !may_run() {
        return;
    }
    let cases = cases();
    let mut frames: Vec<Vec<u8>> = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let mut payload = c.header.clone();
        payload.extend_from_slice(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        let v6 = matches!(c.addrs, Addrs::V6 { .. });
        frames.push(frame(v6, 40000 + i as u16, &payload));
    }
    // the control: a v2 header with one signature byte wrong
    let mut bad = cases[0].header.clone();
    bad[4] = 0x01;
    frames.push(frame(false, 40100, &bad));

    let fields: Vec<&str> = FIELDS.iter().chain(&PORTS).copied().collect();
    let lines = tshark(
        "proxy-tshark",
        &frames,
        &["-o", "tcp.try_heuristic_first:TRUE"],
        &fields,
    );
    for (i, (c, line)) in cases.iter().zip(&lines).enumerate() {
        let cols: Vec<&str> = line.split('|').collect();
        assert_eq!(cols.len(), FIELDS.len() + PORTS.len(), "frame {i}: {line}");
        let col = |name: &str| -> &str {
            let k = FIELDS
                .iter()
                .chain(&PORTS)
                .position(|f| *f == name)
                .unwrap();
            cols[k]
        };
        assert!(
            col("frame.protocols").contains(":tcp:proxy"),
            "frame {i} not decoded as PROXY: {line}"
        );
        let (sport, dport) = c.addrs.ports();
        // the ports: tshark shows each once (v1 and v2 alike)
        assert_eq!(col("proxy.srcport"), sport.to_string(), "frame {i}: {line}");
        assert_eq!(col("proxy.dstport"), dport.to_string(), "frame {i}: {line}");
        match c.addrs {
            Addrs::V4 { src, dst, .. } => {
                assert_eq!(col("proxy.src.ipv4"), Ipv4Addr::from(src).to_string());
                assert_eq!(col("proxy.dst.ipv4"), Ipv4Addr::from(dst).to_string());
                assert_eq!(col("proxy.src.ipv6"), "");
            }
            Addrs::V6 { src, dst, .. } => {
                assert_eq!(col("proxy.src.ipv6"), Ipv6Addr::from(src).to_string());
                assert_eq!(col("proxy.dst.ipv6"), Ipv6Addr::from(dst).to_string());
                assert_eq!(col("proxy.src.ipv4"), "");
            }
        }
        let v6 = matches!(c.addrs, Addrs::V6 { .. });
        if c.v2 {
            // version 2, command PROXY, AF_INET (1) or AF_INET6 (2), STREAM (1)
            assert_eq!(num(col("proxy.v2.version")), 2, "frame {i}: {line}");
            assert_eq!(num(col("proxy.v2.cmd")), 1, "frame {i}: {line}");
            assert_eq!(
                num(col("proxy.v2.addr_family")),
                if v6 { 2 } else { 1 },
                "frame {i}: {line}"
            );
            assert_eq!(num(col("proxy.v2.protocol")), 1, "frame {i}: {line}");
            assert_eq!(col("proxy.v1.proto"), "", "frame {i}: {line}");
        } else {
            assert_eq!(col("proxy.v2.version"), "", "frame {i}: {line}");
            assert_eq!(
                col("proxy.v1.proto"),
                if v6 { "TCP6" } else { "TCP4" },
                "frame {i}: {line}"
            );
        }
    }
    let control = &lines[cases.len()];
    assert!(
        !control.split('|').next().unwrap_or("").contains("proxy"),
        "a wrong signature decoded as PROXY: {control}"
    );
}

#[test]
fn tshark_shows_the_toa_option() {
    if !may_run() {
        return;
    }
    let (src, dst) = ([10, 1, 0, 10], [10, 1, 0, 20]);
    let (a4, a6) = (
        Ipv4Addr::new(198, 51, 100, 7),
        "2001:db8:1::7".parse::<Ipv6Addr>().unwrap(),
    );
    // each option and its bytes as DPVS's structs lay them out, by hand:
    // kind, length, the client's port, the client's address
    let toas = [
        (
            toa::Toa::V4 {
                port: 51234,
                addr: u32::from(a4),
            },
            [&[254u8, 8, 0xc8, 0x22][..], &a4.octets()].concat(),
        ),
        (
            toa::Toa::V6 {
                port: 443,
                addr: u128::from(a6),
            },
            [&[254u8, 20, 0x01, 0xbb][..], &a6.octets()].concat(),
        ),
    ];
    let payload = b"GET / HTTP/1.1\r\n\r\n";
    let mut frames = Vec::new();
    let mut want = Vec::new();
    for (t, bytes) in &toas {
        // a Linux client's data segment (NOP NOP TS) through toa::insert
        let mut h = etherparse::TcpHeader::new(40000, 80, 1_000_001, 502);
        h.ack = true;
        h.psh = true;
        h.acknowledgment_number = 7;
        h.set_options(&[
            etherparse::TcpOptionElement::Noop,
            etherparse::TcpOptionElement::Noop,
            etherparse::TcpOptionElement::Timestamp(0x0102_0304, 0x0506_0708),
        ])
        .unwrap();
        let mut seg = h.to_bytes().to_vec();
        seg.extend_from_slice(payload);
        let len = seg.len();
        seg.resize(len + t.len(), 0);
        let n = toa::insert(&mut seg, len, t).unwrap();
        seg.truncate(n);
        tcp::Packet::new_checked(&mut seg[..])
            .unwrap()
            .fill_checksum(u32::from_be_bytes(src), u32::from_be_bytes(dst));
        let ip =
            etherparse::Ipv4Header::new(n as u16, 64, etherparse::IpNumber::TCP, src, dst).unwrap();
        let mut f = etherparse::Ethernet2Header {
            source: [2, 0, 0, 0, 0, 1],
            destination: [2, 0, 0, 0, 0, 2],
            ether_type: etherparse::EtherType::IPV4,
        }
        .to_bytes()
        .to_vec();
        f.extend_from_slice(&ip.to_bytes());
        f.extend_from_slice(&seg);
        frames.push(f);
        want.push(bytes.clone());
    }
    let lines = tshark(
        "toa-tshark",
        &frames,
        &["-o", "tcp.check_checksum:TRUE"],
        &[
            "tcp.hdr_len",
            "tcp.len",
            "tcp.option_kind",
            "tcp.option_len",
            "tcp.options",
            "tcp.options.timestamp.tsval",
            "tcp.checksum.status",
        ],
    );
    for (i, (line, t)) in lines.iter().zip(&want).enumerate() {
        let c: Vec<&str> = line.split('|').collect();
        assert_eq!(c.len(), 7, "frame {i}: {line}");
        assert_eq!(c[0], (20 + t.len() + 12).to_string(), "frame {i}: {line}");
        assert_eq!(c[1], payload.len().to_string(), "frame {i}: {line}");
        // TOA first, then NOP NOP TS as the client wrote them
        assert_eq!(c[2], "254,1,1,8", "frame {i}: {line}");
        assert_eq!(
            c[3].split(',').next(),
            Some(&*t.len().to_string()),
            "frame {i}: {line}"
        );
        let hex: String = t.iter().map(|b| format!("{b:02x}")).collect();
        let opts = c[4].replace(':', "");
        assert_eq!(
            opts,
            format!("{hex}0101080a0102030405060708"),
            "frame {i}: the options byte for byte: {line}"
        );
        assert_eq!(num(c[5]), 0x0102_0304, "frame {i}: {line}");
        // tshark's checksum status: 0 bad, 1 good, 2 unverified
        assert_eq!(c[6], "1", "frame {i}: checksum: {line}");
    }
}
