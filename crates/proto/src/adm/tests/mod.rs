//! Spec builders shared by the dirigoadm tests.

use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::spec::{Proto, ServiceKey, ServiceSpec};
pub use dirigo_core::lb::testutil::dest;
use std::net::Ipv4Addr;

/// A TCP service key.
pub fn tkey(a: [u8; 4], port: u16) -> ServiceKey {
    ServiceKey {
        fwmark: 0,
        proto: Proto::Tcp,
        vip: std::net::IpAddr::V4(Ipv4Addr::from(a)),
        port,
    }
}

/// A service spec with default flags and netmask.
pub fn svc(key: ServiceKey, sched: SchedKind, persistent: Option<u32>) -> ServiceSpec {
    ServiceSpec {
        members: Vec::new(),
        local_addresses: Vec::new(),
        key,
        sched,
        flags: SchedFlags::default(),
        persistent,
        netmask: Ipv4Addr::BROADCAST,
        prefix6: 128,
        synproxy: false,
        ops: false,
        client_address: Default::default(),
    }
}

mod args;
mod compat;
mod format;
mod fwmark;
mod groups;
mod tun;
