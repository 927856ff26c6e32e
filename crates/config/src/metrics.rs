//! `[metrics]`: where the Prometheus endpoint listens, and whether the
//! workers keep their burst-duration histogram.

use super::file::MetricsConfig;
use std::net::SocketAddr;

/// A validated `[metrics]` section with an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metrics {
    /// The endpoint's address (`/metrics` over HTTP/1.1).
    pub listen: SocketAddr,
    /// Workers keep the burst-duration histogram.
    pub burst_histogram: bool,
}

/// `[metrics]`: `listen` is `IP:PORT` (IPv4, or `[IPv6]:PORT`) with a port
/// other than 0; no `listen` means no endpoint (and no histogram, which
/// nothing would read).
pub(super) fn metrics(m: Option<&MetricsConfig>) -> Result<Option<Metrics>, String> {
    let Some(m) = m else {
        return Ok(None);
    };
    let Some(l) = &m.listen else {
        if m.burst_histogram == Some(true) {
            return Err(
                "[metrics] burst_histogram = true needs listen = \"IP:PORT\" (nothing else reads it)"
                    .into(),
            );
        }
        return Ok(None);
    };
    let listen: SocketAddr = l.trim().parse().map_err(|_| {
        format!(
            "[metrics] listen '{l}' is not IP:PORT (e.g. \"127.0.0.1:9642\"; \
             a host name is not resolved, an IPv6 address goes in brackets)"
        )
    })?;
    if listen.port() == 0 {
        return Err(format!(
            "[metrics] listen '{l}': port 0 (give the port Prometheus scrapes, e.g. 9642)"
        ));
    }
    Ok(Some(Metrics {
        listen,
        burst_histogram: m.burst_histogram.unwrap_or(true),
    }))
}
