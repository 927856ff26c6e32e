//! Persistence (`-p TIMEOUT [-M NETMASK]`) inside the worker: the glue
//! between [`Balancer`] and its [`PersistTable`].
//!
//! * Template key: service = [`template_svc`] of the service's [`SlotId`]
//!   (slot and generation, so a reused service slot never inherits its
//!   predecessor's templates), client = `client_addr & netmask`.
//! * Template value: [`template_dest`] of the real server's [`SlotId`]. A
//!   lookup is honoured only while that exact server (slot and generation)
//!   is still in the service's current snapshot and not overloaded; a
//!   quiesced (weight 0) server keeps its persistent clients, as in IPVS.
//!   A template naming a removed server is a miss (dropped on the spot when
//!   no connection is attached, otherwise re-pointed by the next attach).
//! * A connection that attached gets the service's current netmask tag
//!   (plus one, in the [`F_PERSIST`] bits) in its `flags`; when it ends (expiry on
//!   packet or sweep, reuse, eviction, `expire_nodest_conn`) it detaches
//!   with the key recomputed from its service slot and client address.
//! * Netmask change of a live service: its templates are dropped and the
//!   tag bumped, so connections attached under the old mask do not detach
//!   templates of the new one.
//!
//! Per lcore: templates are this worker's. The integrator must steer every
//! packet of one client (for `-M`, of one masked client network) to the
//! same worker, or persistence holds only per worker.
//!
//! `keys.rs` holds what needs no balancer; `attach.rs` the balancer's side.

mod attach;
pub(super) mod keys;
