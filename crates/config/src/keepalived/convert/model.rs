//! The converted services, and keepalived's defaults.

use crate::keepalived::diag::Loc;
use std::net::{Ipv4Addr, SocketAddrV4};

/// keepalived's `delay_loop` (KEEPALIVED_DEFAULT_DELAY), seconds.
pub const DELAY_LOOP: f64 = 60.0;
/// keepalived's `connect_timeout`, seconds.
pub const CONNECT_TIMEOUT: f64 = 5.0;
/// keepalived's `retry` (a checker's `default_retry`).
pub const RETRY: u32 = 1;
/// keepalived's `retry` of a MISC_CHECK.
pub const MISC_RETRY: u32 = 0;
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
    /// `tcp` or `udp`.
    pub proto: &'static str,
    /// VIP.
    pub vip: Ipv4Addr,
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
    pub sorry: Option<SocketAddrV4>,
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
    pub addr: SocketAddrV4,
    /// `dr`, `tun` or `nat`.
    pub method: &'static str,
    /// Weight.
    pub weight: u32,
    /// `uthreshold` (0: none).
    pub upper: u32,
    /// `lthreshold` (0: none).
    pub lower: u32,
    /// Its own check (`None` in the output when it is the service's).
    pub check: Option<Check>,
}

/// A converted check: every key dirigo's check takes from keepalived.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// `tcp`, `http`, `https`, `udp`, `ping` or `exec`.
    pub kind: &'static str,
    /// Seconds (`delay_loop`).
    pub interval: f64,
    /// Seconds (`connect_timeout`, `misc_timeout`).
    pub timeout: f64,
    /// Successes before up.
    pub rise: u32,
    /// Failures before down (`retry` + 1).
    pub fall: u32,
    /// `inhibit` or `remove`.
    pub on_failure: &'static str,
    /// `connect_port`.
    pub port: Option<u16>,
    /// http: the url's path.
    pub path: Option<String>,
    /// http: accepted statuses.
    pub status: Vec<String>,
    /// http: `virtualhost`.
    pub host: Option<String>,
    /// exec: `misc_path`, split.
    pub command: Vec<String>,
    /// The real server's `notify_up`.
    pub notify_up: Vec<String>,
    /// The real server's `notify_down`.
    pub notify_down: Vec<String>,
}
