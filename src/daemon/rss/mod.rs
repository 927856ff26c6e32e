//! RSS at start-up: the devices' capabilities into the sans-IO planner
//! (`dataplane::rss`), and the owner function the workers use when any
//! port hashes on the client address.

use crate::dataplane::rss::{plan, ClientOwner, Plan, RssCaps, KEY};
use crate::pmd::port::PortCaps;
use dirigo_config::Config;
use std::sync::Arc;

/// The RSS side of what a device reports.
pub fn rss_caps(c: &PortCaps) -> RssCaps {
    RssCaps {
        driver: c.driver.clone(),
        rss_offloads: c.rss_offloads,
        max_rx_queues: c.max_rx_queues,
        reta_size: c.reta_size,
        hash_key_size: c.hash_key_size,
    }
}

/// The plan for `cfg`'s ports (`caps` in the same order) and `workers`.
pub fn plan_ports(cfg: &Config, caps: &[PortCaps], workers: u16) -> Plan {
    let ports: Vec<_> = cfg
        .ports
        .iter()
        .zip(caps)
        .map(|(p, c)| (rss_caps(c), p.role))
        .collect();
    plan(&ports, workers, cfg.dataplane.rss)
}

/// The workers' owner function for `plan`: the NIC's when a port hashes
/// on the client address, none (the pipeline's own hash) otherwise.
pub fn client_owner(plan: &Plan) -> Option<Arc<ClientOwner>> {
    plan.owner_reta
        .as_ref()
        .map(|reta| Arc::new(ClientOwner::new(&KEY, reta)))
}

#[cfg(test)]
mod tests;
