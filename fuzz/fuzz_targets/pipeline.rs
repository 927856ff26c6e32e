//! Fuzz the whole sans-IO pipeline on sequences of frames: two workers'
//! `WorkerPipeline`s sharing one control state (a 64-entry connection
//! table each for IPv4 and for IPv6, DR, TUN and NAT services of both
//! families, one of them persistent), a hold
//! area, the control thread's part played in between (ARP learning,
//! resolving held next hops, publishing a new view), and a clock that only
//! moves forward.
//!
//! The input is a program, one operation after another (fuzz/README.md): a
//! frame to one worker, a burst, a resolution round, a clock jump. After
//! every operation the counters are published and checked:
//!
//! * every `Tx` verdict is exactly one of `forwarded`, `echo_replied`,
//!   `arp_replied`, `nd_advertised`, `echo6_replied`; every `Steer` one
//!   `steered_out`, every steered packet one `steered_in`;
//! * every `Drop` verdict is one counted drop reason (classify's, ARP's,
//!   ICMP's, `other_host`, `not_for_us`, `local_other`, `lb_dropped`,
//!   `unresolved6`: a held IPv6 packet's ticket too old, released as a
//!   `Drop`) or an
//!   ARP frame or Neighbour Advertisement consumed by learning
//!   (`arp_learned`, `nd_taken`);
//! * `lb_dropped` is the sum of the core's drop reasons;
//! * each table holds at most its capacity (the core's `conns` gauge), and
//!   its listing (`ipvsadm -L -c`) no more than the gauge;
//! * every port or worker a verdict names exists.
//!
//! Any panic (including overflow and debug assertions) is a bug.
#![no_main]

use arc_swap::ArcSwap;
use crossbeam_queue::ArrayQueue;
use dirigo::dataplane::hold::HoldArea;
use dirigo::dataplane::pipeline::WorkerPipeline;
use dirigo::dataplane::shared::{ConnRequest, Event, Shared, WorkerShared};
use dirigo::dataplane::verdict::Hop;
use dirigo::dataplane::{Arrival, Pipeline, Verdict};
use dirigo::lb::balancer::{Balancer, BalancerConfig};
use dirigo::lb::sched::{SchedFlags, SchedKind};
use dirigo::lb::snapshot::{LbIds, SnapshotBuilder};
use dirigo::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use dirigo::net::addr::{Ipv4Cidr, Ipv6Cidr, OwnAddrs};
use dirigo::net::buf::{VecBuf, BURST};
use dirigo::net::neigh::{NeighConfig, NeighTable};
use dirigo::net::route::RouteTable;
use dirigo::net::route6::RouteTable6;
use dirigo::net::view::{NetView, PortInfo};
use libfuzzer_sys::fuzz_target;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

const WORKERS: usize = 2;
const PORTS: usize = 2;
const CAPACITY: u32 = 64;
/// Port 0: clients, 10.0.0.1/24 (a kernel interface); port 1: real
/// servers, 172.16.0.1/24.
const OUR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0xd1];
const VIP: [u8; 4] = [10, 0, 0, 100];
const VIP2: [u8; 4] = [10, 0, 0, 101];
/// Port 0's and port 1's IPv6 networks, and the IPv6 VIP (2001:db8::64).
const NET6_0: u128 = 0x2001_0db8 << 96;
const NET6_1: u128 = (0x2001_0db8 << 96) | (1 << 64);
const VIP6: u128 = NET6_0 | 0x64;
/// Real servers with a static neighbor entry; .12 and .15 start unknown.
const KNOWN_RS: [u8; 3] = [11, 13, 14];

/// Clock steps, selected by the top three bits of an operation byte.
const STEPS_NS: [u64; 8] = [
    0,
    1_000,
    1_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    120_000_000_000,
    1_000_000_000_000,
];

fn rs(last: u8) -> [u8; 4] {
    [172, 16, 0, last]
}

fn dest(last: u8, port: u16, method: Method, weight: u32) -> DestSpec {
    DestSpec {
        key: DestKey {
            addr: Ipv4Addr::from(rs(last)).into(),
            port,
        },
        method,
        weight,
        upper: 0,
        lower: 0,
        tun: Default::default(),
    }
}

fn service(proto: Proto, vip: [u8; 4], port: u16, sched: SchedKind, p: Option<u32>) -> ServiceSpec {
    ServiceSpec {
        members: Vec::new(),
        key: ServiceKey {
            fwmark: 0,
            proto,
            vip: Ipv4Addr::from(vip).into(),
            port,
        },
        sched,
        flags: SchedFlags::default(),
        persistent: p,
        netmask: if p.is_some() {
            Ipv4Addr::new(255, 255, 255, 0)
        } else {
            Ipv4Addr::BROADCAST
        },
        prefix6: 128,
        synproxy: false,
        local_addresses: Vec::new(),
        ops: false,
        client_address: Default::default(),
    }
}

struct World {
    shared: Arc<Shared>,
    pipes: Vec<WorkerPipeline>,
    neigh: NeighTable,
    neigh6: NeighTable<u128>,
    base: NetView,
    hold: HoldArea<VecBuf>,
    now: u64,
}

fn world() -> World {
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
    addrs.add_vip(u32::from_be_bytes(VIP2));
    // IPv6: 2001:db8::/64 on port 0 (the VIP 2001:db8::64, fuzz/seeds.py),
    // 2001:db8:1::/64 on port 1 (the real servers)
    addrs
        .add_port_addr6(0, Ipv6Cidr::new(NET6_0 | 1, 64).unwrap())
        .unwrap();
    addrs
        .add_port_addr6(1, Ipv6Cidr::new(NET6_1 | 1, 64).unwrap())
        .unwrap();
    addrs.set_vips6([VIP6]);
    let routes6 = RouteTable6::new(&addrs, &[]).unwrap();
    let mut neigh6 = NeighTable::<u128>::new(NeighConfig::default());
    for l in [0x11u8, 0x13, 0x14] {
        neigh6
            .add_static(NET6_1 | l as u128, [2, 0, 0, 0, 6, l], 1)
            .unwrap();
    }
    for c in 2..=9u8 {
        neigh6
            .add_static(NET6_0 | c as u128, [2, 0, 0, 0, 7, c], 0)
            .unwrap();
    }
    let routes = RouteTable::new(&addrs, &[]).unwrap();
    let mut neigh = NeighTable::new(NeighConfig::default());
    for l in KNOWN_RS {
        neigh
            .add_static(u32::from_be_bytes(rs(l)), [2, 0, 0, 0, 0, l], 1)
            .unwrap();
    }
    for c in 2..=9u8 {
        neigh
            .add_static(u32::from_be_bytes([10, 0, 0, c]), [2, 0, 0, 0, 1, c], 0)
            .unwrap();
    }
    let ports: Arc<[PortInfo]> = [true, false]
        .iter()
        .map(|&kernel| PortInfo {
            mac: OUR_MAC,
            mtu: 1500,
            kernel,
        })
        .collect();
    let base = NetView::new(
        ports,
        Arc::new(addrs),
        Arc::new(routes),
        Arc::new(neigh.snapshot()),
    )
    .with_routes6(Arc::new(routes6));
    let mut ids = LbIds::new(16, 64);
    let mut b = SnapshotBuilder::new();
    // a small Maglev table: the default one's build is most of a run
    b.mh_table_size(251).synproxy(true);
    // the SYN proxy on a NAT service: cookies, splices, translation
    let mut sp = service(Proto::Tcp, VIP, 8443, SchedKind::Rr, None);
    sp.synproxy = true;
    b.service(
        sp,
        vec![
            dest(11, 8443, Method::Nat, 1),
            dest(12, 8443, Method::Nat, 1),
        ],
    );
    b.service(
        service(Proto::Tcp, VIP, 80, SchedKind::Rr, None),
        vec![
            dest(11, 8080, Method::Nat, 1),
            dest(12, 8080, Method::Nat, 2),
        ],
    );
    b.service(
        service(Proto::Tcp, VIP, 443, SchedKind::Wlc, Some(300)),
        vec![dest(13, 443, Method::Dr, 1), dest(14, 443, Method::Dr, 0)],
    );
    b.service(
        service(Proto::Udp, VIP, 53, SchedKind::Sh, None),
        vec![dest(14, 53, Method::Tun, 1), dest(15, 53, Method::Tun, 1)],
    );
    b.service(
        service(Proto::Tcp, VIP2, 80, SchedKind::Mh, None),
        vec![
            dest(11, 80, Method::Dr, 1),
            dest(13, 80, Method::Tun, 1),
            dest(12, 80, Method::Nat, 1),
        ],
    );
    // the FTP helper (a NAT service on port 21): control segments'
    // lines rewritten and shifted, expected data connections
    b.service(
        service(Proto::Tcp, VIP, 21, SchedKind::Rr, None),
        vec![dest(11, 21, Method::Nat, 1), dest(12, 21, Method::Nat, 1)],
    );
    // FullNAT with the PROXY header inserted and shifted
    let mut fnat = service(Proto::Tcp, VIP2, 443, SchedKind::Rr, None);
    fnat.local_addresses = vec![Ipv4Addr::new(172, 16, 0, 200).into()];
    fnat.client_address = dirigo::lb::spec::ClientAddress::ProxyV2;
    b.service(
        fnat,
        vec![
            dest(11, 443, Method::FullNat, 1),
            dest(13, 443, Method::FullNat, 1),
        ],
    );
    // SNAT: the real servers' own connections out, through the clients'
    // network
    b.snat(&[dirigo::lb::snat::SnatRule {
        source: dirigo::lb::mark::Prefix {
            addr: Ipv4Addr::new(172, 16, 0, 0).into(),
            len: 24,
        },
        pool: vec![Ipv4Addr::new(10, 0, 0, 200).into()],
        max_conns: 8,
        port_lo: 1024,
        port_hi: 65535,
    }]);
    // IPv6: NAT and DR (one real server never resolved), UDP by TUN
    let v6 = |a: u128| std::net::IpAddr::V6(a.into());
    let mut s6 = service(Proto::Tcp, VIP, 80, SchedKind::Rr, None);
    s6.key.vip = v6(VIP6);
    let d6 = |l: u8, port: u16, method: Method| DestSpec {
        key: DestKey {
            addr: v6(NET6_1 | l as u128),
            port,
        },
        method,
        weight: 1,
        upper: 0,
        lower: 0,
        tun: Default::default(),
    };
    b.service(
        s6,
        vec![
            d6(0x11, 8080, Method::Nat),
            d6(0x12, 8080, Method::Nat),
            d6(0x13, 80, Method::Dr),
        ],
    );
    let mut u6 = service(Proto::Udp, VIP, 53, SchedKind::Rr, None);
    u6.key.vip = v6(VIP6);
    b.service(u6, vec![d6(0x14, 53, Method::Tun)]);
    let snap = b.build(&mut ids, 1).unwrap();
    let mut lbs = Vec::new();
    let mut ws = Vec::new();
    for i in 0..WORKERS {
        let lb = Balancer::new(
            &BalancerConfig {
                conn_capacity: CAPACITY,
                conn6_capacity: CAPACITY,
                // small enough to fill: a full one schedules without
                persist_capacity: 16,
                seed: i as u32 + 7,
                synproxy: true,
                ..Default::default()
            },
            64,
            16,
        );
        assert_eq!(lb.table().capacity(), CAPACITY);
        assert_eq!(lb.table6().capacity(), CAPACITY);
        ws.push(WorkerShared::new(lb.stats(), PORTS, i as u32 + 1));
        lbs.push(lb);
    }
    let shared = Arc::new(Shared {
        net: Arc::new(ArcSwap::from_pointee(
            base.with_neigh6(Arc::new(neigh6.snapshot())),
        )),
        lb: Arc::new(ArcSwap::from_pointee(snap)),
        events: ArrayQueue::new(16),
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
    World {
        shared,
        pipes,
        neigh,
        neigh6,
        base,
        hold: HoldArea::new(),
        now: 1,
    }
}

/// The counters every check reads, summed over the workers.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Tally {
    tx: u64,
    steered_out: u64,
    steered_in: u64,
    drops: u64,
    arp_learned: u64,
    lb_dropped: u64,
    lb_reasons: u64,
}

impl World {
    fn tally(&mut self) -> Tally {
        let mut t = Tally::default();
        for (i, p) in self.pipes.iter_mut().enumerate() {
            p.housekeeping(self.now);
            let w = &self.shared.workers[i];
            for n in w.counters.iter() {
                match n.name {
                    "forwarded" | "echo_replied" | "arp_replied" | "nd_advertised"
                    | "echo6_replied" => t.tx += n.value,
                    "steered_out" => t.steered_out += n.value,
                    "steered_in" => t.steered_in += n.value,
                    // frames consumed by learning: ARP, Neighbour Advertisements
                    "arp_learned" | "nd_taken" => t.arp_learned += n.value,
                    "lb_dropped" => {
                        t.lb_dropped += n.value;
                        t.drops += n.value;
                    }
                    // not per frame: an event or a copy lost beside a verdict
                    "events_lost" | "kernel_copy_lost" => {}
                    _ if n.drop => t.drops += n.value,
                    _ => {}
                }
            }
            t.lb_reasons += w.lb.drop_counts().map(|(_, v)| v).sum::<u64>();
            let conns = w.lb.conns.load(Relaxed);
            assert!(
                conns <= 2 * CAPACITY as u64,
                "worker {i}: {conns} connections in two tables of {CAPACITY}"
            );
        }
        t
    }

    /// A new view: the base with the neighbor tables as they are now.
    fn publish_neigh(&mut self) {
        let v = self
            .base
            .with_neigh(Arc::new(self.neigh.snapshot()))
            .with_neigh6(Arc::new(self.neigh6.snapshot()));
        self.shared.net.store(Arc::new(v));
        for p in &mut self.pipes {
            p.begin_burst(self.now);
        }
    }

    /// The control thread's round: learn what the workers reported; with
    /// `answer`, every pending resolution gets an ARP reply (or a
    /// Neighbour Advertisement).
    fn control(&mut self, answer: bool) {
        while let Some(ev) = self.shared.events.pop() {
            match ev {
                Event::Learn {
                    ip,
                    mac,
                    port,
                    create,
                } => {
                    self.neigh.learn(ip, mac, port, self.now, create);
                }
                Event::Resolve { ip, port } => {
                    let _ = self.neigh.resolve(ip, port, self.now);
                    if answer {
                        let mac = [2, 0, 0, 9, (ip >> 8) as u8, ip as u8];
                        self.neigh.learn(ip, mac, port, self.now, true);
                    }
                }
                Event::Learn6 { port, mac, .. } => {
                    assert!((port as usize) < PORTS);
                    assert!(mac[0] & 1 == 0, "a group MAC learned");
                }
                Event::Resolve6 { ip, port } => {
                    assert!((port as usize) < PORTS);
                    // only the real server without a neighbour entry
                    assert_eq!(ip, NET6_1 | 0x12, "an unexpected IPv6 next hop");
                    let _ = self.neigh6.resolve(ip, port, self.now);
                    if answer {
                        let mac = [2, 0, 0, 9, 6, ip as u8];
                        self.neigh6.learn(ip, mac, port, self.now, true);
                    }
                }
                Event::Looped { port } => assert!((port as usize) < PORTS),
            }
        }
        self.publish_neigh();
    }
}

/// What one operation's verdicts must add to.
#[derive(Default)]
struct Seen {
    tx: u64,
    steer: u64,
    steered: u64,
    drops: u64,
}

/// `PIPELINE_TRACE=1`: print every verdict (replaying an input by hand).
fn trace() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("PIPELINE_TRACE").is_some())
}

impl Seen {
    fn verdict(&mut self, v: Verdict) {
        if trace() {
            eprintln!("verdict {v:?}");
        }
        match v {
            Verdict::Tx(p) => {
                assert!((p as usize) < PORTS, "{v:?}");
                self.tx += 1;
            }
            Verdict::Kernel(p) => assert!((p as usize) < PORTS, "{v:?}"),
            Verdict::Steer(w) => {
                assert!((w as usize) < WORKERS, "{v:?}");
                self.steer += 1;
            }
            Verdict::Drop => self.drops += 1,
            Verdict::Hold(_) | Verdict::Hold6(_) | Verdict::Wait(_) => {}
        }
    }
}

fn check(before: Tally, after: Tally, seen: &Seen) {
    let d = |f: fn(&Tally) -> u64| f(&after) - f(&before);
    assert_eq!(d(|t| t.tx), seen.tx, "Tx verdicts vs tx counters");
    assert_eq!(
        d(|t| t.steered_out),
        seen.steer,
        "Steer verdicts vs steered_out"
    );
    assert_eq!(
        d(|t| t.steered_in),
        seen.steered,
        "steered packets vs steered_in"
    );
    let drops = d(|t| t.drops);
    assert!(
        drops <= seen.drops && seen.drops <= drops + d(|t| t.arp_learned),
        "{} Drop verdicts, {drops} counted drops, {} ARP learned",
        seen.drops,
        d(|t| t.arp_learned)
    );
    assert_eq!(
        after.lb_dropped, after.lb_reasons,
        "lb_dropped vs the core's reasons"
    );
}

/// Split the next frame off `data`: a big-endian u16 length, then that
/// many bytes (fewer at the end of the input).
fn frame<'a>(data: &mut &'a [u8]) -> Option<&'a [u8]> {
    if data.len() < 2 {
        return None;
    }
    let n = (u16::from_be_bytes([data[0], data[1]]) as usize).min(data.len() - 2);
    let f = &data[2..2 + n];
    *data = &data[2 + n..];
    Some(f)
}

/// One frame to worker `at` on `port`, a steer followed to the owner, a
/// hold kept in the hold area.
fn one(w: &mut World, seen: &mut Seen, at: usize, port: u16, f: &[u8]) {
    let mut b = VecBuf::new(f);
    let now = w.now;
    let mut v = w.pipes[at].process(&mut b, Arrival::wire(port, now));
    seen.verdict(v);
    // the worker whose verdict it is (a Hold6's ticket is its)
    let mut by = at;
    if let Verdict::Steer(o) = v {
        seen.steered += 1;
        by = o as usize;
        v = w.pipes[by].process(&mut b, Arrival::steered(port, now));
        assert!(!matches!(v, Verdict::Steer(_)), "steered twice");
        seen.verdict(v);
    }
    match v {
        Verdict::Hold(ip) => w.hold.hold(b, Hop::V4(ip), port, now),
        Verdict::Hold6(t) => w.hold.hold6(&mut w.pipes[by], b, t, port, now),
        Verdict::Wait(c) => w.hold.wait(b, c, port, now),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let mut w = world();
    let mut data = data;
    let mut ops = 0;
    let mut before = w.tally();
    while let Some((&op, rest)) = data.split_first() {
        data = rest;
        ops += 1;
        if ops > 256 {
            break;
        }
        w.now += STEPS_NS[(op >> 5) as usize];
        let port = u16::from(op & 0x10 != 0);
        let at = usize::from(op & 0x08 != 0);
        let mut seen = Seen::default();
        match op & 0x7 {
            // one frame on its own
            0..=3 => {
                let Some(f) = frame(&mut data) else { break };
                one(&mut w, &mut seen, at, port, f);
            }
            // a burst: a count, then that many frames
            4 => {
                let Some((&n, rest)) = data.split_first() else {
                    break;
                };
                data = rest;
                let n = (n as usize % (2 * BURST)) + 1;
                let mut bufs: Vec<VecBuf> = Vec::with_capacity(n);
                while bufs.len() < n {
                    let Some(f) = frame(&mut data) else { break };
                    bufs.push(VecBuf::new(f));
                }
                let mut out = vec![Verdict::Drop; bufs.len()];
                let now = w.now;
                w.pipes[at].begin_burst(now);
                w.pipes[at].process_burst(&mut bufs, Arrival::wire(port, now), &mut out);
                // what another worker owns goes there, as one burst
                let mut steered: Vec<Vec<VecBuf>> = vec![Vec::new(); WORKERS];
                for (b, &v) in bufs.into_iter().zip(&out) {
                    seen.verdict(v);
                    match v {
                        Verdict::Steer(o) => steered[o as usize].push(b),
                        Verdict::Hold(ip) => w.hold.hold(b, Hop::V4(ip), port, now),
                        Verdict::Hold6(t) => w.hold.hold6(&mut w.pipes[at], b, t, port, now),
                        Verdict::Wait(c) => w.hold.wait(b, c, port, now),
                        _ => {}
                    }
                }
                for (o, mut bs) in steered.into_iter().enumerate() {
                    if bs.is_empty() {
                        continue;
                    }
                    let mut out = vec![Verdict::Drop; bs.len()];
                    seen.steered += bs.len() as u64;
                    w.pipes[o].process_burst(&mut bs, Arrival::steered(port, now), &mut out);
                    for (b, &v) in bs.into_iter().zip(&out) {
                        assert!(!matches!(v, Verdict::Steer(_)), "steered twice");
                        seen.verdict(v);
                        match v {
                            Verdict::Hold(ip) => w.hold.hold(b, Hop::V4(ip), port, now),
                            Verdict::Hold6(t) => w.hold.hold6(&mut w.pipes[o], b, t, port, now),
                            Verdict::Wait(c) => w.hold.wait(b, c, port, now),
                            _ => {}
                        }
                    }
                }
            }
            // the control thread: learn, maybe answer, then the workers
            // release what is now resolved (every held packet went to
            // worker `at`'s owner already: release it there)
            5 | 6 => {
                w.control(op & 1 == 1);
                let now = w.now;
                let mut sent = Vec::new();
                w.hold
                    .release(&mut w.pipes[at], now, |b, v| sent.push((b, v)));
                // a held packet is processed as received: a Steer is only
                // counted here (the loop would hand it over)
                for (_, v) in sent {
                    seen.verdict(v);
                }
            }
            // a frame the kernel interface sends to dirigo itself
            _ => {
                let Some(f) = frame(&mut data) else { break };
                let mut b = VecBuf::new(f);
                let now = w.now;
                let v = w.pipes[0].process(&mut b, Arrival::kernel(port, now));
                assert!(!matches!(v, Verdict::Steer(_)), "a local frame steered");
                seen.verdict(v);
                match v {
                    Verdict::Hold(ip) => w.hold.hold(b, Hop::V4(ip), port, now),
                    Verdict::Hold6(t) => w.hold.hold6(&mut w.pipes[0], b, t, port, now),
                    Verdict::Wait(c) => w.hold.wait(b, c, port, now),
                    _ => {}
                }
            }
        }
        let after = w.tally();
        check(before, after, &seen);
        before = after;
    }
    // every table's listing agrees with its census (count, walk, gauge,
    // the real servers' counters) and its capacity
    for (i, ws) in w.shared.workers.iter().enumerate() {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let pushed = ws.conn_requests.push(ConnRequest {
            limit: usize::MAX,
            reply: tx,
        });
        assert!(pushed.is_ok(), "the request queue is empty");
        let now = w.now;
        w.pipes[i].housekeeping(now);
        let walk = rx.try_recv().unwrap();
        assert!(walk.list.len() <= 2 * CAPACITY as usize);
        assert!(walk.census.consistent(), "{:?}", walk.census);
        assert_eq!(walk.list.len() as u64, walk.census.walked);
        assert_eq!(walk.census.gauge, ws.lb.conns.load(Relaxed));
    }
});
