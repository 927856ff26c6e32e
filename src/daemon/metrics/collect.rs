//! What one scrape shows, gathered from the same views the control socket
//! answers with (`-L -n --stats`, `lcores`, `drops`, `ports --xstats`,
//! `health`), so a scrape agrees with `dirigoadm` and `dirigoctl` by
//! construction, plus what only the metrics show (the workers' loop
//! counters, the control server's and the endpoint's own counts).

use crate::ctl::server::{Handler, ServerCounters};
use crate::daemon::handler::Ctl;
use crate::dataplane::stats::LoopCounters;
use crate::lb::spec::ServiceKey;
use dirigo_proto::proto::{ListOpts, Request, Response};
use dirigo_proto::view::{
    DropCount, HandoffInfo, HealthReport, LcoreInfo, PortInfo, ServiceInfo, Stats, VipReport,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// One worker in a scrape.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerSample {
    /// `dirigoctl lcores`' line of it.
    pub info: LcoreInfo,
    /// Its loop's counters.
    pub loops: LoopCounters,
    /// Busy time over loop time since the previous scrape (since start on
    /// the first).
    pub busy_ratio: f64,
}

/// The endpoint's own counts.
#[derive(Debug, Default)]
pub struct EndpointCounters {
    /// Requests answered (any status).
    pub requests: AtomicU64,
    /// Connections closed at once: too many open.
    pub refused: AtomicU64,
    /// Connections closed at their deadline (a slow or stuck client).
    pub timed_out: AtomicU64,
}

/// Everything one exposition shows, as plain values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scrape {
    /// dirigo's version.
    pub version: String,
    /// `-L -n --stats`: services and real servers (effective weights).
    pub services: Vec<ServiceInfo>,
    /// IPVS's global totals: the services' counters summed, plus those
    /// of services removed since the endpoint started.
    pub totals: Stats,
    /// Ports with basic and extended counters.
    pub ports: Vec<PortInfo>,
    /// Drops by reason.
    pub drops: Vec<DropCount>,
    /// Workers.
    pub workers: Vec<WorkerSample>,
    /// Whether the workers keep the burst histogram.
    pub burst_histogram: bool,
    /// Checked servers (`None`: the request failed).
    pub health: Option<HealthReport>,
    /// VIPs and their announce state (`None`: the request failed).
    pub vips: Option<VipReport>,
    /// The connection handoff at start (`None`: the request failed).
    pub handoff: Option<HandoffInfo>,
    /// Control socket: requests, errors.
    pub control: (u64, u64),
    /// The endpoint: requests, refused, timed out.
    pub endpoint: (u64, u64, u64),
}

/// Where a scrape's values come from.
pub struct Sources {
    /// The control handle (the same handler the socket uses).
    pub ctl: Arc<Ctl>,
    /// The control socket server's counts.
    pub control: Arc<ServerCounters>,
    /// The endpoint's own.
    pub endpoint: Arc<EndpointCounters>,
    /// `[metrics] burst_histogram`.
    pub burst_histogram: bool,
}

/// What a scrape remembers for the next one: the loop counters (for the
/// busy ratio) and the services' counters (so the IPVS totals keep the
/// traffic of a removed service, as the kernel's do).
#[derive(Debug, Default)]
pub struct Collector {
    prev_loops: Vec<LoopCounters>,
    last: HashMap<ServiceKey, Stats>,
    retired: Stats,
}

fn add(a: &mut Stats, b: &Stats) {
    a.conns += b.conns;
    a.inpkts += b.inpkts;
    a.outpkts += b.outpkts;
    a.inbytes += b.inbytes;
    a.outbytes += b.outbytes;
}

/// `busy` over `total` of the interval between `prev` and `cur`; 0 when no
/// time passed (a worker that has not published yet).
pub fn busy_ratio(prev: &LoopCounters, cur: &LoopCounters) -> f64 {
    let total = cur.loop_ns.saturating_sub(prev.loop_ns);
    let busy = cur.busy_ns.saturating_sub(prev.busy_ns);
    if total == 0 {
        0.0
    } else {
        (busy as f64 / total as f64).clamp(0.0, 1.0)
    }
}

impl Collector {
    /// The IPVS totals for `services`, keeping what services gone since
    /// the last call had counted.
    pub fn totals(&mut self, services: &[ServiceInfo]) -> Stats {
        let now: HashMap<ServiceKey, Stats> =
            services.iter().map(|s| (s.spec.key, s.stats)).collect();
        for (k, st) in &self.last {
            if !now.contains_key(k) {
                add(&mut self.retired, st);
            }
        }
        let mut t = self.retired;
        for st in now.values() {
            add(&mut t, st);
        }
        self.last = now;
        t
    }

    /// Each worker's busy ratio since the last call.
    pub fn ratios(&mut self, loops: &[LoopCounters]) -> Vec<f64> {
        let r = loops
            .iter()
            .enumerate()
            .map(|(i, c)| {
                busy_ratio(
                    self.prev_loops.get(i).unwrap_or(&LoopCounters::default()),
                    c,
                )
            })
            .collect();
        self.prev_loops = loops.to_vec();
        r
    }

    /// Gather one scrape. Takes the control state's lock as each listing
    /// does (at most once per cache period: the server renders no more
    /// often).
    pub fn collect(&mut self, src: &Sources) -> Scrape {
        let ctl = &src.ctl;
        let services = match ctl.handle(Request::List(ListOpts {
            stats: true,
            ..ListOpts::default()
        })) {
            Ok(Response::Services(l)) => l.services,
            _ => Vec::new(),
        };
        let ports = match ctl.handle(Request::Ports { xstats: true }) {
            Ok(Response::Ports(p)) => p,
            _ => Vec::new(),
        };
        let drops = match ctl.handle(Request::Drops) {
            Ok(Response::Drops(d)) => d,
            _ => Vec::new(),
        };
        let lcores = match ctl.handle(Request::Lcores) {
            Ok(Response::Lcores(l)) => l,
            _ => Vec::new(),
        };
        let health = match ctl.handle(Request::Health) {
            Ok(Response::Health(h)) => Some(h),
            _ => None,
        };
        let vips = match ctl.handle(Request::Vips) {
            Ok(Response::Vips(v)) => Some(v),
            _ => None,
        };
        let handoff = match ctl.handle(Request::Handoff) {
            Ok(Response::Handoff(h)) => Some(h),
            _ => None,
        };
        let loops: Vec<LoopCounters> = ctl
            .shared
            .workers
            .iter()
            .map(|w| w.loop_stats.read())
            .collect();
        let ratios = self.ratios(&loops);
        let workers = lcores
            .into_iter()
            .zip(loops.into_iter().zip(ratios))
            .map(|(info, (loops, busy_ratio))| WorkerSample {
                info,
                loops,
                busy_ratio,
            })
            .collect();
        let totals = self.totals(&services);
        let e = &src.endpoint;
        Scrape {
            version: env!("CARGO_PKG_VERSION").into(),
            services,
            totals,
            ports,
            drops,
            workers,
            burst_histogram: src.burst_histogram,
            health,
            vips,
            handoff,
            control: (
                src.control.requests.load(Relaxed),
                src.control.errors.load(Relaxed),
            ),
            endpoint: (
                e.requests.load(Relaxed),
                e.refused.load(Relaxed),
                e.timed_out.load(Relaxed),
            ),
        }
    }
}
