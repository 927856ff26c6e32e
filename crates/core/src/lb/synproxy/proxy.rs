//! One worker's SYN proxy state ([`SynProxy`]): the cookie keys, the
//! [`Aux`] of every record, and the queue of timeout RSTs ([`Reset`]).

use super::aux::Aux;
use super::cookie::CookieKeys;
use crate::net::family::{Family, V4, V6};

/// How long a connection waits for its real server's SYN/ACK (ms).
pub const PENDING_MS: u32 = 3000;

/// An RST to send to a client whose real server never answered
/// (addresses `A`: `u32` for IPv4, `u128` for IPv6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reset<A = u32> {
    /// Client address.
    pub client: A,
    /// Client port.
    pub cport: u16,
    /// VIP.
    pub vip: A,
    /// Virtual port.
    pub vport: u16,
    /// Sequence number (the cookie + 1: what the client expects).
    pub seq: u32,
}

/// Timeout RSTs queued per worker between two housekeeping ticks.
pub const RESET_QUEUE: usize = 32;

/// One family's side of a worker's SYN proxy: the [`Aux`] of every record
/// of its connection table and its queue of timeout RSTs.
pub struct Lane<A> {
    aux: Box<[Aux]>,
    resets: [Reset<A>; RESET_QUEUE],
    nresets: usize,
}

impl<A: Copy + Default> Lane<A> {
    fn new(capacity: u32) -> Lane<A> {
        Lane {
            aux: vec![Aux::default(); capacity as usize].into_boxed_slice(),
            resets: [Reset::default(); RESET_QUEUE],
            nresets: 0,
        }
    }

    /// The state of record `idx`.
    #[inline]
    pub fn aux(&self, idx: u32) -> Option<&Aux> {
        self.aux.get(idx as usize)
    }

    /// The state of record `idx`, mutable.
    #[inline]
    pub fn aux_mut(&mut self, idx: u32) -> Option<&mut Aux> {
        self.aux.get_mut(idx as usize)
    }

    /// Queue an RST for a client whose server never answered; false when
    /// the queue is full.
    pub fn queue_reset(&mut self, r: Reset<A>) -> bool {
        match self.resets.get_mut(self.nresets) {
            Some(s) => {
                *s = r;
                self.nresets += 1;
                true
            }
            None => false,
        }
    }

    /// The queued RSTs, emptying the queue.
    pub fn take_resets(&mut self) -> impl Iterator<Item = Reset<A>> + '_ {
        let n = std::mem::take(&mut self.nresets);
        self.resets[..n].iter().copied()
    }
}

/// The lane of a family in a [`SynProxy`].
pub trait LaneOf: Family {
    /// `sp`'s lane of this family.
    fn lane(sp: &SynProxy) -> &Lane<Self::Addr>;
    /// `sp`'s lane of this family, mutable.
    fn lane_mut(sp: &mut SynProxy) -> &mut Lane<Self::Addr>;
}

impl LaneOf for V4 {
    #[inline]
    fn lane(sp: &SynProxy) -> &Lane<u32> {
        &sp.v4
    }
    #[inline]
    fn lane_mut(sp: &mut SynProxy) -> &mut Lane<u32> {
        &mut sp.v4
    }
}

impl LaneOf for V6 {
    #[inline]
    fn lane(sp: &SynProxy) -> &Lane<u128> {
        &sp.v6
    }
    #[inline]
    fn lane_mut(sp: &mut SynProxy) -> &mut Lane<u128> {
        &mut sp.v6
    }
}

/// One worker's SYN proxy state (see the module docs): the keys, and a
/// [`Lane`] per family (the IPv6 one indexed by the IPv6 table's records).
pub struct SynProxy {
    keys: CookieKeys,
    v4: Lane<u32>,
    v6: Lane<u128>,
}

impl SynProxy {
    /// The window scale announced to clients (Linux's default for a
    /// 6 MiB receive buffer; a server with another is rescaled).
    pub const WSCALE: u8 = 7;
    /// The MSS announced to IPv4 clients (a 1500-byte MTU; each family's
    /// is its [`ProxyFamily::MSS`](super::family::ProxyFamily::MSS)).
    pub const MSS: u16 = <V4 as super::family::ProxyFamily>::MSS;
    /// The window of the SYN/ACK (unscaled, as in every SYN).
    pub const WINDOW: u16 = 29200;

    /// State for an IPv4 table of `capacity` records and an IPv6 one of
    /// `capacity6`, keyed by `master`.
    pub fn new(capacity: u32, capacity6: u32, master: [u64; 2]) -> SynProxy {
        SynProxy {
            keys: CookieKeys::new(master),
            v4: Lane::new(capacity),
            v6: Lane::new(capacity6),
        }
    }

    /// The lane of family `F`.
    #[inline]
    pub fn lane<F: LaneOf>(&self) -> &Lane<F::Addr> {
        F::lane(self)
    }

    /// The lane of family `F`, mutable.
    #[inline]
    pub fn lane_mut<F: LaneOf>(&mut self) -> &mut Lane<F::Addr> {
        F::lane_mut(self)
    }

    /// The cookie keys.
    pub fn keys(&self) -> &CookieKeys {
        &self.keys
    }

    /// Bytes reserved.
    pub fn memory_bytes(&self) -> usize {
        (self.v4.aux.len() + self.v6.aux.len()) * std::mem::size_of::<Aux>()
    }

    /// The state of IPv4 record `idx`.
    #[inline]
    pub fn aux(&self, idx: u32) -> Option<&Aux> {
        self.v4.aux(idx)
    }

    /// The state of IPv4 record `idx`, mutable.
    #[inline]
    pub fn aux_mut(&mut self, idx: u32) -> Option<&mut Aux> {
        self.v4.aux_mut(idx)
    }

    /// The IPv4 connection table moved record `from` to `to` (its index
    /// changed): its state moves along. (The IPv6 table never moves a
    /// record.)
    #[inline]
    pub fn moved(&mut self, from: u32, to: u32) {
        if let Some(a) = self.v4.aux.get(from as usize).copied() {
            if let Some(b) = self.v4.aux.get_mut(to as usize) {
                *b = a;
            }
        }
    }

    /// Queue an IPv4 client's RST ([`Lane::queue_reset`]).
    pub fn queue_reset(&mut self, r: Reset) -> bool {
        self.v4.queue_reset(r)
    }

    /// The queued IPv4 RSTs, emptying the queue.
    pub fn take_resets(&mut self) -> impl Iterator<Item = Reset> + '_ {
        self.v4.take_resets()
    }
}
