//! The control socket's request handler: [`Ctl`], shared by the socket
//! server's threads and the control loop, answers each request by topic:
//!
//! * `services` — ipvsadm's mutations, listings, `-Z`, connections, reload,
//!   scheduler table fingerprints;
//! * `network` — ports, addresses, routes, neighbors;
//! * `stats` — per-worker and drop counters, rate estimation;
//! * `health` — health checks and maintenance;
//! * `announce` — the VIP routes for a routing daemon (`dirigoctl vips`);
//! * `marks` — the mark rules of fwmark services (`dirigoctl mark`).

mod announce;
mod ctl;
mod health;
mod marks;
mod network;
mod services;
mod stats;

pub use ctl::{Ctl, HealthEngine, KernelAnnouncer, RateEst, StatKey};

use crate::ctl::server::Handler;
use ctl::lock;
use dirigo_proto::proto::{BatchCmd, CtlError, Request, Response};
use dirigo_proto::view::VersionInfo;

impl Handler for Ctl {
    fn handle(&self, req: Request) -> Result<Response, CtlError> {
        match req {
            // `-Z` alone only moves the counters' baselines: no new snapshot.
            Request::Mutate(BatchCmd::Zero { service }) => {
                self.zero(service).map(|_| Response::Done)
            }
            Request::Mutate(c) => self.mutate(&[c]).map(|_| Response::Done),
            Request::RestoreBatch { cmds } => self.mutate(&cmds).map(|_| Response::Done),
            Request::List(opts) => self.list(&opts),
            Request::ListConns { service, limit } => self.conns(service, limit),
            Request::GetTimeouts => Ok(Response::Timeouts(lock(&self.state).timeouts)),
            Request::Ports { xstats } => Ok(self.ports(xstats)),
            Request::Addresses => Ok(self.addresses()),
            Request::AddrAdd {
                port,
                addr,
                prefix_len,
            } => self.addr_add(port, addr, prefix_len),
            Request::AddrDel { port, addr } => self.addr_del(port, addr),
            Request::Routes => Ok(self.routes()),
            Request::Neighbors => Ok(self.neighbors()),
            Request::NeighAdd { port, addr, mac } => self.neigh_add(port, addr, mac),
            Request::NeighFlush { port } => self.neigh_flush(port),
            Request::Lcores => Ok(self.lcores()),
            Request::Drops => Ok(self.drops()),
            Request::Reload => self.reload(),
            Request::Health => Ok(self.health()),
            Request::Sync => Ok(Response::Sync(self.sync_info())),
            Request::HealthSet {
                service,
                dest,
                enable,
            } => self.health_set(service, dest, enable),
            Request::Fingerprint { service } => self.fingerprints(service),
            Request::Vips => Ok(self.vips()),
            Request::Census => self.census(),
            Request::Handoff => Ok(Response::Handoff(self.handoff.info())),
            Request::Marks => Ok(Response::Marks(lock(&self.state).marks.clone())),
            Request::Snat => Ok(self.snat()),
            Request::MarkAdd { rule } => self.mark_add(rule),
            Request::MarkDel { rule } => self.mark_del(rule),
            Request::Version => Ok(Response::Version(VersionInfo {
                version: crate::version::VERSION.into(),
                proto: dirigo_proto::proto::PROTO_VERSION,
                dpdk: Some(crate::version::dpdk().into()),
                commit: Some(crate::version::COMMIT.into()),
            })),
        }
    }
}
