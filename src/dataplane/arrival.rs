//! Where a packet came from and when: what the pipeline needs to know of
//! it besides its bytes, taken once per burst and passed as one value.

/// Who handed a packet (or a burst) to this worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The port's receive queue: it may belong to another worker.
    Wire,
    /// Another worker, whose packet this worker owns (never steered
    /// again).
    Worker,
    /// The kernel interface of the port, sending to dirigo itself (a
    /// health check through a VIP): handled here, never steered, so all
    /// of a probe's packets meet at one worker.
    Kernel,
}

/// A packet's (or a burst's) arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The port index it arrived on (for the kernel's frames, the port
    /// whose interface sent them).
    pub port: u16,
    /// The worker loop's clock (ns).
    pub now_ns: u64,
    /// Who handed it over.
    pub source: Source,
}

impl Arrival {
    /// Received on `port` at `now_ns`.
    #[inline]
    pub fn wire(port: u16, now_ns: u64) -> Arrival {
        Arrival {
            port,
            now_ns,
            source: Source::Wire,
        }
    }

    /// Handed over by another worker, received on `port`.
    #[inline]
    pub fn steered(port: u16, now_ns: u64) -> Arrival {
        Arrival {
            port,
            now_ns,
            source: Source::Worker,
        }
    }

    /// From `port`'s kernel interface.
    #[inline]
    pub fn kernel(port: u16, now_ns: u64) -> Arrival {
        Arrival {
            port,
            now_ns,
            source: Source::Kernel,
        }
    }

    /// Whether this worker owns the packet whatever its addresses say
    /// (another worker, or the kernel, handed it over).
    #[inline]
    pub fn owned(&self) -> bool {
        self.source != Source::Wire
    }
}
