//! The control loop on the main lcore: worker events (ARP learning and
//! resolution requests), resolution of every real server's next hop,
//! neighbor aging and probes, gratuitous ARP, slot
//! reclaim and rate estimation. Frames it sends go to worker 0 through the
//! inject ring.

use super::control::ControlState;
use super::handler::Ctl;
use crate::clock::now_ns;
use crate::dataplane::shared::Event;
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6, Resolve, Resolve6};
use crate::net::neigh::{Probe, ResolveAction};
use crate::net::view::NetView;
use crate::pmd::mempool::Mempool;
use crate::pmd::ring::MbufRing;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Allocate an mbuf holding `frame` (padded to 60 bytes) for `port` and
/// queue it for worker 0 to transmit. Counted as lost when the pool or the
/// ring is full.
fn inject(pool: &Mempool, ring: &MbufRing, port: u16, frame: &[u8]) -> bool {
    let Some(mut m) = pool.alloc() else {
        return false;
    };
    let len = frame.len().max(60);
    if !m.append(len) {
        return false;
    }
    let d = m.data_mut();
    d[..frame.len()].copy_from_slice(frame);
    d[frame.len()..].fill(0);
    m.set_port(port);
    ring.enqueue(m).is_ok()
}

/// Warnings about looped ARP frames (our own MAC as sender), at most one
/// per port every 10 s.
#[derive(Default)]
struct LoopedWarnings {
    last: std::collections::HashMap<u16, u64>,
}

impl LoopedWarnings {
    fn warn(&mut self, ctl: &Ctl, port: u16, now: u64) {
        let last = self.last.entry(port).or_insert(0);
        if *last != 0 && now.saturating_sub(*last) < 10_000_000_000 {
            return;
        }
        *last = now.max(1);
        let Some(p) = ctl.ports.get(port as usize) else {
            return;
        };
        let total: u64 = ctl
            .shared
            .counter_totals()
            .iter()
            .filter(|n| n.name == "arp_looped")
            .map(|n| n.value)
            .sum();
        eprintln!(
            "dirigo: warning: port {} ({}): ARP frames arrive with this port's own MAC {} as sender ({total} so far, all ports): \
             a bridge or switch is sending dirigo's MAC back (e.g. a Linux bridge that took the MAC of a tap); \
             those hosts cannot reach dirigo",
            p.name,
            p.device,
            dirigo_proto::view::MacAddr(p.mac)
        );
    }
}

/// The main lcore's loop: worker events, ARP resolution and aging,
/// gratuitous ARP, rate estimation, slot reclaim, VIP announcement. Once
/// `term` is set (SIGTERM) the VIP routes are withdrawn, and `stop` is set
/// after the drain time (at once without `[announce]`); the loop ends with
/// `stop`.
pub fn run(ctl: &Ctl, pool: &Mempool, ring: &MbufRing, term: &AtomicBool, stop: &AtomicBool) {
    let mut tx = Injector {
        pool,
        ring,
        buf: [0u8; 128],
    };
    let mut lp = LoopState::new();
    announce_at_start(ctl, &mut tx);
    while !stop.load(Ordering::Relaxed) {
        lp.round(ctl, &mut tx, term, stop);
        crate::clock::nap(Duration::from_millis(5));
    }
}

/// Frames for worker 0 to send, built one at a time in one buffer.
struct Injector<'a> {
    pool: &'a Mempool,
    ring: &'a MbufRing,
    buf: [u8; 128],
}

impl Injector<'_> {
    /// Inject on `port` the frame `build` writes (none: nothing sent).
    fn send(&mut self, port: u16, build: impl FnOnce(&mut [u8]) -> Option<usize>) {
        if let Some(n) = build(&mut self.buf[..]) {
            inject(self.pool, self.ring, port, &self.buf[..n]);
        }
    }
}

/// Neighbor requests to send in one round: ARP (port, IPv4 address)
/// and neighbor solicitations (port, IPv6 address).
#[derive(Default)]
struct Requests {
    arp: Vec<(u16, u32)>,
    nd: Vec<(u16, u128)>,
}

/// What the control loop keeps from one round to the next.
struct LoopState {
    probes: Vec<Probe<u32>>,
    probes6: Vec<Probe<u128>>,
    last_est: Instant,
    rs_epoch: u64,
    last_rs: Instant,
    looped: LoopedWarnings,
    health_epoch: u64,
    drain_until: Option<Instant>,
}

/// Gratuitous ARP for every own address and VIP at start (and
/// unsolicited NA for the IPv6 ones).
fn announce_at_start(ctl: &Ctl, tx: &mut Injector) {
    let st = ctl.state.lock().unwrap_or_else(|p| p.into_inner());
    let addrs = st.own_addrs(&st.services);
    for (p, _) in ctl.ports.iter().enumerate() {
        let mac = ctl.ports[p].mac;
        for a in addrs
            .port_addrs()
            .iter()
            .map(|a| a.cidr.addr)
            .chain(addrs.vips().iter().copied())
        {
            tx.send(p as u16, |b| crate::net::arp::build_gratuitous(b, mac, a));
        }
    }
    // and an unsolicited NA for every configured IPv6 address, on its
    // port (not the link-local ones every port has: a port without
    // IPv6 configured stays silent in IPv6, as the vdev tests expect)
    for a in addrs
        .port_addrs6()
        .iter()
        .filter(|a| !crate::net::wire::ipv6::is_link_local(a.cidr.addr))
    {
        let Some(rp) = ctl.ports.get(a.port as usize) else {
            continue;
        };
        tx.send(a.port, |b| {
            crate::net::nd::build_unsolicited_advert(b, rp.mac, a.cidr.addr)
        });
    }
    // the IPv6 VIPs on every port, as their ARP counterparts above
    for &v in addrs.vips6() {
        for (p, rp) in ctl.ports.iter().enumerate() {
            tx.send(p as u16, |b| {
                crate::net::nd::build_unsolicited_advert(b, rp.mac, v)
            });
        }
    }
}

impl LoopState {
    /// Before the first round: the real servers are due at once, the
    /// rate estimates in 2 s.
    fn new() -> LoopState {
        LoopState {
            probes: Vec::new(),
            probes6: Vec::new(),
            last_est: Instant::now(),
            rs_epoch: u64::MAX,
            last_rs: Instant::now(),
            looped: LoopedWarnings::default(),
            health_epoch: u64::MAX,
            drain_until: None,
        }
    }

    /// One round: events, resolution, requests, announcements and slot
    /// reclaim under the state lock; then health checks, VIP
    /// announcement, the drain at `term` and rate estimation.
    fn round(&mut self, ctl: &Ctl, tx: &mut Injector, term: &AtomicBool, stop: &AtomicBool) {
        let now = now_ns();
        let mut st = ctl.state.lock().unwrap_or_else(|p| p.into_inner());
        let net = ctl.shared.net.load_full();
        let mut req = Requests::default();
        self.take_events(ctl, &mut st, now, &mut req);
        self.resolve_reals(ctl, &mut st, &net, now, &mut req);
        self.send_requests(&mut st, &net, now, req.arp, tx);
        self.send_solicits(&mut st, &net, now, req.nd, tx);
        st.publish_neigh(&ctl.shared);
        announce_pending(ctl, &mut st, tx);
        reclaim(ctl, &mut st);
        drop(st);
        self.health_epoch = ctl.health_tick(self.health_epoch);
        ctl.announce_tick();
        self.drain(ctl, term, stop);
        self.estimate(ctl);
    }

    /// The workers' events: neighbors learned, addresses to resolve,
    /// looped ARP frames.
    fn take_events(&mut self, ctl: &Ctl, st: &mut ControlState, now: u64, req: &mut Requests) {
        while let Some(ev) = ctl.shared.events.pop() {
            match ev {
                Event::Learn {
                    ip,
                    mac,
                    port,
                    create,
                } => {
                    st.neigh.learn(ip, mac, port, now, create);
                }
                Event::Learn6 {
                    ip,
                    mac,
                    port,
                    create,
                } => {
                    st.net6.neigh.learn(ip, mac, port, now, create);
                }
                Event::Resolve { ip, port } => {
                    if let ResolveAction::SendRequest { port } = st.neigh.resolve(ip, port, now) {
                        req.arp.push((port, ip));
                    }
                }
                Event::Resolve6 { ip, port } => {
                    if let ResolveAction::SendRequest { port } =
                        st.net6.neigh.resolve(ip, port, now)
                    {
                        req.nd.push((port, ip));
                    }
                }
                Event::Looped { port } => self.looped.warn(ctl, port, now),
            }
        }
    }

    /// Real servers are resolved as soon as they are configured (and
    /// kept resolved), not by their first packet: a first packet would
    /// wait in the hold area, and the packets behind it (a flood's SYNs
    /// to the same server) would overflow it.
    fn resolve_reals(
        &mut self,
        ctl: &Ctl,
        st: &mut ControlState,
        net: &NetView,
        now: u64,
        req: &mut Requests,
    ) {
        let snap = ctl.shared.lb.load();
        if snap.epoch != self.rs_epoch || self.last_rs.elapsed() >= Duration::from_secs(1) {
            self.rs_epoch = snap.epoch;
            self.last_rs = Instant::now();
            for d in snap.services().iter().flat_map(|s| s.dests.iter()) {
                if d.key.addr.is_ipv6() {
                    if let Resolve6::Unresolved { ip, port } = net.next_hop6(d.addr6) {
                        if let ResolveAction::SendRequest { port } =
                            st.net6.neigh.resolve(ip, port, now)
                        {
                            req.nd.push((port, ip));
                        }
                    }
                    continue;
                }
                if let Resolve::Unresolved { ip, port } = net.next_hop(d.addr) {
                    if let ResolveAction::SendRequest { port } = st.neigh.resolve(ip, port, now) {
                        req.arp.push((port, ip));
                    }
                }
            }
            // IPv6 gateways too: kept resolved from the start
            let gws: Vec<(u128, u16)> = st
                .net6
                .static_routes
                .iter()
                .filter_map(|r| Some((r.via?, r.port?)))
                .collect();
            for (gw, port) in gws {
                if let ResolveAction::SendRequest { port } = st.net6.neigh.resolve(gw, port, now) {
                    req.nd.push((port, gw));
                }
            }
        }
    }

    /// ARP requests: `sends` and the neighbor table's probes.
    fn send_requests(
        &mut self,
        st: &mut ControlState,
        net: &NetView,
        now: u64,
        mut sends: Vec<(u16, u32)>,
        tx: &mut Injector,
    ) {
        self.probes.clear();
        st.neigh.tick(now, &mut self.probes);
        sends.extend(self.probes.iter().map(|p| (p.port, p.ip)));
        for (port, ip) in sends {
            let (Some(pi), Some(src)) = (net.port(port), net.addrs().source_for(port, ip)) else {
                continue;
            };
            tx.send(port, |b| crate::net::arp::build_request(b, pi.mac, src, ip));
        }
    }

    /// Neighbor solicitations: `sends` and the IPv6 neighbor table's
    /// probes.
    fn send_solicits(
        &mut self,
        st: &mut ControlState,
        net: &NetView,
        now: u64,
        mut sends6: Vec<(u16, u128)>,
        tx: &mut Injector,
    ) {
        self.probes6.clear();
        st.net6.neigh.tick(now, &mut self.probes6);
        sends6.extend(self.probes6.iter().map(|p| (p.port, p.ip)));
        for (port, ip) in sends6 {
            let (Some(pi), Some(src)) = (net.port(port), net.addrs().source6_for(port, ip)) else {
                continue;
            };
            tx.send(port, |b| crate::net::nd::build_solicit(b, pi.mac, src, ip));
        }
    }

    /// Once `term` is set: the VIP routes withdrawn and the drain started;
    /// `stop` set when it is over.
    fn drain(&mut self, ctl: &Ctl, term: &AtomicBool, stop: &AtomicBool) {
        if term.load(Ordering::Relaxed) && self.drain_until.is_none() {
            let drain = ctl.announce_drain();
            if !drain.is_zero() {
                super::notify::notify("STOPPING=1");
                eprintln!(
                    "dirigo: stopping: VIP routes withdrawn, forwarding for {} ms more (drain)",
                    drain.as_millis()
                );
            }
            self.drain_until = Some(Instant::now() + drain);
        }
        if self.drain_until.is_some_and(|t| Instant::now() >= t) {
            stop.store(true, Ordering::Relaxed);
        }
    }

    /// The rate estimates, every 2 s.
    fn estimate(&mut self, ctl: &Ctl) {
        let el = self.last_est.elapsed();
        if el >= Duration::from_secs(2) {
            ctl.estimate(el.as_secs_f64());
            self.last_est = Instant::now();
        }
    }
}

/// Gratuitous ARP and unsolicited NA for the addresses and VIPs added
/// since the last round, on every port.
fn announce_pending(ctl: &Ctl, st: &mut ControlState, tx: &mut Injector) {
    let garp: Vec<u32> = std::mem::take(&mut st.pending_garp);
    for a in garp {
        for (p, rp) in ctl.ports.iter().enumerate() {
            tx.send(p as u16, |b| {
                crate::net::arp::build_gratuitous(b, rp.mac, a)
            });
        }
    }
    let na6: Vec<u128> = std::mem::take(&mut st.pending_na6);
    for a in na6 {
        for (p, rp) in ctl.ports.iter().enumerate() {
            tx.send(p as u16, |b| {
                crate::net::nd::build_unsolicited_advert(b, rp.mac, a)
            });
        }
    }
}

/// Free slots of removed services/real servers once no worker can
/// still use them.
fn reclaim(ctl: &Ctl, st: &mut ControlState) {
    let ws: Vec<&crate::lb::stats::WorkerStats> =
        ctl.shared.workers.iter().map(|w| &*w.lb).collect();
    let min_epoch = crate::lb::stats::min_epoch_seen(&ws);
    st.ids
        .dests
        .reclaim(min_epoch, |s| crate::lb::stats::dest_in_use(&ws, s));
    st.ids
        .services
        .reclaim(min_epoch, |s| crate::lb::stats::service_in_use(&ws, s));
}
