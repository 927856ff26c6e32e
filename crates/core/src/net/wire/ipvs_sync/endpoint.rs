//! Where Linux sends sync messages.

use std::net::Ipv4Addr;

/// The UDP port Linux sends sync messages to (sync daemon 0; daemon `id`
/// uses `SYNC_PORT + id`).
pub const SYNC_PORT: u16 = 8848;
/// The multicast group Linux sends sync messages to.
pub const SYNC_GROUP: Ipv4Addr = Ipv4Addr::new(224, 0, 0, 81);
