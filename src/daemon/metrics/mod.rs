//! The Prometheus endpoint (`[metrics] listen`): node_exporter's IPVS
//! metrics under their own names, types and labels, and dirigo's own
//! (`dirigo_*`), as text at `/metrics`.
//!
//! It runs on a thread of its own ("dirigo-metrics") with a current-thread
//! tokio runtime and never touches the data path: a scrape reads the same
//! views the control socket answers with ([`collect`]) and the counters
//! the workers already publish at housekeeping, renders them
//! ([`render`]), and serves the text from a cache ([`server`]), so a slow
//! or hostile client costs the endpoint's own thread and nothing else.
//!
//! * [`collect`] — a [`Scrape`]: the values of one exposition;
//! * [`render`] — the exposition of a [`Scrape`] (prometheus-client), with
//!   `health` (the health checks' and the VIP announcement's series) and
//!   `family` (the series' building blocks);
//! * [`server`] — HTTP (hyper), bounds, the render cache.

pub mod collect;
mod family;
mod health;
pub mod render;
pub mod server;

#[cfg(test)]
mod tests;

pub use collect::{Collector, EndpointCounters, Scrape, Sources, WorkerSample};
pub use server::{Limits, RenderFn};

use super::error::DaemonError;
use super::handler::Ctl;
use crate::ctl::server::ServerCounters;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::Notify;

/// A bound endpoint, not serving yet (bound first, so a port in use is a
/// start-up error before anything else starts).
#[derive(Debug)]
pub struct Bound {
    listener: std::net::TcpListener,
    /// The address it is bound to.
    pub addr: SocketAddr,
}

/// Bind `addr` for the endpoint.
pub fn bind(addr: SocketAddr) -> Result<Bound, DaemonError> {
    let err = |e: std::io::Error| {
        let hint = match e.kind() {
            std::io::ErrorKind::AddrInUse => {
                " (another program, or another dirigo, listens there: choose another port)"
            }
            std::io::ErrorKind::AddrNotAvailable => " (not an address of this host)",
            std::io::ErrorKind::PermissionDenied => " (a port below 1024 needs privileges)",
            _ => "",
        };
        DaemonError::Other(format!("[metrics] listen {addr}: {e}{hint}"))
    };
    let listener = std::net::TcpListener::bind(addr).map_err(err)?;
    listener.set_nonblocking(true).map_err(err)?;
    let addr = listener.local_addr().map_err(err)?;
    Ok(Bound { listener, addr })
}

/// A serving endpoint; stopped by [`Endpoint::stop`] or when dropped.
pub struct Endpoint {
    stop: Arc<Notify>,
    thread: Option<JoinHandle<()>>,
    /// The address it serves.
    pub addr: SocketAddr,
}

impl Bound {
    /// Serve on a thread of its own, rendering with `render`.
    pub fn serve(
        self,
        render: RenderFn,
        limits: Limits,
        counters: Arc<EndpointCounters>,
    ) -> Result<Endpoint, DaemonError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| DaemonError::Other(format!("metrics runtime: {e}")))?;
        let stop = Arc::new(Notify::new());
        let stop2 = Arc::clone(&stop);
        let listener = self.listener;
        let thread = std::thread::Builder::new()
            .name("dirigo-metrics".into())
            .spawn(move || {
                rt.block_on(async move {
                    match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => server::serve(l, render, limits, counters, stop2).await,
                        Err(e) => eprintln!("dirigo: metrics endpoint: {e}"),
                    }
                });
                // a render still running holds no lock for long; do not
                // wait for it past this
                rt.shutdown_timeout(Duration::from_secs(1));
            })
            .map_err(|e| DaemonError::Other(format!("metrics thread: {e}")))?;
        Ok(Endpoint {
            stop,
            thread: Some(thread),
            addr: self.addr,
        })
    }
}

impl Endpoint {
    /// Stop serving and wait for the thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The daemon's endpoint: scrapes collect from `ctl` (and the control
/// server's `control` counters).
pub fn start(
    bound: Bound,
    ctl: &Arc<Ctl>,
    control: Arc<ServerCounters>,
    burst_histogram: bool,
) -> Result<Endpoint, DaemonError> {
    let counters = Arc::new(EndpointCounters::default());
    let src = Sources {
        ctl: Arc::clone(ctl),
        control,
        endpoint: Arc::clone(&counters),
        burst_histogram,
    };
    let collector = Mutex::new(Collector::default());
    let render: RenderFn = Arc::new(move || {
        let scrape = collector
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .collect(&src);
        render::render(&scrape)
    });
    bound.serve(render, Limits::default(), counters)
}
