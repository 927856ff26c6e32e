//! The limits of a full table's eviction, the same for both tables: how
//! far the scan looks, and how long an embryonic connection is safe.

/// Records the eviction scan of a full table examines at most per insert.
pub const EVICT_SCAN: u32 = 64;

/// How long an embryonic TCP connection is safe from eviction after its
/// last packet (ms): the time a legitimate handshake has to complete. A
/// connection evicted between the client's SYN and its ACK is lost for good:
/// the client believes it is established (the real server answered), but
/// its ACK and everything after find no connection (`not_tracked`), and the
/// real server never completes the handshake. Under a flood that fills the
/// table faster than this, new flows are refused (`table_full`, the client
/// retries its SYN) rather than handshakes in progress being broken. Two
/// seconds cover a real server slowed by the flood itself plus one lost
/// SYN/ACK (retransmitted after 1 s).
pub const EMBRYONIC_GRACE_MS: u32 = 2000;

/// The longest grace accepted (an embryonic connection's own timeout is 60 s).
pub const MAX_EMBRYONIC_GRACE_MS: u32 = 60_000;
