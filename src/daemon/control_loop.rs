//! The control loop on the main lcore: worker events (ARP learning and
//! resolution requests), resolution of every real server's next hop,
//! neighbor aging and probes, gratuitous ARP, slot
//! reclaim and rate estimation. Frames it sends go to worker 0 through the
//! inject ring.

use super::handler::Ctl;
use crate::clock::now_ns;
use crate::dataplane::shared::Event;
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6, Resolve, Resolve6};
use crate::net::neigh::ResolveAction;
use crate::pmd::mempool::Mempool;
use crate::pmd::ring::MbufRing;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

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
            crate::ctl::view::MacAddr(p.mac)
        );
    }
}

/// The main lcore's loop: worker events, ARP resolution and aging,
/// gratuitous ARP, rate estimation, slot reclaim, VIP announcement. Once
/// `term` is set (SIGTERM) the VIP routes are withdrawn, and `stop` is set
/// after the drain time (at once without `[announce]`); the loop ends with
/// `stop`.
pub fn run(ctl: &Ctl, pool: &Mempool, ring: &MbufRing, term: &AtomicBool, stop: &AtomicBool) {
    let mut buf = [0u8; 128];
    let mut probes = Vec::new();
    let mut probes6 = Vec::new();
    let mut last_est = std::time::Instant::now();
    let mut rs_epoch = u64::MAX;
    let mut last_rs = std::time::Instant::now();
    let mut looped = LoopedWarnings::default();
    let mut health_epoch = u64::MAX;
    let mut drain_until: Option<std::time::Instant> = None;
    // Gratuitous ARP for every own address and VIP at start.
    {
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
                if let Some(n) = crate::net::arp::build_gratuitous(&mut buf, mac, a) {
                    inject(pool, ring, p as u16, &buf[..n]);
                }
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
            if let Some(n) = crate::net::nd::build_unsolicited_advert(&mut buf, rp.mac, a.cidr.addr)
            {
                inject(pool, ring, a.port, &buf[..n]);
            }
        }
        // the IPv6 VIPs on every port, as their ARP counterparts above
        for &v in addrs.vips6() {
            for (p, rp) in ctl.ports.iter().enumerate() {
                if let Some(n) = crate::net::nd::build_unsolicited_advert(&mut buf, rp.mac, v) {
                    inject(pool, ring, p as u16, &buf[..n]);
                }
            }
        }
    }
    while !stop.load(Ordering::Relaxed) {
        let now = now_ns();
        let mut st = ctl.state.lock().unwrap_or_else(|p| p.into_inner());
        let net = ctl.shared.net.load_full();
        let mut sends: Vec<(u16, u32)> = Vec::new();
        let mut sends6: Vec<(u16, u128)> = Vec::new();
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
                        sends.push((port, ip));
                    }
                }
                Event::Resolve6 { ip, port } => {
                    if let ResolveAction::SendRequest { port } =
                        st.net6.neigh.resolve(ip, port, now)
                    {
                        sends6.push((port, ip));
                    }
                }
                Event::Looped { port } => looped.warn(ctl, port, now),
            }
        }
        // Real servers are resolved as soon as they are configured (and
        // kept resolved), not by their first packet: a first packet would
        // wait in the hold area, and the packets behind it (a flood's SYNs
        // to the same server) would overflow it.
        let snap = ctl.shared.lb.load();
        if snap.epoch != rs_epoch || last_rs.elapsed() >= Duration::from_secs(1) {
            rs_epoch = snap.epoch;
            last_rs = std::time::Instant::now();
            for d in snap.services().iter().flat_map(|s| s.dests.iter()) {
                if d.key.addr.is_ipv6() {
                    if let Resolve6::Unresolved { ip, port } = net.next_hop6(d.addr6) {
                        if let ResolveAction::SendRequest { port } =
                            st.net6.neigh.resolve(ip, port, now)
                        {
                            sends6.push((port, ip));
                        }
                    }
                    continue;
                }
                if let Resolve::Unresolved { ip, port } = net.next_hop(d.addr) {
                    if let ResolveAction::SendRequest { port } = st.neigh.resolve(ip, port, now) {
                        sends.push((port, ip));
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
                    sends6.push((port, gw));
                }
            }
        }
        probes.clear();
        st.neigh.tick(now, &mut probes);
        sends.extend(probes.iter().map(|p| (p.port, p.ip)));
        for (port, ip) in sends {
            let (Some(pi), Some(src)) = (net.port(port), net.addrs().source_for(port, ip)) else {
                continue;
            };
            if let Some(n) = crate::net::arp::build_request(&mut buf, pi.mac, src, ip) {
                inject(pool, ring, port, &buf[..n]);
            }
        }
        probes6.clear();
        st.net6.neigh.tick(now, &mut probes6);
        sends6.extend(probes6.iter().map(|p| (p.port, p.ip)));
        for (port, ip) in sends6 {
            let (Some(pi), Some(src)) = (net.port(port), net.addrs().source6_for(port, ip)) else {
                continue;
            };
            if let Some(n) = crate::net::nd::build_solicit(&mut buf, pi.mac, src, ip) {
                inject(pool, ring, port, &buf[..n]);
            }
        }
        st.publish_neigh(&ctl.shared);
        let garp: Vec<u32> = std::mem::take(&mut st.pending_garp);
        for a in garp {
            for (p, rp) in ctl.ports.iter().enumerate() {
                if let Some(n) = crate::net::arp::build_gratuitous(&mut buf, rp.mac, a) {
                    inject(pool, ring, p as u16, &buf[..n]);
                }
            }
        }
        let na6: Vec<u128> = std::mem::take(&mut st.pending_na6);
        for a in na6 {
            for (p, rp) in ctl.ports.iter().enumerate() {
                if let Some(n) = crate::net::nd::build_unsolicited_advert(&mut buf, rp.mac, a) {
                    inject(pool, ring, p as u16, &buf[..n]);
                }
            }
        }
        // Free slots of removed services/real servers once no worker can
        // still use them.
        let ws: Vec<&crate::lb::stats::WorkerStats> =
            ctl.shared.workers.iter().map(|w| &*w.lb).collect();
        let min_epoch = crate::lb::stats::min_epoch_seen(&ws);
        st.ids
            .dests
            .reclaim(min_epoch, |s| crate::lb::stats::dest_in_use(&ws, s));
        st.ids
            .services
            .reclaim(min_epoch, |s| crate::lb::stats::service_in_use(&ws, s));
        drop(st);
        health_epoch = ctl.health_tick(health_epoch);
        ctl.announce_tick();
        if term.load(Ordering::Relaxed) && drain_until.is_none() {
            let drain = ctl.announce_drain();
            if !drain.is_zero() {
                super::notify::notify("STOPPING=1");
                eprintln!(
                    "dirigo: stopping: VIP routes withdrawn, forwarding for {} ms more (drain)",
                    drain.as_millis()
                );
            }
            drain_until = Some(std::time::Instant::now() + drain);
        }
        if drain_until.is_some_and(|t| std::time::Instant::now() >= t) {
            stop.store(true, Ordering::Relaxed);
        }
        let el = last_est.elapsed();
        if el >= Duration::from_secs(2) {
            ctl.estimate(el.as_secs_f64());
            last_est = std::time::Instant::now();
        }
        crate::clock::nap(Duration::from_millis(5));
    }
}
