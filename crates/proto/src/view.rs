//! Response payload types: what listings carry. The daemon fills them from
//! its snapshots and counters; the clients only format them.

use dirigo_core::lb::spec::{DestSpec, Proto, ServiceSpec};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::str::FromStr;

/// Cumulative counters of a service or real server (ipvsadm `--stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Connections scheduled.
    pub conns: u64,
    /// Packets client → server.
    pub inpkts: u64,
    /// Packets server → client (NAT only; 0 for DR/TUN).
    pub outpkts: u64,
    /// Bytes client → server.
    pub inbytes: u64,
    /// Bytes server → client.
    pub outbytes: u64,
}

/// Rates over the last estimation interval (ipvsadm `--rate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rate {
    /// Connections per second.
    pub cps: u64,
    /// Packets per second in.
    pub inpps: u64,
    /// Packets per second out.
    pub outpps: u64,
    /// Bytes per second in.
    pub inbps: u64,
    /// Bytes per second out.
    pub outbps: u64,
}

/// A real server in a listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DestInfo {
    /// Configuration.
    pub spec: DestSpec,
    /// Connections in TCP ESTABLISHED (ipvsadm ActiveConn).
    pub active: u32,
    /// Other connections (ipvsadm InActConn).
    pub inactive: u32,
    /// Persistence templates pointing at it (ipvsadm PersistConn).
    #[serde(default)]
    pub persist: u32,
    /// Counters (zero unless asked for).
    #[serde(default)]
    pub stats: Stats,
    /// Rates (zero unless asked for).
    #[serde(default)]
    pub rate: Rate,
}

/// A virtual service in a listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceInfo {
    /// Configuration.
    pub spec: ServiceSpec,
    /// Counters (zero unless asked for).
    #[serde(default)]
    pub stats: Stats,
    /// Rates (zero unless asked for).
    #[serde(default)]
    pub rate: Rate,
    /// Real servers.
    pub dests: Vec<DestInfo>,
}

/// The answer to a service listing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceList {
    /// Connection table size (printed as ipvsadm's `size=`).
    pub conn_tab_size: u32,
    /// Services.
    pub services: Vec<ServiceInfo>,
}

/// A connection entry (ipvsadm `-L -c`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnInfo {
    /// TCP or UDP.
    pub proto: Proto,
    /// Client address.
    pub client: SocketAddr,
    /// Virtual address.
    pub vaddr: SocketAddr,
    /// Real server address.
    pub dest: SocketAddr,
    /// State name as IPVS prints it (`ESTABLISHED`, `FIN_WAIT`, `UDP`, ...).
    pub state: String,
    /// Seconds until expiry.
    pub expire_secs: u32,
}

/// A MAC address, serialized as `"aa:bb:cc:dd:ee:ff"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MacAddr(pub [u8; 6]);

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

impl FromStr for MacAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = [0u8; 6];
        let mut n = 0;
        for part in s.split([':', '-']) {
            if n == 6 || part.is_empty() || part.len() > 2 {
                return Err(format!("invalid MAC address '{s}'"));
            }
            out[n] =
                u8::from_str_radix(part, 16).map_err(|_| format!("invalid MAC address '{s}'"))?;
            n += 1;
        }
        if n != 6 {
            return Err(format!("invalid MAC address '{s}'"));
        }
        Ok(MacAddr(out))
    }
}

impl Serialize for MacAddr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MacAddr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A named counter (extended stats, per-lcore extras).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedCounter {
    /// Name.
    pub name: String,
    /// Value.
    pub value: u64,
}

/// Basic port counters (rte_eth_stats), as the driver reads them.
/// A port's basic counters (`rte_eth_stats`, which the daemon's driver
/// reads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortCounters {
    /// Packets received.
    pub ipackets: u64,
    /// Packets sent.
    pub opackets: u64,
    /// Bytes received.
    pub ibytes: u64,
    /// Bytes sent.
    pub obytes: u64,
    /// RX packets dropped by the hardware (queue full).
    pub imissed: u64,
    /// RX errors.
    pub ierrors: u64,
    /// TX errors.
    pub oerrors: u64,
    /// RX mbuf allocation failures.
    pub rx_nombuf: u64,
}

/// A port (NIC or vdev).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortInfo {
    /// DPDK port id.
    pub id: u16,
    /// Name (device or config name).
    pub name: String,
    /// MAC address.
    pub mac: MacAddr,
    /// Link up.
    pub link_up: bool,
    /// Speed in Mbit/s (0 = unknown).
    pub speed_mbps: u32,
    /// Full duplex.
    pub full_duplex: bool,
    /// MTU.
    pub mtu: u16,
    /// Counters.
    pub counters: PortCounters,
    /// Extended counters (empty unless asked for).
    #[serde(default)]
    pub xstats: Vec<NamedCounter>,
    /// The port's kernel interface (the exception path), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelIfInfo>,
}

/// A port's kernel interface and what crossed it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelIfInfo {
    /// Interface name.
    pub name: String,
    /// Namespace it is in (`None`: dirigo's own).
    pub netns: Option<String>,
    /// `tap` or `virtio-user`.
    pub backend: String,
    /// Packets the workers handed to it.
    pub to_kernel: u64,
    /// Packets the kernel sent through it (out of the port).
    pub from_kernel: u64,
    /// Packets for it over the port's rate limit (dropped).
    pub rate_limited: u64,
    /// Packets for it lost to a full exception ring.
    pub ring_full: u64,
    /// Packets the interface did not take (dropped).
    pub write_failed: u64,
    /// Packets from it lost to a full inject ring.
    pub inject_full: u64,
}

/// An address configured on a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddrInfo {
    /// Port id.
    pub port: u16,
    /// Address, IPv4 or IPv6 (a port's link-local IPv6 address included).
    pub addr: std::net::IpAddr,
    /// Prefix length of the connected network.
    pub prefix_len: u8,
}

/// A route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteInfo {
    /// Destination network (IPv4 or IPv6).
    pub dst: std::net::IpAddr,
    /// Prefix length.
    pub prefix_len: u8,
    /// Gateway; None for a connected route.
    #[serde(default)]
    pub gateway: Option<std::net::IpAddr>,
    /// Egress port.
    pub port: u16,
    /// Preferred source address.
    #[serde(default)]
    pub src: Option<std::net::IpAddr>,
}

/// A neighbor (ARP) entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeighInfo {
    /// Port id.
    pub port: u16,
    /// IPv4 or IPv6 address.
    pub addr: std::net::IpAddr,
    /// MAC (None while incomplete).
    #[serde(default)]
    pub mac: Option<MacAddr>,
    /// State: `static`, `reachable`, `stale`, `incomplete`, `failed`.
    pub state: String,
    /// Seconds since last confirmed (None for static).
    #[serde(default)]
    pub age_secs: Option<u32>,
}

/// Counters of one lcore.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LcoreInfo {
    /// Lcore id.
    pub lcore: u32,
    /// Role: `main`, `worker`.
    pub role: String,
    /// `port:queue` pairs it polls.
    #[serde(default)]
    pub queues: Vec<String>,
    /// Packets received.
    pub rx_packets: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Packets dropped.
    pub dropped: u64,
    /// Connections in its table now.
    pub conns: u64,
    /// Connections created since start.
    pub conns_created: u64,
    /// Other counters.
    #[serde(default)]
    pub extra: Vec<NamedCounter>,
    /// Busy time: nanoseconds since start that the worker spent in polls
    /// that carried packets (cumulative, so a client turns two readings
    /// into a busy ratio over its own interval). `None`: this daemon does
    /// not measure it (`dirigoctl top` then shows `-` for BUSY).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_ns: Option<u64>,
}

/// One worker's connections counted every way at one moment
/// (`dirigoctl census`): the worker takes every figure itself between two
/// bursts, so they agree exactly even while connections expire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CensusInfo {
    /// The worker's lcore.
    pub lcore: u32,
    /// The tables' own counts.
    pub entries: u64,
    /// Records in use found by walking the tables (what `-L -c` lists).
    pub walked: u64,
    /// Walked records flagged active (ESTABLISHED).
    pub walked_active: u64,
    /// The published connection gauge (`lcores`' `conns`, the metrics).
    pub gauge: u64,
    /// Active connections by the real servers' counters (removed servers'
    /// slots included).
    pub active: u64,
    /// Inactive connections by the real servers' counters.
    pub inactive: u64,
    /// Whether every figure agrees: entries == walked == gauge ==
    /// active + inactive, walked_active == active.
    pub consistent: bool,
}

/// One SNAT rule (`[[snat]]`) and its connections, summed over the
/// workers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnatInfo {
    /// The rule as configured.
    pub rule: dirigo_core::lb::snat::SnatRule,
    /// Connections it made since start.
    pub conns: u64,
    /// Its connections in the tables now.
    pub live: u64,
}

/// The SNAT rules and the table use of their connections.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnatReport {
    /// Each rule, in order.
    pub rules: Vec<SnatInfo>,
    /// SNAT connections in the tables now, all rules.
    pub live: u64,
    /// The most SNAT connections the workers keep together (each worker
    /// half its IPv6 table).
    pub bound: u64,
}

/// A drop reason and how often it happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCount {
    /// Reason name (`no_service`, `bad_checksum`, ...).
    pub reason: String,
    /// Count since start.
    pub count: u64,
}

/// Daemon version information.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionInfo {
    /// The daemon's crate version.
    pub version: String,
    /// Control protocol version.
    pub proto: u32,
    /// DPDK version string, when known.
    #[serde(default)]
    pub dpdk: Option<String>,
    /// The git commit the daemon was built from, when it says (older
    /// daemons do not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// Connection sync (`dirigoctl sync`, `dirigoadm -L --daemon`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncInfo {
    /// The kernel interface the messages use.
    pub interface: String,
    /// The address they are sent from.
    pub source: Ipv4Addr,
    /// Multicast group (unused with unicast peers).
    pub group: Ipv4Addr,
    /// UDP port.
    pub udp_port: u16,
    /// Multicast TTL.
    pub ttl: u32,
    /// IPVS syncid.
    pub syncid: u8,
    /// Unicast peers (empty: the group).
    pub peers: Vec<Ipv4Addr>,
    /// Sends this director's connections (IPVS: a master daemon).
    pub send: bool,
    /// Installs the others' (IPVS: a backup daemon).
    pub receive: bool,
    /// Largest message, bytes of UDP payload (IPVS `maxlen`).
    pub max_message: u32,
    /// UDP connections are sent at this packet.
    pub threshold: u32,
    /// Refresh period as applied, ms (0 = none).
    pub refresh_ms: u64,
    /// The sync thread's counters, then the workers' summed.
    pub counters: Vec<NamedCounter>,
}

/// The connection handoff (`dirigoctl handoff`): what this process took
/// over from the one before it at start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandoffInfo {
    /// `[control] handoff_file` (`None`: no handoff configured).
    pub file: Option<String>,
    /// What became of the file read at start: "none" (there was none),
    /// "installed", or why it was refused whole.
    pub outcome: String,
    /// The gap in forwarding, ms: from the old process's last burst to
    /// this one's first (`None`: no file was installed).
    pub gap_ms: Option<u64>,
    /// Entries written, installed and refused, by reason.
    pub counters: Vec<NamedCounter>,
    /// The crash checkpoint (`None`: `[control] connection_checkpoint_s`
    /// is not set).
    #[serde(default)]
    pub checkpoint: Option<CheckpointInfo>,
}

/// The crash checkpoint (`[control] connection_checkpoint_s`), in
/// `dirigoctl handoff`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointInfo {
    /// The period, seconds.
    pub period_s: u32,
    /// Checkpoints written since start.
    pub written: u64,
    /// Checkpoints that could not be written (each logged).
    pub failed: u64,
    /// Housekeeping ticks a worker waited for a buffer.
    pub stalls: u64,
    /// The last checkpoint's entries.
    pub last_entries: u64,
    /// The last checkpoint's bytes.
    pub last_bytes: u64,
    /// The last checkpoint's time, ms, from the sweep's start to the file
    /// renamed into place.
    pub last_ms: u64,
    /// Seconds since the last checkpoint was written (`None`: none yet).
    pub age_s: Option<u64>,
}

/// One service's scheduler table as the running snapshot holds it
/// (`dirigoctl fingerprint`): directors whose fingerprints of a service
/// are equal send every flow of it to the same real server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FingerprintInfo {
    /// The service.
    pub service: dirigo_core::lb::spec::ServiceKey,
    /// Its scheduler (`mh`, `sh`, `rr`, ...).
    pub sched: String,
    /// Slots (mh) or buckets (sh, dh); `None`: the scheduler has no
    /// table (rr, wrr, lc, wlc, sed, nq, fo: their choice depends on each
    /// worker's own state).
    pub entries: Option<u32>,
    /// Distinct real servers owning at least one entry.
    pub servers: Option<u32>,
    /// SipHash-2-4 (keys 0, 0) over the scheduler's name, flags, the
    /// table's size and every entry's server address and port (see
    /// `lb::snapshot::fingerprint`), as `0x` and 16 hex digits.
    pub fingerprint: Option<String>,
}

/// One checked real server (`dirigoctl health`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthInfo {
    /// The service.
    pub service: dirigo_core::lb::spec::ServiceKey,
    /// The real server.
    pub dest: dirigo_core::lb::spec::DestKey,
    /// The check's type (`tcp`, `http`, ...), with ` via VIP` when it
    /// probes through dirigo.
    pub check: String,
    /// `up`, `down` or `disabled`.
    pub state: String,
    /// Seconds in that state.
    pub since_secs: u64,
    /// The last check's result (`connected`, `status 503`, `timeout`, ...).
    pub last: Option<String>,
    /// Whether the last check passed.
    pub last_ok: Option<bool>,
    /// The last check's latency, microseconds.
    pub latency_us: Option<u64>,
    /// Checks run, failed.
    pub checks: u64,
    /// Checks failed.
    pub failures: u64,
    /// State changes.
    pub transitions: u64,
    /// The configured weight.
    pub weight: u32,
    /// The weight the workers use (0 while inhibited; None when removed).
    pub effective_weight: Option<u32>,
}

/// A logged health transition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthEvent {
    /// Seconds ago.
    pub secs_ago: u64,
    /// What changed.
    pub what: String,
    /// Why.
    pub why: String,
}

/// `dirigoctl health`: the checked servers, withdrawn VIPs, the services
/// without quorum, counters and the last transitions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthReport {
    /// Every checked server.
    pub servers: Vec<HealthInfo>,
    /// Services whose quorum is lost (`TCP 10.0.0.1:80`).
    pub quorum_lost: Vec<String>,
    /// VIPs withdrawn (not answering ARP and ping).
    pub withdrawn: Vec<IpAddr>,
    /// Servers that went down / came up; quorum lost / restored.
    pub counts: [u64; 4],
    /// The last transitions, oldest first.
    pub events: Vec<HealthEvent>,
}

/// One VIP in `dirigoctl vips`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VipInfo {
    /// The VIP (IPv4 or IPv6).
    pub vip: IpAddr,
    /// `announced`, `withdrawn`, `draining`, `error`, `pending` (not
    /// reconciled yet) or `off` (no `[announce]`).
    pub state: String,
    /// Why (`quorum: TCP 10.0.0.100:80 3/3 up`, `no quorum: ...`,
    /// `draining (SIGTERM)`, the netlink error).
    pub why: String,
    /// Seconds in that state (none when not announcing).
    pub since_secs: Option<u64>,
}

/// `dirigoctl vips`: the announce settings and every VIP's state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VipReport {
    /// Whether `[announce]` is on.
    pub enabled: bool,
    /// The kernel interface the routes go through.
    pub interface: Option<String>,
    /// Their routing table.
    pub table: Option<u32>,
    /// Their protocol number.
    pub protocol: Option<u8>,
    /// dirigo is stopping: every route withdrawn.
    pub draining: bool,
    /// Failed route changes so far.
    pub failures: u64,
    /// Every VIP.
    pub vips: Vec<VipInfo>,
}
