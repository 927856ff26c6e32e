//! The worker's side of the exception path (sans-IO): what limits the
//! packets a worker hands to the kernel interfaces, and where the pipeline
//! keeps the copies of frames it both answers and shows the kernel.
//!
//! A packet for the kernel is a [`crate::dataplane::Verdict::Kernel`]; the
//! worker loop passes it through the port's [`TokenBucket`] and enqueues
//! it on the exception ring (bounded; full = counted drop). The control
//! side's exception thread writes it to the port's kernel interface: no
//! worker ever makes the system call.

/// A token bucket: `rate` packets per second on average, at most `burst`
/// at once. Time is the caller's nanosecond clock (the worker's TSC clock),
/// so the bucket is pure arithmetic: no system call, no allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    /// Tokens per second (0 = nothing passes).
    rate: u64,
    /// Bucket size in tokens.
    burst: u64,
    /// Tokens now, in billionths: a nanosecond at `rate` tokens/s adds
    /// exactly `rate` of them, so no call loses a fraction of a token.
    nano: u64,
    /// When `nano` was last brought up to date.
    last_ns: u64,
}

/// Billionths of a token in one token.
const NANO: u64 = 1_000_000_000;

impl TokenBucket {
    /// A full bucket of `burst` tokens (at least 1 when `rate` > 0)
    /// refilled at `rate` per second.
    pub fn new(rate: u64, burst: u64) -> TokenBucket {
        let burst = if rate == 0 { 0 } else { burst.max(1) };
        TokenBucket {
            rate,
            burst,
            nano: burst.saturating_mul(NANO),
            last_ns: 0,
        }
    }

    /// Take one token at time `now_ns`; false when the bucket is empty
    /// (the packet is over the limit).
    #[inline]
    pub fn take(&mut self, now_ns: u64) -> bool {
        let dt = now_ns.saturating_sub(self.last_ns);
        self.last_ns = self.last_ns.max(now_ns);
        // rate tokens/s = rate billionths of a token per nanosecond
        self.nano = self
            .nano
            .saturating_add(dt.saturating_mul(self.rate))
            .min(self.burst.saturating_mul(NANO));
        if self.nano >= NANO {
            self.nano -= NANO;
            true
        } else {
            false
        }
    }
}

/// The longest frame [`KernelCopies`] keeps (an ARP request behind a VLAN
/// tag, padded to the Ethernet minimum, is 64 bytes).
pub const COPY_LEN: usize = 64;

/// Slots of [`KernelCopies`].
pub const COPY_SLOTS: usize = 16;

/// Copies of frames the pipeline answers in place but the kernel must see
/// as they arrived (an ARP request for a port's address: the reply
/// overwrites it, and the kernel learns the requester from the request).
/// A fixed array of small frames, filled during a round of bursts and
/// drained by the worker loop after it; a copy that does not fit is lost
/// and counted by the caller.
#[derive(Clone, Debug)]
pub struct KernelCopies {
    frames: [[u8; COPY_LEN]; COPY_SLOTS],
    meta: [(u16, u8); COPY_SLOTS],
    n: usize,
}

impl Default for KernelCopies {
    fn default() -> Self {
        KernelCopies {
            frames: [[0; COPY_LEN]; COPY_SLOTS],
            meta: [(0, 0); COPY_SLOTS],
            n: 0,
        }
    }
}

impl KernelCopies {
    /// Keep a copy of `frame` for port index `port`; false (nothing kept)
    /// when the frame is longer than [`COPY_LEN`] or every slot is taken.
    #[inline]
    pub fn push(&mut self, port: u16, frame: &[u8]) -> bool {
        let (Some(slot), true) = (self.frames.get_mut(self.n), frame.len() <= COPY_LEN) else {
            return false;
        };
        slot[..frame.len()].copy_from_slice(frame);
        self.meta[self.n] = (port, frame.len() as u8);
        self.n += 1;
        true
    }

    /// Whether no copy waits.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Hand every copy to `f` (port index, frame) and empty the store.
    pub fn drain(&mut self, mut f: impl FnMut(u16, &[u8])) {
        for i in 0..self.n {
            let (port, len) = self.meta[i];
            f(port, &self.frames[i][..len as usize]);
        }
        self.n = 0;
    }
}

#[cfg(test)]
mod tests;
