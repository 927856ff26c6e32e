//! Sans-IO load-balancing core: services, real servers, schedulers,
//! connection tables, forwarding (DR, TUN, NAT).

pub mod persist;
pub mod sched;

pub mod spec;
