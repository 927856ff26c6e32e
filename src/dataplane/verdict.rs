//! What the pipeline decides for a packet.

/// Where one packet goes after the pipeline is done with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Transmit (rewritten in place) on this port index.
    Tx(u16),
    /// Free it; the pipeline has counted why.
    Drop,
    /// Another worker owns this packet's connection: hand it over.
    Steer(u16),
    /// The next hop `ip` is being resolved: keep the packet a little and
    /// process it again once the neighbor is known ([`hold::HoldArea`]).
    Hold(u32),
    /// SYN proxy: the packet's connection (record `u32`) waits for its real
    /// server's SYN/ACK: keep the packet a little and process it again
    /// ([`hold::HoldArea::wait`]).
    Wait(u32),
    /// For the kernel interface of this port index (the exception path):
    /// the worker loop rate-limits it and hands it to the control side.
    Kernel(u16),
}

/// `Some(o)` when `verdicts` is not empty and every one is `Tx(o)`: what
/// [`Pipeline::process_burst`] returns, computed from its verdicts.
pub fn all_tx(verdicts: &[Verdict]) -> Option<u16> {
    let Some(&Verdict::Tx(o)) = verdicts.first() else {
        return None;
    };
    verdicts.iter().all(|&v| v == Verdict::Tx(o)).then_some(o)
}
