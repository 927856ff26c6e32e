//! IPVS sync messages (`net::wire::ipvs_sync`) as another implementation
//! reads them: messages built with `MessageWriter`, sent in
//! Ethernet/IPv4/UDP frames to 224.0.0.81:8848, written to a pcap and
//! decoded by tshark's `ipvs` dissector; every header and entry field it
//! shows must be what was written.
//!
//! What Wireshark 4.0's dissector does not do: it ignores an entry's size,
//! so it reads an entry's options (and the padding after them) as the
//! next entry. An entry with options is therefore covered as the last
//! entry of its message, where the dissector's fields for its fixed part
//! are compared with what `ipvs_sync::parse` reads from the same bytes.
//! An IPv6 entry (type 1, 72 bytes) it decodes field by field, with
//! address fields of its own (`ipvs.caddr6` ...): IPv6 connections as the
//! daemon sends them (`daemon::sync::to_repr` of an IPv6 `SyncConn`) are
//! checked field by field, between IPv4 ones and a message full of them,
//! and one of them byte for byte against an entry built by hand from
//! Linux's `struct ip_vs_sync_v6`.
//!
//! Needs tshark (scripts/install-deps.sh installs it): a failure in CI
//! (`CI=true`) without it, a printed skip elsewhere.

mod common;

use dirigo::daemon::sync::to_repr;
use dirigo::lb::spec::Method;
use dirigo::lb::sync::SyncConn;
use dirigo::net::wire::ipvs_sync::{
    self, flags, tcp_state, ConnRepr, MessageWriter, CONN_V4_LEN, CONN_V6_LEN, HEADER_LEN,
    SYNC_GROUP, SYNC_PORT,
};
use etherparse::PacketBuilder;
use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;

/// The per-message and per-entry fields compared, in tshark's names.
const FIELDS: [&str; 21] = [
    "ipvs.syncid",
    "ipvs.size",
    "ipvs.conncount",
    "ipvs.version",
    "ipvs.type",
    "ipvs.proto",
    "ipvs.ver",
    "ipvs.size.v1",
    "ipvs.flags.v1",
    "ipvs.state",
    "ipvs.cport",
    "ipvs.vport",
    "ipvs.dport",
    "ipvs.fwmark",
    "ipvs.timeout",
    "ipvs.caddr",
    "ipvs.vaddr",
    "ipvs.daddr",
    "ipvs.caddr6",
    "ipvs.vaddr6",
    "ipvs.daddr6",
];

fn conn(i: u32, protocol: u8, fl: u32, state: u16) -> ConnRepr {
    ConnRepr {
        protocol,
        flags: fl,
        state,
        cport: 1024 + (i as u16).wrapping_mul(977),
        vport: [80, 443, 53][i as usize % 3],
        dport: 8000 + i as u16,
        fwmark: if i % 4 == 3 { 0x1000 + i } else { 0 },
        timeout: 60 * (i + 1),
        caddr: Ipv4Addr::from(0xc0a8_0000 + i * 7 + 2).into(),
        vaddr: Ipv4Addr::new(10, 0, 0, 100 + (i % 2) as u8).into(),
        daddr: Ipv4Addr::from(0xac10_000b + i % 5).into(),
    }
}

/// An IPv6 connection as the daemon writes it: a worker's `SyncConn`
/// through `to_repr` (`i` 0 is the hand-built entry of [`cases`]).
fn conn6(i: u32, proto: u8, method: Method, state: u8) -> ConnRepr {
    let net = 0x2001_0db8_u128 << 96;
    to_repr(&SyncConn {
        v6: true,
        proto,
        state,
        no_output: method != Method::Nat,
        method: Some(method),
        template: false,
        caddr: net | (2 + i as u128 * 0x1_0001),
        vaddr: net | 0x64,
        daddr: net | (0x11 + (i as u128 % 5) * 0x1_0000_0000),
        cport: 5000 + i as u16 * 3,
        vport: 53,
        dport: 53,
        timeout_s: 300 + i,
    })
}

/// One message and what tshark must show of its entries.
struct Case {
    msg: Vec<u8>,
    syncid: u8,
    entries: Vec<ConnRepr>,
}

fn written(syncid: u8, cap: usize, conns: &[ConnRepr]) -> Case {
    let mut buf = vec![0u8; cap];
    let mut w = MessageWriter::new(&mut buf, syncid);
    for c in conns {
        if !w.push(c) {
            break;
        }
    }
    let n = w.count();
    let msg = w.finish().to_vec();
    Case {
        msg,
        syncid,
        entries: conns[..n].to_vec(),
    }
}

/// Set a message's size field to its length.
fn fix_size(m: &mut [u8]) {
    let n = m.len() as u16;
    m[2..4].copy_from_slice(&n.to_be_bytes());
}

fn cases() -> Vec<Case> {
    let mut out = vec![
        // the three forwarding methods, TCP in several states, UDP
        written(
            1,
            1472,
            &[
                conn(0, 6, flags::MASQ, tcp_state::ESTABLISHED),
                conn(1, 6, flags::DROUTE | flags::INACTIVE, tcp_state::SYN_RECV),
                conn(2, 17, flags::TUNNEL, 0),
                conn(3, 6, flags::DROUTE, tcp_state::FIN_WAIT),
                conn(4, 6, flags::TUNNEL | flags::NOOUTPUT, tcp_state::TIME_WAIT),
            ],
        ),
        // a persistence template (no client port) and its connection
        written(
            200,
            1472,
            &[
                ConnRepr {
                    cport: 0,
                    ..conn(5, 6, flags::TEMPLATE | flags::NO_CPORT | flags::DROUTE, 0)
                },
                conn(6, 6, flags::DROUTE, tcp_state::CLOSE_WAIT),
            ],
        ),
        // as many as one 1500-byte MTU takes: 40
        written(
            255,
            1500 - 28,
            &(0..64)
                .map(|i| conn(i, 6, flags::DROUTE, (i % 11) as u16))
                .collect::<Vec<_>>(),
        ),
        // a header alone
        written(9, 1472, &[]),
    ];
    assert_eq!(out[2].entries.len(), (1472 - HEADER_LEN) / CONN_V4_LEN);

    // an entry with a SEQ_DATA option, last
    let mut c = written(
        2,
        1472,
        &[
            conn(7, 17, flags::TUNNEL, 0),
            conn(8, 6, flags::MASQ | flags::IN_SEQ | flags::OUT_SEQ, 1),
        ],
    );
    let last = HEADER_LEN + CONN_V4_LEN;
    c.msg.extend_from_slice(&[1, 24]);
    c.msg.extend((0..24u8).map(|b| b.wrapping_mul(37)));
    c.msg[last + 3] = (CONN_V4_LEN + 26) as u8;
    fix_size(&mut c.msg);
    out.push(c);

    // an IPv6 connection (UDP, direct routing) between two IPv4 ones
    let c = written(
        3,
        1472,
        &[
            conn(9, 6, flags::DROUTE, 1),
            conn6(0, 17, Method::Dr, 0),
            conn(10, 17, flags::DROUTE, 0),
        ],
    );
    // its entry, as Linux lays out `struct ip_vs_sync_v6`: type 1 (INET6),
    // UDP, size 72, DROUTE | NOOUTPUT | INACTIVE, state 0, ports 5000, 53,
    // 53, fwmark 0, timeout 300, then 2001:db8::2, ::64, ::11
    let mut v6 = vec![
        1, 17, 0, 72, 0, 0, 0x01, 0x83, 0, 0, 0x13, 0x88, 0, 53, 0, 53,
    ];
    v6.extend_from_slice(&[0, 0, 0, 0, 0, 0, 1, 44]);
    for last in [2u8, 0x64, 0x11] {
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        a[15] = last;
        v6.extend_from_slice(&a);
    }
    let at = HEADER_LEN + CONN_V4_LEN;
    assert_eq!(
        c.msg[at..at + CONN_V6_LEN],
        v6[..],
        "the IPv6 entry's bytes"
    );
    out.push(c);

    // as many IPv6 connections as one 1500-byte MTU takes: 20, the three
    // methods, TCP and UDP
    let c = written(
        4,
        1500 - 28,
        &(0..30)
            .map(|i| {
                let m = [Method::Nat, Method::Dr, Method::Tun][i as usize % 3];
                if i % 4 == 1 {
                    conn6(i, 17, m, 0)
                } else {
                    conn6(i, 6, m, [1, 2, 4, 5, 7][i as usize % 5])
                }
            })
            .collect::<Vec<_>>(),
    );
    assert_eq!(c.entries.len(), (1472 - HEADER_LEN) / CONN_V6_LEN);
    out.push(c);
    out
}

/// A number as tshark prints it: decimal or 0x hex.
fn num(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .unwrap_or_else(|e| panic!("not a number: {s:?}: {e}"))
}

fn frame(msg: &[u8]) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [0x01, 0x00, 0x5e, 0x00, 0x00, 0x51])
        .ipv4([10, 0, 0, 1], SYNC_GROUP.octets(), 1)
        .udp(40000, SYNC_PORT);
    let mut f = Vec::with_capacity(b.size(msg.len()));
    b.write(&mut f, msg).unwrap();
    f
}

#[test]
fn tshark_decodes_what_the_writer_wrote() {
    let found = Command::new("tshark").arg("--version").output().is_ok();
    if !common::may_run(
        "sync_tshark",
        if found {
            &[]
        } else {
            &["tshark is not installed"]
        },
    ) {
        return;
    }
    let cases = cases();
    // what dirigo reads back first: the same entries
    for c in &cases {
        let (h, entries) = ipvs_sync::parse(&c.msg).unwrap();
        assert_eq!((h.syncid, h.count as usize), (c.syncid, c.entries.len()));
        let got: Vec<_> = entries.map(Result::unwrap).collect();
        assert_eq!(got, c.entries);
    }
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("sync.pcap");
    let frames: Vec<Vec<u8>> = cases.iter().map(|c| frame(&c.msg)).collect();
    common::write_pcap(&pcap, &frames);
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(&pcap);
    cmd.args([
        "-d",
        "udp.port==8848,ipvs",
        "-T",
        "fields",
        "-E",
        "separator=|",
    ]);
    cmd.args(["-E", "aggregator=,"]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tshark: {}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), cases.len(), "one line per frame:\n{text}");
    for (i, (c, line)) in cases.iter().zip(&lines).enumerate() {
        let cols: Vec<Vec<&str>> = line
            .split('|')
            .map(|v| {
                if v.is_empty() {
                    vec![]
                } else {
                    v.split(',').collect()
                }
            })
            .collect();
        assert_eq!(cols.len(), FIELDS.len(), "message {i}: {line}");
        let col =
            |name: &str| -> &Vec<&str> { &cols[FIELDS.iter().position(|f| *f == name).unwrap()] };
        let one = |name: &str| -> u64 {
            let v = col(name);
            assert_eq!(v.len(), 1, "message {i}: {name} {v:?}");
            num(v[0])
        };
        assert_eq!(one("ipvs.syncid"), c.syncid as u64, "message {i}");
        assert_eq!(one("ipvs.size"), c.msg.len() as u64, "message {i}");
        assert_eq!(one("ipvs.conncount"), c.entries.len() as u64, "message {i}");
        assert_eq!(one("ipvs.version"), 1, "message {i}");
        let n = c.entries.len();
        assert_eq!(col("ipvs.type").len(), n, "message {i}: {line}");
        // the addresses, in order: the IPv4 entries' in the IPv4 fields,
        // the IPv6 entries' in fields of their own
        let addrs = |v6: bool, f: fn(&ConnRepr) -> IpAddr| -> Vec<String> {
            c.entries
                .iter()
                .filter(|e| e.is_ipv6() == v6)
                .map(|e| f(e).to_string())
                .collect()
        };
        for (name, v6, f) in [
            (
                "ipvs.caddr",
                false,
                (|e| e.caddr) as fn(&ConnRepr) -> IpAddr,
            ),
            ("ipvs.vaddr", false, |e| e.vaddr),
            ("ipvs.daddr", false, |e| e.daddr),
            ("ipvs.caddr6", true, |e| e.caddr),
            ("ipvs.vaddr6", true, |e| e.vaddr),
            ("ipvs.daddr6", true, |e| e.daddr),
        ] {
            let got: Vec<String> = col(name)
                .iter()
                .map(|a| {
                    a.parse::<IpAddr>()
                        .unwrap_or_else(|_| panic!("{a}"))
                        .to_string()
                })
                .collect();
            assert_eq!(got, addrs(v6, f), "message {i}: {name}");
        }
        if i == 5 {
            let six: Vec<&str> = col("ipvs.caddr6").to_vec();
            assert_eq!(six, ["2001:db8::2"], "the hand-built entry");
            assert_eq!(col("ipvs.daddr6"), &["2001:db8::11"]);
        }
        for (k, e) in c.entries.iter().enumerate() {
            let at = |name: &str| num(col(name)[k]);
            let what = format!("message {i} entry {k}: ");
            assert_eq!(at("ipvs.type"), e.is_ipv6() as u64, "{what}type");
            assert_eq!(at("ipvs.proto"), e.protocol as u64, "{what}proto");
            assert_eq!(at("ipvs.ver"), 0, "{what}ver");
            let size = if i == 4 && k == 1 {
                CONN_V4_LEN + 26
            } else {
                e.entry_len()
            };
            assert_eq!(at("ipvs.size.v1"), size as u64, "{what}size");
            assert_eq!(at("ipvs.flags.v1"), e.flags as u64, "{what}flags");
            assert_eq!(at("ipvs.state"), e.state as u64, "{what}state");
            assert_eq!(at("ipvs.cport"), e.cport as u64, "{what}cport");
            assert_eq!(at("ipvs.vport"), e.vport as u64, "{what}vport");
            assert_eq!(at("ipvs.dport"), e.dport as u64, "{what}dport");
            assert_eq!(at("ipvs.fwmark"), e.fwmark as u64, "{what}fwmark");
            assert_eq!(at("ipvs.timeout"), e.timeout as u64, "{what}timeout");
        }
    }
}
