//! The records: what the table asks of one ([`Record`], keyed by a
//! [`TableKey`]), and the connection record [`ConnOf`], written once for
//! both families: [`Conn`] (IPv4, 32 bytes) and
//! [`super::Conn6`] (IPv6, 96 bytes), with their `F_*` flags.

use crate::hint;
use crate::lb::spec::Method;
use crate::net::meta::{Flow, FlowKey, Seed};

/// One tracked connection over an address type `A` (host order), with
/// what only one family keeps beside it in `ext` (IPv4: nothing; IPv6:
/// NAT64's IPv4 leg, [`super::Nat64Leg`]).
///
/// The layout is the same for both families: the three addresses, then
/// the 32-bit, 16-bit and 8-bit fields, then `ext`. IPv4's record is 32
/// bytes (one per half line); IPv6's, 74 bytes aligned to 96.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct ConnOf<A, X> {
    /// Client address.
    pub caddr: A,
    /// Virtual address.
    pub vaddr: A,
    /// Real server address (NAT64: the IPv4 real server, IPv4-mapped).
    pub daddr: A,
    /// Real server slot ([`crate::lb::ids::SlotId::slot`]); the next free
    /// record while this one is free.
    pub dest: u32,
    /// Expiry time (ms tick).
    pub expires: u32,
    /// Client port.
    pub cport: u16,
    /// Virtual port.
    pub vport: u16,
    /// Real server port.
    pub dport: u16,
    /// Service slot.
    pub svc: u16,
    /// IP protocol (IPv6: the next header).
    pub proto: u8,
    /// [`crate::lb::state::TcpState`] as u8 (NONE for UDP).
    pub state: u8,
    /// `F_*` flags.
    pub flags: u8,
    /// Forwarding method.
    pub method: Method,
    /// What only this family keeps.
    pub ext: X,
}

/// One tracked IPv4 connection (32 bytes).
pub type Conn = ConnOf<u32, ()>;

/// What a family keeps beside the shared fields of its records: it may
/// name another reply tuple (NAT64's replies come back to its IPv4 pool
/// address and port).
pub trait ConnExt<A>: Copy + Default + Eq + core::fmt::Debug {
    /// The reply tuple of a connection whose plain one (real server →
    /// client) is `plain`.
    fn reply_key(&self, plain: Flow<A>) -> Flow<A>;
    /// Whether the connection leaves from a local address and port of
    /// dirigo's (its replies come back there: indexed like NAT's).
    fn has_local_leg(&self) -> bool;
}

impl<A> ConnExt<A> for () {
    #[inline(always)]
    fn reply_key(&self, plain: Flow<A>) -> Flow<A> {
        plain
    }
    #[inline(always)]
    fn has_local_leg(&self) -> bool {
        false
    }
}

/// Record in use.
pub const F_USED: u8 = 1;
/// No reply seen yet (IPVS `IP_VS_CONN_F_NOOUTPUT`): judge input with the
/// input-only table.
pub const F_NOOUTPUT: u8 = 2;
/// Counted as active (ESTABLISHED) in the real server's counters.
pub const F_ACTIVE: u8 = 4;
/// Opened by the SYN proxy: its segments are translated (see
/// [`crate::lb::synproxy`]).
pub const F_SYNPROXY: u8 = 8;
/// Opened by the SYN proxy and waiting for the real server's SYN/ACK.
pub const F_SP_PENDING: u8 = 16;
/// Installed from another director's sync message and not yet used here
/// (see [`crate::lb::sync`]).
pub const F_SYNCED: u8 = 32;

impl<A: Copy, X: ConnExt<A>> ConnOf<A, X> {
    /// The client → VIP tuple.
    #[inline(always)]
    pub fn in_key(&self) -> Flow<A> {
        Flow {
            src: self.caddr,
            dst: self.vaddr,
            sport: self.cport,
            dport: self.vport,
            proto: self.proto,
        }
    }
    /// The reply tuple: RS → client (NAT replies), or what `ext` makes
    /// of it.
    #[inline(always)]
    pub fn out_key(&self) -> Flow<A> {
        self.ext.reply_key(Flow {
            src: self.daddr,
            dst: self.caddr,
            sport: self.dport,
            dport: self.cport,
            proto: self.proto,
        })
    }
    /// Whether this connection is indexed by both tuples: NAT, or one
    /// with a local leg (`ext`: NAT64's and FullNAT's, IPv6 records
    /// only, so IPv4's test stays the one compare it was).
    #[inline(always)]
    pub fn is_nat(&self) -> bool {
        self.method == Method::Nat || self.ext.has_local_leg()
    }
}

/// A tuple the table indexes: compared whole, hashed with the table's seed.
pub trait TableKey: Copy + Eq {
    /// The 32-bit hash (signature and bucket choice) with a premixed seed.
    fn hash_with(&self, seed: Seed) -> u32;
    /// The 32-bit hash with `seed`.
    #[inline(always)]
    fn hash(&self, seed: u32) -> u32 {
        self.hash_with(Seed::new(seed))
    }
}

impl TableKey for FlowKey {
    #[inline(always)]
    fn hash_with(&self, seed: Seed) -> u32 {
        FlowKey::hash_with(self, seed)
    }
}

/// What the table needs of a record: its tuples, the fields eviction,
/// expiry and the free list use, and a `u32` to thread the free list
/// through while the record is free.
pub trait Record: Copy + Default {
    /// The tuple type.
    type Key: TableKey;
    /// The client -> VIP tuple.
    fn in_key(&self) -> Self::Key;
    /// The RS -> client tuple (NAT replies).
    fn out_key(&self) -> Self::Key;
    /// Whether `key` is this record's tuple in the direction a slot
    /// names (`reply`: [`Self::out_key`], else [`Self::in_key`]). The
    /// branch comes first, so each side compares fixed fields (no tuple
    /// is assembled from fields chosen per direction).
    #[inline(always)]
    fn key_is(&self, key: &Self::Key, reply: bool) -> bool {
        if reply {
            self.out_key() == *key
        } else {
            self.in_key() == *key
        }
    }
    /// Indexed by both tuples (NAT).
    fn is_nat(&self) -> bool;
    /// `F_*` flags.
    fn flags(&self) -> u8;
    /// Set the `F_*` flags.
    fn set_flags(&mut self, f: u8);
    /// Expiry (ms tick).
    fn expires(&self) -> u32;
    /// IP protocol.
    fn proto(&self) -> u8;
    /// TCP state as u8.
    fn state(&self) -> u8;
    /// What a forwarded packet changes: state, flags, expiry.
    fn set_hot(&mut self, state: u8, flags: u8, expires: u32);
    /// Set the expiry (ms tick) only.
    fn set_expires(&mut self, expires: u32);
    /// The next free record, while this one is free.
    fn next_free(&self) -> u32;
    /// A free record whose next free record is `next`.
    fn set_next_free(&mut self, next: u32);
    /// Prefetch what a lookup reads of the record (its cache line).
    #[inline(always)]
    fn prefetch(&self) {
        hint::prefetch(self);
    }
}

impl<A, X> Record for ConnOf<A, X>
where
    A: Copy + Default + Eq,
    X: ConnExt<A>,
    Flow<A>: TableKey,
{
    type Key = Flow<A>;
    #[inline(always)]
    fn in_key(&self) -> Flow<A> {
        ConnOf::in_key(self)
    }
    #[inline(always)]
    fn out_key(&self) -> Flow<A> {
        ConnOf::out_key(self)
    }
    #[inline(always)]
    fn is_nat(&self) -> bool {
        ConnOf::is_nat(self)
    }
    #[inline(always)]
    fn flags(&self) -> u8 {
        self.flags
    }
    #[inline(always)]
    fn set_flags(&mut self, f: u8) {
        self.flags = f;
    }
    #[inline(always)]
    fn expires(&self) -> u32 {
        self.expires
    }
    #[inline(always)]
    fn proto(&self) -> u8 {
        self.proto
    }
    #[inline(always)]
    fn state(&self) -> u8 {
        self.state
    }
    #[inline(always)]
    fn set_hot(&mut self, state: u8, flags: u8, expires: u32) {
        self.state = state;
        self.flags = flags;
        self.expires = expires;
    }
    #[inline(always)]
    fn set_expires(&mut self, expires: u32) {
        self.expires = expires;
    }
    #[inline(always)]
    fn next_free(&self) -> u32 {
        self.dest
    }
    #[inline(always)]
    fn set_next_free(&mut self, next: u32) {
        self.dest = next;
    }
    /// The lines of the record: its start's and, for a record longer
    /// than 64 bytes (IPv6's 96, starting on a 32-byte boundary), the
    /// line of `proto`, 64 bytes in.
    #[inline(always)]
    fn prefetch(&self) {
        hint::prefetch(self);
        if core::mem::size_of::<Self>() > 64 {
            hint::prefetch(&self.proto);
        }
    }
}
