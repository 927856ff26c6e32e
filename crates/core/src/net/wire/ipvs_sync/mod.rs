//! The Linux IPVS connection-sync message, version 1 (what
//! `net/netfilter/ipvs/ip_vs_sync.c` sends to 224.0.0.81:8848 so that
//! backup directors learn a master's connections): a codec, sans-IO.
//!
//! A message is an 8-byte header and up to 255 entries, one per
//! connection, each starting on a 4-byte boundary. An entry is a fixed
//! part (36 bytes for IPv4, type 0; 72 for IPv6, type 1) and options
//! inside the entry's stated size: sequence-adjust data, persistence-engine
//! data and name. Everything is in network order.
//!
//! [`MessageWriter`] builds a message in the caller's buffer (IPv4 and
//! IPv6 entries, no options: dirigo adjusts no sequence numbers and has no persistence
//! engines). [`parse`] checks a received datagram as Linux's receiver
//! (`ip_vs_process_message`, `ip_vs_proc_sync_conn`) does and hands out
//! its entries through [`Entries`]: an error that makes Linux drop the rest
//! of the message ends the iteration, one that makes it drop one entry
//! (an unknown mandatory option, persistence-engine data, an
//! unsupported protocol or state; [`SyncError::skips_entry`]) lets it go on.
//!
//! The [`Header`] and [`Conn`] views hold the byte offsets (`field`,
//! `conn_field`); like the other views, `new_checked` checks the length
//! the accessors need. What the values mean (which flags a backup keeps,
//! the timeout's range) is the balancer's business.

mod conn;
mod endpoint;
mod error;
mod header;
mod read;
mod write;

pub use conn::{
    conn_field, conn_type, flags, opt, tcp_state, Conn, ConnRepr, CONN_V4_LEN, CONN_V6_LEN,
    UDP_STATES,
};
pub use endpoint::{SYNC_GROUP, SYNC_PORT};
pub use error::SyncError;
pub use header::{field, Header, HeaderRepr, HEADER_LEN, HEADER_V0_LEN, MAX_ENTRIES, SYNC_VERSION};
pub use read::{parse, Entries};
pub use write::MessageWriter;

#[cfg(test)]
mod tests;
