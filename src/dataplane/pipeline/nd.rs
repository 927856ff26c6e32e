//! The pipeline's IPv6 side: what classify found to be ICMPv6 goes to the
//! responder ([`crate::net::nd`]), which answers NS and echo in place.

use super::WorkerPipeline;
use crate::dataplane::stats::Count;
use crate::dataplane::Verdict;
use crate::net::buf::PacketBuf;
use crate::net::nd::{nd_input, NdAction};

impl WorkerPipeline {
    /// An ICMPv6 message (classify's offsets): the NA or echo reply back on
    /// `port`, or a counted drop.
    #[cold]
    pub(super) fn icmpv6<B: PacketBuf>(
        &mut self,
        buf: &mut B,
        port: u16,
        l3_off: u16,
        l4_off: u16,
        len: u16,
    ) -> Verdict {
        let Some(pi) = self.net.port(port) else {
            return Verdict::Drop;
        };
        let mac = pi.mac;
        let a = nd_input(
            buf,
            l3_off as usize,
            l4_off as usize,
            len as usize,
            port,
            mac,
            self.net.addrs(),
        );
        match a {
            NdAction::Advert { .. } => {
                self.counters.own[Count::NdAdvertised] += 1;
                Verdict::Tx(port)
            }
            NdAction::EchoReply => {
                self.counters.own[Count::Echo6Replied] += 1;
                Verdict::Tx(port)
            }
            NdAction::Ignore(r) => {
                self.counters.nd[r] += 1;
                Verdict::Drop
            }
        }
    }
}
