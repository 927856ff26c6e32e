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
    /// An SMTP server greets with 220 and answers `HELO name` with 2xx
    /// (then QUIT is sent; keepalived SMTP_CHECK).
    Smtp {
        /// The name sent with HELO.
        helo: String,
    },
    /// A DNS server answers a query over UDP with the query's id and
    /// NOERROR (and, when asked, a record of the query's type equal to
    /// `expect`; keepalived DNS_CHECK).
    Dns {
        /// The query type (1 A, 2 NS, 5 CNAME, 6 SOA, 15 MX, 16 TXT, 28
        /// AAAA).
        qtype: u16,
        /// The name asked for (absolute, without the final dot; empty: the
        /// root).
        name: String,
        /// An answer that must be there (an address, a name or a text).
        expect: Option<String>,
    },
    /// A file holds an integer that marks the server down or changes its
    /// weight, re-read at every check (keepalived FILE_CHECK): with a
    /// factor of 0 a value other than 0 is down; otherwise the value times
    /// the factor (negated by `reverse`) is added to the configured weight
    /// (at least 0), and down at or below -2^31.
    File {
        /// The file.
        path: String,
        /// keepalived's `weight`: what the value is multiplied by.
        factor: i64,
        /// keepalived's `weight ... reverse`: the product is negated.
        reverse: bool,
    },
}

/// The DNS query types a dns check asks for, by name (keepalived
/// DNS_CHECK's `type`).
pub const DNS_TYPES: [(&str, u16); 7] = [
    ("A", 1),
    ("NS", 2),
    ("CNAME", 5),
    ("SOA", 6),
    ("MX", 15),
    ("TXT", 16),
    ("AAAA", 28),
];

/// A DNS query type by name (any case).
pub fn dns_type(name: &str) -> Option<u16> {
    DNS_TYPES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, t)| t)
}

/// A DNS query type's name ("TYPE99" for others).
pub fn dns_type_name(t: u16) -> String {
    DNS_TYPES
        .iter()
        .find(|&&(_, v)| v == t)
        .map_or_else(|| format!("TYPE{t}"), |(n, _)| (*n).to_string())
}

/// The name an SMTP check sends with HELO unless told (keepalived's).
pub const SMTP_HELO: &str = "smtpchecker.keepalived.org";

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
            Probe::Smtp { .. } => "smtp",
            Probe::Dns { .. } => "dns",
            Probe::File { .. } => "file",
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
    /// `retry` + 1).
    pub fall: u32,
    /// After a failed check, the next one comes this soon instead of at
    /// the next interval, until `fall` failures in a row (keepalived
    /// `delay_before_retry`); `None`: at the next interval.
    pub retry_delay: Option<Duration>,
    /// What a down server gets.
    pub on_failure: OnFailure,
    /// Port to probe instead of the real server's (keepalived
    /// `connect_port`).
    pub port: Option<u16>,
    /// Address to probe instead of the real server's (keepalived
    /// `connect_ip`).
    pub address: Option<std::net::IpAddr>,
    /// Local address the probe leaves from (keepalived `bindto`); `None`:
    /// the kernel's choice.
    pub source: Option<std::net::IpAddr>,
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
        SocketAddr::new(
            self.address.unwrap_or(rs.ip()),
            self.port.unwrap_or(rs.port()),
        )
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
