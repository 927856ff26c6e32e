//! The configuration file's schema: one struct per TOML section, with the
//! defaults of every optional key. Every section rejects unknown keys, so a
//! typo is an error with a line number rather than an ignored setting.

use crate::PortRole;
use dirigo_core::lb::spec::{ClientAddress, Method, Proto, TunCsum, TunType};
use serde::Deserialize;
use std::net::Ipv4Addr;

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
    /// Where every accepted change to the service table is saved (as
    /// `dirigoadm -S` rules) and loaded from at start, replacing the
    /// config's services; none: nothing is saved.
    #[serde(default)]
    pub state_file: Option<String>,
    /// Where a stopping dirigo writes its connections for the next one
    /// (the connection handoff), which reads, installs and removes the
    /// file at start; none: connections are lost at a restart.
    #[serde(default)]
    pub handoff_file: Option<String>,
    /// The crash checkpoint: every this many seconds a thread writes the
    /// workers' connections (swept a slice at a time at their
    /// housekeeping) to `handoff_file`, so that a restart after a SIGKILL
    /// or a crash recovers every connection the last one saw; none: a
    /// crash loses every connection.
    #[serde(default)]
    pub connection_checkpoint_s: Option<u32>,
}

fn default_socket() -> String {
    "/run/dirigo/ctl.sock".into()
}

impl Default for ControlConfig {
    fn default() -> Self {
        ControlConfig {
            socket: default_socket(),
            group: None,
            state_file: None,
            handoff_file: None,
            connection_checkpoint_s: None,
        }
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
    /// Addresses with prefix length, IPv4 ("10.0.0.1/24") or IPv6
    /// ("2001:db8:1::1/64"); validation sorts them into the two lists of
    /// [`super::Port`].
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
    /// The name of this port's kernel interface (the exception path);
    /// none: the port has no exception path.
    #[serde(default)]
    pub kernel_interface: Option<String>,
    /// This port's exception rate limit (packets/s), instead of
    /// `[exception] rate_limit_pps`.
    #[serde(default)]
    pub kernel_rate_limit_pps: Option<u32>,
    /// Which side of the connections the port faces: "client" (requests
    /// to VIPs arrive here), "server" (NAT replies from real servers
    /// arrive here) or "both" (default): what the NIC hashes under RSS.
    #[serde(default)]
    pub role: PortRole,
}

fn default_desc() -> u16 {
    1024
}

/// How the kernel interfaces of the exception path are made.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ExceptionBackend {
    /// DPDK's net_tap: a tap device per port (works everywhere).
    Tap,
    /// DPDK's virtio-user over the kernel's vhost-net (`/dev/vhost-net`):
    /// the kernel moves the packets, fewer copies and system calls.
    VirtioUser,
}

impl ExceptionBackend {
    /// The name in the config file.
    pub fn name(self) -> &'static str {
        match self {
            ExceptionBackend::Tap => "tap",
            ExceptionBackend::VirtioUser => "virtio-user",
        }
    }
}

/// `[exception]` — the kernel interfaces of the ports that name one.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExceptionConfig {
    /// `tap` or `virtio-user`.
    pub backend: ExceptionBackend,
    /// Network namespace for the kernel interfaces (created if missing);
    /// none: dirigo's own namespace.
    #[serde(default)]
    pub netns: Option<String>,
    /// Packets per second each port may hand to its kernel interface
    /// (per worker; see docs/CONFIG.md).
    #[serde(default = "default_exc_rate")]
    pub rate_limit_pps: u32,
    /// Packets a port may hand over at once beyond the rate.
    #[serde(default = "default_exc_burst")]
    pub rate_limit_burst: u32,
}

fn default_exc_rate() -> u32 {
    20_000
}
fn default_exc_burst() -> u32 {
    1_000
}

/// `[capture]` — live capture by DPDK's secondary processes.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CaptureConfig {
    /// Start DPDK's pdump server (`rte_pdump_init`), so `dpdk-dumpcap`
    /// and `dpdk-pdump` can capture from the running daemon.
    #[serde(default)]
    pub enabled: bool,
}

/// `[[route]]`
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouteConfig {
    /// Destination prefix (IPv4 or IPv6).
    pub prefix: String,
    /// Gateway, of the prefix's family.
    pub via: std::net::IpAddr,
    /// Egress port name (default: the port whose network contains `via`).
    #[serde(default)]
    pub port: Option<String>,
}

/// `[[neighbor]]` — a static ARP (IPv4) or neighbour cache (IPv6) entry.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NeighborConfig {
    /// IPv4 or IPv6 address.
    pub ip: std::net::IpAddr,
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
    /// IPv6 connections each worker can track (preallocated, 128 bytes
    /// each); 0 = an eighth of `connections_per_worker`, at least 1024.
    #[serde(default)]
    pub connections6_per_worker: u32,
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
    /// IPv4 addresses NAT64 connections (an IPv6 VIP with IPv4 NAT real
    /// servers) leave from; dirigo answers ARP for them.
    #[serde(default)]
    pub nat64_pool: Vec<Ipv4Addr>,
    /// Drop a connection's packets as soon as its real server is removed
    /// (IPVS expire_nodest_conn); otherwise they expire by timeout.
    #[serde(default)]
    pub expire_nodest_conn: bool,
    /// Let any TCP packet without RST create a connection, not only a SYN
    /// (IPVS `sloppy_tcp`): a director that takes over a flow mid-stream
    /// (router ECMP after another director failed) schedules it.
    #[serde(default)]
    pub sloppy_tcp: bool,
    /// Maglev lookup table size (a prime).
    #[serde(default = "default_mh")]
    pub mh_table_size: u32,
    /// How long (ms) a full connection table keeps an embryonic TCP
    /// connection that saw no packet before it may evict it for a new flow
    /// (a handshake in progress is never broken within it); 0..=60000.
    #[serde(default = "default_grace")]
    pub embryonic_grace_ms: u32,
    /// Use RSS to spread flows over workers when the port supports it.
    #[serde(default = "default_true")]
    pub rss: bool,
    /// Ask the port for TX checksum offload (off by default: dirigo fixes
    /// checksums incrementally in software, which costs a few adds).
    #[serde(default = "default_false")]
    pub tx_checksum_offload: bool,
    /// Reserve SYN proxy state (12 bytes per connection) so services may
    /// use `--synproxy` / `synproxy = true`.
    #[serde(default = "default_false")]
    pub synproxy: bool,
    /// What a worker does when a round finds nothing to do.
    #[serde(default)]
    pub idle: IdleMode,
}

/// `[dataplane] idle`: what a worker does when its queues and rings are
/// empty.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum IdleMode {
    /// Poll again at once (DPDK's busy polling: a worker lcore is always
    /// at 100%, and reacts to a packet within one round).
    #[default]
    Poll,
    /// After a run of empty rounds, sleep in short growing steps (20 µs up
    /// to 200 µs, `dataplane::idle`): for machines whose cores are shared
    /// with other processes; a packet after a quiet spell waits up to
    /// about 0.3 ms more (the nap, the timer slack, the wake-up).
    Sleep,
}

impl IdleMode {
    /// The name in the config file.
    pub fn name(self) -> &'static str {
        match self {
            IdleMode::Poll => "poll",
            IdleMode::Sleep => "sleep",
        }
    }
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
fn default_grace() -> u32 {
    dirigo_core::lb::conn::EMBRYONIC_GRACE_MS
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
            connections6_per_worker: 0,
            mbufs: default_mbufs(),
            mbuf_data_room: default_data_room(),
            tunnel_source: None,
            nat64_pool: Vec::new(),
            expire_nodest_conn: false,
            sloppy_tcp: false,
            mh_table_size: default_mh(),
            embryonic_grace_ms: default_grace(),
            rss: true,
            tx_checksum_offload: false,
            synproxy: false,
            idle: IdleMode::Poll,
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
    /// TUN's tunnel: `ipip` (default), `gue` or `gre` (ipvsadm's
    /// `--tun-type`).
    #[serde(default)]
    pub tun_type: TunType,
    /// GUE's UDP destination port (`--tun-port`; required with gue).
    #[serde(default)]
    pub tun_port: u16,
    /// `none` (default), `csum` or `remcsum` (`--tun-nocsum|--tun-csum|--tun-remcsum`).
    #[serde(default)]
    pub tun_csum: TunCsum,
    /// This server's own check (overrides the service's; unset keys are
    /// the service's).
    #[serde(default)]
    pub check: Option<CheckConfig>,
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
    /// `tcp` or `udp` (required but for an fwmark service).
    #[serde(default)]
    pub protocol: Option<Proto>,
    /// `VIP:port` (required but for an fwmark service).
    #[serde(default)]
    pub address: String,
    /// An fwmark service (`ipvsadm -f MARK`): the packets the `[[mark]]`
    /// rules give this mark, instead of `protocol` and `address`.
    #[serde(default)]
    pub fwmark: Option<u32>,
    /// An fwmark service's family: `"ipv4"` (the default) or `"ipv6"`
    /// (`ipvsadm -f MARK -6`).
    #[serde(default)]
    pub family: Option<String>,
    /// Scheduler name (default wlc).
    #[serde(default = "default_sched")]
    pub scheduler: String,
    /// Scheduler flags: "sh-fallback", "sh-port", "mh-fallback", "mh-port".
    #[serde(default)]
    pub flags: Vec<String>,
    /// Persistence timeout in seconds.
    #[serde(default)]
    pub persistent: Option<u32>,
    /// Persistence netmask (IPv4 services).
    #[serde(default)]
    pub netmask: Option<Ipv4Addr>,
    /// Persistence granularity of an IPv6 service: a prefix length 1..=128
    /// (ipvsadm's `-M` for IPv6).
    #[serde(default)]
    pub prefix6: Option<u8>,
    /// SYN proxy (NAT real servers only).
    #[serde(default)]
    pub synproxy: bool,
    /// FullNAT's local addresses (the sources `method = "fullnat"` real
    /// servers see; the real servers' family).
    #[serde(default)]
    pub local_addresses: Vec<std::net::IpAddr>,
    /// One-packet scheduling (ipvsadm's `-o`): UDP services with DR or
    /// TUN real servers only, not with `persistent`.
    #[serde(default)]
    pub ops: bool,
    /// How the real servers learn the client's address (TCP FullNAT
    /// services only): "none" (default), "toa", "proxy-v1", "proxy-v2".
    #[serde(default)]
    pub client_address: ClientAddress,
    /// The service group's other keys (keepalived's
    /// `virtual_server_group`): `"VIP:PORT"`, a range of the last octet
    /// `"192.0.2.3-10:80"`, `"[2001:db8::2]:80"`, `"[2001:db8::1-1f]:80"`
    /// (the last group, hexadecimal), `"fwmark 7"`; the service's
    /// protocol and family. One service, reached under every key.
    #[serde(default)]
    pub members: Vec<String>,
    /// Real servers.
    #[serde(default)]
    pub real_server: Vec<RealServerConfig>,
    /// Minimum live weight; below it the VIP is withdrawn.
    #[serde(default)]
    pub quorum: Option<u32>,
    /// `IP:PORT` that takes new connections while the quorum is lost.
    #[serde(default)]
    pub sorry_server: Option<String>,
    /// The check of every real server of the service.
    #[serde(default)]
    pub check: Option<CheckConfig>,
}

impl ServiceConfig {
    /// The service as messages name it: its `address`, or `fwmark N`.
    pub fn label(&self) -> String {
        match self.fwmark {
            Some(m) => format!("fwmark {m}"),
            None => self.address.clone(),
        }
    }
}

/// `[[mark]]`: a rule that gives packets a firewall mark for fwmark
/// services (dirigo's own, in place of `iptables -t mangle ... -j MARK`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MarkConfig {
    /// `tcp` or `udp`.
    pub protocol: Proto,
    /// Destination: an address (a host) or a prefix `ADDR/LEN`.
    pub destination: String,
    /// Destination port: a number or a range `"LO-HI"`.
    pub port: toml::Value,
    /// Source prefix (default: any source).
    #[serde(default)]
    pub source: Option<String>,
    /// The mark, 1..=4294967295.
    pub mark: u32,
}

/// `[[snat]]`: the real servers' own outbound connections from `source`
/// masqueraded through an address of `pool`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SnatConfig {
    /// The sources masqueraded: a prefix `ADDR/LEN` (or one address).
    pub source: String,
    /// The addresses their connections leave from: a list of addresses,
    /// or one string `"FIRST-LAST"` (a range of at most 256).
    pub pool: toml::Value,
    /// The most connections of this rule one worker keeps (default: no
    /// limit of its own; all SNAT connections of a worker stay within half
    /// its IPv6 table).
    #[serde(default)]
    pub max_conns: u32,
    /// The source ports used: `"LO-HI"` (default `"1024-65535"`).
    #[serde(default)]
    pub ports: Option<String>,
}

/// `[service.check]` and a real server's `check`: keepalived's checkers.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    /// `tcp`, `http`, `https`, `udp`, `ping`, `exec`, `smtp`, `dns` or
    /// `file`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Seconds between checks (keepalived `delay_loop`).
    pub interval: Option<f64>,
    /// Seconds a check may take (keepalived `connect_timeout`).
    pub timeout: Option<f64>,
    /// Successes in a row before a server is up.
    pub rise: Option<u32>,
    /// Failures in a row before it is down (keepalived `retry` + 1).
    pub fall: Option<u32>,
    /// Seconds to the next check after a failure, until `fall` failures
    /// in a row (keepalived `delay_before_retry`).
    pub retry_delay: Option<f64>,
    /// `inhibit` (weight 0) or `remove`.
    pub on_failure: Option<crate::check::OnFailure>,
    /// Port to probe instead of the real server's (`connect_port`).
    pub port: Option<u16>,
    /// Address to probe instead of the real server's (`connect_ip`).
    pub address: Option<String>,
    /// Local address the probe leaves from (`bindto`).
    pub source: Option<String>,
    /// http: request path.
    pub path: Option<String>,
    /// http: accepted statuses, "200" or "200-299".
    pub status: Option<Vec<String>>,
    /// http: a substring of the body; udp: of the answer; dns: an answer.
    pub expect: Option<String>,
    /// http: the Host header.
    pub host: Option<String>,
    /// udp: what is sent.
    pub payload: Option<String>,
    /// exec: program and arguments.
    pub command: Option<Vec<String>>,
    /// smtp: the name sent with HELO.
    pub helo_name: Option<String>,
    /// dns: the query type (A, AAAA, NS, CNAME, SOA, MX, TXT).
    pub query_type: Option<String>,
    /// dns: the name asked for.
    pub query_name: Option<String>,
    /// file: the file holding an integer.
    pub file: Option<String>,
    /// file: what the value is multiplied by (keepalived's `weight`).
    pub weight_factor: Option<i64>,
    /// file: the product is negated (keepalived's `weight N reverse`).
    pub reverse: Option<bool>,
    /// DR/TUN: probe VIP:port through dirigo to this server.
    pub via_vip: Option<bool>,
    /// Command run when a server comes up.
    pub notify_up: Option<Vec<String>>,
    /// Command run when a server goes down.
    pub notify_down: Option<Vec<String>>,
}

/// `[health]`
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HealthConfig {
    /// Namespace the checks run in (default: `[exception] netns`).
    #[serde(default)]
    pub netns: Option<String>,
}
/// `[metrics]` — the Prometheus endpoint.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// `IP:PORT` the endpoint listens on (`/metrics`); none: no endpoint.
    #[serde(default)]
    pub listen: Option<String>,
    /// Whether workers keep the burst-duration histogram (default: on
    /// when `listen` is set).
    #[serde(default)]
    pub burst_histogram: Option<bool>,
}

/// `[sync]` — connection sync with other directors (IPVS sync v1).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SyncConfig {
    /// Sync on or off (default off).
    #[serde(default)]
    pub enabled: bool,
    /// The port whose kernel interface carries the messages.
    #[serde(default)]
    pub port: Option<String>,
    /// Multicast group.
    #[serde(default = "default_sync_group")]
    pub group: String,
    /// UDP port.
    #[serde(default = "default_sync_port")]
    pub udp_port: u16,
    /// Multicast TTL.
    #[serde(default = "default_sync_ttl")]
    pub ttl: u32,
    /// IPVS syncid, 0..255 (0 = accept every message).
    #[serde(default)]
    pub syncid: u32,
    /// Unicast peers instead of the group.
    #[serde(default)]
    pub peers: Vec<String>,
    /// Send this director's connections.
    #[serde(default = "default_true")]
    pub send: bool,
    /// Install the others'.
    #[serde(default = "default_true")]
    pub receive: bool,
    /// UDP connections are sent at this packet (IPVS sync_threshold).
    #[serde(default = "default_sync_threshold")]
    pub threshold: u32,
    /// Seconds between refreshes of a live connection (0 = none).
    #[serde(default = "default_sync_refresh")]
    pub refresh_period: u32,
}

fn default_sync_group() -> String {
    "224.0.0.81".into()
}
fn default_sync_port() -> u16 {
    8848
}
fn default_sync_ttl() -> u32 {
    1
}
fn default_sync_threshold() -> u32 {
    3
}
fn default_sync_refresh() -> u32 {
    60
}

/// `[announce]` — a route per announced VIP in the exception namespace,
/// for a routing daemon there (BIRD, FRR) to redistribute over BGP.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AnnounceConfig {
    /// Whether VIPs are announced (the section present: yes unless false).
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// The port whose kernel interface the routes go through (default:
    /// the only port with a kernel interface).
    #[serde(default)]
    pub port: Option<String>,
    /// The routing table the routes go in.
    #[serde(default = "default_announce_table")]
    pub table: u32,
    /// The routes' protocol number (`proto` in `ip route`).
    #[serde(default = "default_announce_protocol")]
    pub protocol: u32,
    /// Milliseconds between the withdrawal at SIGTERM and the stop.
    #[serde(default = "default_drain_ms")]
    pub drain_ms: u64,
    /// With `[sync]` receiving: at most how many milliseconds a starting
    /// director holds its VIPs back until the other directors'
    /// connections arrived (0: no hold).
    #[serde(default = "default_sync_wait_ms")]
    pub sync_wait_ms: u64,
}

/// The announce routes' default table.
pub const ANNOUNCE_TABLE: u32 = 100;
/// The announce routes' default protocol number (unassigned in Linux's
/// `rt_protos`).
pub const ANNOUNCE_PROTOCOL: u8 = 201;
fn default_announce_table() -> u32 {
    ANNOUNCE_TABLE
}
fn default_announce_protocol() -> u32 {
    ANNOUNCE_PROTOCOL as u32
}
fn default_drain_ms() -> u64 {
    2000
}
fn default_sync_wait_ms() -> u64 {
    3000
}

fn default_sched() -> String {
    "wlc".into()
}

/// The whole file, before validation.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    pub(super) eal: EalConfig,
    #[serde(default)]
    pub(super) control: ControlConfig,
    #[serde(default)]
    pub(super) port: Vec<PortConfig>,
    #[serde(default)]
    pub(super) route: Vec<RouteConfig>,
    #[serde(default)]
    pub(super) neighbor: Vec<NeighborConfig>,
    #[serde(default)]
    pub(super) dataplane: DataplaneConfig,
    #[serde(default)]
    pub(super) timeouts: Option<TimeoutsConfig>,
    #[serde(default)]
    pub(super) service: Vec<ServiceConfig>,
    #[serde(default)]
    pub(super) mark: Vec<MarkConfig>,
    #[serde(default)]
    pub(super) snat: Vec<SnatConfig>,
    #[serde(default)]
    pub(super) exception: Option<ExceptionConfig>,
    #[serde(default)]
    pub(super) sync: Option<SyncConfig>,
    #[serde(default)]
    pub(super) health: Option<HealthConfig>,
    #[serde(default)]
    pub(super) metrics: Option<MetricsConfig>,
    #[serde(default)]
    pub(super) announce: Option<AnnounceConfig>,
    #[serde(default)]
    pub(super) capture: CaptureConfig,
}
