//! IPv6 FullNAT: a connection of an IPv6 FullNAT service leaves from one
//! of the service's IPv6 local addresses and a port this worker owns
//! (NAT64's allocator, over IPv6 addresses). The record is an ordinary
//! [`Conn6`] of the IPv6 table with the local address and port in its
//! [`crate::lb::conn::Nat64Leg`] (`laddr6`, `lport`), whose reply tuple
//! (real server → local address:port) the table indexes: replies are found
//! by the IPv6 path's own lookup ([`Balancer::process6`]), as NAT's are,
//! and the pipeline steers a packet to a local address by its port.

use super::burst::BurstCtx;
use super::machine::Balancer;
use crate::lb::conn::{Conn6, FlowKey6, Nat64Leg};
use crate::lb::snapshot::Service;
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::lb::xmit::fullnat::{fullnat, End};
use crate::lb::xmit::XmitError;
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::PacketMeta6;

impl Balancer {
    /// A local address of `svc` and a port of this worker's for a new
    /// connection to `rip`:`rport`, whose reply tuple the table does not
    /// hold; [`LbDrop::FullNatPortsExhausted`] when none is free.
    pub(super) fn take_local6(
        &mut self,
        svc: &Service,
        rip: u128,
        rport: u16,
        proto: u8,
    ) -> Result<Nat64Leg, LbDrop> {
        let (a, p) = self
            .nat64
            .take_with(&svc.local6, &self.table6, |a, p| FlowKey6 {
                src: rip,
                dst: a,
                sport: rport,
                dport: p,
                proto,
            })
            .ok_or(LbDrop::FullNatPortsExhausted)?;
        Ok(Nat64Leg::local6(a, p))
    }

    /// The rewrite of a packet of IPv6 FullNAT connection `c` whose state
    /// and timer are done: a request from the local address to the real
    /// server, a reply from the VIP to the client. A record of IPv4
    /// FullNAT (its addresses IPv4-mapped) takes no IPv6 packet.
    pub(super) fn transmit_fullnat6<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta6,
        c: &Conn6,
        reply: bool,
    ) -> LbVerdict {
        if c.ext.laddr4 != 0 {
            return self.drop(LbDrop::Malformed);
        }
        let (src, dst) = if reply {
            (
                End {
                    addr: c.vaddr,
                    port: c.vport,
                },
                End {
                    addr: c.caddr,
                    port: c.cport,
                },
            )
        } else {
            (
                End {
                    addr: c.ext.laddr6(),
                    port: c.ext.lport,
                },
                End {
                    addr: c.daddr,
                    port: c.dport,
                },
            )
        };
        match fullnat(buf, meta, src, dst, at.egress) {
            // the next hop to resolve is the rewritten destination's
            Err(e @ (XmitError::Unresolved | XmitError::NoRoute)) => {
                self.xmit_failed(e, at.egress, dst.addr)
            }
            res => self.finish(at, res, c, reply, meta, buf),
        }
    }
}
