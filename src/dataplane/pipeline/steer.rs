//! Which worker owns a packet: the client address hashed (software
//! steering) or the NIC's choice where the ports hash on the client address
//! (RSS), widened by the persistence netmask; NAT64 pool replies by port.

use super::state::WorkerPipeline;
use crate::dataplane::rss::ClientOwner;
use crate::lb::snapshot::Snapshot;
use crate::net::meta::PacketMeta;
use std::sync::Arc;

/// The worker that owns connections of client address `client` among
/// `workers` (same answer on every worker: requests and NAT replies of a
/// connection, and all connections of a persistent client, meet there).
#[inline]
pub fn owner_of(client: u32, mask: u32, workers: u32) -> u32 {
    let h = ((client & mask) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (((h >> 32) * workers as u64) >> 32) as u32
}

/// The worker that owns `client`: the NIC's owner function where the ports
/// hash on the client address (`nic`), else [`owner_of`]. The pipeline and
/// the connection-sync receiver (which hands a received connection to its
/// owner) both use it, so they agree.
#[inline(always)]
pub fn owner_with(nic: Option<&ClientOwner>, client: u32, mask: u32, workers: u32) -> u32 {
    match nic {
        None => owner_of(client, mask, workers),
        Some(o) => o.owner(client & mask),
    }
}

/// The widest persistence netmask of the snapshot's services: steering by
/// it keeps all of one persistent client's connections on one worker.
pub fn steer_mask(snap: &Snapshot) -> u32 {
    snap.services()
        .iter()
        .filter(|s| s.spec.persistent.is_some() && s.spec.key.vip.is_ipv4())
        .map(|s| u32::from(s.spec.netmask))
        .fold(u32::MAX, |a, m| a & m)
}

impl WorkerPipeline {
    /// Use the NIC's owner function (RSS on the client address): a packet
    /// is then owned by the worker whose queue the NIC puts it on. Set
    /// once, before the first packet.
    pub fn set_client_owner(&mut self, owner: Arc<ClientOwner>) {
        self.client_owner = Some(owner);
    }

    /// The worker that owns `client`: the NIC's choice where the ports
    /// hash on the client address, else [`owner_of`]. The steering mask
    /// applies to both (a persistence netmask wider than /32 keeps a
    /// client's network on one worker, by software steering).
    #[inline(always)]
    pub(super) fn owner(&self, client: u32) -> u32 {
        owner_with(
            self.client_owner.as_deref(),
            client,
            self.steer_mask,
            self.workers,
        )
    }

    /// The worker that owns an IPv4 packet: by its client address, or for
    /// a reply to a NAT64 pool address by its port (each worker allocates
    /// the pool ports `p` with `p % workers` its own index).
    #[inline(always)]
    pub(super) fn owner_meta(&self, m: &PacketMeta) -> u32 {
        let k = crate::lb::balancer::lookup_key(m);
        let client = if self.snap.is_vip(k.dst) {
            k.src
        } else if self.snap.is_pool4(k.dst) {
            return k.dport as u32 % self.workers;
        } else if self.snap.has_marks4()
            && self
                .snap
                .mark_service(k.proto, k.src, k.dst, k.dport)
                .is_some()
        {
            // a request to an fwmark service (its destination is no VIP)
            k.src
        } else {
            k.dst
        };
        self.owner(client)
    }
}
