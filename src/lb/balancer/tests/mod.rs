//! Tests of the sans-IO balancer core, one topic per submodule, and what
//! they share: a balancer with a fake egress ([`env`]), snapshot building
//! and sending helpers on [`Env`], and frame builders.

use super::*;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::{LbIds, SnapshotBuilder};
use crate::lb::spec::{Proto, ServiceKey, ServiceSpec, Timeouts};
use crate::lb::stats::sum_dest;
use crate::lb::testutil::V4 as _;
use crate::lb::testutil::*;
use crate::net::buf::VecBuf;
use crate::net::meta::tcp_flags::{ACK, FIN, PSH, RST, SYN};
use std::net::Ipv4Addr;

const S: u64 = 1_000_000_000;

fn svc(proto: Proto, port: u16) -> ServiceSpec {
    ServiceSpec {
        key: ServiceKey {
            proto,
            vip: std::net::IpAddr::V4(Ipv4Addr::from(VIP)),
            port,
        },
        sched: SchedKind::Rr,
        flags: SchedFlags::default(),
        persistent: None,
        netmask: Ipv4Addr::BROADCAST,
        prefix6: 128,
        synproxy: false,
    }
}

struct Env {
    ids: LbIds,
    w: Balancer,
    eg: FakeEgress,
}

fn env(cap: u32) -> Env {
    let ids = LbIds::new(16, 64);
    let cfg = BalancerConfig {
        conn_capacity: cap,
        seed: 42,
        icmp_rate: 1,
        icmp_burst: 2,
        persist_capacity: 0,
        ..BalancerConfig::default()
    };
    let w = Balancer::new(&cfg, ids.dests.capacity(), ids.services.capacity());
    Env {
        ids,
        w,
        eg: FakeEgress::default(),
    }
}

impl Env {
    fn snap(&mut self, epoch: u64, f: impl FnOnce(&mut SnapshotBuilder)) -> Snapshot {
        let mut b = SnapshotBuilder::new();
        f(&mut b);
        b.build(&mut self.ids, epoch).unwrap()
    }
    fn send(&mut self, snap: &Snapshot, frame: &[u8], now: u64) -> (LbVerdict, Vec<u8>) {
        let m = meta_of(frame);
        let mut b = VecBuf::new(frame);
        let v = self.w.process(snap, &self.eg, &mut b, &m, now);
        (v, b.to_vec())
    }
    fn load(&self, snap: &Snapshot, si: usize, di: usize) -> (u64, u64) {
        let st = self.w.stats();
        let t = sum_dest(&[&st], snap.services()[si].dests[di].id);
        (t.active, t.inactive)
    }
    fn states(&self, now: u64) -> Vec<(&'static str, u32)> {
        self.w.conns(now).map(|c| (c.state, c.expires_s)).collect()
    }
}

fn tcp(flags: u8, cport: u16) -> Vec<u8> {
    tcp_frame(CLIENT, cport, VIP, 80, flags, b"", 64, true)
}

fn with_eth(mut f: Vec<u8>, dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    f[0..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f
}

mod burst;
mod capacity;
mod dests;
mod drops;
mod icmp_errors;
mod loads;
mod methods;
mod persist;
mod pins;
mod robust;
mod sync;
mod synproxy;
mod timeouts;
mod v6;
