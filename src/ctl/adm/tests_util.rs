//! Spec builders shared by the dirigoadm tests.

use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec};
use std::net::Ipv4Addr;

/// A TCP service key.
pub fn tkey(a: [u8; 4], port: u16) -> ServiceKey {
    ServiceKey {
        proto: Proto::Tcp,
        vip: Ipv4Addr::from(a),
        port,
    }
}

/// A service spec with default flags and netmask.
pub fn svc(key: ServiceKey, sched: SchedKind, persistent: Option<u32>) -> ServiceSpec {
    ServiceSpec {
        key,
        sched,
        flags: SchedFlags::default(),
        persistent,
        netmask: Ipv4Addr::BROADCAST,
    }
}

/// A real server spec without thresholds.
pub fn dest(a: [u8; 4], port: u16, method: Method, weight: u32) -> DestSpec {
    DestSpec {
        key: DestKey {
            addr: Ipv4Addr::from(a),
            port,
        },
        method,
        weight,
        upper: 0,
        lower: 0,
    }
}
