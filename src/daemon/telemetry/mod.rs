//! dirigo's DPDK telemetry commands, beside DPDK's own in the telemetry
//! socket (`dpdk-telemetry.py -f <file-prefix>`):
//!
//! * `/dirigo/services` — services and real servers (`dirigoadm -L -n`,
//!   with counters);
//! * `/dirigo/workers` — per-worker counters (`dirigoctl lcores`);
//! * `/dirigo/drops` — drop reasons (`dirigoctl drops`);
//! * `/dirigo/health` — checked servers (`dirigoctl health`).
//!
//! Each asks [`Ctl`] what the control socket would answer and shapes it
//! within the library's limits ([`build`]). A parameter after a comma is
//! the first entry to show (`/dirigo/services,40`), for answers longer
//! than one 16 KiB page. The commands run on the telemetry library's
//! threads; they reach `Ctl` through [`SOURCE`], which [`Telemetry`]
//! empties when the daemon stops (waiting for answers in progress), so a
//! command asked later — DPDK cannot unregister it — answers an error
//! and touches nothing that is gone.

pub mod build;
#[cfg(test)]
mod tests;

use super::error::DaemonError;
use super::handler::Ctl;
use crate::ctl::server::Handler as _;
use crate::pmd::telemetry::{self as tel, output_budget, Answer, Command, Dict};
use dirigo_proto::proto::{ListOpts, Request, Response};
use std::sync::{Arc, OnceLock, RwLock};

/// `/dirigo/services`.
pub const SERVICES: &str = "/dirigo/services";
/// `/dirigo/workers`.
pub const WORKERS: &str = "/dirigo/workers";
/// `/dirigo/drops`.
pub const DROPS: &str = "/dirigo/drops";
/// `/dirigo/health`.
pub const HEALTH: &str = "/dirigo/health";

/// What the commands read; `None` before start and after stop.
static SOURCE: RwLock<Option<Arc<Ctl>>> = RwLock::new(None);

/// The commands answer from the daemon while this lives; dropping it
/// (the daemon stopping, before EAL cleanup) makes them answer an error.
pub struct Telemetry {
    _private: (),
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        // waits for the answers in progress to finish
        *SOURCE.write().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// Register the commands (once per process) and answer them from `ctl`
/// until the returned guard is dropped.
pub fn start(ctl: &Arc<Ctl>) -> Result<Telemetry, DaemonError> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| tel::register(commands()).map_err(|e| e.to_string()))
        .clone()
        .map_err(DaemonError::Other)?;
    *SOURCE.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(ctl));
    Ok(Telemetry { _private: () })
}

fn commands() -> Vec<Command> {
    vec![
        Command {
            name: SERVICES,
            help: "dirigo's services and real servers (dirigoadm -L -n --stats). Parameter: first entry to show",
            handler: Box::new(|p| answer(SERVICES, p, services)),
        },
        Command {
            name: WORKERS,
            help: "dirigo's per-worker counters (dirigoctl lcores). Parameter: first entry to show",
            handler: Box::new(|p| answer(WORKERS, p, workers)),
        },
        Command {
            name: DROPS,
            help: "dirigo's drop reasons and counts (dirigoctl drops). Parameter: first entry to show",
            handler: Box::new(|p| answer(DROPS, p, drops)),
        },
        Command {
            name: HEALTH,
            help: "dirigo's health checks (dirigoctl health). Parameter: first entry to show",
            handler: Box::new(|p| answer(HEALTH, p, health)),
        },
    ]
}

/// The first entry to show: none given is 0.
pub fn parse_start(cmd: &str, param: Option<&str>) -> Result<usize, String> {
    match param {
        None => Ok(0),
        Some(p) => p.parse().map_err(|_| {
            format!("the parameter is the first entry to show, a number ({cmd},40), not '{p}'")
        }),
    }
}

/// Run `f` on the daemon's `Ctl` with the page's start and budget.
fn answer(cmd: &str, param: Option<&str>, f: fn(&Ctl, usize, usize) -> Answer) -> Answer {
    let start = parse_start(cmd, param)?;
    let src = SOURCE.read().unwrap_or_else(|p| p.into_inner());
    match src.as_deref() {
        Some(ctl) => f(ctl, start, output_budget(cmd)),
        None => Err("dirigo is not running (stopped or not yet started)".into()),
    }
}

fn ask(ctl: &Ctl, req: Request) -> Result<Response, String> {
    ctl.handle(req).map_err(|e| e.to_string())
}

fn unexpected(r: Response) -> String {
    format!("unexpected answer from the control handler: {r:?}")
}

fn services(ctl: &Ctl, start: usize, budget: usize) -> Result<Dict, String> {
    let opts = ListOpts {
        service: None,
        stats: true,
        rate: false,
    };
    match ask(ctl, Request::List(opts))? {
        Response::Services(l) => Ok(build::services(&l, SERVICES, start, budget)),
        r => Err(unexpected(r)),
    }
}

fn workers(ctl: &Ctl, start: usize, budget: usize) -> Result<Dict, String> {
    match ask(ctl, Request::Lcores)? {
        Response::Lcores(v) => Ok(build::workers(&v, WORKERS, start, budget)),
        r => Err(unexpected(r)),
    }
}

fn drops(ctl: &Ctl, start: usize, budget: usize) -> Result<Dict, String> {
    match ask(ctl, Request::Drops)? {
        Response::Drops(v) => Ok(build::drops(&v, DROPS, start, budget)),
        r => Err(unexpected(r)),
    }
}

fn health(ctl: &Ctl, start: usize, budget: usize) -> Result<Dict, String> {
    match ask(ctl, Request::Health)? {
        Response::Health(h) => Ok(build::health(&h, HEALTH, start, budget)),
        r => Err(unexpected(r)),
    }
}
