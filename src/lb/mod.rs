//! Sans-IO load-balancing core: services, real servers, schedulers,
//! connection tables, forwarding (DR, TUN, NAT).

pub mod conn;
pub mod ids;
pub mod sched;
pub mod snapshot;
pub mod spec;
pub mod state;
pub mod stats;
pub mod verdict;
pub mod worker;
pub mod xmit;

#[cfg(test)]
pub(crate) mod testutil;
