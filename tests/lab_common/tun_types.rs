//! GUE and GRE forwarding in the TUN lab (issue 52). The real servers'
//! userspace decapsulator (`tests/support/ipip_decap.py`, started by
//! `lab.sh mode tun` with [`DECAP_ARGS`]) takes IPIP, GRE and GUE on
//! [`GUE_PORT`] at once, checking every header and checksum
//! (`tests/support/tunparse.py`); the lab switches its real servers'
//! tunnel type at runtime with `dirigoadm -e` and moves bytes through each.
//! A capture on the servers' bridge proves the outer headers: tshark
//! decodes GRE (flags, protocol, checksum status), GUE is checked byte by
//! byte here.

use super::checks::{download, upload};
use super::{rip, Lab, CLIENT, VIP};
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The real servers' GUE port (`--tun-port`).
pub const GUE_PORT: u16 = 6080;
/// `LAB_DECAP_ARGS` for a TUN lab whose servers take GRE and GUE too.
pub const DECAP_ARGS: &str = "--gre --gue-port 6080";
/// What differs between the IPv4 and the IPv6 runs.
pub struct Family<'a> {
    /// The TCP service, as `-t` takes it.
    pub svc: String,
    /// The real servers, as `-r` takes them.
    pub rips: Vec<String>,
    /// The decapsulators' log name in the lab's state directory:
    /// `rsN-{decap}.log`.
    pub decap: &'a str,
    /// Moves bytes through the service, checked; returns a real server
    /// whose decapsulator saw them.
    pub transfer: &'a dyn Fn(&Lab, &str, u64) -> String,
    /// dirigo's address on the servers' LAN (the outer source).
    pub dirigo_lan: &'a str,
    /// The real servers' addresses start so.
    pub rip_prefix: &'a str,
    /// The client and the VIP (the inner source and destination).
    pub client: &'a str,
    pub vip: &'a str,
}

impl Family<'static> {
    /// The TUN lab's IPv4 service VIP:80 over rs1..rs3: 1 MiB up and 256
    /// KiB down; the upload's server.
    pub fn ipv4() -> Family<'static> {
        Family {
            svc: format!("{VIP}:80"),
            rips: (1..=3).map(rip).collect(),
            decap: "decap",
            transfer: &|lab, tag, seed| {
                let up = upload(lab, 1 << 20, seed, tag);
                download(lab, 256 << 10, tag);
                up
            },
            dirigo_lan: "10.98.0.1",
            rip_prefix: "10.98.0.1",
            client: CLIENT,
            vip: VIP,
        }
    }
}

/// One tunnel set-up: its name, `dirigoadm -e`'s tunnel options, the kind
/// the decapsulator logs for its packets.
struct Variant {
    name: &'static str,
    opts: &'static [&'static str],
    kind: &'static str,
}

const VARIANTS: &[Variant] = &[
    Variant {
        name: "gre",
        opts: &["--tun-type", "gre"],
        kind: "gre",
    },
    Variant {
        name: "gre-csum",
        opts: &["--tun-type", "gre", "--tun-csum"],
        kind: "gre+csum",
    },
    Variant {
        name: "gue",
        opts: &["--tun-type", "gue", "--tun-port", "6080"],
        kind: "gue",
    },
    Variant {
        name: "gue-csum",
        opts: &["--tun-type", "gue", "--tun-port", "6080", "--tun-csum"],
        kind: "gue+udpcsum",
    },
    // as Linux for a forwarded packet: a UDP checksum and no option (the
    // decapsulator refuses the option, so no drop proves there was none)
    Variant {
        name: "gue-remcsum",
        opts: &["--tun-type", "gue", "--tun-port", "6080", "--tun-remcsum"],
        kind: "gue+udpcsum",
    },
];

fn decap_log(lab: &Lab, fam: &Family, rs: &str) -> PathBuf {
    lab.state_dir().join(format!("{rs}-{}.log", fam.decap))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Switch the family's real servers of its TCP service to TUN with `opts`.
fn set_tunnel(lab: &Lab, fam: &Family, opts: &[&str]) {
    for r in &fam.rips {
        let mut a = vec!["-e", "-t", &fam.svc, "-r", r, "-i", "-w", "1"];
        a.extend_from_slice(opts);
        lab.adm(&a);
    }
}

/// Each variant in turn: every real server switched, bytes through the
/// service byte-exact ([`Family::transfer`]), the decapsulator of a server
/// that took them saw the variant's kind and none dropped anything; `-L
/// --tun-info` lists the tunnel. Then back to IPIP. The capture is checked
/// at the end. `ipip` is how the listing names the family's default
/// tunnel, the other services' servers included.
pub fn gue_and_gre(lab: &Lab, fam: &Family, ipip: usize) {
    let t0 = Instant::now();
    let cap = Capture::start(lab, fam);
    let logs: Vec<PathBuf> = (1..=3)
        .map(|n| decap_log(lab, fam, &format!("rs{n}")))
        .collect();
    for (i, v) in VARIANTS.iter().enumerate() {
        let before: Vec<usize> = logs.iter().map(|l| read(l).len()).collect();
        set_tunnel(lab, fam, v.opts);
        let info = lab.adm(&["-L", "-n", "--tun-info"]);
        let want = match v.name {
            "gre" => "gre:-c",
            "gre-csum" => "gre:+c",
            "gue" => "gue:6080:-c",
            "gue-csum" => "gue:6080:+c",
            _ => "gue:6080:r+c",
        };
        assert_eq!(
            info.matches(want).count(),
            3,
            "{}: -L --tun-info: {info}",
            v.name
        );
        let up = (fam.transfer)(lab, &format!("tun-{}", v.name), 50 + i as u64);
        let log = read(&decap_log(lab, fam, &up));
        assert!(
            log.contains(&format!("first kind {} ", v.kind)),
            "{}: {up}'s decapsulator never saw {}:\n{log}",
            v.name,
            v.kind
        );
        for (l, b) in logs.iter().zip(before) {
            let new = read(l);
            let new = new.get(b..).unwrap_or("");
            assert!(
                !new.contains("drop:"),
                "{}: {} dropped packets:\n{new}",
                v.name,
                l.display()
            );
        }
        eprintln!("tun types: {} ok ({up} took the upload)", v.name);
    }
    set_tunnel(lab, fam, &[]);
    let info = lab.adm(&["-L", "-n", "--tun-info"]);
    assert_eq!(info.matches("ipip").count(), ipip, "back to ipip: {info}");
    let file = cap.stop();
    check_gre(&file, fam);
    check_capture(&file, fam);
    eprintln!(
        "tun types: gre and gue checked in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

/// dumpcap on the servers' bridge, GRE and UDP to the GUE port.
struct Capture {
    child: Child,
    file: PathBuf,
}

impl Capture {
    fn start(lab: &Lab, fam: &Family) -> Capture {
        let file = lab.dir.join(format!("tun-types-{}.pcapng", fam.decap));
        let _ = std::fs::remove_file(&file);
        let filter = format!("ip proto 47 or ip6 proto 47 or (udp dst port {GUE_PORT})");
        let ns = format!("{}-srv", lab.prefix);
        let mut child = Command::new("ip")
            .args(["netns", "exec", &ns, "dumpcap", "-q", "-i", "br0", "-f"])
            .arg(&filter)
            .arg("-w")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("dumpcap");
        // dumpcap says "Capturing on 'br0'" once it listens
        let mut err = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut seen = String::new();
            let mut b = [0u8; 256];
            while let Ok(n) = err.read(&mut b) {
                if n == 0 {
                    break;
                }
                seen.push_str(&String::from_utf8_lossy(&b[..n]));
                if seen.contains("Capturing on") {
                    let _ = tx.send(seen.clone());
                }
            }
            let _ = tx.send(seen);
        });
        let said = rx.recv_timeout(Duration::from_secs(15)).unwrap_or_default();
        assert!(said.contains("Capturing on"), "dumpcap: {said}");
        Capture { child, file }
    }

    fn stop(mut self) -> PathBuf {
        std::thread::sleep(Duration::from_millis(300));
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        self.file
    }
}

/// tshark's GRE dissector on the capture: version 0, IPv4 inside, no key
/// or sequence number; the packets with the C bit have a good checksum,
/// and there are packets with and without it.
fn check_gre(file: &Path, fam: &Family) {
    let v6 = fam.vip.contains(':');
    let (dst_field, ptype) = if v6 {
        ("ipv6.dst", "0x86dd")
    } else {
        ("ip.dst", "0x0800")
    };
    let o = Command::new("tshark")
        .arg("-r")
        .arg(file)
        .args(["-Y", "gre", "-T", "fields", "-E", "separator=|"])
        .args(["-e", "gre.flags_and_version", "-e", "gre.proto"])
        .args(["-e", "gre.checksum.status", "-e", dst_field])
        .output()
        .expect("tshark -r");
    assert!(o.status.success(), "tshark -r: {}", crate::common::text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for line in out.lines() {
        let f: Vec<&str> = line.split('|').collect();
        assert_eq!(f.len(), 4, "tshark line: {line}");
        let (flags, proto, status) = (f[0], f[1], f[2]);
        assert_eq!(proto, ptype, "GRE protocol type: {line}");
        let dst: Vec<&str> = f[3].split(',').collect();
        assert_eq!(dst.len(), 2, "outer and inner addresses: {line}");
        assert!(
            dst[0].starts_with(fam.rip_prefix),
            "outer to a server: {line}"
        );
        assert_eq!(dst[1], fam.vip, "inner to the VIP: {line}");
        match flags {
            "0x0000" => assert_eq!(status, "", "no checksum: {line}"),
            // 1: PROTO_CHECKSUM_E_GOOD
            "0x8000" => assert_eq!(status, "1", "GRE checksum: {line}"),
            _ => panic!("GRE flags: {line}"),
        }
        *seen.entry(flags.to_string()).or_default() += 1;
    }
    assert!(
        seen.get("0x0000").is_some_and(|n| *n > 10) && seen.get("0x8000").is_some_and(|n| *n > 10),
        "GRE with and without checksum: {seen:?}"
    );
    eprintln!("tun types: tshark decoded GRE {seen:?}");
}

fn ones_sum(data: &[u8], mut s: u32) -> u32 {
    for c in data.chunks(2) {
        s += u32::from(c[0]) << 8 | c.get(1).map_or(0, |b| u32::from(*b));
    }
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    s
}

/// Every GUE datagram byte by byte: from dirigo to a real server's port
/// [`GUE_PORT`], UDP length = the rest, checksum 0 or one that verifies
/// (the IPv4 or IPv6 pseudo header), the 4-byte GUE header `00 04 00 00`
/// or `00 29 00 00` (version 0, data, no optional fields, IPv4 or IPv6
/// inside), then the client's packet to the VIP; one UDP source port per
/// inner flow, at least six flows, with and without a checksum.
fn check_capture(file: &Path, fam: &Family) {
    use pcap_file::pcapng::{Block, PcapNgReader};
    let f = std::fs::File::open(file).expect("capture file");
    let mut r = PcapNgReader::new(f).expect("pcapng");
    let (mut zero, mut summed) = (0usize, 0usize);
    let mut sport_of: BTreeMap<(IpAddr, u16), BTreeSet<u16>> = BTreeMap::new();
    let v6 = fam.vip.contains(':');
    while let Some(b) = r.next_block() {
        let data = match b.expect("pcapng block") {
            Block::EnhancedPacket(p) => p.data.into_owned(),
            _ => continue,
        };
        let p = SlicedPacket::from_ethernet(&data).expect("ethernet frame");
        // (outer source, destination, pseudo header less the length, payload)
        let (src, dst, pseudo, ip_payload): (IpAddr, IpAddr, Vec<u8>, &[u8]) = match &p.net {
            Some(NetSlice::Ipv4(ip)) => {
                let h = ip.header();
                let mut ps = Vec::new();
                ps.extend_from_slice(&h.source());
                ps.extend_from_slice(&h.destination());
                let a = (h.source_addr().into(), h.destination_addr().into());
                (a.0, a.1, ps, ip.payload().payload)
            }
            Some(NetSlice::Ipv6(ip)) => {
                let h = ip.header();
                let mut ps = Vec::new();
                ps.extend_from_slice(&h.source());
                ps.extend_from_slice(&h.destination());
                let a = (h.source_addr().into(), h.destination_addr().into());
                (a.0, a.1, ps, ip.payload().payload)
            }
            _ => panic!("not IP"),
        };
        let Some(TransportSlice::Udp(udp)) = &p.transport else {
            continue; // GRE: tshark's
        };
        if src.is_ipv6() != v6 {
            continue; // the other family's run
        }
        assert_eq!(src.to_string(), fam.dirigo_lan);
        assert!(dst.to_string().starts_with(fam.rip_prefix), "{dst}");
        assert_eq!(udp.destination_port(), GUE_PORT);
        assert_eq!(usize::from(udp.length()), ip_payload.len(), "UDP length");
        if udp.checksum() == 0 {
            zero += 1;
        } else {
            let mut ps = pseudo;
            if v6 {
                ps.extend_from_slice(&u32::from(udp.length()).to_be_bytes());
                ps.extend_from_slice(&[0, 0, 0, 17]);
            } else {
                ps.extend_from_slice(&[0, 17]);
                ps.extend_from_slice(&udp.length().to_be_bytes());
            }
            let sum = ones_sum(ip_payload, ones_sum(&ps, 0));
            assert_eq!(sum, 0xffff, "UDP checksum");
            summed += 1;
        }
        let gue = &ip_payload[8..];
        assert!(gue.len() >= 44, "GUE and an inner header: {gue:02x?}");
        let (proto, inner) = (if v6 { 41 } else { 4 }, &gue[4..]);
        assert_eq!(gue[..4], [0, proto, 0, 0], "GUE header");
        let (isrc, idst, next, ihl, len): (IpAddr, IpAddr, u8, usize, usize) = if v6 {
            let a = |o: usize| IpAddr::from(<[u8; 16]>::try_from(&inner[o..o + 16]).unwrap());
            let plen = usize::from(u16::from_be_bytes([inner[4], inner[5]]));
            (a(8), a(24), inner[6], 40, 40 + plen)
        } else {
            let a = |o: usize| IpAddr::from(<[u8; 4]>::try_from(&inner[o..o + 4]).unwrap());
            let tot = usize::from(u16::from_be_bytes([inner[2], inner[3]]));
            (a(12), a(16), inner[9], usize::from(inner[0] & 15) * 4, tot)
        };
        assert_eq!(inner[0] >> 4, if v6 { 6 } else { 4 }, "inner version");
        assert_eq!(len, inner.len(), "inner length");
        assert_eq!(isrc.to_string(), fam.client);
        assert_eq!(idst.to_string(), fam.vip);
        assert_eq!(next, 6, "TCP inside");
        let cport = u16::from_be_bytes([inner[ihl], inner[ihl + 1]]);
        sport_of
            .entry((dst, cport))
            .or_default()
            .insert(udp.source_port());
    }
    assert!(
        zero > 10 && summed > 10,
        "GUE without {zero} / with {summed} checksum"
    );
    for (flow, ports) in &sport_of {
        assert_eq!(
            ports.len(),
            1,
            "one UDP source port for flow {flow:?}: {ports:?}"
        );
    }
    assert!(sport_of.len() >= 6, "GUE flows: {sport_of:?}");
    eprintln!(
        "tun types: {} GUE datagrams checked ({zero} without a checksum), {} flows",
        zero + summed,
        sport_of.len()
    );
}
