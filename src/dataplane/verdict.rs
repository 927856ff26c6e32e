//! What the pipeline decides for a packet.

/// Where one packet goes after the pipeline is done with it.
///
/// Eight bytes: the burst path fills an array of them for every burst, so
/// no variant carries more than a `u32` (an IPv6 next hop travels by
/// ticket, [`Verdict::Hold6`]).
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
    ///
    /// [`hold::HoldArea`]: super::hold::HoldArea
    Hold(u32),
    /// An IPv6 packet whose next hop is being solicited: as [`Self::Hold`],
    /// the next hop named by a ticket the pipeline redeems
    /// ([`Pipeline::hop6`]; a 128-bit address would make every verdict of
    /// every burst 20 bytes rather than 8).
    ///
    /// [`Pipeline::hop6`]: super::contract::Pipeline::hop6
    Hold6(u32),
    /// SYN proxy: the packet's connection (record `u32`) waits for its real
    /// server's SYN/ACK: keep the packet a little and process it again
    /// ([`hold::HoldArea::wait`]).
    ///
    /// [`hold::HoldArea::wait`]: super::hold::HoldArea::wait
    Wait(u32),
    /// For the kernel interface of this port index (the exception path):
    /// the worker loop rate-limits it and hands it to the control side.
    Kernel(u16),
}

/// A next hop a held packet waits for, of either family (the hold area's
/// key and what [`Pipeline::resolved`] is asked about).
///
/// [`Pipeline::resolved`]: super::contract::Pipeline::resolved
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// An IPv4 next hop (host order), resolved by ARP.
    V4(u32),
    /// An IPv6 next hop, resolved by Neighbour Discovery.
    V6(u128),
}

/// `Some(o)` when `verdicts` is not empty and every one is `Tx(o)`: what
/// [`Pipeline::process_burst`] returns, computed from its verdicts.
///
/// [`Pipeline::process_burst`]: super::contract::Pipeline::process_burst
pub fn all_tx(verdicts: &[Verdict]) -> Option<u16> {
    let Some(&Verdict::Tx(o)) = verdicts.first() else {
        return None;
    };
    verdicts.iter().all(|&v| v == Verdict::Tx(o)).then_some(o)
}

#[cfg(test)]
mod tests {
    use super::Verdict;

    /// The burst path's verdict arrays stay as small as before IPv6 holds.
    #[test]
    fn a_verdict_is_eight_bytes() {
        assert_eq!(std::mem::size_of::<Verdict>(), 8);
    }
}
