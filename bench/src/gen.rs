//! Packet generators for the benchmark: 64-byte IPv4 TCP frames (78 on
//! the wire for IPv6) written to pcap.

use dirigo_core::net::meta::PROTO_TCP;
use dirigo_core::net::wire::{ethernet, ipv4, ipv6, tcp};
use std::io::{BufWriter, Write};
use std::path::Path;

/// Addresses the generated traffic uses (match the bench config).
pub const CLIENT_NET: u32 = 0x0a00_0000; // 10.0.0.0/8 sources, varied per flow
/// The VIP.
pub const VIP: u32 = 0xc0a8_6464; // 192.168.100.100
/// Service port.
pub const VPORT: u16 = 80;
/// dirigo's own address on the wan port (the bench config's `wan`
/// address): the exception scenario's own-address packets go there.
pub const OWN_ADDR: u32 = 0xc0a8_6401; // 192.168.100.1
/// The TCP port of the own-address packets (sshd's: not a service).
pub const OWN_PORT: u16 = 22;
/// In the exception pcap every `OWN_EVERY`-th packet is for [`OWN_ADDR`].
pub const OWN_EVERY: u32 = 10;
/// MAC of dirigo's wan port as written into frames: the first net_pcap
/// device's fixed MAC (dirigo drops frames for other MACs).
pub const DST_MAC: [u8; 6] = [0x02, 0x70, 0x63, 0x61, 0x70, 0x00];
/// Client-side router MAC.
pub const SRC_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];

/// The IPv6 scenarios' addresses (match the bench config's IPv6 part):
/// clients 2001:db8:a::/64, varied per flow like [`flow`]'s.
pub const CLIENT_NET6: u128 = 0x2001_0db8_000a_0000_0000_0000_0000_0000;
/// The IPv6 VIP (its service port is [`VPORT`]).
pub const VIP6: u128 = 0x2001_0db8_0064_0000_0000_0000_0000_0100;
/// dirigo's IPv6 address on the wan port (/64).
pub const OWN_ADDR6: u128 = 0x2001_0db8_0064_0000_0000_0000_0000_0001;
/// The wan side's IPv6 gateway.
pub const GW6: u128 = 0x2001_0db8_0064_0000_0000_0000_0000_00fe;
/// The lan network of the IPv6 real servers (/64): dirigo is `::1`, real
/// server `i` is `::11 + i` ([`rs_addr6`]).
pub const LAN_NET6: u128 = 0x2001_0db8_0010_0000_0000_0000_0000_0000;

/// IPv6 real server `i` (0-based): the lan /64's `::11 + i`.
pub fn rs_addr6(i: u8) -> u128 {
    LAN_NET6 | (0x11 + i as u128)
}

/// The client of IPv6 flow `i`: [`flow`]'s host part and port in
/// [`CLIENT_NET6`].
pub fn flow6(i: u32) -> (u128, u16) {
    let (src, sport) = flow(i);
    (CLIENT_NET6 | (src & 0x00ff_ffff) as u128, sport)
}

/// One 74-byte Ethernet/IPv6/TCP frame (78 on the wire) from `src:sport`
/// to the IPv6 VIP's service port.
pub fn tcp6_frame(src: u128, sport: u16, flags: u8) -> [u8; 74] {
    const L3: usize = ethernet::HEADER_LEN;
    const L4: usize = L3 + ipv6::HEADER_LEN;
    const END: usize = L4 + tcp::MIN_HEADER_LEN;
    let mut f = [0u8; END];
    let mut eth = ethernet::Frame::new_unchecked(&mut f[..]);
    eth.set_dst(DST_MAC);
    eth.set_src(SRC_MAC);
    eth.set_outer_ethertype(ethernet::ethertype::IPV6);
    ipv6::Repr {
        src,
        dst: VIP6,
        next_header: PROTO_TCP,
        payload_len: tcp::MIN_HEADER_LEN as u16,
        hop_limit: 64,
        traffic_class: 0,
        flow_label: 0,
    }
    .emit(&mut ipv6::Packet::new_unchecked(&mut f[L3..END]));
    let mut tcp = tcp::Packet::new_unchecked(&mut f[L4..END]);
    tcp.set_src_port(sport);
    tcp.set_dst_port(VPORT);
    tcp.set_seq_number(1000);
    tcp.set_header_len(tcp::MIN_HEADER_LEN);
    tcp.set_flags(flags);
    tcp.set_window(65535);
    tcp.fill_checksum_v6(src, VIP6);
    f
}

/// The established pcap of [`write_pcap`] in IPv6: one SYN per flow, then
/// one ACK per flow, to [`VIP6`].
pub fn write_pcap6(path: &Path, flows: u32) -> std::io::Result<u64> {
    let mut w = pcap_writer(path)?;
    let mut n = 0u64;
    for flags in [0x02, 0x10] {
        for i in 0..flows {
            let (src, sport) = flow6(i);
            put(&mut w, &mut n, &tcp6_frame(src, sport, flags))?;
        }
    }
    w.flush()?;
    Ok(n)
}

/// A pcap file with its global header written (microsecond resolution,
/// Ethernet).
fn pcap_writer(path: &Path) -> std::io::Result<BufWriter<std::fs::File>> {
    let f = std::fs::File::create(path)?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    w.write_all(&0xa1b2_c3d4u32.to_le_bytes())?;
    w.write_all(&2u16.to_le_bytes())?;
    w.write_all(&4u16.to_le_bytes())?;
    w.write_all(&0i32.to_le_bytes())?;
    w.write_all(&0u32.to_le_bytes())?;
    w.write_all(&65535u32.to_le_bytes())?;
    w.write_all(&1u32.to_le_bytes())?;
    Ok(w)
}

/// Packet `*n` of a pcap: one per microsecond (`ts_usec` stays below
/// 10^6).
fn put(w: &mut impl Write, n: &mut u64, fr: &[u8]) -> std::io::Result<()> {
    w.write_all(&((*n / 1_000_000) as u32).to_le_bytes())?;
    w.write_all(&((*n % 1_000_000) as u32).to_le_bytes())?;
    w.write_all(&(fr.len() as u32).to_le_bytes())?;
    w.write_all(&(fr.len() as u32).to_le_bytes())?;
    w.write_all(fr)?;
    *n += 1;
    Ok(())
}

/// The client address and port of flow `i` (distinct for every i < 2^28).
pub fn flow(i: u32) -> (u32, u16) {
    let src = CLIENT_NET | ((i & 0xffff) + 1);
    let sport = 1024 + (i >> 16) as u16;
    (src, sport)
}

/// One 60-byte Ethernet/IPv4/TCP frame (64 on the wire with FCS) to the
/// VIP's service port.
pub fn tcp_frame(src: u32, sport: u16, flags: u8, id: u16) -> [u8; 60] {
    tcp_frame_to(src, sport, VIP, VPORT, flags, id)
}

/// One 60-byte Ethernet/IPv4/TCP frame to `dst:dport`.
pub fn tcp_frame_to(src: u32, sport: u16, dst: u32, dport: u16, flags: u8, id: u16) -> [u8; 60] {
    const L3: usize = ethernet::HEADER_LEN;
    const L4: usize = L3 + ipv4::MIN_HEADER_LEN;
    const END: usize = L4 + tcp::MIN_HEADER_LEN;
    let mut f = [0u8; 60];
    let mut eth = ethernet::Frame::new_unchecked(&mut f[..]);
    eth.set_dst(DST_MAC);
    eth.set_src(SRC_MAC);
    eth.set_outer_ethertype(ethernet::ethertype::IPV4);
    ipv4::Repr {
        src,
        dst,
        protocol: PROTO_TCP,
        payload_len: tcp::MIN_HEADER_LEN as u16,
        ttl: 64,
        dscp_ecn: 0,
        ident: id,
        dont_frag: true,
    }
    .emit(&mut ipv4::Packet::new_unchecked(&mut f[L3..END]));
    let mut tcp = tcp::Packet::new_unchecked(&mut f[L4..END]);
    tcp.set_src_port(sport);
    tcp.set_dst_port(dport);
    tcp.set_seq_number(1000);
    tcp.set_header_len(tcp::MIN_HEADER_LEN);
    tcp.set_flags(flags);
    tcp.set_window(65535);
    tcp.fill_checksum(src, dst);
    f
}

/// Write a pcap: for established traffic, one SYN per flow then one ACK per
/// flow (replayed forever, every packet after the first pass hits an
/// existing connection); for new connections, one SYN per flow.
pub fn write_pcap(path: &Path, flows: u32, syn_only: bool) -> std::io::Result<u64> {
    write(path, flows, syn_only, false)
}

/// The established pcap of [`write_pcap`] with every [`OWN_EVERY`]-th
/// packet of both passes (flows `i % OWN_EVERY == OWN_EVERY - 1`) replaced
/// by a TCP SYN from that flow's client address and port to dirigo's own
/// address, port [`OWN_PORT`]: traffic for the exception path (those flows
/// never reach the VIP).
pub fn write_pcap_own(path: &Path, flows: u32) -> std::io::Result<u64> {
    write(path, flows, false, true)
}

/// The established traffic of `flows` flows in a pcap of `packets` packets
/// (at least one per flow): one SYN per flow, then ACKs of flow `i %
/// flows` up to `packets`. As large as [`write_pcap`]'s pcap of
/// `packets / 2` flows, so net_pcap's copy misses as much, while the
/// connection table stays in cache: what the table costs at that size is
/// the difference between the two.
pub fn write_pcap_spread(path: &Path, flows: u32, packets: u64) -> std::io::Result<u64> {
    let flows = flows.max(1);
    let mut w = pcap_writer(path)?;
    let mut n = 0u64;
    for i in 0..flows {
        let (src, sport) = flow(i);
        put(&mut w, &mut n, &tcp_frame(src, sport, 0x02, i as u16))?;
    }
    let mut i = 0u32;
    while n < packets {
        let (src, sport) = flow(i);
        let fr = tcp_frame(src, sport, 0x10, n as u16);
        put(&mut w, &mut n, &fr)?;
        i = if i + 1 == flows { 0 } else { i + 1 };
    }
    w.flush()?;
    Ok(n)
}

fn write(path: &Path, flows: u32, syn_only: bool, own: bool) -> std::io::Result<u64> {
    let mut w = pcap_writer(path)?;
    let mut n = 0u64;
    let passes: &[u8] = if syn_only { &[0x02] } else { &[0x02, 0x10] };
    for &flags in passes {
        for i in 0..flows {
            let (src, sport) = flow(i);
            let fr = if own && i % OWN_EVERY == OWN_EVERY - 1 {
                tcp_frame_to(src, sport, OWN_ADDR, OWN_PORT, 0x02, i as u16)
            } else {
                tcp_frame(src, sport, flags, i as u16)
            };
            put(&mut w, &mut n, &fr)?;
        }
    }
    w.flush()?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dirigo_core::net::checksum;

    #[test]
    fn flows_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..1_000_000 {
            assert!(seen.insert(flow(i)), "flow {i} repeats");
        }
    }

    /// A generated IPv4 TCP frame as etherparse reads it.
    #[derive(Debug)]
    struct Tcp4 {
        src: [u8; 4],
        dst: [u8; 4],
        sport: u16,
        dport: u16,
        syn: bool,
        ack: bool,
    }

    /// Every frame of the IPv4 pcap at `p`: 60 bytes to dirigo's wan MAC,
    /// IPv4 and TCP with valid checksums (checked independently).
    fn read_tcp4(p: &Path) -> Vec<Tcp4> {
        let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(p).unwrap()).unwrap();
        let mut v = Vec::new();
        while let Some(pkt) = r.next_packet() {
            let pkt = pkt.unwrap();
            let n = v.len();
            assert_eq!(pkt.data.len(), 60, "packet {n}");
            assert_eq!(pkt.data[..6], DST_MAC, "packet {n}");
            assert_eq!(
                checksum::checksum(&pkt.data[14..34]),
                0,
                "packet {n}: IP checksum"
            );
            let sp = etherparse::SlicedPacket::from_ethernet(&pkt.data).unwrap();
            let Some(etherparse::NetSlice::Ipv4(ip)) = &sp.net else {
                panic!("packet {n}: not IPv4")
            };
            let Some(etherparse::TransportSlice::Tcp(t)) = &sp.transport else {
                panic!("packet {n}: not TCP")
            };
            let (src, dst) = (ip.header().source(), ip.header().destination());
            let want = t
                .to_header()
                .calc_checksum_ipv4_raw(src, dst, t.payload())
                .unwrap();
            assert_eq!(t.checksum(), want, "packet {n}: TCP checksum");
            v.push(Tcp4 {
                src,
                dst,
                sport: t.source_port(),
                dport: t.destination_port(),
                syn: t.syn(),
                ack: t.ack(),
            });
        }
        v
    }

    /// Flow `i`'s client as etherparse gives it.
    fn client(i: u32) -> ([u8; 4], u16) {
        let (a, p) = flow(i);
        (a.to_be_bytes(), p)
    }

    #[test]
    fn pcap_holds_syns_then_acks_with_valid_checksums() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.pcap");
        assert_eq!(write_pcap(&p, 3, false).unwrap(), 6);
        let seen = read_tcp4(&p);
        assert_eq!(seen.len(), 6);
        for (i, s) in seen.iter().enumerate() {
            assert_eq!((s.dst, s.dport), ([192, 168, 100, 100], 80), "packet {i}");
            assert_eq!((s.src, s.sport), client(i as u32 % 3), "packet {i}");
            assert_eq!((s.syn, s.ack), (i < 3, i >= 3), "packet {i}");
        }
        assert_eq!(write_pcap(&p, 4, true).unwrap(), 4);
    }

    #[test]
    fn spread_pcap_repeats_few_flows_over_many_packets() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("spread.pcap");
        assert_eq!(write_pcap_spread(&p, 3, 11).unwrap(), 11);
        let seen = read_tcp4(&p);
        assert_eq!(seen.len(), 11);
        for (i, s) in seen.iter().enumerate() {
            assert_eq!((s.dst, s.dport), ([192, 168, 100, 100], 80), "packet {i}");
            assert_eq!((s.src, s.sport), client(i as u32 % 3), "packet {i}");
            assert_eq!((s.syn, s.ack), (i < 3, i >= 3), "packet {i}");
        }
        // never fewer packets than one SYN per flow
        assert_eq!(write_pcap_spread(&p, 5, 2).unwrap(), 5);
    }

    #[test]
    fn own_address_pcap_has_one_packet_in_ten_for_dirigo() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("own.pcap");
        let flows = 1000;
        assert_eq!(write_pcap_own(&p, flows).unwrap(), 2 * flows as u64);
        let seen = read_tcp4(&p);
        assert_eq!(seen.len(), 2000);
        let mut own = 0;
        for (n, s) in seen.iter().enumerate() {
            let i = n as u32 % flows;
            assert_eq!((s.src, s.sport), client(i), "packet {n}");
            if i % OWN_EVERY == OWN_EVERY - 1 {
                assert_eq!((s.dst, s.dport), ([192, 168, 100, 1], 22), "packet {n}");
                assert!(s.syn && !s.ack, "packet {n}: a SYN");
                own += 1;
            } else {
                assert_eq!((s.dst, s.dport), ([192, 168, 100, 100], 80), "packet {n}");
                assert_eq!((s.syn, s.ack), (n < 1000, n >= 1000), "packet {n}");
            }
        }
        assert_eq!(own, seen.len() / 10, "10% for dirigo's own address");
    }

    #[test]
    fn ipv6_pcap_holds_syns_then_acks_to_the_vip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t6.pcap");
        assert_eq!(write_pcap6(&p, 3).unwrap(), 6);
        let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(&p).unwrap()).unwrap();
        let mut n = 0;
        while let Some(pkt) = r.next_packet() {
            let pkt = pkt.unwrap();
            assert_eq!(pkt.data.len(), 74);
            assert_eq!(pkt.data[..6], DST_MAC);
            let sp = etherparse::SlicedPacket::from_ethernet(&pkt.data).unwrap();
            let Some(etherparse::NetSlice::Ipv6(ip)) = &sp.net else {
                panic!("not IPv6")
            };
            let (src, dst) = (ip.header().source(), ip.header().destination());
            assert_eq!(u128::from_be_bytes(dst), VIP6);
            assert_eq!(ip.header().hop_limit(), 64);
            let Some(etherparse::TransportSlice::Tcp(t)) = &sp.transport else {
                panic!("not TCP")
            };
            let want = t
                .to_header()
                .calc_checksum_ipv6_raw(src, dst, t.payload())
                .unwrap();
            assert_eq!(t.checksum(), want, "packet {n}: TCP checksum");
            let (a, sport) = flow6(n % 3);
            assert_eq!((u128::from_be_bytes(src), t.source_port()), (a, sport));
            assert_eq!(t.destination_port(), VPORT);
            assert_eq!((t.syn(), t.ack()), (n < 3, n >= 3), "packet {n}");
            n += 1;
        }
        assert_eq!(n, 6);
        // the classifier takes them as IPv6 TCP to the VIP
        let f = tcp6_frame(flow6(0).0, flow6(0).1, 0x10);
        match dirigo_core::net::classify::classify(&f, 0) {
            dirigo_core::net::classify::Classified::Ipv6(m) => {
                assert_eq!((m.key.dst, m.key.dport, m.key.proto), (VIP6, VPORT, 6));
                assert_eq!(m.key.src, flow6(0).0);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ipv6_flows_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..1_000_000 {
            assert!(seen.insert(flow6(i)), "flow {i} repeats");
        }
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

    #[test]
    fn frame_bytes() {
        // 10.1.2.3:4000 -> VIP:80, SYN, IP ID 7 (checksums computed
        // independently)
        const SYN: [u8; 60] = [
            0x02, 0x70, 0x63, 0x61, 0x70, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, //
            0x08, 0x00, 0x45, 0x00, 0x00, 0x28, 0x00, 0x07, 0x40, 0x00, 0x40, 0x06, //
            0x09, 0xb9, 0x0a, 0x01, 0x02, 0x03, 0xc0, 0xa8, 0x64, 0x64, 0x0f, 0xa0, //
            0x00, 0x50, 0x00, 0x00, 0x03, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x50, 0x02, //
            0xff, 0xff, 0x6a, 0xfa, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ];
        assert_eq!(tcp_frame(0x0a01_0203, 4000, 0x02, 7), SYN);
    }
}
