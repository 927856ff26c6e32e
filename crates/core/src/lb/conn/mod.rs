//! The index + records connection table: preallocated, never allocates
//! after [`ConnTable::new`], one 32-byte [`Conn`] record per connection
//! plus a bucketized open-addressing index. The workers keep IPv6
//! connections in it; their IPv4 table is the one-line table
//! ([`lines::LineTable`]), which shares [`Conn`], the eviction rules and
//! [`second_of`](bucket::second_of) with it.
//!
//! The table is generic over its record ([`Record`]): IPv4 connections are
//! [`Conn`] (the default, 64 bytes per connection in all), IPv6 ones
//! [`Conn6`] (in `v6.rs`: 96-byte records, 128 bytes per connection), each
//! in a table of its own so the IPv4 layout stays as it is.
//!
//! # Layout and memory per connection
//! * Records: `capacity` × 32 bytes (`#[repr(C, align(32))]`, two per cache
//!   line, never straddling one); the free list is threaded through the
//!   free records themselves (their `caddr` holds the next free index).
//! * Index: buckets of 8 slots, each bucket one 64-byte cache line holding 8
//!   32-bit signatures and 8 32-bit record references (bit 31 = the NAT reply
//!   direction). The index has `4 × capacity` slots rounded up to a power of
//!   two, i.e. 32 bytes per connection when `capacity` is a power of two.
//!
//! So a tracked connection costs 32 (record) + 32 (index share) = 64 bytes
//! (counted exactly by [`ConnTable::memory_bytes`] for a power-of-two
//! capacity). A DR/TUN connection uses one index slot, a NAT
//! connection two (request tuple client→VIP and reply tuple RIP→client); at
//! most 50% of index slots are ever used.
//!
//! # Lookup
//! Bucketized cuckoo hashing: a key has two candidate buckets derived from
//! its 32-bit hash (stored as the slot's signature, so either bucket of a
//! resident entry can be recomputed), a primary and a secondary. Inserts
//! go to the primary bucket when it has room, else to the secondary, else
//! one resident entry is displaced to its other bucket (one level, bounded
//! work). The index is at most half full, so nearly every entry sits in its
//! primary bucket and a lookup usually reads one index line plus the
//! record (at most two index lines). No tombstones: deletions just clear
//! the slot because lookups always scan both buckets when the primary has
//! no match. A miss has thus read both buckets: [`ConnTable::lookup_probe`]
//! returns what it saw ([`Probe`]) and [`ConnTable::insert_probed`] places
//! the new entry from it, exactly where [`ConnTable::insert`] would,
//! without hashing or scanning again (insertion and removal live in
//! `insert.rs`).
//!
//! A burst lookup runs in stages, so that the cache misses of a whole burst
//! overlap instead of following one another: [`ConnTable::touch`]
//! prefetches every key's primary bucket (the pipeline does it while it
//! classifies the burst), [`ConnTable::touch_records`] prefetches the
//! first record whose signature matches there (or the secondary bucket when
//! none does), and the lookups follow a few packets behind
//! (prefetch: [`crate::hint::prefetch`]).
//!
//! Records and buckets are advised to transparent huge pages
//! ([`crate::hint::advise_hugepages`]): with 4 KiB pages every random
//! lookup in a large table also missed the TLB.
//!
//! # Full table
//! When the record pool is exhausted, the insert scans at most
//! [`EVICT_SCAN`] records from a rotating eviction cursor for one that is
//! already expired or an embryonic TCP connection (SYN_RECV / SYN_SENT /
//! SYNACK) idle for at least [`EMBRYONIC_GRACE_MS`] (a handshake in progress
//! is never broken), and evicts the first it finds; otherwise the new flow is refused
//! ([`InsertError::Full`]) and the cursor has moved on, so the next insert
//! looks further. The scan is sequential: with a table full of SYN-flood
//! entries it finds a victim in the first record or two, instead of reading
//! every record of a key's buckets at random. When instead a key's two
//! index buckets are full (rare: the index is at most half full), the
//! victim is chosen among the records those buckets reference: an expired
//! one, else the embryonic one that expires first. ESTABLISHED and other
//! non-embryonic connections are never evicted, so a SYN flood cannot push
//! out real traffic. The caller counts evictions and refusals.
//!
//! # Clock and expiry
//! Times are a wrapping `u32` millisecond tick (`now_ns / 1_000_000`);
//! comparisons use wrapping differences, so timeouts must stay below 2^31 ms
//! ([`crate::lb::state::MAX_TIMEOUT_S`]). Expiry is amortized:
//! [`ConnTable::sweep`] examines `budget` records from a rotating cursor per
//! call, and the worker checks the expiry of every record a lookup finds and
//! expires it at once, so no packet ever uses an expired connection; an
//! idle expired connection keeps counting as inactive until the sweep
//! reaches it (the daemon sweeps the whole table about once a second).
mod bucket;
mod clock;
mod evict;
mod insert;
mod limits;
pub mod lines;
mod probe;
mod record;
mod table;
mod v6;

pub use clock::{tick_of, tick_reached};
pub use limits::{EMBRYONIC_GRACE_MS, EVICT_SCAN, MAX_EMBRYONIC_GRACE_MS};
pub use probe::Probe;
pub use record::{
    Conn, ConnExt, ConnOf, Record, TableKey, F_ACTIVE, F_NOOUTPUT, F_SP_PENDING, F_SYNCED,
    F_SYNPROXY, F_USED,
};
pub use table::{ConnTable, Hit, InsertError, Inserted};
pub use v6::{mapped, Conn6, FlowKey6, Nat64Leg};

#[cfg(test)]
mod tests;
