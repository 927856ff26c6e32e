//! Tests of the worker pipeline, one topic per submodule, and what they
//! share: two ports, a NAT service VIP:80 -> RS:8080, and one pipeline per
//! worker over one control state ([`setup`]); [`run`] follows a hand-over
//! to the owner.

use super::WorkerPipeline;
use crate::dataplane::shared::{Shared, WorkerShared};
use crate::dataplane::Arrival;
use crate::dataplane::{Pipeline, Verdict};
use crate::lb::balancer::{Balancer, BalancerConfig};
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::{LbIds, Snapshot, SnapshotBuilder};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use crate::lb::testutil::OUR_MAC;
use crate::net::addr::{link_local_of, Ipv4Cidr, Ipv6Cidr, OwnAddrs};
use crate::net::buf::VecBuf;
use crate::net::neigh::{NeighConfig, NeighTable};
use crate::net::route::RouteTable;
use crate::net::view::{NetView, PortInfo};
use arc_swap::ArcSwap;
use crossbeam_queue::ArrayQueue;
use std::net::Ipv4Addr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

const VIP: [u8; 4] = [10, 0, 0, 100];
const RS: [u8; 4] = [172, 16, 0, 11];

fn setup(workers: usize) -> (Arc<Shared>, Vec<WorkerPipeline>) {
    setup_ports(workers, [false, false])
}

/// [`setup`] with port `i` having a kernel interface when `kernel[i]`.
fn setup_ports(workers: usize, kernel: [bool; 2]) -> (Arc<Shared>, Vec<WorkerPipeline>) {
    let mut addrs = OwnAddrs::new();
    addrs
        .add_port_addr(
            0,
            Ipv4Cidr::new(u32::from_be_bytes([10, 0, 0, 1]), 24).unwrap(),
        )
        .unwrap();
    addrs
        .add_port_addr(
            1,
            Ipv4Cidr::new(u32::from_be_bytes([172, 16, 0, 1]), 24).unwrap(),
        )
        .unwrap();
    addrs.add_vip(u32::from_be_bytes(VIP));
    // port 0's IPv6 addresses: its link-local one and 2001:db8:99::1/64
    addrs
        .add_port_addr6(0, Ipv6Cidr::new(link_local_of(OUR_MAC), 64).unwrap())
        .unwrap();
    addrs
        .add_port_addr6(0, Ipv6Cidr::new(self::ipv6::PORT_IP6, 64).unwrap())
        .unwrap();
    let routes = RouteTable::new(&addrs, &[]).unwrap();
    let mut neigh = NeighTable::new(NeighConfig::default());
    neigh
        .add_static(u32::from_be_bytes(RS), [2, 0, 0, 0, 0, 0x11], 1)
        .unwrap();
    for c in 2..=255u8 {
        neigh
            .add_static(u32::from_be_bytes([10, 0, 0, c]), [2, 0, 0, 0, 1, c], 0)
            .unwrap();
    }
    let ports: Arc<[PortInfo]> = kernel
        .iter()
        .map(|&kernel| PortInfo {
            mac: OUR_MAC,
            mtu: 1500,
            kernel,
        })
        .collect();
    let view = NetView::new(
        ports,
        Arc::new(addrs.clone()),
        Arc::new(routes),
        Arc::new(neigh.snapshot()),
    );
    let snap = nat_service(&[RS]);
    let mut lbs = Vec::new();
    let mut ws = Vec::new();
    for i in 0..workers {
        let lb = Balancer::new(
            &BalancerConfig {
                conn_capacity: 4096,
                seed: i as u32,
                worker: i as u32,
                workers: workers as u32,
                ..Default::default()
            },
            64,
            16,
        );
        ws.push(WorkerShared::new(lb.stats(), 2, i as u32 + 1));
        lbs.push(lb);
    }
    let shared = Arc::new(Shared {
        net: Arc::new(ArcSwap::from_pointee(view)),
        lb: Arc::new(ArcSwap::from_pointee(snap)),
        events: ArrayQueue::new(64),
        workers: ws,
        stop: Arc::new(AtomicBool::new(false)),
    });
    let pipes = lbs
        .into_iter()
        .enumerate()
        .map(|(i, lb)| {
            let mut p = WorkerPipeline::new(&shared, i, lb);
            p.begin_burst(0);
            p
        })
        .collect();
    (shared, pipes)
}

/// A snapshot with one NAT service, VIP:80 -> `rs`:8080 (rr).
fn nat_service(rs: &[[u8; 4]]) -> Snapshot {
    service_of(rs, Method::Nat, 8080)
}

/// One TCP service VIP:80 over real servers `rs` (port `rport`) by `method`.
fn service_of(rs: &[[u8; 4]], method: Method, rport: u16) -> Snapshot {
    let mut ids = LbIds::new(16, 64);
    let dests = rs
        .iter()
        .map(|&a| DestSpec {
            key: DestKey {
                addr: std::net::IpAddr::V4(Ipv4Addr::from(a)),
                port: rport,
            },
            method,
            weight: 1,
            upper: 0,
            lower: 0,
            tun: Default::default(),
        })
        .collect();
    let mut b = SnapshotBuilder::new();
    b.service(
        ServiceSpec {
            members: Vec::new(),
            local_addresses: Vec::new(),
            key: ServiceKey {
                fwmark: 0,
                proto: Proto::Tcp,
                vip: std::net::IpAddr::V4(Ipv4Addr::from(VIP)),
                port: 80,
            },
            sched: SchedKind::Rr,
            flags: SchedFlags::default(),
            persistent: None,
            netmask: Ipv4Addr::BROADCAST,
            prefix6: 128,
            synproxy: false,
            ops: false,
            client_address: Default::default(),
        },
        dests,
    );
    b.build(&mut ids, 1).unwrap()
}

/// Run a packet arriving at worker `at`; follow a steer to the owner.
/// Returns (verdict, worker that handled it).
fn run(pipes: &mut [WorkerPipeline], at: usize, buf: &mut VecBuf, port: u16) -> (Verdict, usize) {
    match pipes[at].process(buf, Arrival::wire(port, 1_000_000)) {
        Verdict::Steer(w) => {
            let w = w as usize;
            let v = pipes[w].process(buf, Arrival::steered(port, 1_000_000));
            assert!(!matches!(v, Verdict::Steer(_)), "steered twice");
            (v, w)
        }
        v => (v, at),
    }
}

mod burst;
mod fullnat;
mod fwmark;
mod ipv6;
mod kernel;
mod local;
mod next_hop;
mod snat;
mod steer;
mod v6nat;
