//! What the worker loop asks of a pipeline ([`Pipeline`]).

use super::arrival::Arrival;
use super::verdict::{all_tx, Hop, Verdict};
use crate::net::buf::PacketBuf;

/// The per-worker packet pipeline the worker loop drives: one entry for a
/// packet and one for a burst, whatever handed them over ([`Arrival`]).
pub trait Pipeline {
    /// Called once per loop iteration, before any packet (load snapshots).
    fn begin_burst(&mut self, now_ns: u64);
    /// Process one packet, in place.
    fn process<B: PacketBuf>(&mut self, buf: &mut B, at: Arrival) -> Verdict;
    /// Process a burst, all of one [`Arrival`]: `out[i]` is the verdict
    /// for `bufs[i]`. Returns `Some(o)` when every verdict of `out` is
    /// `Tx(o)` (the worker then hands the burst to the driver as it is,
    /// without looking at the verdicts), `None` otherwise (never `Some`
    /// when a verdict is anything else: [`all_tx`]). The default processes
    /// packet by packet.
    fn process_burst<B: PacketBuf>(
        &mut self,
        bufs: &mut [B],
        at: Arrival,
        out: &mut [Verdict],
    ) -> Option<u16> {
        for (b, o) in bufs.iter_mut().zip(out.iter_mut()) {
            *o = self.process(b, at);
        }
        all_tx(&out[..bufs.len().min(out.len())])
    }
    /// Periodic work off the per-packet path (expiry, publishing counters).
    fn housekeeping(&mut self, now_ns: u64);
    /// Hand the copies of frames the pipeline answered in place but the
    /// kernel must also see (port index, frame) to `f`, and forget them.
    /// Called by the worker loop after each round; the default has none.
    fn drain_kernel_copies(&mut self, _f: &mut dyn FnMut(u16, &[u8])) {}
    /// Frames the pipeline generated itself since the last call (the SYN
    /// proxy's timeout RSTs), each with the port to send it on; called at
    /// housekeeping, the worker copies them into mbufs.
    fn drain_generated(&mut self, _f: &mut dyn FnMut(u16, &[u8])) {}
    /// Whether the MAC of next hop `hop` is known in the view the pipeline
    /// forwards with (the hold area asks before processing a held packet
    /// again).
    fn resolved(&self, hop: Hop) -> bool;
    /// The IPv6 next hop a [`Verdict::Hold6`] names by `ticket`. A ticket
    /// is good until the pipeline has issued a few dozen more (a burst's
    /// worth at least): the worker redeems a burst's tickets before it
    /// processes the next burst. `None` for a ticket too old (or never
    /// issued): the pipeline has counted the packet as dropped, as for
    /// [`Verdict::Drop`]. The default is for a pipeline that never answers
    /// `Hold6`.
    fn hop6(&mut self, _ticket: u32) -> Option<u128> {
        None
    }
}
