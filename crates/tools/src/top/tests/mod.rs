//! `dirigoctl top` without a daemon: samples built by hand, the rate maths
//! ([`rates`]) and the screen at several sizes ([`draw`]).

mod draw;
mod rates;

use super::sample::Sample;
use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use dirigo_proto::view::{DestInfo, DropCount, LcoreInfo, ServiceInfo, ServiceList, Stats};
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// TCP or UDP service `vip:port`.
fn key(proto: Proto, vip: [u8; 4], port: u16) -> ServiceKey {
    ServiceKey {
        fwmark: 0,
        proto,
        vip: std::net::IpAddr::V4(Ipv4Addr::from(vip)),
        port,
    }
}

/// Counters: `n` connections, `10n` packets and `1000n` bytes in, half
/// that out.
fn stats(n: u64) -> Stats {
    Stats {
        conns: n,
        inpkts: 10 * n,
        outpkts: 5 * n,
        inbytes: 1000 * n,
        outbytes: 500 * n,
    }
}

fn dest(addr: [u8; 4], port: u16, n: u64, active: u32, inactive: u32) -> DestInfo {
    DestInfo {
        spec: DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V4(Ipv4Addr::from(addr)),
                port,
            },
            method: Method::Dr,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        },
        active,
        inactive,
        persist: 0,
        stats: stats(n),
        rate: Default::default(),
    }
}

fn service(k: ServiceKey, sched: SchedKind, dests: Vec<DestInfo>) -> ServiceInfo {
    let n = dests.iter().map(|d| d.stats.conns).sum();
    ServiceInfo {
        spec: ServiceSpec {
            members: Vec::new(),
            local_addresses: Vec::new(),
            key: k,
            sched,
            flags: SchedFlags::default(),
            persistent: None,
            netmask: Ipv4Addr::BROADCAST,
            prefix6: 128,
            synproxy: false,
            ops: false,
            client_address: Default::default(),
        },
        stats: stats(n),
        rate: Default::default(),
        dests,
    }
}

fn worker(lcore: u32, rx: u64, conns: u64, busy_ns: Option<u64>) -> LcoreInfo {
    LcoreInfo {
        lcore,
        role: "worker".into(),
        queues: vec![],
        rx_packets: rx,
        tx_packets: rx / 2,
        dropped: rx / 100,
        conns,
        conns_created: rx / 10,
        extra: vec![],
        busy_ns,
    }
}

fn drop(reason: &str, count: u64) -> DropCount {
    DropCount {
        reason: reason.into(),
        count,
    }
}

/// The lab's services: TCP 10.99.0.100:80 rr and UDP 10.99.0.100:5353 rr
/// over rs1..rs3, their counters `n` per real server (times its number).
fn lab(at: Instant, n: u64) -> Sample {
    let dests = |port| {
        (1..=3u8)
            .map(|i| dest([10, 98, 0, 10 + i], port, n * u64::from(i), i.into(), 1))
            .collect()
    };
    Sample {
        at,
        list: ServiceList {
            conn_tab_size: 65536,
            services: vec![
                service(
                    key(Proto::Udp, [10, 99, 0, 100], 5353),
                    SchedKind::Rr,
                    dests(5353),
                ),
                service(
                    key(Proto::Tcp, [10, 99, 0, 100], 80),
                    SchedKind::Rr,
                    dests(80),
                ),
            ],
        },
        lcores: vec![worker(1, 100 * n, 12, Some(n * 1_000_000))],
        drops: vec![drop("no_service", n), drop("bad_checksum", 0)],
    }
}

/// Two instants `secs` apart.
fn instants(secs: u64) -> (Instant, Instant) {
    let t0 = Instant::now();
    (t0, t0 + Duration::from_secs(secs))
}
