//! The sans-IO micro-benchmark: frames through `classify` + `Balancer`
//! with a fake egress, no EAL, no mbufs. Separates dirigo's own cost from
//! the I/O path and gives the per-burst latency percentiles (the daemon's
//! worker loop is not instrumented).

use crate::gen;
use dirigo_core::lb::balancer::{Balancer, BalancerConfig, BurstCtx, LbVerdict};
use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::snapshot::{LbIds, Snapshot, SnapshotBuilder};
use dirigo_core::lb::spec::{
    ClientAddress, DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec,
};
use dirigo_core::lb::sync::{SyncPolicy, SyncQueue};
use dirigo_core::net::buf::{PacketBuf, VecBuf};
use dirigo_core::net::classify::{classify, Classified};
use dirigo_core::net::egress::{Egress, Egress6, NextHop, Resolve, Resolve6};
use dirigo_core::net::meta::PacketMeta;
use dirigo_core::net::wire::tcp;
use hdrhistogram::Histogram;
use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

/// Packets per timed burst (the worker loop's rx burst size).
pub use dirigo_core::net::buf::BURST;
/// Real servers of the benchmark service (172.16.0.11 ..).
pub const N_RS: u8 = 4;
/// The lan network the real servers live on (172.16.0.0/24).
pub const LAN_NET: u32 = 0xac10_0000;
/// dirigo's lan address.
pub const LAN_IP: u32 = 0xac10_0001;

/// MAC of real server `a` (on the lan): 02:00:00:00:01:<last octet>.
pub fn rs_mac(a: u32) -> [u8; 6] {
    [0x02, 0, 0, 0, 0x01, a as u8]
}

/// Address of real server `i` (0-based; [`MAX_SERVERS`] of them fit the
/// /24).
pub fn rs_addr(i: u8) -> u32 {
    LAN_NET | (11 + i as u32)
}

/// The most real servers a micro case can have (172.16.0.11 - .254).
pub const MAX_SERVERS: u8 = 244;

/// Routes like the benchmark daemon config: the lan /24 on port 1 (RS MACs
/// by last octet), everything else via a gateway on port 0.
pub struct BenchEgress;

impl Egress for BenchEgress {
    fn next_hop(&self, dst: u32) -> Resolve {
        if dst >> 8 == LAN_NET >> 8 {
            Resolve::Ready(NextHop {
                port: 1,
                src_mac: [0x02, 0, 0, 0, 0, 0x10],
                dst_mac: rs_mac(dst),
                src_ip: LAN_IP,
                mtu: 1500,
            })
        } else {
            Resolve::Ready(NextHop {
                port: 0,
                src_mac: [0x02, 0, 0, 0, 0, 0x10],
                dst_mac: [0x02, 0, 0, 0, 0, 0xfe],
                src_ip: 0xc0a8_6401,
                mtu: 1500,
            })
        }
    }
    fn on_link(&self, addr: u32) -> Option<u16> {
        (addr >> 8 == LAN_NET >> 8).then_some(1)
    }
}

/// The micro cases are IPv4's: no IPv6 route.
impl Egress6 for BenchEgress {
    fn next_hop6(&self, _: u128) -> Resolve6 {
        Resolve6::NoRoute
    }
    fn on_link6(&self, _: u128) -> Option<u16> {
        None
    }
}

/// Which workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Established connections: a SYN pass to create `flows`
    /// connections, then ACKs of all flows round-robin.
    Established,
    /// Every packet a new SYN (distinct flows, small table).
    NewConn,
}

/// One micro-benchmark case.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// Forwarding method.
    pub method: Method,
    /// Distinct flows.
    pub flows: u32,
    /// Workload.
    pub workload: Workload,
    /// Table capacity.
    pub capacity: u32,
    /// Use `Balancer::process_burst` (hash + touch the burst first) instead
    /// of `process` per packet (what the daemon's pipeline calls).
    pub burst_api: bool,
    /// Connection sync on (`[sync]`): the balancer checks every packet
    /// and queues what is due; the queue is emptied between timed bursts,
    /// as the sync thread would.
    pub sync: bool,
    /// Real servers of the service ([`N_RS`] unless asked; at most
    /// [`MAX_SERVERS`]): what a least-connection pick has to weigh.
    pub servers: u8,
    /// FullNAT only: the service's `client_address` (its timed ACKs are
    /// then past the header's place: each is shifted, as an established
    /// segment of a PROXY connection is).
    pub client_address: ClientAddress,
}

/// What one case measured.
#[derive(Clone, Debug, Default)]
pub struct MicroResult {
    /// Packets per second / 1e6.
    pub mpps: f64,
    /// Packets of the timed phase.
    pub packets: u64,
    /// Nanoseconds per packet (mean).
    pub ns_per_pkt: f64,
    /// Per-burst cost per packet, percentiles (ns): p50, p99, p99.9.
    pub p50: f64,
    /// p99.
    pub p99: f64,
    /// p99.9.
    pub p999: f64,
    /// Connections in the table at the end.
    pub tracked: u64,
    /// Connections created per second / 1e6 during the timed part.
    pub mconn_s: f64,
    /// `LineTable::memory_bytes()`.
    pub table_bytes: u64,
    /// Packets forwarded / packets offered in the timed part.
    pub fwd_ratio: f64,
}

/// FullNAT's local address (on the lan).
pub const LADDR: u32 = LAN_NET | 200;

fn snapshot(method: Method, servers: u8, how: ClientAddress) -> (Snapshot, LbIds) {
    let servers = servers.clamp(1, MAX_SERVERS);
    let mut ids = LbIds::new(16, 256);
    let spec = ServiceSpec {
        members: Vec::new(),
        local_addresses: if method == Method::FullNat {
            vec![IpAddr::V4(Ipv4Addr::from(LADDR))]
        } else {
            Vec::new()
        },
        key: ServiceKey {
            fwmark: 0,
            proto: Proto::Tcp,
            vip: std::net::IpAddr::V4(Ipv4Addr::from(gen::VIP)),
            port: gen::VPORT,
        },
        sched: SchedKind::Wlc,
        flags: SchedFlags::default(),
        persistent: None,
        netmask: Ipv4Addr::BROADCAST,
        prefix6: 128,
        synproxy: false,
        ops: false,
        client_address: how,
    };
    let dests = (0..servers)
        .map(|i| DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V4(Ipv4Addr::from(rs_addr(i))),
                port: gen::VPORT,
            },
            method,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        })
        .collect();
    let eg = BenchEgress;
    let on_link = |a: IpAddr| matches!(a, IpAddr::V4(v) if eg.on_link(u32::from(v)).is_some());
    let mut b = SnapshotBuilder::new();
    b.service(spec, dests).on_link(&on_link);
    let snap = b.build(&mut ids, 1).expect("benchmark snapshot");
    (snap, ids)
}

fn frames(flows: u32, flags: u8) -> Vec<[u8; 60]> {
    (0..flows)
        .map(|i| {
            let (src, sport) = gen::flow(i);
            gen::tcp_frame(src, sport, flags, i as u16)
        })
        .collect()
}

struct Runner {
    w: Balancer,
    snap: Snapshot,
    bufs: Vec<VecBuf>,
    metas: [PacketMeta; BURST],
    out: [LbVerdict; BURST],
    burst_api: bool,
    forwarded: u64,
    /// Packets through [`Runner::timed`].
    timed: u64,
    /// With sync: the queue the balancer sends to.
    sync: Option<std::sync::Arc<SyncQueue>>,
}

impl Runner {
    /// A balancer with `case`'s service, table and sync queue.
    fn new(case: &Case) -> Runner {
        let (snap, ids) = snapshot(case.method, case.servers, case.client_address);
        let cfg = BalancerConfig {
            conn_capacity: case.capacity,
            seed: 0x1234_5678,
            // the new-connection case keeps a small table full of fresh SYNs:
            // it measures admitting a flow into a full table (insert + evict),
            // so no embryonic grace (with it, the flood's SYNs are refused)
            embryonic_grace_ms: match case.workload {
                Workload::NewConn => 0,
                Workload::Established => dirigo_core::lb::conn::EMBRYONIC_GRACE_MS,
            },
            ..BalancerConfig::default()
        };
        let mut w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
        let sync = case
            .sync
            .then(|| std::sync::Arc::new(SyncQueue::new(1 << 16)));
        if let Some(q) = &sync {
            w.set_sync(Some((q.clone(), SyncPolicy::default())));
        }
        Runner {
            w,
            snap,
            bufs: (0..BURST)
                .map(|_| VecBuf::with_room(&[], 128, 128))
                .collect(),
            metas: [PacketMeta::default(); BURST],
            out: [LbVerdict::NotForUs; BURST],
            burst_api: case.burst_api,
            forwarded: 0,
            timed: 0,
            sync,
        }
    }

    /// Set up `case`'s workload; returns the frames to time.
    fn warm_up(&mut self, case: &Case, clock: &Instant) -> Vec<[u8; 60]> {
        let syn = frames(case.flows, 0x02);
        let timed: Vec<[u8; 60]> = match case.workload {
            Workload::Established => {
                // create every connection, then warm up one ACK pass
                for ch in syn.chunks(BURST) {
                    self.burst(ch, now(clock));
                }
                drop(syn);
                let mut ack = frames(case.flows, 0x10);
                if case.method == Method::FullNat {
                    // past the SYN's ISN + 1 (1000 + 1): where a PROXY
                    // connection's segments are shifted
                    for f in &mut ack {
                        let l4 = 14 + 20;
                        let mut t = tcp::Packet::new_unchecked(&mut f[l4..l4 + 20]);
                        t.set_seq_number_update_checksum(1002);
                    }
                }
                for ch in ack.chunks(BURST) {
                    self.burst(ch, now(clock));
                }
                ack
            }
            Workload::NewConn => {
                for ch in syn.chunks(BURST).take(4096) {
                    self.burst(ch, now(clock));
                }
                syn
            }
        };
        self.drain_sync();
        timed
    }

    /// Empty the sync queue (what a sync thread would send).
    fn drain_sync(&self) {
        if let Some(q) = &self.sync {
            while q.pop().is_some() {}
        }
    }

    /// Replay `timed` for about `time`: packets, busy nanoseconds and the
    /// per-packet time of each burst.
    fn measure(
        &mut self,
        timed: &[[u8; 60]],
        time: Duration,
        clock: &Instant,
    ) -> (u64, u64, Histogram<u64>) {
        let mut hist = Histogram::<u64>::new_with_bounds(1, 1_000_000, 3).expect("histogram");
        let start = Instant::now();
        let mut pkts = 0u64;
        let mut busy_ns = 0u64;
        'outer: loop {
            for ch in timed.chunks(BURST) {
                let t0 = Instant::now();
                self.timed(ch, now(clock));
                let dt = t0.elapsed().as_nanos() as u64;
                self.drain_sync();
                busy_ns += dt;
                pkts += ch.len() as u64;
                let _ = hist.record((dt / ch.len() as u64).max(1));
                if pkts % (BURST as u64 * 1024) == 0 && start.elapsed() >= time {
                    break 'outer;
                }
            }
            if start.elapsed() >= time {
                break;
            }
        }
        (pkts, busy_ns, hist)
    }

    /// One burst of the timed phase (not inlined, so that a profiler can
    /// count the timed packets only: `valgrind --tool=callgrind
    /// --toggle-collect='*Runner*timed*'`, divided by the packets printed).
    #[inline(never)]
    fn timed(&mut self, fr: &[[u8; 60]], now: u64) -> u64 {
        // counting here also keeps the compiler from folding this function
        // into the warm-up's identical one (which would profile both)
        self.timed += fr.len() as u64;
        self.burst(fr, now)
    }

    /// Push one burst of frames through classify + the core; returns the
    /// packets forwarded.
    #[inline]
    fn burst(&mut self, fr: &[[u8; 60]], now: u64) -> u64 {
        let n = fr.len().min(BURST);
        let mut k = 0;
        for f in &fr[..n] {
            self.bufs[k].load(f);
            if let Classified::Ipv4(m) = classify(self.bufs[k].data(), 0) {
                self.metas[k] = m;
                k += 1;
            }
        }
        let eg = BenchEgress;
        let mut fwd = 0;
        if self.burst_api {
            self.w.process_burst(
                &BurstCtx::new(&self.snap, &eg, now),
                &mut self.bufs[..k],
                &self.metas[..k],
                &mut self.out[..k],
            );
            for v in &self.out[..k] {
                fwd += matches!(v, LbVerdict::Tx { .. }) as u64;
            }
        } else {
            for i in 0..k {
                let v = self.w.process(
                    &BurstCtx::new(&self.snap, &eg, now),
                    &mut self.bufs[i],
                    &self.metas[i],
                );
                fwd += matches!(v, LbVerdict::Tx { .. }) as u64;
            }
        }
        self.forwarded += fwd;
        fwd
    }

    fn created(&self) -> u64 {
        self.w
            .stats()
            .services
            .iter()
            .map(|s| s.conns.load(std::sync::atomic::Ordering::Relaxed))
            .sum()
    }
}

/// Run one case for about `time` (after set-up), timing every burst.
pub fn run(case: Case, time: Duration) -> MicroResult {
    let mut r = Runner::new(&case);
    let clock = Instant::now();
    let timed = r.warm_up(&case, &clock);
    r.forwarded = 0;
    let created0 = r.created();
    let (pkts, busy_ns, hist) = r.measure(&timed, time, &clock);
    let created = r.created() - created0;
    let secs = busy_ns as f64 / 1e9;
    MicroResult {
        mpps: pkts as f64 / secs / 1e6,
        packets: r.timed,
        ns_per_pkt: busy_ns as f64 / pkts as f64,
        p50: hist.value_at_quantile(0.50) as f64,
        p99: hist.value_at_quantile(0.99) as f64,
        p999: hist.value_at_quantile(0.999) as f64,
        tracked: r.w.table().len() as u64,
        mconn_s: created as f64 / secs / 1e6,
        table_bytes: r.w.table().memory_bytes() as u64,
        fwd_ratio: r.forwarded as f64 / pkts as f64,
    }
}

/// The balancer's clock: nanoseconds since `c`, from one second on.
fn now(c: &Instant) -> u64 {
    c.elapsed().as_nanos() as u64 + 1_000_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn established_forwards_everything_and_tracks_all_flows() {
        for m in [Method::Dr, Method::Tun, Method::Nat] {
            let r = run(
                Case {
                    method: m,
                    flows: 1000,
                    workload: Workload::Established,
                    capacity: 4096,
                    burst_api: false,
                    sync: false,
                    servers: N_RS,
                    client_address: ClientAddress::None,
                },
                Duration::from_millis(20),
            );
            assert_eq!(r.tracked, 1000, "{m:?}");
            assert_eq!(r.fwd_ratio, 1.0, "{m:?}");
            assert!(r.mpps > 0.0);
        }
    }

    #[test]
    fn new_conn_keeps_the_table_full_by_eviction() {
        let r = run(
            Case {
                method: Method::Dr,
                flows: 20_000,
                workload: Workload::NewConn,
                capacity: 1024,
                burst_api: true,
                sync: false,
                servers: N_RS,
                client_address: ClientAddress::None,
            },
            Duration::from_millis(20),
        );
        assert_eq!(r.tracked, 1024);
        assert!(r.mconn_s > 0.0);
        assert!(r.fwd_ratio > 0.9, "{}", r.fwd_ratio);
    }
}
