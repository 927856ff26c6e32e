//! The daemon's TOML configuration: parsing and validation.
//!
//! Every section rejects unknown keys, so a typo is an error with a line
//! number rather than a silently ignored setting. See docs/CONFIG.md.

use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec, Timeouts};
use serde::Deserialize;
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

/// `[eal]`
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EalConfig {
    /// EAL arguments, exactly as on a DPDK command line.
    pub args: Vec<String>,
}

/// `[control]`
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ControlConfig {
    /// Unix socket path.
    #[serde(default = "default_socket")]
    pub socket: String,
    /// Group allowed to use the socket (mode 0660 then); root only when unset.
    #[serde(default)]
    pub group: Option<String>,
}

fn default_socket() -> String {
    "/run/dirigo/ctl.sock".into()
}

impl Default for ControlConfig {
    fn default() -> Self {
        ControlConfig {
            socket: default_socket(),
            group: None,
        }
    }
}

/// An IPv4 address with prefix length (`10.0.0.1/24`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    /// The address.
    pub addr: Ipv4Addr,
    /// Prefix length 0..=32.
    pub len: u8,
}

impl Cidr {
    /// Network mask as host-order u32.
    pub fn mask(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - self.len)
        }
    }
    /// Whether `ip` is inside this prefix.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        (u32::from(ip) & self.mask()) == (u32::from(self.addr) & self.mask())
    }
}

impl std::str::FromStr for Cidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, l) = s
            .split_once('/')
            .ok_or_else(|| format!("'{s}' is not ADDRESS/PREFIXLEN"))?;
        let addr: Ipv4Addr = a
            .parse()
            .map_err(|_| format!("'{a}' in '{s}' is not an IPv4 address"))?;
        let len: u8 = l
            .parse()
            .ok()
            .filter(|&n| n <= 32)
            .ok_or_else(|| format!("prefix length '{l}' in '{s}' is not 0..32"))?;
        Ok(Cidr { addr, len })
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// `[[port]]`
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PortConfig {
    /// Operator's name for the port ("wan").
    pub name: String,
    /// DPDK device name (vdev name or PCI address).
    pub device: String,
    /// Addresses with prefix length.
    #[serde(default)]
    pub addresses: Vec<String>,
    /// MTU to set (default: leave the device's).
    #[serde(default)]
    pub mtu: Option<u16>,
    /// RX descriptors per queue.
    #[serde(default = "default_desc")]
    pub rx_desc: u16,
    /// TX descriptors per queue.
    #[serde(default = "default_desc")]
    pub tx_desc: u16,
}

fn default_desc() -> u16 {
    1024
}

/// `[[route]]`
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouteConfig {
    /// Destination prefix.
    pub prefix: String,
    /// Gateway.
    pub via: Ipv4Addr,
    /// Egress port name (default: the port whose network contains `via`).
    #[serde(default)]
    pub port: Option<String>,
}

/// `[[neighbor]]` — a static ARP entry.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NeighborConfig {
    /// IPv4 address.
    pub ip: Ipv4Addr,
    /// MAC address `aa:bb:cc:dd:ee:ff`.
    pub mac: String,
    /// Port name.
    pub port: String,
}

/// `[dataplane]`
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DataplaneConfig {
    /// Connections each worker can track (preallocated).
    #[serde(default = "default_conns")]
    pub connections_per_worker: u32,
    /// Mbufs in the packet pool.
    #[serde(default = "default_mbufs")]
    pub mbufs: u32,
    /// Bytes of each mbuf's data room including the 128-byte headroom
    /// (DPDK `data_room_size`; default 2176 = `RTE_MBUF_DEFAULT_BUF_SIZE`).
    /// Smaller rooms let a large pool (e.g. a preloaded pcap) fit in memory.
    #[serde(default = "default_data_room")]
    pub mbuf_data_room: u16,
    /// Outer source address for IPIP (default: the egress port's address).
    #[serde(default)]
    pub tunnel_source: Option<Ipv4Addr>,
    /// Drop a connection's packets as soon as its real server is removed
    /// (IPVS expire_nodest_conn); otherwise they expire by timeout.
    #[serde(default)]
    pub expire_nodest_conn: bool,
    /// Maglev lookup table size (a prime).
    #[serde(default = "default_mh")]
    pub mh_table_size: u32,
    /// Use RSS to spread flows over workers when the port supports it.
    #[serde(default = "default_true")]
    pub rss: bool,
    /// Ask the port for TX checksum offload (off by default: dirigo fixes
    /// checksums incrementally in software, which costs a few adds).
    #[serde(default = "default_false")]
    pub tx_checksum_offload: bool,
}

fn default_conns() -> u32 {
    1 << 20
}
fn default_mbufs() -> u32 {
    16383
}
fn default_data_room() -> u16 {
    2176
}
fn default_mh() -> u32 {
    65537
}
fn default_false() -> bool {
    false
}
fn default_true() -> bool {
    true
}

impl Default for DataplaneConfig {
    fn default() -> Self {
        DataplaneConfig {
            connections_per_worker: default_conns(),
            mbufs: default_mbufs(),
            mbuf_data_room: default_data_room(),
            tunnel_source: None,
            expire_nodest_conn: false,
            mh_table_size: default_mh(),
            rss: true,
            tx_checksum_offload: false,
        }
    }
}

/// `[timeouts]` — as `ipvsadm --set tcp tcpfin udp`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TimeoutsConfig {
    /// TCP ESTABLISHED, seconds.
    #[serde(default = "t_tcp")]
    pub tcp: u32,
    /// TCP after FIN, seconds.
    #[serde(default = "t_fin")]
    pub tcpfin: u32,
    /// UDP, seconds.
    #[serde(default = "t_udp")]
    pub udp: u32,
}
fn t_tcp() -> u32 {
    900
}
fn t_fin() -> u32 {
    120
}
fn t_udp() -> u32 {
    300
}

/// `[[service.real_server]]`
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RealServerConfig {
    /// `ip` or `ip:port`.
    pub address: String,
    /// `dr` (default), `tun` or `nat`.
    #[serde(default = "default_method")]
    pub method: Method,
    /// Weight 0..65535 (default 1).
    #[serde(default = "default_weight")]
    pub weight: u32,
    /// Upper connection threshold (0 = none).
    #[serde(default)]
    pub upper_threshold: u32,
    /// Lower connection threshold (0 = none).
    #[serde(default)]
    pub lower_threshold: u32,
}
fn default_method() -> Method {
    Method::Dr
}
fn default_weight() -> u32 {
    1
}

/// `[[service]]`
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServiceConfig {
    /// `tcp` or `udp`.
    pub protocol: Proto,
    /// `VIP:port`.
    pub address: String,
    /// Scheduler name (default wlc).
    #[serde(default = "default_sched")]
    pub scheduler: String,
    /// Scheduler flags: "sh-fallback", "sh-port", "mh-fallback", "mh-port".
    #[serde(default)]
    pub flags: Vec<String>,
    /// Persistence timeout in seconds.
    #[serde(default)]
    pub persistent: Option<u32>,
    /// Persistence netmask.
    #[serde(default)]
    pub netmask: Option<Ipv4Addr>,
    /// Real servers.
    #[serde(default)]
    pub real_server: Vec<RealServerConfig>,
}
fn default_sched() -> String {
    "wlc".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    eal: EalConfig,
    #[serde(default)]
    control: ControlConfig,
    #[serde(default)]
    port: Vec<PortConfig>,
    #[serde(default)]
    route: Vec<RouteConfig>,
    #[serde(default)]
    neighbor: Vec<NeighborConfig>,
    #[serde(default)]
    dataplane: DataplaneConfig,
    #[serde(default)]
    timeouts: Option<TimeoutsConfig>,
    #[serde(default)]
    service: Vec<ServiceConfig>,
}

/// A validated port.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    /// Name.
    pub name: String,
    /// DPDK device.
    pub device: String,
    /// Addresses.
    pub addresses: Vec<Cidr>,
    /// MTU to set.
    pub mtu: Option<u16>,
    /// RX descriptors.
    pub rx_desc: u16,
    /// TX descriptors.
    pub tx_desc: u16,
}

/// A validated static route.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// Prefix.
    pub prefix: Cidr,
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
        let bad = |msg: String| ConfigError::Invalid {
            path: path.into(),
            msg,
        };
        if raw.port.is_empty() {
            return Err(bad(
                "no [[port]] defined: dirigo needs at least one port".into()
            ));
        }
        let mut names = HashSet::new();
        let mut devices = HashSet::new();
        let mut ports = Vec::new();
        for p in &raw.port {
            if p.name.is_empty() {
                return Err(bad("a [[port]] has an empty name".into()));
            }
            if !names.insert(p.name.clone()) {
                return Err(bad(format!("duplicate port name '{}'", p.name)));
            }
            if !devices.insert(p.device.clone()) {
                return Err(bad(format!(
                    "port '{}': device '{}' is used by two ports",
                    p.name, p.device
                )));
            }
            let mut addresses = Vec::new();
            for a in &p.addresses {
                let c: Cidr = a
                    .parse()
                    .map_err(|e| bad(format!("port '{}': bad address: {e}", p.name)))?;
                addresses.push(c);
            }
            if let Some(m) = p.mtu {
                if !(68..=9600).contains(&m) {
                    return Err(bad(format!("port '{}': mtu {m} is not 68..9600", p.name)));
                }
            }
            ports.push(Port {
                name: p.name.clone(),
                device: p.device.clone(),
                addresses,
                mtu: p.mtu,
                rx_desc: p.rx_desc,
                tx_desc: p.tx_desc,
            });
        }
        let port_index = |n: &str| ports.iter().position(|p| p.name == n);
        let mut routes = Vec::new();
        for r in &raw.route {
            let prefix: Cidr = r
                .prefix
                .parse()
                .map_err(|e| bad(format!("route: bad prefix: {e}")))?;
            let port = match &r.port {
                Some(n) => Some(
                    port_index(n)
                        .ok_or_else(|| bad(format!("route {}: unknown port '{n}'", r.prefix)))?,
                ),
                None => None,
            };
            let egress = port.or_else(|| {
                ports
                    .iter()
                    .position(|p| p.addresses.iter().any(|c| c.contains(r.via)))
            });
            if egress.is_none() {
                return Err(bad(format!(
                    "route {}: gateway {} is not on any port's network",
                    r.prefix, r.via
                )));
            }
            routes.push(Route {
                prefix,
                via: r.via,
                port: egress,
            });
        }
        let mut neighbors = Vec::new();
        for n in &raw.neighbor {
            let mac = parse_mac(&n.mac)
                .ok_or_else(|| bad(format!("neighbor {}: bad MAC '{}'", n.ip, n.mac)))?;
            let port = port_index(&n.port)
                .ok_or_else(|| bad(format!("neighbor {}: unknown port '{}'", n.ip, n.port)))?;
            neighbors.push(Neighbor {
                ip: n.ip,
                mac,
                port,
            });
        }
        let d = &raw.dataplane;
        if d.connections_per_worker < 1024 {
            return Err(bad(
                "dataplane.connections_per_worker must be at least 1024".into(),
            ));
        }
        if d.mbufs < 1024 {
            return Err(bad("dataplane.mbufs must be at least 1024".into()));
        }
        if d.mbuf_data_room < 256 {
            return Err(bad(
                "dataplane.mbuf_data_room must be at least 256 (128 headroom + data)".into(),
            ));
        }
        if !is_prime(d.mh_table_size) {
            return Err(bad(format!(
                "dataplane.mh_table_size {} is not a prime",
                d.mh_table_size
            )));
        }
        let timeouts = match raw.timeouts {
            Some(t) => Timeouts {
                tcp: t.tcp,
                tcpfin: t.tcpfin,
                udp: t.udp,
            },
            None => Timeouts::default(),
        };
        let mut services = Vec::new();
        let mut skeys = HashSet::new();
        for s in &raw.service {
            let (vip, port) = parse_ip_port(&s.address)
                .ok_or_else(|| bad(format!("service '{}': address must be VIP:PORT", s.address)))?;
            let key = ServiceKey {
                proto: s.protocol,
                vip,
                port,
            };
            if !skeys.insert(key) {
                return Err(bad(format!(
                    "duplicate service {} {}",
                    s.protocol.upper(),
                    s.address
                )));
            }
            let sched: SchedKind = s
                .scheduler
                .parse()
                .map_err(|e| bad(format!("service {}: {e}", s.address)))?;
            let mut flags = SchedFlags::default();
            for f in &s.flags {
                match f.as_str() {
                    "sh-fallback" | "mh-fallback" => flags.fallback = true,
                    "sh-port" | "mh-port" => flags.port = true,
                    other => {
                        return Err(bad(format!(
                            "service {}: unknown scheduler flag '{other}'",
                            s.address
                        )))
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
                let (addr, rport) = match parse_ip_port(&r.address) {
                    Some(x) => x,
                    None => (
                        r.address.parse().map_err(|_| {
                            bad(format!(
                                "service {}: real server '{}' is not IP or IP:PORT",
                                s.address, r.address
                            ))
                        })?,
                        0,
                    ),
                };
                let rport = if rport == 0 { port } else { rport };
                if r.weight > 65535 {
                    return Err(bad(format!(
                        "service {}: real server {}: weight {} is not 0..65535",
                        s.address, r.address, r.weight
                    )));
                }
                if r.method != Method::Nat && rport != port {
                    return Err(bad(format!(
                        "service {}: real server {}: only NAT can change the port",
                        s.address, r.address
                    )));
                }
                let dk = DestKey { addr, port: rport };
                if !dkeys.insert(dk) {
                    return Err(bad(format!(
                        "service {}: duplicate real server {}",
                        s.address, r.address
                    )));
                }
                dests.push(DestSpec {
                    key: dk,
                    method: r.method,
                    weight: r.weight,
                    upper: r.upper_threshold,
                    lower: r.lower_threshold,
                });
            }
            services.push(Service { spec, dests });
        }
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
        })
    }
}

fn is_prime(n: u32) -> bool {
    if n < 2 {
        return false;
    }
    let mut i = 2u32;
    while (i as u64) * (i as u64) <= n as u64 {
        if n % i == 0 {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests;
