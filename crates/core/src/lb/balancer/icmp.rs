//! ICMP errors about a tracked connection: forwarded to its real server
//! (DR, TUN) or translated, outer and quoted headers (NAT).

use super::burst::BurstCtx;
use super::machine::Balancer;
use crate::lb::spec::Method;
use crate::lb::verdict::LbVerdict;
use crate::lb::xmit::{self, nat::Side};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::PacketMeta;

impl Balancer {
    /// Forward or translate an ICMP error quoting connection `idx`.
    pub(super) fn icmp<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        idx: u32,
        reply: bool,
    ) -> LbVerdict {
        let Some(c) = self.table.get(idx).copied() else {
            return LbVerdict::NotForUs;
        };
        let egress = at.egress;
        let res = match (c.method, reply) {
            (Method::Dr, false) => xmit::dr::dr(buf, c.daddr, egress),
            (Method::Tun, false) => xmit::tun::tun(
                buf,
                meta,
                c.daddr,
                at.snap.tunnel_src,
                egress,
                &mut self.ip_id,
                at.snap.tunnel(c.dest),
            ),
            (Method::Nat, false) => {
                xmit::nat::nat_icmp(buf, meta, Side::Dst, c.daddr, c.dport, egress)
            }
            (Method::Nat, true) => {
                xmit::nat::nat_icmp(buf, meta, Side::Src, c.vaddr, c.vport, egress)
            }
            // FullNAT connections live in the IPv6 table (fullnat.rs)
            (Method::Dr | Method::Tun, true) | (Method::FullNat, _) => return LbVerdict::NotForUs,
        };
        self.finish(at, res, &c, reply, meta, buf)
    }
}
