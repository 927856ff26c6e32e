//! The slot allocators that outlive snapshots ([`LbIds`]): the stable
//! identities of services and real servers (see [`crate::lb::ids`] for the
//! reuse rule).

use crate::lb::ids::SlotAllocator;
use crate::lb::spec::{DestKey, ServiceKey};

/// The two slot allocators the control thread keeps for the daemon's life.
#[derive(Clone, Debug)]
pub struct LbIds {
    /// Service slots (size of per-lcore service counter arrays).
    pub services: SlotAllocator<ServiceKey>,
    /// Real server slots (size of per-lcore real-server counter arrays).
    pub dests: SlotAllocator<(ServiceKey, DestKey)>,
}

impl LbIds {
    /// Allocators for at most `max_services` services (<= 65536) and
    /// `max_dests` real servers in total.
    pub fn new(max_services: u32, max_dests: u32) -> LbIds {
        LbIds {
            services: SlotAllocator::new(max_services.min(1 << 16)),
            dests: SlotAllocator::new(max_dests),
        }
    }
}
