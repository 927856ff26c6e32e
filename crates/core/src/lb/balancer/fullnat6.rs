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
use crate::lb::xmit::v6::fullnat::fullnat6_icmp;
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
        idx: u32,
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
        let res = fullnat(buf, meta, src, dst, at.egress);
        if res.is_ok() && c.ext.cip != 0 {
            if let Err(why) = self.client_addr(buf, meta, idx, c, reply, true) {
                return self.drop(why);
            }
        }
        self.done6(at, res, c, reply, meta, buf, dst.addr)
    }

    /// An ICMPv6 error quoting a packet of IPv6 FullNAT connection `c`:
    /// about a request (`reply`: found by the reply tuple, sent to the
    /// local address) it reaches the client from the VIP quoting client →
    /// VIP; about a reply (sent to the VIP) the real server from the local
    /// address quoting RIP → laddr.
    pub(super) fn icmp_fullnat6<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta6,
        c: &Conn6,
        reply: bool,
    ) -> LbVerdict {
        if c.ext.laddr4 != 0 {
            return LbVerdict::NotForUs; // an IPv4 FullNAT connection
        }
        let (laddr, vip, client, rip) = (c.ext.laddr6(), c.vaddr, c.caddr, c.daddr);
        let end = |addr, port| End { addr, port };
        let (outer_src, to, q_src, q_dst) = if reply {
            (vip, client, end(client, c.cport), end(vip, c.vport))
        } else {
            (laddr, rip, end(rip, c.dport), end(laddr, c.ext.lport))
        };
        let res = fullnat6_icmp(buf, meta, outer_src, to, q_src, q_dst, at.egress);
        self.done6(at, res, c, reply, meta, buf, to)
    }

    /// Count what xmit did with a packet of IPv6 FullNAT connection `c`
    /// sent toward `to`, or turn its failure into a verdict (an unresolved
    /// next hop is `to`'s).
    #[allow(clippy::too_many_arguments)]
    fn done6<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        res: Result<u16, XmitError>,
        c: &Conn6,
        reply: bool,
        meta: &PacketMeta6,
        buf: &mut B,
        to: u128,
    ) -> LbVerdict {
        match res {
            Err(e @ (XmitError::Unresolved | XmitError::NoRoute)) => {
                self.xmit_failed(e, at.egress, to)
            }
            res => self.finish(at, res, c, reply, meta, buf),
        }
    }
}
