//! The converted services, and keepalived's defaults.

use crate::keepalived::diag::Loc;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// keepalived's `delay_loop` (KEEPALIVED_DEFAULT_DELAY), seconds.
pub const DELAY_LOOP: f64 = 60.0;
/// keepalived's `connect_timeout`, seconds.
pub const CONNECT_TIMEOUT: f64 = 5.0;
/// keepalived's `retry` (a checker's `default_retry`).
pub const RETRY: u32 = 1;
/// keepalived's `retry` of a MISC_CHECK.
pub const MISC_RETRY: u32 = 0;
/// keepalived's `retry` of a DNS_CHECK.
pub const DNS_RETRY: u32 = 3;
/// keepalived's `delay_before_retry` of HTTP_GET and SSL_GET, seconds
/// (DNS_CHECK's is the `delay_loop`, the others' 1 s).
pub const HTTP_DELAY_BEFORE_RETRY: f64 = 3.0;
/// keepalived's `delay_before_retry` of the other checkers, seconds.
pub const DELAY_BEFORE_RETRY: f64 = 1.0;
/// How often dirigo reads a FILE_CHECK's file (keepalived watches it with
/// inotify), seconds.
pub const FILE_INTERVAL: f64 = 1.0;
/// keepalived's SMTP_CHECK `helo_name`.
pub const SMTP_HELO: &str = crate::check::SMTP_HELO;
/// keepalived's `persistence_timeout` without a value
/// (IPVS_SVC_PERSISTENT_TIMEOUT), seconds.
pub const PERSISTENCE_TIMEOUT: u32 = 360;
/// keepalived's scheduler (IPVS_DEF_SCHED).
pub const SCHEDULER: &str = "wlc";
/// The statuses an HTTP_GET url accepts without `status_code`.
pub const HTTP_STATUS: &str = "200-299";

/// A converted virtual server.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    /// Where its `virtual_server` is.
    pub loc: Loc,
    /// `virtual_server fwmark N`: the mark (then `vip` is 0.0.0.0 and
    /// `port` 0).
    pub fwmark: Option<u32>,
    /// `tcp` or `udp`.
    pub proto: &'static str,
    /// VIP (0.0.0.0 for an fwmark service).
    pub vip: IpAddr,
    /// `virtual_server group NAME`: the group's other keys, as the
    /// config's `members` writes them (`"192.0.2.2:80"`,
    /// `"192.0.2.3-10:80"`, `"[2001:db8::1-1f]:80"`, `"fwmark 7"`).
    pub members: Vec<String>,
    /// `virtual_server group NAME`: the group's name.
    pub group: Option<String>,
    /// Port.
    pub port: u16,
    /// dirigo's scheduler name.
    pub scheduler: String,
    /// dirigo's scheduler flags (`sh-port`, ...).
    pub flags: Vec<String>,
    /// Persistence timeout, seconds.
    pub persistent: Option<u32>,
    /// Persistence granularity.
    pub netmask: Option<Ipv4Addr>,
    /// Minimum live weight.
    pub quorum: Option<u32>,
    /// Sorry server.
    pub sorry: Option<SocketAddr>,
    /// One-packet scheduling (`ops`).
    pub ops: bool,
    /// The check of every real server, when they all have the same one.
    pub check: Option<Check>,
    /// The real servers.
    pub servers: Vec<RealServer>,
}

/// A converted real server.
#[derive(Debug, Clone, PartialEq)]
pub struct RealServer {
    /// Where its `real_server` is.
    pub loc: Loc,
    /// Address and port.
    pub addr: SocketAddr,
    /// `dr`, `tun` or `nat`.
    pub method: &'static str,
    /// TUN's tunnel (the default IPIP otherwise).
    pub tunnel: Tunnel,
    /// Weight.
    pub weight: u32,
    /// `uthreshold` (0: none).
    pub upper: u32,
    /// `lthreshold` (0: none).
    pub lower: u32,
    /// Its own check (`None` in the output when it is the service's).
    pub check: Option<Check>,
}

/// A TUN real server's tunnel: keepalived's `lvs_method TUN [type
/// ipip|gue|gre] [port N] [nocsum|csum|remcsum]`, dirigo's `tun_type`,
/// `tun_port` and `tun_csum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tunnel {
    /// `ipip`, `gue` or `gre`.
    pub kind: &'static str,
    /// GUE's UDP port (0 otherwise).
    pub port: u16,
    /// `none`, `csum` or `remcsum`.
    pub csum: &'static str,
}

impl Default for Tunnel {
    fn default() -> Tunnel {
        Tunnel {
            kind: "ipip",
            port: 0,
            csum: "none",
        }
    }
}

/// A converted check: every key dirigo's check takes from keepalived.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// `tcp`, `http`, `https`, `udp`, `ping`, `exec`, `smtp`, `dns` or
    /// `file`.
    pub kind: &'static str,
    /// Seconds (`delay_loop`).
    pub interval: f64,
    /// Seconds (`connect_timeout`, `misc_timeout`).
    pub timeout: f64,
    /// Successes before up.
    pub rise: u32,
    /// Failures before down (`retry` + 1).
    pub fall: u32,
    /// Seconds to a retry (`delay_before_retry`); `None` without retries.
    pub retry_delay: Option<f64>,
    /// `inhibit` or `remove`.
    pub on_failure: &'static str,
    /// `connect_port`.
    pub port: Option<u16>,
    /// `connect_ip`.
    pub address: Option<String>,
    /// `bindto`.
    pub source: Option<String>,
    /// http: the url's path.
    pub path: Option<String>,
    /// http: accepted statuses.
    pub status: Vec<String>,
    /// http: `virtualhost`.
    pub host: Option<String>,
    /// exec: `misc_path`, split.
    pub command: Vec<String>,
    /// smtp: `helo_name`.
    pub helo_name: Option<String>,
    /// dns: `type`.
    pub query_type: Option<String>,
    /// dns: `name`.
    pub query_name: Option<String>,
    /// file: the `track_file`'s `file`.
    pub file: Option<String>,
    /// file: the `weight` (FILE_CHECK's, else the `track_file`'s) and
    /// `reverse`.
    pub weight_factor: Option<(i64, bool)>,
    /// The real server's `notify_up`.
    pub notify_up: Vec<String>,
    /// The real server's `notify_down`.
    pub notify_down: Vec<String>,
}
