//! The daemon's TOML configuration: parsing and validation.
//!
//! [`file`] is the schema (one struct per section, with defaults); this
//! module validates each section into the types the daemon uses. See
//! docs/CONFIG.md.

mod file;
mod health;
mod metrics;

pub use file::{
    CaptureConfig, CheckConfig, ControlConfig, DataplaneConfig, EalConfig, ExceptionBackend,
    ExceptionConfig, HealthConfig, MetricsConfig, NeighborConfig, PortConfig, RealServerConfig,
    RouteConfig, ServiceConfig, TimeoutsConfig,
};
pub use health::{check_spec, ServiceHealth};
pub use metrics::Metrics;

use crate::lb::sched::maglev::is_prime;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::spec::{DestKey, DestSpec, Method, ServiceKey, ServiceSpec, Timeouts};
use crate::net::addr::Ipv4Cidr;
use file::RawConfig;
use std::collections::HashSet;
use std::net::Ipv4Addr;
use std::path::Path;

/// A configuration error: one readable line.
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
    /// TOML syntax or schema error (unknown key, wrong type, ...).
    #[error("invalid config {path}: {msg}")]
    Parse {
        /// Path given.
        path: String,
        /// The TOML error, flattened to one line.
        msg: String,
    },
    /// A semantic error (bad CIDR, duplicate name, ...).
    #[error("invalid config {path}: {msg}")]
    Invalid {
        /// Path given.
        path: String,
        /// What is wrong.
        msg: String,
    },
}

/// A validated port.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    /// Name.
    pub name: String,
    /// DPDK device.
    pub device: String,
    /// Addresses.
    pub addresses: Vec<Ipv4Cidr>,
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

/// A validated static neighbor.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbor {
    /// Address.
    pub ip: Ipv4Addr,
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
    /// Static neighbors.
    pub neighbors: Vec<Neighbor>,
    /// Data-plane tuning.
    pub dataplane: DataplaneConfig,
    /// Connection timeouts.
    pub timeouts: Timeouts,
    /// Start-up services.
    pub services: Vec<Service>,
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
pub fn parse_ip_port(s: &str) -> Option<(Ipv4Addr, u16)> {
    let (a, p) = s.rsplit_once(':')?;
    Some((a.parse().ok()?, p.parse().ok()?))
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

    /// Parse and validate config text; `path` is used in messages.
    pub fn parse(text: &str, path: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.into(),
            msg: e.to_string().replace('\n', " ").trim().to_string(),
        })?;
        Self::validate(raw, path).map_err(|msg| ConfigError::Invalid {
            path: path.into(),
            msg,
        })
    }

    /// Validate every section, each by its own parser below.
    fn validate(raw: RawConfig, path: &str) -> Result<Config, String> {
        let mut ports = ports(&raw.port)?;
        exception(raw.exception.as_ref(), &mut ports)?;
        let routes = raw
            .route
            .iter()
            .map(|r| route(r, &ports))
            .collect::<Result<_, _>>()?;
        let neighbors = raw
            .neighbor
            .iter()
            .map(|n| neighbor(n, &ports))
            .collect::<Result<_, _>>()?;
        dataplane(&raw.dataplane)?;
        let timeouts = raw.timeouts.map_or_else(Timeouts::default, |t| Timeouts {
            tcp: t.tcp,
            tcpfin: t.tcpfin,
            udp: t.udp,
        });
        let services = services(&raw.service)?;
        let health_netns = health_path(&raw, &ports, &services)?;
        let metrics = metrics::metrics(raw.metrics.as_ref())?;
        capture(&raw.capture, &raw.eal)?;
        Ok(Config {
            path: path.into(),
            eal: raw.eal,
            control: raw.control,
            ports,
            routes,
            neighbors,
            dataplane: raw.dataplane,
            timeouts,
            services,
            exception: raw.exception,
            health_netns,
            metrics,
            capture: raw.capture,
        })
    }
}

/// EAL arguments that keep the memory out of hugepage files, so no
/// secondary process (dpdk-dumpcap, dpdk-pdump) can attach.
const NO_SECONDARY: [&str; 3] = ["--in-memory", "--no-shconf", "--no-huge"];

/// `[capture] enabled` needs EAL's memory in hugepage files the capture
/// tools can map: refuse the arguments that rule it out.
fn capture(c: &CaptureConfig, eal: &EalConfig) -> Result<(), String> {
    if !c.enabled {
        return Ok(());
    }
    match eal.args.iter().find(|a| NO_SECONDARY.contains(&a.as_str())) {
        Some(a) => Err(format!(
            "[capture] enabled needs EAL's memory in hugepage files that dpdk-dumpcap can attach to, \
             and [eal] args has {a}: remove it (keep a --file-prefix; hugetlbfs mounted, see \
             scripts/setup-hugepages.sh)"
        )),
        None => Ok(()),
    }
}

/// Where the checks run: `[health] netns`, else the exception path's
/// namespace. Checks with neither a `[health]` section nor a port with a
/// kernel interface have no way to the real servers: an error, not a
/// silent "all up".
fn health_path(
    raw: &RawConfig,
    ports: &[Port],
    services: &[Service],
) -> Result<Option<String>, String> {
    if let Some(h) = &raw.health {
        if let Some(ns) = &h.netns {
            crate::kernel::netns::valid_name(ns).map_err(|e| format!("[health] netns: {e}"))?;
        }
        return Ok(h.netns.clone());
    }
    let checked = services
        .iter()
        .find(|s| s.health.check.is_some() || !s.health.checks.is_empty());
    let kernel = ports.iter().any(|p| p.kernel_interface.is_some());
    if let (Some(s), false) = (checked, kernel) {
        return Err(format!(
            "service {}: health checks need a way to the real servers: an exception path \
             ([exception] and a port's kernel_interface; they run in its namespace) or \
             [health] netns = \"...\" (a namespace that reaches them another way)",
            s.spec.key.vip
        ));
    }
    Ok(raw.exception.as_ref().and_then(|x| x.netns.clone()))
}

/// Index of the port named `name`.
fn port_index(ports: &[Port], name: &str) -> Option<usize> {
    ports.iter().position(|p| p.name == name)
}

/// `[[port]]`: at least one; unique names and devices.
fn ports(raw: &[PortConfig]) -> Result<Vec<Port>, String> {
    if raw.is_empty() {
        return Err("no [[port]] defined: dirigo needs at least one port".into());
    }
    let mut names = HashSet::new();
    let mut devices = HashSet::new();
    let mut ports = Vec::new();
    for p in raw {
        if p.name.is_empty() {
            return Err("a [[port]] has an empty name".into());
        }
        if !names.insert(p.name.clone()) {
            return Err(format!("duplicate port name '{}'", p.name));
        }
        if !devices.insert(p.device.clone()) {
            return Err(format!(
                "port '{}': device '{}' is used by two ports",
                p.name, p.device
            ));
        }
        let addresses = p
            .addresses
            .iter()
            .map(|a| parse_cidr(a).map_err(|e| format!("port '{}': bad address: {e}", p.name)))
            .collect::<Result<_, _>>()?;
        if let Some(m) = p.mtu {
            if !(68..=9600).contains(&m) {
                return Err(format!("port '{}': mtu {m} is not 68..9600", p.name));
            }
        }
        ports.push(Port {
            name: p.name.clone(),
            device: p.device.clone(),
            addresses,
            mtu: p.mtu,
            rx_desc: p.rx_desc,
            tx_desc: p.tx_desc,
            kernel_interface: p.kernel_interface.clone(),
            kernel_rate_limit_pps: p.kernel_rate_limit_pps.unwrap_or(0),
        });
    }
    Ok(ports)
}

/// `[exception]` and the ports' `kernel_interface`: a port names its
/// kernel interface only with an `[exception]` section; names are valid
/// Linux interface names and unique; the netns name is usable.
fn exception(x: Option<&ExceptionConfig>, ports: &mut [Port]) -> Result<(), String> {
    let mut names = HashSet::new();
    for p in ports.iter_mut() {
        let Some(k) = &p.kernel_interface else {
            continue;
        };
        let Some(x) = x else {
            return Err(format!(
                "port '{}': kernel_interface '{k}' needs an [exception] section (backend = \"tap\" or \"virtio-user\")",
                p.name
            ));
        };
        crate::kernel::link::valid_ifname(k)
            .map_err(|e| format!("port '{}': kernel_interface '{k}': {e}", p.name))?;
        if !names.insert(k.clone()) {
            return Err(format!(
                "port '{}': kernel_interface '{k}' is already another port's",
                p.name
            ));
        }
        if p.kernel_rate_limit_pps == 0 {
            p.kernel_rate_limit_pps = x.rate_limit_pps;
        }
    }
    if let Some(x) = x {
        if let Some(ns) = &x.netns {
            crate::kernel::netns::valid_name(ns).map_err(|e| format!("[exception] netns: {e}"))?;
        }
        if x.rate_limit_pps == 0 {
            return Err("[exception] rate_limit_pps must be at least 1".into());
        }
    }
    Ok(())
}

/// `[[route]]`: the egress port is named or the one whose network holds
/// the gateway.
fn route(r: &RouteConfig, ports: &[Port]) -> Result<Route, String> {
    let prefix = parse_cidr(&r.prefix).map_err(|e| format!("route: bad prefix: {e}"))?;
    let port = match &r.port {
        Some(n) => Some(
            port_index(ports, n)
                .ok_or_else(|| format!("route {}: unknown port '{n}'", r.prefix))?,
        ),
        None => None,
    };
    let via = u32::from(r.via);
    let egress = port.or_else(|| {
        ports
            .iter()
            .position(|p| p.addresses.iter().any(|c| c.contains(via)))
    });
    if egress.is_none() {
        return Err(format!(
            "route {}: gateway {} is not on any port's network",
            r.prefix, r.via
        ));
    }
    Ok(Route {
        prefix,
        via: r.via,
        port: egress,
    })
}

/// `[[neighbor]]`: a MAC and a known port.
fn neighbor(n: &NeighborConfig, ports: &[Port]) -> Result<Neighbor, String> {
    let mac = parse_mac(&n.mac).ok_or_else(|| format!("neighbor {}: bad MAC '{}'", n.ip, n.mac))?;
    let port = port_index(ports, &n.port)
        .ok_or_else(|| format!("neighbor {}: unknown port '{}'", n.ip, n.port))?;
    Ok(Neighbor {
        ip: n.ip,
        mac,
        port,
    })
}

/// `[dataplane]`: the lower bounds, and a prime Maglev table.
fn dataplane(d: &DataplaneConfig) -> Result<(), String> {
    if d.connections_per_worker < 1024 {
        return Err("dataplane.connections_per_worker must be at least 1024".into());
    }
    if d.mbufs < 1024 {
        return Err("dataplane.mbufs must be at least 1024".into());
    }
    if d.mbuf_data_room < 256 {
        return Err("dataplane.mbuf_data_room must be at least 256 (128 headroom + data)".into());
    }
    if d.embryonic_grace_ms > crate::lb::conn::MAX_EMBRYONIC_GRACE_MS {
        return Err(format!(
            "dataplane.embryonic_grace_ms {} is above {} (an embryonic connection's own timeout)",
            d.embryonic_grace_ms,
            crate::lb::conn::MAX_EMBRYONIC_GRACE_MS
        ));
    }
    if !is_prime(d.mh_table_size as usize) {
        return Err(format!(
            "dataplane.mh_table_size {} is not a prime",
            d.mh_table_size
        ));
    }
    Ok(())
}

/// `[[service]]`s: unique keys, each validated with its real servers.
fn services(raw: &[ServiceConfig]) -> Result<Vec<Service>, String> {
    let mut keys = HashSet::new();
    let mut services = Vec::new();
    for s in raw {
        let (vip, port) = parse_ip_port(&s.address)
            .ok_or_else(|| format!("service '{}': address must be VIP:PORT", s.address))?;
        let key = ServiceKey {
            proto: s.protocol,
            vip,
            port,
        };
        if !keys.insert(key) {
            return Err(format!(
                "duplicate service {} {}",
                s.protocol.upper(),
                s.address
            ));
        }
        services.push(service(s, key)?);
    }
    Ok(services)
}

/// One `[[service]]` (its `key` parsed) and its `[[service.real_server]]`s.
fn service(s: &ServiceConfig, key: ServiceKey) -> Result<Service, String> {
    let sched: SchedKind = s
        .scheduler
        .parse()
        .map_err(|e| format!("service {}: {e}", s.address))?;
    let mut flags = SchedFlags::default();
    for f in &s.flags {
        match f.as_str() {
            "sh-fallback" | "mh-fallback" => flags.fallback = true,
            "sh-port" | "mh-port" => flags.port = true,
            other => {
                return Err(format!(
                    "service {}: unknown scheduler flag '{other}'",
                    s.address
                ))
            }
        }
    }
    let spec = ServiceSpec {
        key,
        sched,
        flags,
        persistent: s.persistent,
        netmask: s.netmask.unwrap_or(Ipv4Addr::BROADCAST),
    };
    let mut dests = Vec::new();
    let mut dkeys = HashSet::new();
    for r in &s.real_server {
        let d = real_server(s, key.port, r)?;
        if !dkeys.insert(d.key) {
            return Err(format!(
                "service {}: duplicate real server {}",
                s.address, r.address
            ));
        }
        dests.push(d);
    }
    let health = health::service_health(s, &dests)?;
    Ok(Service {
        spec,
        dests,
        health,
    })
}

/// One `[[service.real_server]]` of `s`, whose port is `port`.
fn real_server(s: &ServiceConfig, port: u16, r: &RealServerConfig) -> Result<DestSpec, String> {
    let (addr, rport) = match parse_ip_port(&r.address) {
        Some(x) => x,
        None => (
            r.address.parse().map_err(|_| {
                format!(
                    "service {}: real server '{}' is not IP or IP:PORT",
                    s.address, r.address
                )
            })?,
            0,
        ),
    };
    let rport = if rport == 0 { port } else { rport };
    if r.weight > 65535 {
        return Err(format!(
            "service {}: real server {}: weight {} is not 0..65535",
            s.address, r.address, r.weight
        ));
    }
    if r.method != Method::Nat && rport != port {
        return Err(format!(
            "service {}: real server {}: only NAT can change the port",
            s.address, r.address
        ));
    }
    Ok(DestSpec {
        key: DestKey { addr, port: rport },
        method: r.method,
        weight: r.weight,
        upper: r.upper_threshold,
        lower: r.lower_threshold,
    })
}

#[cfg(test)]
mod tests;
