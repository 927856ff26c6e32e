//! One worker's SYN proxy state ([`SynProxy`]): the cookie keys, the
//! [`Aux`] of every record, and the queue of timeout RSTs ([`Reset`]).

use super::aux::Aux;
use super::cookie::CookieKeys;

/// How long a connection waits for its real server's SYN/ACK (ms).
pub const PENDING_MS: u32 = 3000;

/// An RST to send to a client whose real server never answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reset {
    /// Client address.
    pub client: u32,
    /// Client port.
    pub cport: u16,
    /// VIP.
    pub vip: u32,
    /// Virtual port.
    pub vport: u16,
    /// Sequence number (the cookie + 1: what the client expects).
    pub seq: u32,
}

/// Timeout RSTs queued per worker between two housekeeping ticks.
pub const RESET_QUEUE: usize = 32;

/// One worker's SYN proxy state (see the module docs).
pub struct SynProxy {
    keys: CookieKeys,
    aux: Box<[Aux]>,
    resets: [Reset; RESET_QUEUE],
    nresets: usize,
}

impl SynProxy {
    /// The window scale announced to clients (Linux's default for a
    /// 6 MiB receive buffer; a server with another is rescaled).
    pub const WSCALE: u8 = 7;
    /// The MSS announced to clients (a 1500-byte MTU).
    pub const MSS: u16 = 1460;
    /// The window of the SYN/ACK (unscaled, as in every SYN).
    pub const WINDOW: u16 = 29200;

    /// State for a table of `capacity` records, keyed by `master`.
    pub fn new(capacity: u32, master: [u64; 2]) -> SynProxy {
        SynProxy {
            keys: CookieKeys::new(master),
            aux: vec![Aux::default(); capacity as usize].into_boxed_slice(),
            resets: [Reset::default(); RESET_QUEUE],
            nresets: 0,
        }
    }

    /// The cookie keys.
    pub fn keys(&self) -> &CookieKeys {
        &self.keys
    }

    /// Bytes reserved.
    pub fn memory_bytes(&self) -> usize {
        self.aux.len() * std::mem::size_of::<Aux>()
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

    /// The connection table moved record `from` to `to` (its index
    /// changed): its state moves along.
    #[inline]
    pub fn moved(&mut self, from: u32, to: u32) {
        if let Some(a) = self.aux.get(from as usize).copied() {
            if let Some(b) = self.aux.get_mut(to as usize) {
                *b = a;
            }
        }
    }

    /// Queue an RST for a client whose server never answered; false when
    /// the queue is full.
    pub fn queue_reset(&mut self, r: Reset) -> bool {
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
    pub fn take_resets(&mut self) -> impl Iterator<Item = Reset> + '_ {
        let n = std::mem::take(&mut self.nresets);
        self.resets[..n].iter().copied()
    }
}
