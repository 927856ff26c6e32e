//! The operator's model of services and real servers (ipvsadm's), shared by
//! the config file, the control protocol and the snapshot builder.

pub use super::tunnel::{TunCsum, TunType, Tunnel};
use crate::lb::sched::{SchedFlags, SchedKind};
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, Ipv4Addr};

/// Transport protocol of a virtual service (`-t` / `-u`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    /// TCP (`-t`).
    Tcp,
    /// UDP (`-u`).
    Udp,
}

impl Proto {
    /// IP protocol number.
    pub fn number(self) -> u8 {
        match self {
            Proto::Tcp => crate::net::meta::PROTO_TCP,
            Proto::Udp => crate::net::meta::PROTO_UDP,
        }
    }
    /// "TCP" / "UDP" as ipvsadm prints it.
    pub fn upper(self) -> &'static str {
        match self {
            Proto::Tcp => "TCP",
            Proto::Udp => "UDP",
        }
    }
}

/// Forwarding method of a real server (`-g`, `-i`, `-m`). One byte, as
/// a connection record stores it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Method {
    /// Direct routing (`-g`, "Route"; ipvsadm's default).
    #[default]
    Dr = 0,
    /// IPIP tunnelling (`-i`, "Tunnel").
    Tun = 1,
    /// NAT (`-m`, "Masq").
    Nat = 2,
    /// FullNAT (`-b`, DPVS's "FullNat"): the client's address is
    /// rewritten too, to one of the service's local addresses
    /// ([`ServiceSpec::local_addresses`]), so that the real server's
    /// replies come back to the director from any network.
    #[serde(rename = "fullnat")]
    FullNat = 3,
}

impl Method {
    /// The word ipvsadm prints in the Forward column.
    pub fn ipvsadm_name(self) -> &'static str {
        match self {
            Method::Dr => "Route",
            Method::Tun => "Tunnel",
            Method::Nat => "Masq",
            Method::FullNat => "FullNat",
        }
    }
}

/// Identity of a virtual service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ServiceKey {
    /// TCP or UDP.
    pub proto: Proto,
    /// Virtual IP (IPv4 or IPv6; its real servers are of the same family).
    pub vip: IpAddr,
    /// Virtual port.
    pub port: u16,
    /// The firewall mark of an fwmark service (`ipvsadm -f MARK`), 0 for
    /// an ordinary one. An fwmark service has no address or port of its
    /// own: its `vip` is the unspecified address of its family (0.0.0.0,
    /// or :: for `-f MARK -6`), its `port` 0 and its `proto` TCP; it
    /// takes the packets dirigo's mark rules ([`crate::lb::mark`]) give
    /// its mark, of either protocol. Left out of the JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fwmark: u32,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl ServiceKey {
    /// The key of fwmark service `mark` (IPv6 when `v6`).
    pub fn fwmark(mark: u32, v6: bool) -> ServiceKey {
        ServiceKey {
            proto: Proto::Tcp,
            vip: if v6 {
                IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED)
            } else {
                IpAddr::V4(Ipv4Addr::UNSPECIFIED)
            },
            port: 0,
            fwmark: mark,
        }
    }

    /// Whether this is an fwmark service's key.
    pub fn is_fwmark(&self) -> bool {
        self.fwmark != 0
    }
}

/// A virtual service as configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceSpec {
    /// Identity.
    pub key: ServiceKey,
    /// Scheduler (`-s`, default wlc).
    pub sched: SchedKind,
    /// Scheduler flags (`-b`).
    #[serde(default)]
    pub flags: SchedFlags,
    /// Persistence timeout in seconds (`-p`), None when not persistent.
    #[serde(default)]
    pub persistent: Option<u32>,
    /// Persistence netmask (`-M`), default 255.255.255.255.
    #[serde(default = "default_netmask")]
    pub netmask: Ipv4Addr,
    /// Persistence granularity of an IPv6 service (`-M` takes a prefix
    /// length for IPv6, as ipvsadm does), 1..=128, default 128; unused by
    /// IPv4 services. Left out of the JSON when 128.
    #[serde(default = "default_prefix6", skip_serializing_if = "is_128")]
    pub prefix6: u8,
    /// SYN proxy (`--synproxy`, NAT only): dirigo answers the client's SYN
    /// with a SYN cookie and opens the connection to the real server only
    /// when the client's ACK proves the cookie (see `lb::synproxy`).
    /// Left out of the control protocol's JSON when off, so the lines of
    /// every other service stay as they were.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub synproxy: bool,
    /// FullNAT's local addresses (`--add-laddr -z ADDR`, TOML
    /// `local_addresses`): the sources its FullNAT real servers see
    /// (the real servers' family), each with the source ports of every
    /// worker. Left out of the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local_addresses: Vec<IpAddr>,
    /// One-packet scheduling (`-o/--ops`, IPVS's `IP_VS_SVC_F_ONEPACKET`;
    /// UDP services with DR or TUN real servers only): every datagram is
    /// scheduled on its own and no connection entry is made. Left out of
    /// the control protocol's JSON when off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ops: bool,
    /// How a FullNAT service tells its real servers the client's address
    /// (`--client-address`, TOML `client_address`; TCP FullNAT services
    /// only). Left out of the JSON when `none`.
    #[serde(default, skip_serializing_if = "ClientAddress::is_none")]
    pub client_address: ClientAddress,
    /// The other keys of a service group (keepalived's
    /// `virtual_server_group`): VIP:port entries and fwmarks under which
    /// this one service, with its one real-server list, scheduler state
    /// and checks, is reached as well. Of the key's family; the address
    /// members of the key's protocol. Empty for an ordinary service; at
    /// most [`MAX_MEMBERS`]. Left out of the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<ServiceKey>,
}

/// The most member keys one service group has (keepalived's ranges make
/// many at once: `192.0.2.1-254 80` is 254).
pub const MAX_MEMBERS: usize = 256;

/// How a FullNAT service carries the client's address to its real
/// servers, which see only the service's local address as the source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum ClientAddress {
    /// Not at all (the default).
    #[default]
    #[serde(rename = "none")]
    None = 0,
    /// DPVS's TOA TCP option (kind 254) on the client's first segments,
    /// read by the `toa` kernel module on the real server.
    #[serde(rename = "toa")]
    Toa = 1,
    /// A PROXY protocol version 1 line before the client's first byte.
    #[serde(rename = "proxy-v1")]
    ProxyV1 = 2,
    /// A PROXY protocol version 2 header before the client's first byte.
    #[serde(rename = "proxy-v2")]
    ProxyV2 = 3,
}

impl ClientAddress {
    /// Every value, in the order of their numbers.
    pub const ALL: [ClientAddress; 4] = [
        ClientAddress::None,
        ClientAddress::Toa,
        ClientAddress::ProxyV1,
        ClientAddress::ProxyV2,
    ];

    /// True for [`ClientAddress::None`].
    pub fn is_none(&self) -> bool {
        *self == ClientAddress::None
    }

    /// The word of the TOML key and of `--client-address`.
    pub fn name(self) -> &'static str {
        match self {
            ClientAddress::None => "none",
            ClientAddress::Toa => "toa",
            ClientAddress::ProxyV1 => "proxy-v1",
            ClientAddress::ProxyV2 => "proxy-v2",
        }
    }

    /// The value a word names ([`ClientAddress::name`]).
    pub fn parse(s: &str) -> Option<ClientAddress> {
        Self::ALL.into_iter().find(|c| c.name() == s)
    }

    /// The value of a record's byte (0 and unknown bytes: `None`).
    #[inline]
    pub fn from_u8(b: u8) -> ClientAddress {
        match b {
            1 => ClientAddress::Toa,
            2 => ClientAddress::ProxyV1,
            3 => ClientAddress::ProxyV2,
            _ => ClientAddress::None,
        }
    }
}

fn default_netmask() -> Ipv4Addr {
    Ipv4Addr::BROADCAST
}

fn default_prefix6() -> u8 {
    128
}

fn is_128(p: &u8) -> bool {
    *p == 128
}

/// Identity of a real server within a service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DestKey {
    /// Real server IP (the service's family).
    pub addr: IpAddr,
    /// Real server port (0 = the service's port).
    pub port: u16,
}

/// A real server as configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DestSpec {
    /// Identity.
    pub key: DestKey,
    /// Forwarding method (default DR).
    pub method: Method,
    /// Weight 0..=65535 (0 = quiesced).
    pub weight: u32,
    /// Upper connection threshold (`-x`), 0 = none.
    #[serde(default)]
    pub upper: u32,
    /// Lower connection threshold (`-y`), 0 = none.
    #[serde(default)]
    pub lower: u32,
    /// TUN's tunnel type, GUE port and checksum option (`--tun-type`,
    /// `--tun-port`, `--tun-*csum`): its keys sit beside the others and
    /// are left out when IPIP's defaults.
    #[serde(flatten)]
    pub tun: Tunnel,
}

/// Connection timeouts in seconds (`ipvsadm --set tcp tcpfin udp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeouts {
    /// TCP ESTABLISHED.
    pub tcp: u32,
    /// TCP FIN_WAIT (after a FIN).
    pub tcpfin: u32,
    /// UDP.
    pub udp: u32,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            tcp: 900,
            tcpfin: 120,
            udp: 300,
        }
    }
}
