//! The SYN proxy's micro-benchmark (sans-IO, like `micro`): what a SYN
//! flood costs (SYNs answered with cookies per second), connections opened
//! through the proxy per second (the client's SYN, then its ACK: cookie
//! check, scheduling, insert and the SYN to the server), and the
//! established NAT rate of proxied connections (sequence, SACK-free
//! timestamp translation) beside plain NAT on the same frames in the same
//! run. Frames carry the timestamps option, as a Linux client's do. The
//! SYN flood is measured for an IPv6 service too (the IPv6 cookie hashes
//! 128-bit addresses, the SYN/ACK gets an IPv6 header), in the same run.

use crate::gen;
use crate::micro::{rs_addr, BenchEgress, N_RS};
use dirigo_core::lb::balancer::{Balancer, BalancerConfig, BurstCtx, LbVerdict};
use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::snapshot::{LbIds, Snapshot, SnapshotBuilder};
use dirigo_core::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use dirigo_core::net::buf::{PacketBuf, VecBuf, BURST};
use dirigo_core::net::classify::{classify, Classified};
use dirigo_core::net::egress::{Egress, Egress6, NextHop6, Resolve, Resolve6};
use dirigo_core::net::meta::{tcp_flags, PacketMeta, PROTO_TCP};
use dirigo_core::net::wire::{ethernet, ipv4, ipv6, tcp, tcpopt};
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// What one run measured (millions per second).
#[derive(Clone, Copy, Debug, Default)]
pub struct SynproxyResult {
    /// Flows used (at least 16k).
    pub flows: u32,
    /// SYNs answered with a SYN/ACK cookie.
    pub syn_mpps: f64,
    /// Connections opened (SYN + ACK pairs, each ACK sending the server SYN).
    pub open_mconn: f64,
    /// Established packets of proxied connections (both directions).
    pub est_mpps: f64,
    /// The same frames through a plain NAT service.
    pub nat_mpps: f64,
    /// SYNs to an IPv6 service answered with a SYN/ACK cookie (per packet,
    /// as the pipeline's IPv6 lane calls the core).
    pub syn6_mpps: f64,
    /// The IPv4 SYNs the same way (per packet), to compare with.
    pub syn_pkt_mpps: f64,
}

/// [`BenchEgress`] with IPv6 routes: the real servers' lan /64 on port 1,
/// everything else via the gateway on port 0.
struct BenchEgress6;

impl Egress for BenchEgress6 {
    fn next_hop(&self, dst: u32) -> Resolve {
        BenchEgress.next_hop(dst)
    }
    fn on_link(&self, addr: u32) -> Option<u16> {
        BenchEgress.on_link(addr)
    }
}

impl Egress6 for BenchEgress6 {
    fn next_hop6(&self, dst: u128) -> Resolve6 {
        let lan = dst >> 64 == gen::LAN_NET6 >> 64;
        Resolve6::Ready(NextHop6 {
            port: u16::from(lan),
            src_mac: [0x02, 0, 0, 0, 0, 0x10],
            dst_mac: [0x02, 0, 0, 0, 0, if lan { dst as u8 } else { 0xfe }],
            src_ip: if lan {
                gen::LAN_NET6 | 1
            } else {
                gen::OWN_ADDR6
            },
            mtu: 1500,
        })
    }
    fn on_link6(&self, addr: u128) -> Option<u16> {
        (addr >> 64 == gen::LAN_NET6 >> 64).then_some(1)
    }
}

/// An IPv6 SYN of flow `i` to the IPv6 VIP, with the timestamps option.
fn syn6(i: u32) -> Vec<u8> {
    let (src, sport) = gen::flow6(i);
    let l3 = ethernet::HEADER_LEN;
    let l4 = l3 + ipv6::HEADER_LEN;
    let len = l4 + FRAME - ethernet::HEADER_LEN - ipv4::MIN_HEADER_LEN;
    let mut f = vec![0u8; len];
    let mut eth = ethernet::Frame::new_unchecked(&mut f[..]);
    eth.set_dst(gen::DST_MAC);
    eth.set_src(gen::SRC_MAC);
    eth.set_outer_ethertype(ethernet::ethertype::IPV6);
    ipv6::Repr {
        src,
        dst: gen::VIP6,
        next_header: PROTO_TCP,
        payload_len: (len - l4) as u16,
        hop_limit: 64,
        traffic_class: 0,
        flow_label: 0,
    }
    .emit(&mut ipv6::Packet::new_unchecked(&mut f[l3..]));
    let _ = tcpopt::emit_ts(&mut f[l4 + tcp::MIN_HEADER_LEN..], 77, 0);
    let mut t = tcp::Packet::new_unchecked(&mut f[l4..]);
    t.set_src_port(sport);
    t.set_dst_port(gen::VPORT);
    t.set_seq_number(1000);
    t.set_header_len(len - l4);
    t.set_flags(tcp_flags::SYN);
    t.set_window(502);
    t.fill_checksum_v6(src, gen::VIP6);
    f
}

/// A worker with an IPv6 `--synproxy` NAT service, and its snapshot.
fn worker6(capacity: u32) -> (Balancer, Snapshot) {
    let mut ids = LbIds::new(16, 64);
    let spec = ServiceSpec {
        members: Vec::new(),
        local_addresses: Vec::new(),
        key: ServiceKey {
            fwmark: 0,
            proto: Proto::Tcp,
            vip: std::net::IpAddr::V6(gen::VIP6.into()),
            port: gen::VPORT,
        },
        sched: SchedKind::Wlc,
        flags: SchedFlags::default(),
        persistent: None,
        netmask: Ipv4Addr::BROADCAST,
        prefix6: 128,
        synproxy: true,
        ops: false,
        client_address: Default::default(),
    };
    let dests = (0..N_RS)
        .map(|i| DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V6(gen::rs_addr6(i).into()),
                port: gen::VPORT,
            },
            method: Method::Nat,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        })
        .collect();
    let mut b = SnapshotBuilder::new();
    b.synproxy(true).service(spec, dests);
    let snap = b.build(&mut ids, 1).expect("IPv6 synproxy snapshot");
    let cfg = BalancerConfig {
        conn_capacity: capacity,
        // the IPv6 table as large as IPv4's: the SYN's lookup misses in a
        // table of the same size
        conn6_capacity: capacity,
        seed: 0x1234_5678,
        embryonic_grace_ms: 0,
        synproxy: true,
        synproxy_secret: [0x0123_4567, 0x89ab_cdef],
        ..BalancerConfig::default()
    };
    let w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
    (w, snap)
}

/// A SYN flood answered per packet (classify, then `process` or
/// `process6`, as the pipeline's IPv6 lane calls the core): `syns`
/// replayed for about `time` through `w`; SYNs answered per second
/// (millions).
fn syn_flood_pkt(
    w: &mut Balancer,
    snap: &Snapshot,
    syns: &[Vec<u8>],
    time: Duration,
    now: impl Fn() -> u64,
) -> f64 {
    let mut buf = VecBuf::with_room(&[], 128, 256);
    let start = Instant::now();
    let (mut pkts, mut sent) = (0u64, 0u64);
    while start.elapsed() < time {
        for ch in syns.chunks(BURST) {
            let at = BurstCtx::new(snap, &BenchEgress6, now());
            for f in ch {
                buf.load(f);
                let v = match classify(buf.data(), 0) {
                    Classified::Ipv6(m) => w.process6(&at, &mut buf, &m),
                    Classified::Ipv4(m) => w.process(&at, &mut buf, &m),
                    _ => LbVerdict::NotForUs,
                };
                sent += u64::from(matches!(v, LbVerdict::Tx { .. }));
                pkts += 1;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    assert!(sent * 10 >= pkts * 9, "only {sent} of {pkts} SYNs answered");
    assert_eq!(
        w.table().len() + w.table6().len(),
        0,
        "a SYN stores nothing"
    );
    pkts as f64 / secs / 1e6
}

const FRAME: usize = 66; // Ethernet + IPv4 + TCP with NOP NOP TS

/// A client → VIP (or server → client) frame with the timestamps option.
#[allow(clippy::too_many_arguments)]
fn frame(
    src: u32,
    sport: u16,
    dst: u32,
    dport: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    ts: (u32, u32),
) -> Vec<u8> {
    let l3 = ethernet::HEADER_LEN;
    let l4 = l3 + ipv4::MIN_HEADER_LEN;
    let mut f = vec![0u8; FRAME];
    let mut eth = ethernet::Frame::new_unchecked(&mut f[..]);
    eth.set_dst(gen::DST_MAC);
    eth.set_src(gen::SRC_MAC);
    eth.set_outer_ethertype(ethernet::ethertype::IPV4);
    ipv4::Repr {
        src,
        dst,
        protocol: PROTO_TCP,
        payload_len: (FRAME - l4) as u16,
        ttl: 64,
        dscp_ecn: 0,
        ident: 1,
        dont_frag: true,
    }
    .emit(&mut ipv4::Packet::new_unchecked(&mut f[l3..]));
    let _ = tcpopt::emit_ts(&mut f[l4 + tcp::MIN_HEADER_LEN..], ts.0, ts.1);
    let mut t = tcp::Packet::new_unchecked(&mut f[l4..]);
    t.set_src_port(sport);
    t.set_dst_port(dport);
    t.set_seq_number(seq);
    t.set_ack_number(ack);
    t.set_header_len(FRAME - l4);
    t.set_flags(flags);
    t.set_window(502);
    t.fill_checksum(src, dst);
    f
}

fn snapshot(ids: &mut LbIds, synproxy: bool, port: u16) -> Snapshot {
    let spec = ServiceSpec {
        members: Vec::new(),
        local_addresses: Vec::new(),
        key: ServiceKey {
            fwmark: 0,
            proto: Proto::Tcp,
            vip: std::net::IpAddr::V4(Ipv4Addr::from(gen::VIP)),
            port,
        },
        sched: SchedKind::Wlc,
        flags: SchedFlags::default(),
        persistent: None,
        netmask: Ipv4Addr::BROADCAST,
        prefix6: 128,
        synproxy,
        ops: false,
        client_address: Default::default(),
    };
    let dests = (0..N_RS)
        .map(|i| DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V4(Ipv4Addr::from(rs_addr(i))),
                port,
            },
            method: Method::Nat,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        })
        .collect();
    let mut b = SnapshotBuilder::new();
    b.synproxy(true).service(spec, dests);
    b.build(ids, 1).expect("synproxy benchmark snapshot")
}

struct Run {
    w: Balancer,
    snap: Snapshot,
    bufs: Vec<VecBuf>,
    metas: [PacketMeta; BURST],
    out: [LbVerdict; BURST],
}

impl Run {
    fn new(capacity: u32, synproxy: bool) -> Run {
        let mut ids = LbIds::new(16, 64);
        let snap = snapshot(&mut ids, synproxy, gen::VPORT);
        let cfg = BalancerConfig {
            conn_capacity: capacity,
            seed: 0x1234_5678,
            embryonic_grace_ms: 0,
            synproxy: true,
            synproxy_secret: [0x0123_4567, 0x89ab_cdef],
            ..BalancerConfig::default()
        };
        Run {
            w: Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity()),
            snap,
            bufs: (0..BURST)
                .map(|_| VecBuf::with_room(&[], 128, 256))
                .collect(),
            metas: [PacketMeta::default(); BURST],
            out: [LbVerdict::NotForUs; BURST],
        }
    }

    /// One burst through classify + the staged core; the frames as sent.
    #[inline(never)]
    fn burst(&mut self, fr: &[Vec<u8>], now: u64, keep: Option<&mut Vec<Vec<u8>>>) -> u64 {
        let n = fr.len().min(BURST);
        let mut k = 0;
        for f in &fr[..n] {
            self.bufs[k].load(f);
            if let Classified::Ipv4(m) = classify(self.bufs[k].data(), 0) {
                self.metas[k] = m;
                k += 1;
            }
        }
        self.w.process_burst(
            &BurstCtx::new(&self.snap, &BenchEgress, now),
            &mut self.bufs[..k],
            &self.metas[..k],
            &mut self.out[..k],
        );
        let sent = self.out[..k]
            .iter()
            .filter(|v| matches!(v, LbVerdict::Tx { .. }))
            .count() as u64;
        if let Some(v) = keep {
            v.extend(self.bufs[..k].iter().map(|b| b.data().to_vec()));
        }
        sent
    }

    /// Time `frames` (replayed) for about `time`; packets sent per second.
    fn timed(&mut self, frames: &[Vec<u8>], time: Duration, now: impl Fn() -> u64) -> f64 {
        let start = Instant::now();
        let (mut pkts, mut sent) = (0u64, 0u64);
        while start.elapsed() < time {
            for ch in frames.chunks(BURST) {
                sent += self.burst(ch, now(), None);
                pkts += ch.len() as u64;
            }
        }
        let secs = start.elapsed().as_secs_f64();
        assert!(sent * 10 >= pkts * 9, "only {sent} of {pkts} sent");
        pkts as f64 / secs / 1e6
    }
}

fn seq_of(f: &[u8]) -> u32 {
    let l4 = ethernet::HEADER_LEN + ipv4::MIN_HEADER_LEN;
    tcp::Packet::new_unchecked(&f[l4..]).seq_number()
}

fn tsval_of(f: &[u8]) -> u32 {
    let l4 = ethernet::HEADER_LEN + ipv4::MIN_HEADER_LEN;
    let t = tcp::Packet::new_unchecked(&f[l4..]);
    tcpopt::parse(t.options()).ts.map_or(0, |t| t.val)
}

/// SYN and ACK of flow `i`, the ACK returning `cookie` (from a SYN/ACK).
fn syn(i: u32) -> Vec<u8> {
    let (src, sport) = gen::flow(i);
    frame(
        src,
        sport,
        gen::VIP,
        gen::VPORT,
        1000,
        0,
        tcp_flags::SYN,
        (77, 0),
    )
}

fn ack(i: u32, cookie: u32, ecr: u32) -> Vec<u8> {
    let (src, sport) = gen::flow(i);
    frame(
        src,
        sport,
        gen::VIP,
        gen::VPORT,
        1001,
        cookie.wrapping_add(1),
        tcp_flags::ACK,
        (78, ecr),
    )
}

/// Run the three measurements: `flows` established proxied connections,
/// a table of `capacity`, about `time` each.
pub fn run(flows: u32, capacity: u32, time: Duration) -> SynproxyResult {
    let clock = Instant::now();
    let now = || clock.elapsed().as_nanos() as u64 + 1_000_000_000;
    // at least 16k flows: the opening phase needs four times its table
    let flows = flows.max(16384);
    // and every established flow a place in the table
    let capacity = capacity.max(flows);
    let mut r = SynproxyResult {
        flows,
        ..SynproxyResult::default()
    };
    // 1. a SYN flood: every SYN answered, nothing stored
    let syns: Vec<Vec<u8>> = (0..flows).map(syn).collect();
    let mut flood = Run::new(capacity, true);
    r.syn_mpps = flood.timed(&syns, time, now);
    assert_eq!(flood.w.table().len(), 0);
    // 1b. the same flood to an IPv6 service, per packet, beside IPv4's
    // per packet
    let syns6: Vec<Vec<u8>> = (0..flows).map(syn6).collect();
    let (mut w6, snap6) = worker6(capacity);
    r.syn6_mpps = syn_flood_pkt(&mut w6, &snap6, &syns6, time, now);
    let mut pkt4 = Run::new(capacity, true);
    r.syn_pkt_mpps = syn_flood_pkt(&mut pkt4.w, &pkt4.snap, &syns, time, now);
    // the cookies of every flow, from the SYN/ACKs
    let mut answers = Vec::new();
    for ch in syns.chunks(BURST) {
        flood.burst(ch, now(), Some(&mut answers));
    }
    let acks: Vec<Vec<u8>> = answers
        .iter()
        .enumerate()
        .map(|(i, a)| ack(i as u32, seq_of(a), tsval_of(a)))
        .collect();
    // 2. opening: SYN, then ACK, per flow, into a table a quarter as large
    // (pending connections evicted as in the new-connection case)
    let pairs: Vec<Vec<u8>> = syns
        .iter()
        .zip(&acks)
        .flat_map(|(s, a)| [s.clone(), a.clone()])
        .collect();
    let mut open = Run::new(flows / 4, true);
    r.open_mconn = open.timed(&pairs, time, now) / 2.0;
    // 3. established: splice every flow (the servers' SYN/ACKs), then
    // the clients' ACKs, both through the proxy and through plain NAT
    let mut est = Run::new(capacity, true);
    let mut syn_to_server = Vec::new();
    for ch in syns.chunks(BURST) {
        est.burst(ch, now(), None);
    }
    for ch in acks.chunks(BURST) {
        est.burst(ch, now(), Some(&mut syn_to_server));
    }
    let synacks: Vec<Vec<u8>> = syn_to_server
        .iter()
        .map(|s| {
            let l3 = ethernet::HEADER_LEN;
            let ip = ipv4::Packet::new_unchecked(&s[l3..]);
            let t = tcp::Packet::new_unchecked(&s[l3 + ipv4::MIN_HEADER_LEN..]);
            frame(
                ip.dst(),
                t.dst_port(),
                ip.src(),
                t.src_port(),
                0x5000_0000,
                t.seq_number().wrapping_add(1),
                tcp_flags::SYN | tcp_flags::ACK,
                (900, tsval_of(s)),
            )
        })
        .collect();
    for ch in synacks.chunks(BURST) {
        est.burst(ch, now(), None);
    }
    r.est_mpps = est.timed(&acks, time, now);
    let mut nat = Run::new(capacity, false);
    for ch in syns.chunks(BURST) {
        nat.burst(ch, now(), None);
    }
    r.nat_mpps = nat.timed(&acks, time, now);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_phase_forwards() {
        let r = run(4096, 8192, Duration::from_millis(20));
        assert!(r.syn_mpps > 0.0 && r.open_mconn > 0.0);
        assert!(r.est_mpps > 0.0 && r.nat_mpps > 0.0);
        assert!(r.syn6_mpps > 0.0);
    }
}
