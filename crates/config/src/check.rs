//! What a health check is (validated from the configuration): the probe,
//! its timing and what a failure does, and a [`Job`]: one server's check
//! with the addresses it uses. Sans-IO: the engine runs them.

use dirigo_core::lb::spec::{DestKey, ServiceKey};
use std::net::SocketAddr;
use std::time::Duration;

/// How a real server is probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// A TCP connection is accepted (keepalived TCP_CHECK).
    Tcp,
    /// An HTTP GET answers with an accepted status (and body).
    Http {
        /// Request path.
        path: String,
        /// Host header (default: the address probed).
        host: Option<String>,
        /// Accepted status ranges, inclusive (default 200-299).
        status: Vec<(u16, u16)>,
        /// A substring the body must contain.
        expect: Option<String>,
        /// HTTPS (keepalived SSL_GET); the certificate is not verified, as
        /// keepalived does not.
        tls: bool,
    },
    /// A UDP datagram is answered (with `expect` in the answer).
    Udp {
        /// What is sent.
        payload: Vec<u8>,
        /// A substring the answer must contain.
        expect: Option<String>,
    },
    /// An ICMP echo is answered.
    Ping,
    /// A command exits 0 (`{rip}`, `{rport}`, `{vip}`, `{vport}` are
    /// replaced in its arguments; keepalived MISC_CHECK).
    Exec {
        /// Program and arguments.
        command: Vec<String>,
    },
}

impl Probe {
    /// The `type` name in the configuration.
    pub fn name(&self) -> &'static str {
        match self {
            Probe::Tcp => "tcp",
            Probe::Http { tls: false, .. } => "http",
            Probe::Http { tls: true, .. } => "https",
            Probe::Udp { .. } => "udp",
            Probe::Ping => "ping",
            Probe::Exec { .. } => "exec",
        }
    }
}

/// What a server that fails its check gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnFailure {
    /// Weight 0: no new connections, established ones go on (keepalived
    /// `inhibit_on_failure`).
    #[default]
    Inhibit,
    /// Out of the service until it recovers (its connections go on unless
    /// `expire_nodest_conn`).
    Remove,
}

/// One real server's check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSpec {
    /// The probe.
    pub probe: Probe,
    /// Between the starts of two checks (keepalived `delay_loop`).
    pub interval: Duration,
    /// How long one check may take (keepalived `connect_timeout`).
    pub timeout: Duration,
    /// Consecutive successes before a down server is up.
    pub rise: u32,
    /// Consecutive failures before an up server is down (keepalived
    /// `retry`).
    pub fall: u32,
    /// What a down server gets.
    pub on_failure: OnFailure,
    /// Port to probe instead of the real server's (keepalived
    /// `connect_port`).
    pub port: Option<u16>,
    /// DR/TUN: probe VIP:port through dirigo's own rewrite to this server.
    pub via_vip: bool,
    /// Run when the server comes up (keepalived `notify_up`; `{rip}`,
    /// `{rport}`, `{vip}`, `{vport}` replaced); empty: nothing.
    pub notify_up: Vec<String>,
    /// Run when it goes down (keepalived `notify_down`).
    pub notify_down: Vec<String>,
}

impl CheckSpec {
    /// The address a check of real server `rs` probes.
    pub fn target(&self, rs: SocketAddr) -> SocketAddr {
        SocketAddr::new(rs.ip(), self.port.unwrap_or(rs.port()))
    }
}

/// Which check: one real server of one service.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JobKey {
    /// The virtual service.
    pub service: ServiceKey,
    /// The real server.
    pub rs: DestKey,
}

/// One real server's check, as the engine runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Which check.
    pub key: JobKey,
    /// What to do, how often.
    pub spec: CheckSpec,
    /// Where the probe goes (the real server's address and port, or
    /// `spec.port`; for `via_vip` the VIP and port).
    pub target: SocketAddr,
    /// Local address (and port, 0 = any) to bind the probe's socket to.
    pub bind: Option<SocketAddr>,
    /// The real server, for exec's `{rip}` and `{rport}`.
    pub rs: SocketAddr,
    /// The virtual service, for exec's `{vip}` and `{vport}`.
    pub vip: SocketAddr,
}
