//! dirigo's core: everything that decides what happens to a packet, and
//! nothing that talks to a device. It links no DPDK and no async runtime;
//! a test or a fuzzer drives it with byte buffers and an injected clock.
//!
//! * [`net`] — wire views, checksums, classify, ARP/ICMP/ND, neighbors,
//!   routes.
//! * [`lb`] — services, real servers, schedulers, connection tables, the
//!   balancer and the transmit builders.
//! * [`counters`] — counter enums declared once (names, count, drop or not).
//! * [`hint`] — prefetch and transparent huge pages for the hot tables:
//!   the core's one audited place of `unsafe`.
//!
//! The daemon (`dirigo`) drives it from DPDK bursts; the control protocol
//! (`dirigo-proto`) names its services and real servers.

#![deny(unsafe_code)]

pub mod counters;
#[allow(unsafe_code)]
pub mod hint;
pub mod lb;
pub mod net;
