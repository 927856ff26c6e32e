//! Packet generators for the benchmark: 64-byte TCP frames written to pcap.

use dirigo::net::checksum;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Addresses the generated traffic uses (match the bench config).
pub const CLIENT_NET: u32 = 0x0a00_0000; // 10.0.0.0/8 sources, varied per flow
/// The VIP.
pub const VIP: u32 = 0xc0a8_6464; // 192.168.100.100
/// Service port.
pub const VPORT: u16 = 80;
/// MAC of dirigo's wan port as written into frames: the first net_pcap
/// device's fixed MAC (dirigo drops frames for other MACs).
pub const DST_MAC: [u8; 6] = [0x02, 0x70, 0x63, 0x61, 0x70, 0x00];
/// Client-side router MAC.
pub const SRC_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];

/// The client address and port of flow `i` (distinct for every i < 2^28).
pub fn flow(i: u32) -> (u32, u16) {
    let src = CLIENT_NET | ((i & 0xffff) + 1);
    let sport = 1024 + (i >> 16) as u16;
    (src, sport)
}

/// One 60-byte Ethernet/IPv4/TCP frame (64 on the wire with FCS).
pub fn tcp_frame(src: u32, sport: u16, flags: u8, id: u16) -> [u8; 60] {
    let mut f = [0u8; 60];
    f[0..6].copy_from_slice(&DST_MAC);
    f[6..12].copy_from_slice(&SRC_MAC);
    f[12] = 0x08;
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&40u16.to_be_bytes());
    ip[4..6].copy_from_slice(&id.to_be_bytes());
    ip[6] = 0x40; // DF
    ip[8] = 64;
    ip[9] = 6;
    ip[12..16].copy_from_slice(&src.to_be_bytes());
    ip[16..20].copy_from_slice(&VIP.to_be_bytes());
    let c = checksum::checksum(ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let tcp = &mut f[34..54];
    tcp[0..2].copy_from_slice(&sport.to_be_bytes());
    tcp[2..4].copy_from_slice(&VPORT.to_be_bytes());
    tcp[4..8].copy_from_slice(&1000u32.to_be_bytes());
    tcp[12] = 0x50;
    tcp[13] = flags;
    tcp[14..16].copy_from_slice(&65535u16.to_be_bytes());
    let s = checksum::sum(tcp, checksum::pseudo_header_sum(src, VIP, 6, 20));
    let c = !checksum::fold(s);
    tcp[16..18].copy_from_slice(&c.to_be_bytes());
    f
}

/// Write a pcap: for established traffic, one SYN per flow then one ACK per
/// flow (replayed forever, every packet after the first pass hits an
/// existing connection); for new connections, one SYN per flow.
pub fn write_pcap(path: &Path, flows: u32, syn_only: bool) -> std::io::Result<u64> {
    let f = std::fs::File::create(path)?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    // pcap global header, microsecond resolution, Ethernet
    w.write_all(&0xa1b2_c3d4u32.to_le_bytes())?;
    w.write_all(&2u16.to_le_bytes())?;
    w.write_all(&4u16.to_le_bytes())?;
    w.write_all(&0i32.to_le_bytes())?;
    w.write_all(&0u32.to_le_bytes())?;
    w.write_all(&65535u32.to_le_bytes())?;
    w.write_all(&1u32.to_le_bytes())?;
    let mut n = 0u64;
    let passes: &[u8] = if syn_only { &[0x02] } else { &[0x02, 0x10] };
    for &flags in passes {
        for i in 0..flows {
            let (src, sport) = flow(i);
            let fr = tcp_frame(src, sport, flags, i as u16);
            // one packet per microsecond; ts_usec must stay below 10^6
            w.write_all(&((n / 1_000_000) as u32).to_le_bytes())?;
            w.write_all(&((n % 1_000_000) as u32).to_le_bytes())?;
            w.write_all(&(fr.len() as u32).to_le_bytes())?;
            w.write_all(&(fr.len() as u32).to_le_bytes())?;
            w.write_all(&fr)?;
            n += 1;
        }
    }
    w.flush()?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..1_000_000 {
            assert!(seen.insert(flow(i)), "flow {i} repeats");
        }
    }

    #[test]
    fn pcap_holds_syns_then_acks_with_valid_checksums() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.pcap");
        assert_eq!(write_pcap(&p, 3, false).unwrap(), 6);
        let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(&p).unwrap()).unwrap();
        let mut seen = Vec::new();
        while let Some(pkt) = r.next_packet() {
            let pkt = pkt.unwrap();
            assert_eq!(pkt.data.len(), 60);
            let sp = etherparse::SlicedPacket::from_ethernet(&pkt.data).unwrap();
            let Some(etherparse::NetSlice::Ipv4(ip)) = &sp.net else {
                panic!("not IPv4")
            };
            assert_eq!(ip.header().destination(), [192, 168, 100, 100]);
            let Some(etherparse::TransportSlice::Tcp(t)) = &sp.transport else {
                panic!("not TCP")
            };
            assert_eq!(t.destination_port(), 80);
            let src = ip.header().source();
            let want = t
                .to_header()
                .calc_checksum_ipv4_raw(src, [192, 168, 100, 100], t.payload())
                .unwrap();
            assert_eq!(t.checksum(), want);
            seen.push((src, t.source_port(), t.syn(), t.ack()));
        }
        let flows: Vec<_> = (0..3)
            .map(|i| {
                let (a, p) = flow(i);
                (a.to_be_bytes(), p)
            })
            .collect();
        for (i, s) in seen.iter().enumerate() {
            assert_eq!((s.0, s.1), flows[i % 3]);
            assert_eq!((s.2, s.3), (i < 3, i >= 3), "packet {i}");
        }
        assert_eq!(write_pcap(&p, 4, true).unwrap(), 4);
    }

    #[test]
    fn frame_checksums() {
        let f = tcp_frame(0x0a01_0203, 4000, 0x02, 7);
        assert_eq!(checksum::checksum(&f[14..34]), 0);
        let s = checksum::sum(
            &f[34..54],
            checksum::pseudo_header_sum(0x0a01_0203, VIP, 6, 20),
        );
        assert_eq!(checksum::fold(s), 0xffff);
    }
}
