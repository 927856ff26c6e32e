//! ICMP errors about a tracked connection: forwarded to its real server
//! (DR, TUN) or translated, outer and quoted headers (NAT).

use super::{Balancer, LbVerdict};
use crate::lb::snapshot::Snapshot;
use crate::lb::spec::Method;
use crate::lb::xmit::{self, nat::Side};
use crate::net::buf::PacketBuf;
use crate::net::egress::Egress;
use crate::net::meta::PacketMeta;

impl Balancer {
    /// Forward or translate an ICMP error quoting connection `idx`.
    pub(super) fn icmp<B: PacketBuf>(
        &mut self,
        snap: &Snapshot,
        egress: &impl Egress,
        buf: &mut B,
        meta: &PacketMeta,
        idx: u32,
        reply: bool,
    ) -> LbVerdict {
        let Some(c) = self.table.get(idx).copied() else {
            return LbVerdict::NotForUs;
        };
        let res = match (c.method, reply) {
            (Method::Dr, false) => xmit::dr::dr(buf, c.daddr, egress),
            (Method::Tun, false) => {
                xmit::tun::tun(buf, meta, c.daddr, snap.tunnel_src, egress, &mut self.ip_id)
            }
            (Method::Nat, false) => {
                xmit::nat::nat_icmp(buf, meta, Side::Dst, c.daddr, c.dport, egress)
            }
            (Method::Nat, true) => {
                xmit::nat::nat_icmp(buf, meta, Side::Src, c.vaddr, c.vport, egress)
            }
            (Method::Dr | Method::Tun, true) => return LbVerdict::NotForUs,
        };
        self.finish(res, &c, reply, meta, buf, egress, 0)
    }
}
