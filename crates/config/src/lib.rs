//! dirigo's configuration: the daemon's TOML file, parsed and validated
//! (docs/CONFIG.md), and keepalived.conf converted to it
//! ([`keepalived`], `dirigoctl keepalived-convert`). No DPDK, no async
//! runtime: the tools use it too.
//!
//! `file` is the schema (one struct per section, with defaults); this
//! crate's root validates each section into the types the daemon uses;
//! [`check`] is what a health check is; [`names`] the kernel names the file
//! gives, checked as the kernel checks them.

#![deny(unsafe_code)]

pub mod check;
pub mod keepalived;
pub mod names;

mod announce;
mod eal;
mod file;
mod health;
mod locate;
mod metrics;
mod sync;
mod validate;

pub use announce::Announce;
pub use file::{
    AnnounceConfig, CaptureConfig, CheckConfig, ControlConfig, DataplaneConfig, EalConfig,
    ExceptionBackend, ExceptionConfig, HealthConfig, IdleMode, MetricsConfig, NeighborConfig,
    PortConfig, RealServerConfig, RouteConfig, ServiceConfig, TimeoutsConfig,
};
pub use health::{check_spec, ServiceHealth};
pub use locate::Problem;
pub use metrics::Metrics;
pub use sync::Sync;

use dirigo_core::lb::spec::{DestSpec, ServiceSpec, Timeouts};
use dirigo_core::net::addr::{Ipv4Cidr, Ipv6Cidr};
use file::RawConfig;
use locate::{At, Issues};
use std::net::Ipv4Addr;
use std::path::Path;
use validate::{
    dataplane, each, exception, health_path, marks, neighbor, ports, route, services, snat,
};

/// `[[port]] role`: which side of the connections a port faces.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PortRole {
    /// Clients' requests to VIPs arrive here (their source is the client).
    Client,
    /// Real servers' NAT replies arrive here (their destination is the
    /// client).
    Server,
    /// Both (a one-arm director, or not said): the NIC hashes the source,
    /// so requests reach their owner; NAT replies are steered in software.
    #[default]
    Both,
}

impl PortRole {
    /// The name in the config file.
    pub fn name(self) -> &'static str {
        match self {
            PortRole::Client => "client",
            PortRole::Server => "server",
            PortRole::Both => "both",
        }
    }
}

/// A configuration error: the file cannot be read, or every problem
/// found in it, each with its line.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {err}")]
    Read {
        /// Path given.
        path: String,
        /// OS error.
        err: std::io::Error,
    },
    /// TOML syntax, schema (unknown key, wrong type, ...) or semantic
    /// problems (bad CIDR, unknown port, ...): one line each.
    #[error("{}", located(path, problems, "invalid config "))]
    Invalid {
        /// Path given.
        path: String,
        /// What is wrong, where.
        problems: Vec<Problem>,
    },
}

impl ConfigError {
    /// Each problem as `path:line: message` (what `dirigo --check`
    /// prints); the read error as its own line.
    pub fn lines(&self) -> Vec<String> {
        match self {
            ConfigError::Read { .. } => vec![self.to_string()],
            ConfigError::Invalid { path, problems } => {
                problems.iter().map(|p| p.located(path)).collect()
            }
        }
    }
}

fn located(path: &str, problems: &[Problem], prefix: &str) -> String {
    problems
        .iter()
        .map(|p| format!("{prefix}{}", p.located(path)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A validated port.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    /// Name.
    pub name: String,
    /// DPDK device.
    pub device: String,
    /// IPv4 addresses (the first is the port's primary address).
    pub addresses: Vec<Ipv4Cidr>,
    /// IPv6 addresses from the config (global or unique-local unicast;
    /// the port's link-local address is derived from its MAC at start and
    /// is not listed here).
    pub addresses6: Vec<Ipv6Cidr>,
    /// MTU to set.
    pub mtu: Option<u16>,
    /// RX descriptors.
    pub rx_desc: u16,
    /// TX descriptors.
    pub tx_desc: u16,
    /// The kernel interface's name (the exception path), if any.
    pub kernel_interface: Option<String>,
    /// Its rate limit, packets/s (`[exception] rate_limit_pps` unless
    /// the port sets its own).
    pub kernel_rate_limit_pps: u32,
    /// Which side of the connections it faces (what RSS hashes).
    pub role: crate::PortRole,
}

/// A validated static route.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// Prefix.
    pub prefix: Ipv4Cidr,
    /// Gateway.
    pub via: Ipv4Addr,
    /// Egress port index (into `Config::ports`).
    pub port: Option<usize>,
}

/// A validated static IPv6 route.
#[derive(Debug, Clone, PartialEq)]
pub struct Route6 {
    /// Prefix.
    pub prefix: Ipv6Cidr,
    /// Gateway.
    pub via: std::net::Ipv6Addr,
    /// Egress port index (into `Config::ports`): named, or the port whose
    /// network holds the gateway.
    pub port: usize,
}

/// A validated static neighbor.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbor {
    /// Address (IPv4: an ARP entry; IPv6: a neighbour cache entry).
    pub ip: std::net::IpAddr,
    /// MAC.
    pub mac: [u8; 6],
    /// Port index.
    pub port: usize,
}

/// A validated service with its real servers.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    /// The service.
    pub spec: ServiceSpec,
    /// Its real servers.
    pub dests: Vec<DestSpec>,
    /// Its checks, quorum and sorry server.
    pub health: ServiceHealth,
}

/// The whole validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Path it was read from.
    pub path: String,
    /// EAL arguments.
    pub eal: EalConfig,
    /// Control socket.
    pub control: ControlConfig,
    /// Ports, in order (index = dirigo's port index).
    pub ports: Vec<Port>,
    /// Static routes.
    pub routes: Vec<Route>,
    /// Static IPv6 routes.
    pub routes6: Vec<Route6>,
    /// Static neighbors.
    pub neighbors: Vec<Neighbor>,
    /// Data-plane tuning.
    pub dataplane: DataplaneConfig,
    /// Connection timeouts.
    pub timeouts: Timeouts,
    /// Start-up services.
    pub services: Vec<Service>,
    /// Start-up mark rules (`[[mark]]`) for fwmark services.
    pub marks: Vec<dirigo_core::lb::mark::MarkRule>,
    /// Start-up SNAT rules (`[[snat]]`): the real servers' own
    /// connections masqueraded through a pool address.
    pub snat: Vec<dirigo_core::lb::snat::SnatRule>,
    /// The exception path (`None`: no port has a kernel interface).
    pub exception: Option<ExceptionConfig>,
    /// Where health checks run: `Some(namespace)`, or `None` for
    /// dirigo's own namespace (`[health]` without `netns` and no
    /// `[exception] netns`). Checks need `[health]` or an exception path.
    pub health_netns: Option<String>,
    /// The metrics endpoint (`None`: off).
    pub metrics: Option<Metrics>,
    /// Live capture (`[capture]`).
    pub capture: CaptureConfig,
    /// Connection sync (`None`: off).
    pub sync: Option<Sync>,
    /// VIP routes for a routing daemon (`None`: no `[announce]`, or
    /// `enabled = false`).
    pub announce: Option<Announce>,
}

/// Parse `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.split(':');
    for b in out.iter_mut() {
        let p = parts.next()?;
        if p.len() != 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// Parse `ip:port` (port required).
pub fn parse_ip_port(s: &str) -> Option<(std::net::IpAddr, u16)> {
    let sa: std::net::SocketAddr = s.parse().ok()?;
    Some((sa.ip(), sa.port()))
}

/// Parse `ADDRESS/PREFIXLEN` (both required), saying which part is wrong.
pub fn parse_cidr(s: &str) -> Result<Ipv4Cidr, String> {
    let (a, l) = s
        .split_once('/')
        .ok_or_else(|| format!("'{s}' is not ADDRESS/PREFIXLEN"))?;
    let addr: Ipv4Addr = a
        .parse()
        .map_err(|_| format!("'{a}' in '{s}' is not an IPv4 address"))?;
    l.parse()
        .ok()
        .and_then(|len| Ipv4Cidr::new(u32::from(addr), len))
        .ok_or_else(|| format!("prefix length '{l}' in '{s}' is not 0..32"))
}

/// Parse an IPv6 `ADDRESS/PREFIXLEN` (both required) that dirigo can own:
/// unicast, not link-local, loopback, unspecified or IPv4-mapped.
pub fn parse_cidr6(s: &str) -> Result<Ipv6Cidr, String> {
    let (a, l) = s
        .split_once('/')
        .ok_or_else(|| format!("'{s}' is not ADDRESS/PREFIXLEN"))?;
    let addr: std::net::Ipv6Addr = a
        .parse()
        .map_err(|_| format!("'{a}' in '{s}' is not an IPv6 address"))?;
    let c = l
        .parse()
        .ok()
        .and_then(|len| Ipv6Cidr::new(u128::from(addr), len))
        .ok_or_else(|| format!("prefix length '{l}' in '{s}' is not 0..128"))?;
    match dirigo_core::net::addr::ipv6_unusable(c.addr) {
        Some(why) => Err(format!("'{a}' is {why}, not a unicast address for a port")),
        None => Ok(c),
    }
}

impl Config {
    /// Read and validate a config file.
    pub fn load(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let p = path.as_ref().display().to_string();
        let text = std::fs::read_to_string(path.as_ref()).map_err(|err| ConfigError::Read {
            path: p.clone(),
            err,
        })?;
        Self::parse(&text, &p)
    }

    /// Parse and validate config text; `path` is used in messages. Every
    /// problem found is reported, each with its line: the schema's first
    /// (syntax, unknown keys, types), then, when the schema holds, every
    /// section's.
    pub fn parse(text: &str, path: &str) -> Result<Config, ConfigError> {
        let invalid = |problems| ConfigError::Invalid {
            path: path.into(),
            problems,
        };
        let raw: RawConfig = locate::deserialize(text).map_err(|mut problems| {
            for p in &mut problems {
                if p.msg == "missing field `eal`" {
                    p.msg = "no [eal] section: nothing is configured yet (dirigo needs [eal] \
                             args and at least one [[port]]; see CONFIG.md in docs/, or in \
                             /usr/share/doc/dirigo/ when installed)"
                        .into();
                }
            }
            invalid(problems)
        })?;
        let mut issues = Issues::default();
        let cfg = Self::validate(raw, path, &mut issues);
        if issues.is_empty() {
            Ok(cfg)
        } else {
            Err(invalid(issues.locate(text)))
        }
    }

    /// Validate every section, each by its own parser below; what is valid
    /// is kept so that later sections are checked against it.
    fn validate(raw: RawConfig, path: &str, iss: &mut Issues) -> Config {
        for (i, msg) in eal::check(&raw.eal.args) {
            let at = At::key("eal").k("args");
            iss.add(i.map_or(at.clone(), |i| at.i(i)), msg);
        }
        let mut ports = ports(&raw.port, iss);
        exception(raw.exception.as_ref(), &mut ports, iss);
        let (mut routes, mut routes6) = (Vec::new(), Vec::new());
        for r in each(&raw.route, "route", iss, |r| route(r, &ports)) {
            match r {
                validate::AnyRoute::V4(r) => routes.push(r),
                validate::AnyRoute::V6(r) => routes6.push(r),
            }
        }
        let neighbors = each(&raw.neighbor, "neighbor", iss, |n| neighbor(n, &ports));
        dataplane(&raw.dataplane, iss);
        let timeouts = raw.timeouts.map_or_else(Timeouts::default, |t| Timeouts {
            tcp: t.tcp,
            tcpfin: t.tcpfin,
            udp: t.udp,
        });
        let services = services(&raw.service, !raw.dataplane.nat64_pool.is_empty(), iss);
        let marks = marks(&raw.mark, iss);
        let health_netns = health_path(&raw, &ports, &services, iss);
        let metrics = metrics::metrics(raw.metrics.as_ref()).unwrap_or_else(|e| {
            let key = if e.contains("burst_histogram") {
                "burst_histogram"
            } else {
                "listen"
            };
            iss.add(At::key("metrics").k(key), e);
            None
        });
        let vips: Vec<std::net::IpAddr> = services
            .iter()
            .filter(|s| !s.spec.key.is_fwmark())
            .map(|s| s.spec.key.vip)
            .collect();
        let snat = snat(&raw.snat, &ports, &vips, iss);
        let announce = announce::announce(
            raw.announce.as_ref(),
            &ports,
            raw.exception.is_some(),
            &vips,
        )
        .unwrap_or_else(|errs| {
            for (key, e) in errs {
                iss.add(At::key("announce").k(key), e);
            }
            None
        });
        if let Err(e) = validate::state_file(raw.control.state_file.as_deref()) {
            iss.add(At::key("control").k("state_file"), e);
        }
        if let Err(e) = validate::state_file(raw.control.handoff_file.as_deref()) {
            let e = e
                .replace("state_file", "handoff_file")
                .replace("/rules", "/handoff");
            iss.add(At::key("control").k("handoff_file"), e);
        }
        match (raw.control.connection_checkpoint_s, &raw.control.handoff_file) {
            (Some(s), _) if s == 0 || s > 86_400 => iss.add(
                At::key("control").k("connection_checkpoint_s"),
                format!("[control] connection_checkpoint_s {s} is not a period of 1 to 86400 seconds"),
            ),
            (Some(_), None) => iss.add(
                At::key("control").k("connection_checkpoint_s"),
                "[control] connection_checkpoint_s needs [control] handoff_file: the checkpoint is written there".to_string(),
            ),
            _ => {}
        }
        let sync = sync::sync(raw.sync.as_ref(), &ports).unwrap_or_else(|(key, e)| {
            iss.add(At::key("sync").k(key), e);
            None
        });
        if let Err(e) = validate::capture(&raw.capture, &raw.eal) {
            iss.add(At::key("capture").k("enabled"), e);
        }
        Config {
            path: path.into(),
            eal: raw.eal,
            control: raw.control,
            ports,
            routes,
            routes6,
            neighbors,
            dataplane: raw.dataplane,
            timeouts,
            services,
            marks,
            snat,
            exception: raw.exception,
            health_netns,
            metrics,
            capture: raw.capture,
            sync,
            announce,
        }
    }
}

/// The id of group `name` (a number, or a name in /etc/group).
pub fn group_id(name: &str) -> Result<u32, String> {
    if let Ok(n) = name.parse::<u32>() {
        return Ok(n);
    }
    let text = std::fs::read_to_string("/etc/group").unwrap_or_default();
    text.lines()
        .find_map(|l| {
            let mut f = l.split(':');
            (f.next() == Some(name)).then(|| f.nth(1).and_then(|g| g.parse().ok()))?
        })
        .ok_or_else(|| format!("control group '{name}' not found"))
}

#[cfg(test)]
mod tests;
