//! Building a [`Snapshot`]: the [`SnapshotBuilder`] the control thread
//! fills from [`ServiceSpec`]s and [`DestSpec`]s, its validation, the
//! [`BuildError`]s it refuses a configuration with, and the assignment and
//! retirement of the [`LbIds`] slots.

use super::addr::{fold6, v4_bits, v6_bits};
use super::forwarding::Snapshot;
use super::group::{check_group, keys, members, GroupError};
use super::index::index;
use super::lb_ids::LbIds;
use super::marks::{check_fwmark, compile_marks};
use super::service::{Dest, Pin, Service};
use crate::lb::mark::{check_rules, MarkRule};
use crate::lb::sched::{stable_id, Prepared};
use crate::lb::snat::{self, SnatRule};
use crate::lb::spec::{DestKey, DestSpec, Method, ServiceKey, ServiceSpec, Timeouts};
use crate::lb::state::TimeoutTable;
use crate::lb::tunnel::Tunnel;
use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};

/// Why a configuration was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The same (proto, VIP, port) twice.
    #[error("duplicate service {0:?}")]
    DuplicateService(ServiceKey),
    /// The same real server twice in one service.
    #[error("duplicate real server {1:?} in service {0:?}")]
    DuplicateDest(ServiceKey, DestKey),
    /// Weight above 65535.
    #[error("weight {2} of {1:?} in {0:?} exceeds 65535")]
    WeightTooLarge(ServiceKey, DestKey, u32),
    /// Lower threshold above the upper one (IPVS: -ERANGE).
    #[error("lower threshold {3} above upper threshold {2} for {1:?} in {0:?}")]
    ThresholdOrder(ServiceKey, DestKey, u32, u32),
    /// Tunnel options that do not fit the real server (see
    /// [`crate::lb::tunnel::Tunnel::check`]).
    #[error("real server {} of service {}: {2}", .1.addr, std::net::SocketAddr::new(.0.vip, .0.port))]
    Tunnel(ServiceKey, DestKey, &'static str),
    /// A DR real server not on a connected network.
    #[error("DR real server {1:?} in {0:?} is not on a connected network")]
    NotOnLink(ServiceKey, DestKey),
    /// Port 0 on a service that is not persistent.
    #[error("service {0:?}: port 0 requires persistence")]
    PortZero(ServiceKey),
    /// VIP or RIP 0.0.0.0 / broadcast / multicast (IPv6: ::, ::1,
    /// multicast).
    #[error("invalid address {0} ({1})")]
    BadAddress(IpAddr, &'static str),
    /// A real server of the other address family than its service's VIP
    /// (ipvsadm's words for the kernel's EAFNOSUPPORT).
    #[error(
        "Operation not supported with specified address family: real server {} of service {} \
         (an IPv6 VIP takes IPv4 real servers only by NAT64: -m and [dataplane] nat64_pool, \
         or -b and an IPv4 local address)",
        .1.addr, .0.vip
    )]
    MixedFamily(ServiceKey, DestKey),
    /// A persistence mask of the other family: an IPv6 service's is a
    /// prefix length 1..=128 (`prefix6`), an IPv4 one's a netmask.
    #[error(
        "service {}: the persistence mask of an IPv6 service is a prefix length 1..128 (-M 64), of an IPv4 service a netmask (-M 255.255.255.0)",
        std::net::SocketAddr::new(.0.vip, .0.port)
    )]
    MaskFamily(ServiceKey),
    /// A feature IPv6 services do not have yet.
    #[error("service {}: {1} is not available for IPv6 services yet", std::net::SocketAddr::new(.0.vip, .0.port))]
    Ipv6Unsupported(ServiceKey, &'static str),
    /// More services than the workers' counter arrays hold.
    #[error("too many services (max {0})")]
    TooManyServices(u32),
    /// More real servers than the workers' counter arrays hold.
    #[error("too many real servers (max {0})")]
    TooManyDests(u32),
    /// `--synproxy` while the workers reserved no SYN proxy state.
    #[error(
        "SYN proxy is off in this dirigo: set [dataplane] synproxy = true and restart \
         (it reserves 12 bytes per connection)"
    )]
    SynproxyOff(ServiceKey),
    /// `--synproxy` on a UDP service.
    #[error("the SYN proxy is for TCP services, not {} (UDP)", std::net::SocketAddr::new(.0.vip, .0.port))]
    SynproxyNotTcp(ServiceKey),
    /// `--synproxy` with a DR or TUN real server.
    #[error(
        "SYN proxy needs NAT (-m) real servers: {} forwards by {2}, whose replies bypass dirigo",
        std::net::SocketAddr::new(.1.addr, .1.port)
    )]
    SynproxyNotNat(ServiceKey, DestKey, &'static str),
    /// `client_address` on a service that is not TCP FullNAT.
    #[error(
        "service {}: client_address = \"{1}\" is for TCP FullNAT services (-b real \
         servers): other methods keep the client's address as the source",
        std::net::SocketAddr::new(.0.vip, .0.port)
    )]
    ClientAddressNotFullNat(ServiceKey, &'static str),
    /// A FullNAT real server in a service without local addresses.
    #[error(
        "service {}: a FullNAT (-b) real server needs the service's local addresses \
         (dirigoadm --add-laddr -z ADDR, TOML local_addresses)",
        std::net::SocketAddr::new(.0.vip, .0.port)
    )]
    FullNatNoLaddr(ServiceKey),
    /// FullNAT real servers of a family no local address of the service
    /// is of (an IPv6 service's IPv4 servers leave from IPv4 ones).
    #[error(
        "service {}: FullNAT (-b) real server {} needs a local address of its family \
         (dirigoadm --add-laddr -z ADDR, TOML local_addresses)",
        std::net::SocketAddr::new(.0.vip, .0.port), .1.addr
    )]
    FullNatNoLaddrOfFamily(ServiceKey, DestKey),
    /// `client_address = "toa"` for IPv4 FullNAT real servers of an IPv6
    /// VIP.
    #[error(
        "service {}: TOA does not carry an IPv6 client's address to IPv4 real servers \
         (their toa module reads an IPv4 one): use proxy-v1 or proxy-v2",
        std::net::SocketAddr::new(.0.vip, .0.port)
    )]
    ClientAddress64(ServiceKey),
    /// FullNAT and another method in one service.
    #[error(
        "service {}: FullNAT real server {} and real server {} of another method: \
         a FullNAT service's real servers all forward by FullNAT",
        std::net::SocketAddr::new(.0.vip, .0.port), .1.addr, .2.addr
    )]
    FullNatMixed(ServiceKey, DestKey, DestKey),
    /// A local address of the other family than the service's real servers.
    #[error(
        "service {}: local address {1} is not of the real servers' family",
        std::net::SocketAddr::new(.0.vip, .0.port)
    )]
    LaddrFamily(ServiceKey, IpAddr),
    /// A local address that is a VIP.
    #[error(
        "service {}: local address {1} is a VIP (local addresses take the replies of \
         FullNAT connections; a VIP takes clients)",
        std::net::SocketAddr::new(.0.vip, .0.port)
    )]
    LaddrIsVip(ServiceKey, IpAddr),
    /// `--ops` on a TCP service (IPVS ignores the flag there).
    #[error(
        "one-packet scheduling (-o) is for UDP services, not {} (TCP): a connection's segments must all reach one server",
        std::net::SocketAddr::new(.0.vip, .0.port)
    )]
    OpsNotUdp(ServiceKey),
    /// `--ops` with persistence.
    #[error(
        "service {}: one-packet scheduling (-o) keeps no state, persistence (-p) is state: use one or the other",
        std::net::SocketAddr::new(.0.vip, .0.port)
    )]
    OpsPersistent(ServiceKey),
    /// `--ops` with a NAT real server.
    #[error(
        "one-packet scheduling (-o) needs DR (-g) or TUN (-i) real servers: {} of {} is NAT (-m), whose replies need a connection entry to be translated back",
        .1.addr, std::net::SocketAddr::new(.0.vip, .0.port)
    )]
    OpsNat(ServiceKey, DestKey),
    /// An fwmark service whose key has an address, a port or UDP.
    #[error("fwmark service {}: its key is the mark alone (address unspecified, port 0)", .0.fwmark)]
    FwmarkKey(ServiceKey),
    /// A feature fwmark services do not have.
    #[error("fwmark service {}: {1} is not available for fwmark services", .0.fwmark)]
    FwmarkUnsupported(ServiceKey, &'static str),
    /// Mark rules that are invalid or overlap ([`crate::lb::mark::check_rules`]).
    #[error("{0}")]
    Marks(String),
    /// A service group's member key that is already a service's key or
    /// another member (the second key is that service's).
    #[error(
        "service group {}: member {} is taken by service {}",
        super::group::key_text(.0), super::group::key_text(.1), super::group::key_text(.2)
    )]
    MemberTaken(ServiceKey, ServiceKey, ServiceKey),
    /// A service group's member that breaks a group's rules.
    #[error("service group {}: {1}", super::group::key_text(.0))]
    Group(ServiceKey, String),
    /// SNAT rules that are invalid or overlap
    /// ([`crate::lb::snat::check_rules`]), or a pool address that is a VIP.
    #[error("{0}")]
    Snat(String),
}

/// Builds and validates a [`Snapshot`].
pub struct SnapshotBuilder<'a> {
    services: Vec<(ServiceSpec, Vec<DestSpec>)>,
    timeouts: Timeouts,
    tunnel_src: Option<Ipv4Addr>,
    nat64_pool: Vec<u32>,
    expire_nodest_conn: bool,
    sloppy_tcp: bool,
    threshold_divisor: u32,
    mh_table_size: usize,
    on_link: Option<&'a dyn Fn(IpAddr) -> bool>,
    pins: Vec<(ServiceKey, std::net::SocketAddr, DestKey)>,
    synproxy: bool,
    marks: Vec<MarkRule>,
    snat: Vec<SnatRule>,
}

impl Default for SnapshotBuilder<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> SnapshotBuilder<'a> {
    /// An empty configuration with default timeouts.
    pub fn new() -> Self {
        SnapshotBuilder {
            services: Vec::new(),
            timeouts: Timeouts::default(),
            tunnel_src: None,
            nat64_pool: Vec::new(),
            expire_nodest_conn: false,
            sloppy_tcp: false,
            threshold_divisor: 1,
            mh_table_size: 0,
            on_link: None,
            pins: Vec::new(),
            synproxy: false,
            marks: Vec::new(),
            snat: Vec::new(),
        }
    }

    /// The mark rules (`[[mark]]`, `dirigoctl mark`) that give packets
    /// to fwmark services; validated by [`Self::build`].
    pub fn marks(&mut self, rules: &[MarkRule]) -> &mut Self {
        self.marks = rules.to_vec();
        self
    }

    /// The SNAT rules (`[[snat]]`) that masquerade the real servers' own
    /// connections; validated by [`Self::build`].
    pub fn snat(&mut self, rules: &[SnatRule]) -> &mut Self {
        self.snat = rules.to_vec();
        self
    }

    /// Whether the workers keep SYN proxy state (`[dataplane] synproxy`):
    /// without it a `--synproxy` service is refused. Default false.
    pub fn synproxy(&mut self, on: bool) -> &mut Self {
        self.synproxy = on;
        self
    }

    /// Pin new connections from `client` to service `svc`'s real server
    /// `dest` (ignored when the service or the server is not there).
    pub fn pin(
        &mut self,
        svc: ServiceKey,
        client: std::net::SocketAddr,
        dest: DestKey,
    ) -> &mut Self {
        self.pins.push((svc, client, dest));
        self
    }

    /// Add a service with its real servers.
    pub fn service(&mut self, spec: ServiceSpec, dests: Vec<DestSpec>) -> &mut Self {
        self.services.push((spec, dests));
        self
    }

    /// `ipvsadm --set tcp tcpfin udp`.
    pub fn timeouts(&mut self, t: Timeouts) -> &mut Self {
        self.timeouts = t;
        self
    }

    /// The IPv4 addresses NAT64 connections leave from (an IPv6 VIP with
    /// IPv4 NAT real servers is refused without one).
    pub fn nat64_pool(&mut self, pool: &[Ipv4Addr]) -> &mut Self {
        self.nat64_pool = pool.iter().map(|&a| u32::from(a)).collect();
        self.nat64_pool.sort_unstable();
        self.nat64_pool.dedup();
        self
    }

    /// TUN outer source (None = the egress port's address).
    pub fn tunnel_src(&mut self, a: Option<Ipv4Addr>) -> &mut Self {
        self.tunnel_src = a;
        self
    }

    /// IPVS `expire_nodest_conn` sysctl: when a real server is removed,
    /// true drops its connections' packets and expires the connection at
    /// its next packet; false (default) keeps forwarding them to it.
    pub fn expire_nodest_conn(&mut self, on: bool) -> &mut Self {
        self.expire_nodest_conn = on;
        self
    }

    /// IPVS `sloppy_tcp` sysctl: true lets a TCP packet without SYN (and
    /// without RST) create a connection, scheduled as a SYN would be, so a
    /// flow that another director started can be taken over mid-stream
    /// (with `mh`, `sh` or `dh` every director picks the same real server).
    /// Default false: only a SYN creates a TCP connection.
    pub fn sloppy_tcp(&mut self, on: bool) -> &mut Self {
        self.sloppy_tcp = on;
        self
    }

    /// Connection thresholds are enforced per worker on its own counts;
    /// with `n` workers each applies `ceil(threshold / n)`. Default 1.
    pub fn threshold_divisor(&mut self, n: u32) -> &mut Self {
        self.threshold_divisor = n.max(1);
        self
    }

    /// Maglev (`mh`) lookup table size, rounded up to a prime (0, the
    /// default, means [`crate::lb::sched::MH_DEFAULT_TABLE_SIZE`]).
    pub fn mh_table_size(&mut self, n: usize) -> &mut Self {
        self.mh_table_size = n;
        self
    }

    /// The DR on-link check (the integrator passes
    /// `&|a| egress.on_link(a).is_some()`); without it DR servers are not
    /// checked.
    pub fn on_link(&mut self, f: &'a dyn Fn(IpAddr) -> bool) -> &mut Self {
        self.on_link = Some(f);
        self
    }

    /// FullNAT's rules for one service: its local addresses are valid
    /// unicast, not a VIP, and of the VIP's family (an IPv6 service may
    /// have IPv4 ones too, for IPv4 real servers: NAT64's translation);
    /// a FullNAT real server needs at least one of its own family and
    /// shares its service with no other method.
    fn check_fullnat(&self, spec: &ServiceSpec, dests: &[DestSpec]) -> Result<(), BuildError> {
        let k = spec.key;
        for &a in &spec.local_addresses {
            check_addr(a)?;
            if a.is_ipv6() && k.vip.is_ipv4() {
                return Err(BuildError::LaddrFamily(k, a));
            }
            if self
                .services
                .iter()
                .any(|(s, _)| keys(s).any(|k| k.vip == a))
            {
                return Err(BuildError::LaddrIsVip(k, a));
            }
        }
        let Some(f) = dests.iter().find(|d| d.method == Method::FullNat) else {
            return Ok(());
        };
        if spec.local_addresses.is_empty() {
            return Err(BuildError::FullNatNoLaddr(k));
        }
        if let Some(d) = dests.iter().find(|d| d.method != Method::FullNat) {
            return Err(BuildError::FullNatMixed(k, f.key, d.key));
        }
        if let Some(d) = dests.iter().find(|d| {
            let v4 = d.key.addr.is_ipv4();
            !spec.local_addresses.iter().any(|a| a.is_ipv4() == v4)
        }) {
            return Err(BuildError::FullNatNoLaddrOfFamily(k, d.key));
        }
        if spec.client_address == crate::lb::spec::ClientAddress::Toa
            && k.vip.is_ipv6()
            && dests.iter().any(|d| d.key.addr.is_ipv4())
        {
            return Err(BuildError::ClientAddress64(k));
        }
        Ok(())
    }

    fn validate(&self, ids: &LbIds) -> Result<(), BuildError> {
        let mut seen = HashSet::new();
        let mut all_dests = Vec::new();
        let mut owners = std::collections::HashMap::new();
        for (spec, _) in &self.services {
            owners.insert(spec.key, spec.key);
        }
        for (spec, dests) in &self.services {
            let k = spec.key;
            if !seen.insert(k) {
                return Err(BuildError::DuplicateService(k));
            }
            check_group(spec, dests, &mut owners).map_err(|e| match e {
                GroupError::Taken(k, m, owner) => BuildError::MemberTaken(k, m, owner),
                GroupError::Rule(k, why) => BuildError::Group(k, why),
            })?;
            for m in spec.members.iter().filter(|m| !m.is_fwmark()) {
                check_addr(m.vip)?;
            }
            if k.is_fwmark() {
                check_fwmark(spec, dests).map_err(|why| match why {
                    None => BuildError::FwmarkKey(k),
                    Some(what) => BuildError::FwmarkUnsupported(k, what),
                })?;
            } else {
                check_addr(k.vip)?;
            }
            let mask_ok = if k.vip.is_ipv6() {
                spec.netmask == Ipv4Addr::BROADCAST && (1..=128).contains(&spec.prefix6)
            } else {
                spec.prefix6 == 128
            };
            if !mask_ok {
                return Err(BuildError::MaskFamily(k));
            }
            if k.port == 0 && spec.persistent.is_none() && !k.is_fwmark() {
                return Err(BuildError::PortZero(k));
            }
            if spec.synproxy {
                if k.proto != crate::lb::spec::Proto::Tcp {
                    return Err(BuildError::SynproxyNotTcp(k));
                }
                if !self.synproxy {
                    return Err(BuildError::SynproxyOff(k));
                }
            }
            self.check_fullnat(spec, dests)?;
            if !spec.client_address.is_none()
                && (k.proto != crate::lb::spec::Proto::Tcp
                    || dests.iter().any(|d| d.method != Method::FullNat))
            {
                return Err(BuildError::ClientAddressNotFullNat(
                    k,
                    spec.client_address.name(),
                ));
            }
            if spec.ops {
                if k.proto != crate::lb::spec::Proto::Udp {
                    return Err(BuildError::OpsNotUdp(k));
                }
                if spec.persistent.is_some() {
                    return Err(BuildError::OpsPersistent(k));
                }
            }
            let mut ds = HashSet::new();
            for d in dests {
                if spec.ops && matches!(d.method, Method::Nat | Method::FullNat) {
                    return Err(BuildError::OpsNat(k, d.key));
                }
                if spec.synproxy && d.method != Method::Nat {
                    let how = match d.method {
                        Method::Dr => "DR (-g)",
                        Method::FullNat => "FullNAT (-b)",
                        _ => "TUN (-i)",
                    };
                    return Err(BuildError::SynproxyNotNat(k, d.key, how));
                }
                if !ds.insert(d.key) {
                    return Err(BuildError::DuplicateDest(k, d.key));
                }
                if d.key.addr.is_ipv4() != k.vip.is_ipv4() {
                    // NAT64, on purpose: an IPv6 VIP, an IPv4 NAT server,
                    // a pool to leave from
                    // (or FullNAT from the service's IPv4 local addresses,
                    // by the same translation: check_fullnat)
                    let nat64 = k.vip.is_ipv6()
                        && (d.method == Method::Nat && !self.nat64_pool.is_empty()
                            || d.method == Method::FullNat);
                    if !nat64 {
                        return Err(BuildError::MixedFamily(k, d.key));
                    }
                    if spec.synproxy {
                        // the proxied handshake is written per family:
                        // its SYN would have to leave as IPv4
                        return Err(BuildError::Ipv6Unsupported(k, "the SYN proxy with NAT64"));
                    }
                }
                check_addr(d.key.addr)?;
                d.tun
                    .check(d.method == Method::Tun)
                    .map_err(|why| BuildError::Tunnel(k, d.key, why))?;
                if d.weight > 65535 {
                    return Err(BuildError::WeightTooLarge(k, d.key, d.weight));
                }
                if d.lower > d.upper {
                    return Err(BuildError::ThresholdOrder(k, d.key, d.upper, d.lower));
                }
                if d.method == Method::Dr {
                    if let Some(f) = self.on_link {
                        if !f(d.key.addr) {
                            return Err(BuildError::NotOnLink(k, d.key));
                        }
                    }
                }
                all_dests.push((k, d.key));
            }
        }
        check_rules(&self.marks).map_err(BuildError::Marks)?;
        snat::check_rules(&self.snat).map_err(BuildError::Snat)?;
        for r in &self.snat {
            if let Some(a) = r
                .pool
                .iter()
                .find(|a| self.services.iter().any(|(s, _)| s.key.vip == **a))
            {
                return Err(BuildError::Snat(format!(
                    "SNAT pool address {a} is a VIP (a pool address takes the replies of the connections it masquerades)"
                )));
            }
        }
        if ids.services.missing(seen.iter()) > ids.services.available() {
            return Err(BuildError::TooManyServices(ids.services.capacity()));
        }
        if ids.dests.missing(all_dests.iter()) > ids.dests.available() {
            return Err(BuildError::TooManyDests(ids.dests.capacity()));
        }
        Ok(())
    }

    /// Validate, assign slots, retire the slots of removed services and
    /// real servers at `epoch`, and build. On error nothing changes in `ids`.
    pub fn build(&self, ids: &mut LbIds, epoch: u64) -> Result<Snapshot, BuildError> {
        self.validate(ids)?;
        let div = self.threshold_divisor;
        let per_worker = |t: u32| if t == 0 { 0 } else { t.div_ceil(div) };
        let mut services = Vec::with_capacity(self.services.len());
        let mut dest_by_slot = vec![(u32::MAX, u32::MAX); ids.dests.capacity() as usize];
        let mut tun_by_slot = vec![Tunnel::IPIP; ids.dests.capacity() as usize];
        for (si, (spec, dspecs)) in self.services.iter().enumerate() {
            let k = spec.key;
            let id = ids
                .services
                .assign(&k)
                .ok_or(BuildError::TooManyServices(ids.services.capacity()))?;
            let mut dests = Vec::with_capacity(dspecs.len());
            for (di, d) in dspecs.iter().enumerate() {
                let did = ids
                    .dests
                    .assign(&(k, d.key))
                    .ok_or(BuildError::TooManyDests(ids.dests.capacity()))?;
                let port = match d.method {
                    Method::Nat | Method::FullNat if d.key.port != 0 => d.key.port,
                    // a group's connections keep the port of the member
                    // the client sent to
                    _ if !spec.members.is_empty() => 0,
                    _ => k.port,
                };
                if let Some(e) = dest_by_slot.get_mut(did.slot as usize) {
                    *e = (si as u32, di as u32);
                }
                if let Some(e) = tun_by_slot.get_mut(did.slot as usize) {
                    *e = d.tun;
                }
                dests.push(Dest {
                    id: did,
                    key: d.key,
                    addr: v4_bits(d.key.addr),
                    addr6: v6_bits(d.key.addr),
                    port,
                    method: d.method,
                    tun: d.tun,
                    weight: d.weight,
                    upper: per_worker(d.upper),
                    lower: per_worker(d.lower),
                });
            }
            // Stable identities (address, configured port): the Maglev table
            // then depends on the set of servers, not on their positions, so
            // removing one moves only the clients it served.
            let ids_weights: Vec<(u64, u32)> = dests
                .iter()
                .map(|d| (stable_id(d.addr ^ fold6(d.addr6), d.key.port), d.weight))
                .collect();
            let pins = self
                .pins
                .iter()
                .filter(|(sk, _, _)| *sk == k)
                .filter_map(|(_, c, dk)| {
                    let src = match c.ip() {
                        std::net::IpAddr::V4(a) => u32::from(a) as u128,
                        std::net::IpAddr::V6(a) => u128::from(a),
                    };
                    let i = dests.iter().position(|d| d.key == *dk)?;
                    Some(Pin {
                        src,
                        sport: c.port(),
                        dest: i as u16,
                    })
                })
                .collect();
            services.push(Service {
                id,
                pins,
                vip4: v4_bits(k.vip),
                vip6: v6_bits(k.vip),
                spec: spec.clone(),
                prepared: Prepared::build_ids(
                    spec.sched,
                    spec.flags,
                    &ids_weights,
                    self.mh_table_size,
                ),
                fullnat: dests.iter().any(|d| d.method == Method::FullNat),
                local4: spec
                    .local_addresses
                    .iter()
                    .filter(|a| a.is_ipv4())
                    .map(|&a| v4_bits(a))
                    .collect(),
                local6: spec
                    .local_addresses
                    .iter()
                    .filter(|a| a.is_ipv6())
                    .map(|&a| v6_bits(a))
                    .collect(),
                dests,
            });
        }
        let svc_keys: HashSet<ServiceKey> = services.iter().map(|s| s.spec.key).collect();
        let dest_keys: HashSet<(ServiceKey, DestKey)> = services
            .iter()
            .flat_map(|s| s.dests.iter().map(move |d| (s.spec.key, d.key)))
            .collect();
        ids.services.retire_except(epoch, |k| svc_keys.contains(k));
        ids.dests.retire_except(epoch, |k| dest_keys.contains(k));

        let members = members(&services);
        let svc_index = index(&services, &members, true);
        let svc_index6 = index(&services, &members, false);
        let any_port_zero = services
            .iter()
            .flat_map(|s| keys(&s.spec))
            .any(|k| k.port == 0 && !k.is_fwmark());
        let (marks4, marks6) = compile_marks(&self.marks, &services);
        let mut vips: Vec<u32> = services
            .iter()
            .flat_map(|s| keys(&s.spec))
            .filter(|k| k.vip.is_ipv4() && !k.is_fwmark())
            .map(|k| v4_bits(k.vip))
            .collect();
        vips.sort_unstable();
        vips.dedup();
        let mut vips6: Vec<u128> = services
            .iter()
            .flat_map(|s| keys(&s.spec))
            .filter(|k| k.vip.is_ipv6() && !k.is_fwmark())
            .map(|k| v6_bits(k.vip))
            .collect();
        vips6.sort_unstable();
        vips6.dedup();
        let snat4 = snat::compile4(&self.snat);
        let mut pool4: Vec<u32> = services
            .iter()
            .flat_map(|s| s.local4.iter().copied())
            .chain(self.nat64_pool.iter().copied())
            .chain(snat4.iter().flat_map(|r| r.pool.iter().copied()))
            .collect();
        pool4.sort_unstable();
        pool4.dedup();
        let fullnat4 = services
            .iter()
            .any(|s| s.fullnat && s.spec.key.vip.is_ipv4());
        let mut pool6: Vec<u128> = services
            .iter()
            .flat_map(|s| s.local6.iter().copied())
            .collect();
        pool6.sort_unstable();
        pool6.dedup();
        Ok(Snapshot {
            epoch,
            pool4,
            pool6,
            fullnat4,
            client_address: services.iter().any(|s| !s.spec.client_address.is_none()),
            services,
            members,
            svc_index,
            svc_index6,
            vips,
            vips6,
            dest_by_slot,
            tun_encap: tun_by_slot.iter().any(|t| !t.is_default()),
            tun_by_slot,
            svc_slots: ids.services.capacity(),
            any_port_zero,
            timeouts: TimeoutTable::new(&self.timeouts),
            raw_timeouts: self.timeouts,
            tunnel_src: self.tunnel_src.map(u32::from),
            nat64_pool: self.nat64_pool.clone(),
            expire_nodest_conn: self.expire_nodest_conn,
            sloppy_tcp: self.sloppy_tcp,
            marks4,
            marks6,
            snat4,
        })
    }
}

impl Snapshot {
    /// An empty snapshot (no services) for `ids`' capacities.
    pub fn empty(ids: &LbIds) -> Snapshot {
        SnapshotBuilder::new()
            .build(&mut ids.clone(), 0)
            .unwrap_or_else(|_| unreachable!("an empty configuration always builds"))
    }
}

fn check_addr(a: IpAddr) -> Result<(), BuildError> {
    if a.is_unspecified() {
        return Err(BuildError::BadAddress(a, "unspecified"));
    }
    if a.is_multicast() {
        return Err(BuildError::BadAddress(a, "multicast"));
    }
    match a {
        IpAddr::V4(v) if v.is_broadcast() => Err(BuildError::BadAddress(a, "broadcast")),
        IpAddr::V6(v) if v.is_loopback() => Err(BuildError::BadAddress(a, "loopback")),
        _ => Ok(()),
    }
}
