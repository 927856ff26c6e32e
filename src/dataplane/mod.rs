//! The data plane: the per-packet pipeline (sans-IO, generic over
//! [`PacketBuf`]) and the DPDK worker loop that drives it.

pub mod arrival;
pub mod checkpoint;
pub mod contract;
pub mod exception;
pub mod hold;
pub mod idle;
pub mod pipeline;
pub mod rss;
pub mod shared;
pub mod stats;
pub mod verdict;
pub mod worker;

pub use arrival::{Arrival, Source};
pub use contract::Pipeline;
pub use verdict::{all_tx, Verdict};
