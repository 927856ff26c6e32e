//! The services and real servers of a snapshot as a worker sees them
//! ([`Service`], [`Dest`]), and the client sockets pinned to a real server
//! ([`Pin`]).

use crate::lb::ids::SlotId;
use crate::lb::sched::Prepared;
use crate::lb::spec::{DestKey, Method, ServiceSpec};
use crate::lb::tunnel::Tunnel;

/// A real server as a worker sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dest {
    /// Stable identity (index into per-lcore counters).
    pub id: SlotId,
    /// As configured.
    pub key: DestKey,
    /// IPv4 real server address, host order (0 for an IPv6 one).
    pub addr: u32,
    /// IPv6 real server address, host order (0 for an IPv4 one).
    pub addr6: u128,
    /// Effective port: the configured one for NAT (0 = the service's);
    /// always the service port for DR and TUN (IPVS ignores it there).
    /// 0 only for a port-0 service: the connection then keeps the client's
    /// destination port.
    pub port: u16,
    /// Forwarding method.
    pub method: Method,
    /// TUN's tunnel type, GUE port and checksum option.
    pub tun: Tunnel,
    /// Weight (0 = quiesced).
    pub weight: u32,
    /// Upper threshold as applied by one worker (0 = none).
    pub upper: u32,
    /// Lower threshold as applied by one worker (0 = none).
    pub lower: u32,
}

/// A virtual service and its real servers.
#[derive(Clone, Debug)]
pub struct Service {
    /// Stable identity (index into per-lcore counters).
    pub id: SlotId,
    /// As configured.
    pub spec: ServiceSpec,
    /// The IPv4 VIP, host order (0 for an IPv6 service).
    pub vip4: u32,
    /// The IPv6 VIP, host order (0 for an IPv4 service).
    pub vip6: u128,
    /// Real servers, in the order given to [`Prepared::build_ids`].
    pub dests: Vec<Dest>,
    /// Scheduler data for these servers.
    pub prepared: Prepared,
    /// New connections from these client sockets go to one real server,
    /// whatever the scheduler and the weights say (health checks probing
    /// a server through the VIP). Usually empty.
    pub pins: Vec<Pin>,
    /// Whether its real servers forward by FullNAT (then all do).
    pub fullnat: bool,
    /// FullNAT's IPv4 local addresses, host order, as configured.
    pub local4: Vec<u32>,
    /// FullNAT's IPv6 local addresses, host order, as configured.
    pub local6: Vec<u128>,
}

/// A client socket pinned to a real server of a service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pin {
    /// Client address, host order (an IPv4 one in the low 32 bits: a
    /// service, and so its clients, is of one family).
    pub src: u128,
    /// Client port.
    pub sport: u16,
    /// Index into the service's `dests`.
    pub dest: u16,
}

impl Service {
    /// The real server a new connection from `src:sport` (either family)
    /// is pinned to.
    #[inline]
    pub fn pinned<A: Into<u128>>(&self, src: A, sport: u16) -> Option<&Dest> {
        if self.pins.is_empty() {
            return None;
        }
        let src = src.into();
        let p = self
            .pins
            .iter()
            .find(|p| p.src == src && p.sport == sport)?;
        self.dests.get(p.dest as usize)
    }
}
