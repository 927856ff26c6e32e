//! A worker's pipeline: what it owns (the balancer, its views of the
//! snapshots, counters, scratch). Its behaviour is in the folder's other
//! files: the burst path in `mod.rs`, ARP in `arp`, the IPv6 responder in
//! `nd`, steering in `steer`, the IPv6 lane in `v6`, the tickets of held
//! IPv6 packets' next hops in `tickets6`.

use super::nh_cache::NhCache;
use super::tickets6::Tickets6;
use crate::dataplane::exception::KernelCopies;
use crate::dataplane::rss::ClientOwner;
use crate::dataplane::shared::Shared;
use crate::dataplane::stats::Counters;
use crate::dataplane::worker::MAX_PORTS;
use crate::lb::balancer::{Balancer, LbVerdict, Prepared};
use crate::lb::snapshot::Snapshot;
use crate::net::buf::BURST;
use crate::net::meta::{PacketMeta, PacketMeta6};
use crate::net::view::NetView;
use arc_swap::cache::Cache;
use arc_swap::ArcSwap;
use std::sync::Arc;

/// The burst path's per-packet scratch, kept in the pipeline so that no
/// burst initialises it again: every entry a burst reads it wrote first
/// (a meta by classify, a hash by `prepare`, a core verdict by the core).
pub(super) struct Scratch {
    pub(super) metas: [PacketMeta; BURST],
    pub(super) prep: [Prepared; BURST],
    pub(super) lbv: [LbVerdict; BURST],
    /// IPv6 lookup hashes of the burst's early IPv6 stage (`v6::prepare6`).
    pub(super) hash6: [u32; BURST],
    /// The metas of the IPv6 frames the early IPv6 stage classified.
    pub(super) metas6: [PacketMeta6; BURST],
    /// The IPv6 next hops of the `Hold6` verdicts, by ticket.
    pub(super) tickets6: Tickets6,
}

/// One worker's pipeline.
pub struct WorkerPipeline {
    pub(super) scratch: Box<Scratch>,
    pub(super) shared: Arc<Shared>,
    pub(super) index: usize,
    pub(super) lb: Balancer,
    pub(super) net_cache: Cache<Arc<ArcSwap<NetView>>, Arc<NetView>>,
    pub(super) lb_cache: Cache<Arc<ArcSwap<Snapshot>>, Arc<Snapshot>>,
    pub(super) net: Arc<NetView>,
    pub(super) nh: NhCache,
    pub(super) snap: Arc<Snapshot>,
    pub(super) counters: Counters,
    pub(super) expire_budget: u32,
    pub(super) workers: u32,
    pub(super) steer_mask: u32,
    pub(super) steer_mask6: u128,
    pub(super) client_owner: Option<Arc<ClientOwner>>,
    pub(super) kernel_copies: KernelCopies,
    pub(super) looped_at: [u64; MAX_PORTS],
    /// An IPv6 packet went to the balancer since the last burst began: the
    /// next burst runs the early IPv6 stage (IPv4-only traffic never does).
    pub(super) v6_seen: bool,
    /// Where this worker is in the crash checkpoint's sweep.
    pub(super) sweep: crate::dataplane::checkpoint::Sweep,
}

impl WorkerPipeline {
    /// The balancer, once the worker loop ended (the connection handoff
    /// collects a stopped worker's connections from it).
    pub fn into_balancer(self) -> Balancer {
        self.lb
    }
}
