//! The pipeline's side of SNAT (`[[snat]]`): an IPv4 packet that nothing
//! else took — no connection, no service, no VIP, no pool address, none
//! of dirigo's own addresses — goes to the core's SNAT path while the
//! snapshot has SNAT rules; its replies come back to a pool address and
//! take NAT64's and FullNAT's way in (`nat64_in`), steered by port.

use super::state::WorkerPipeline;
use crate::dataplane::shared::Event;
use crate::dataplane::stats::Count;
use crate::dataplane::verdict::Verdict;
use crate::lb::balancer::{BurstCtx, LbVerdict};
use crate::net::buf::PacketBuf;
use crate::net::meta::PacketMeta;

impl WorkerPipeline {
    /// An IPv4 packet to an address not dirigo's that the core did not
    /// take: masqueraded by an SNAT rule of its source, or counted as not
    /// ours (`not_for_us`) and dropped.
    #[cold]
    pub(super) fn snat_out<B: PacketBuf>(
        &mut self,
        buf: &mut B,
        meta: &PacketMeta,
        now: u64,
    ) -> Verdict {
        let v = self.lb.snat_out(
            &BurstCtx::new(&self.snap, self.net.as_ref(), now),
            buf,
            meta,
        );
        match v {
            LbVerdict::Tx { port } => {
                self.counters.own[Count::Forwarded] += 1;
                Verdict::Tx(port)
            }
            LbVerdict::Unresolved { ip, port } => {
                self.event(Event::Resolve { ip, port });
                Verdict::Hold(ip)
            }
            LbVerdict::NotForUs => {
                self.counters.own[Count::NotForUs] += 1;
                Verdict::Drop
            }
            _ => {
                // the core counted the reason (IPv4 only: no IPv6 hop)
                self.counters.own[Count::LbDropped] += 1;
                Verdict::Drop
            }
        }
    }
}
