//! Tests of the sans-IO balancer core, one topic per submodule, and what
//! they share: a balancer with a fake egress ([`env`]), snapshot building
//! and sending helpers on [`Env`], and frame builders.

use super::*;
// what the balancer's hub held before its rooms (the tests share it)
use super::established::{established_keeps, keeps_established};
use crate::lb::conn::{Conn, F_NOOUTPUT};
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::snapshot::Snapshot;
use crate::lb::snapshot::{LbIds, SnapshotBuilder};
use crate::lb::spec::Method;
use crate::lb::spec::{Proto, ServiceKey, ServiceSpec, Timeouts};
use crate::lb::state::TcpState;
use crate::lb::stats::sum_dest;
use crate::lb::testutil::V4 as _;
use crate::lb::testutil::*;
use crate::net::buf::VecBuf;
use crate::net::meta::tcp_flags::{ACK, FIN, PSH, RST, SYN};
use crate::net::meta::{FlowKey, PacketMeta, PROTO_TCP, PROTO_UDP};
use std::net::Ipv4Addr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

const S: u64 = 1_000_000_000;

fn svc(proto: Proto, port: u16) -> ServiceSpec {
    ServiceSpec {
        members: Vec::new(),
        local_addresses: Vec::new(),
        key: ServiceKey {
            fwmark: 0,
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
        ops: false,
        client_address: Default::default(),
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
        let v = self
            .w
            .process(&BurstCtx::new(snap, &self.eg, now), &mut b, &m);
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

/// [`Env::send`] or [`Env::send6`]: a verdict and the frame written.
type SendFn = fn(&mut Env, &Snapshot, &[u8], u64) -> (LbVerdict, Vec<u8>);

/// The established-shortcut property over `frames` (each with its time):
/// `short` (on the shortcut, snapshot `s1`) and `general` (forced down the
/// general path, `s2`) give the same frames, verdicts, states, timers and
/// per-server counters; each established ACK (frames 1 and 3) restarts the
/// timer. `send` is [`Env::send`] or its IPv6 twin.
#[allow(clippy::too_many_arguments)]
fn shortcut_agrees(
    method: Method,
    short: &mut Env,
    s1: &Snapshot,
    general: &mut Env,
    s2: &Snapshot,
    frames: &[(Vec<u8>, u64)],
    send: SendFn,
) {
    let mut after_ack = None;
    for (i, (f, now)) in frames.iter().enumerate() {
        let a = send(short, s1, f, *now);
        let b = send(general, s2, f, *now);
        assert_eq!(a, b, "{method:?} frame {i}");
        assert_eq!(short.states(*now), general.states(*now), "{method:?} {i}");
        assert_eq!(
            short.load(s1, 0, 0),
            general.load(s2, 0, 0),
            "{method:?} {i}"
        );
        if i == 1 || i == 3 {
            // each established ACK restarts the timer: as long to go
            // after the second as after the first
            let st = short.states(*now);
            assert_eq!(st[0].0, "ESTABLISHED");
            assert_eq!(*after_ack.get_or_insert(st[0].1), st[0].1, "{method:?}");
        }
    }
    let (a, b) = (short.w.stats(), general.w.stats());
    assert_eq!(
        sum_dest(&[&a], s1.services()[0].dests[0].id),
        sum_dest(&[&b], s2.services()[0].dests[0].id),
        "{method:?}"
    );
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
mod census;
mod client_addr;
mod client_addr6;
mod dests;
mod drops;
mod ftp;
mod fullnat;
mod fullnat6;
mod fullnat64;
mod fwmark;
mod groups;
mod handoff;
mod icmp_errors;
mod loads;
mod methods;
mod nat64;
mod ops;
mod persist;
mod pins;
mod robust;
mod snat;
mod sync;
mod synproxy;
mod synproxy6;
mod timeouts;
mod trees;
mod v6;
