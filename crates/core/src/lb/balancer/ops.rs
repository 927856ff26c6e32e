//! One-packet scheduling (`-o/--ops`, IPVS's `IP_VS_SVC_F_ONEPACKET`):
//! a datagram to a UDP service with the flag, which no connection of the
//! table answers, is scheduled on its own and forwarded by its real
//! server's method, and no connection entry is made: the next datagram of
//! the same tuple is scheduled again (DNS, syslog: one query, one server).
//!
//! IPVS makes a connection with `IP_VS_CONN_F_ONE_PACKET` that is never
//! hashed and expires at once; here none is made. What it leaves behind
//! is IPVS's too: the total of connections of the service and of the
//! real server counts one per datagram (`-L --stats`: Conns), the active
//! and inactive counts the schedulers read do not move, so nothing needs
//! to be given back. The snapshot refuses the flag on a TCP service, with
//! persistence, and with a NAT real server (a reply would need the entry
//! to be translated back); see `lb::snapshot`'s `BuildError::Ops*`.
//!
//! Only the miss path of a new flow reaches here: an established
//! connection, and a service without the flag, pay nothing.

use super::burst::BurstCtx;
use super::forward::Counted;
use super::machine::Balancer;
use super::v6::folded;
use crate::lb::snapshot::{Dest, Service};
use crate::lb::spec::Method;
use crate::lb::stats::bump;
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::lb::xmit::{self, v6 as x6, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{FlowKey, FlowKey6, PacketMeta, PacketMeta6};

impl Balancer {
    /// An IPv4 datagram with lookup key `key` to ops service `svc`:
    /// scheduled, forwarded (DR or TUN), counted; no connection entry.
    #[inline(never)]
    pub(super) fn ops4<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        svc: &Service,
        buf: &mut B,
        meta: &PacketMeta,
        key: &FlowKey,
    ) -> LbVerdict {
        let d = match svc.pinned(key.src, key.sport) {
            Some(d) => Some(d),
            None => self.sched_pick(at.snap, svc, key),
        };
        let Some(d) = d else {
            return self.drop(LbDrop::NoDest);
        };
        self.count_ops(svc, d);
        let to = Counted {
            dest: d.id.slot,
            svc: svc.id.slot as u16,
            daddr: d.addr,
        };
        let res = match d.method {
            Method::Dr => xmit::dr::dr(buf, d.addr, at.egress),
            Method::Tun => {
                let (src, id) = (at.snap.tunnel_src, &mut self.ip_id);
                xmit::tun::tun(
                    buf,
                    meta,
                    d.addr,
                    src,
                    at.egress,
                    id,
                    at.snap.tunnel(d.id.slot),
                )
            }
            // not reached: the snapshot refuses NAT and FullNAT with ops
            Method::Nat | Method::FullNat => Err(XmitError::Malformed),
        };
        self.finish_to(at, res, to, false, meta, buf)
    }

    /// [`Self::ops4`] for an IPv6 datagram.
    #[inline(never)]
    pub(super) fn ops6<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        svc: &Service,
        buf: &mut B,
        meta: &PacketMeta6,
        key: &FlowKey6,
    ) -> LbVerdict {
        let d = match svc.pinned(key.src, key.sport) {
            Some(d) => Some(d),
            None => self.sched_pick(at.snap, svc, &folded(key)),
        };
        let Some(d) = d else {
            return self.drop(LbDrop::NoDest);
        };
        self.count_ops(svc, d);
        let to = Counted {
            dest: d.id.slot,
            svc: svc.id.slot as u16,
            daddr: d.addr6,
        };
        let res = match d.method {
            Method::Dr => xmit::dr::dr(buf, d.addr6, at.egress),
            Method::Tun => x6::tun6(
                buf,
                meta,
                d.addr6,
                None,
                at.egress,
                at.snap.tunnel(d.id.slot),
            ),
            // not reached: the snapshot refuses NAT (and NAT64) with ops
            Method::Nat | Method::FullNat => Err(XmitError::Malformed),
        };
        self.finish_to(at, res, to, false, meta, buf)
    }

    /// Count a datagram of ops service `svc` scheduled to `d` as IPVS
    /// counts its one-packet connection: one more in the totals of
    /// connections; the active, inactive and live counts stay as they
    /// were (the connection IPVS makes is gone before it could count).
    fn count_ops(&self, svc: &Service, d: &Dest) {
        if let Some(t) = self.stats.dests.get(d.id.slot as usize) {
            t.adopt(d.id.gen);
            bump(&t.conns, 1);
        }
        if let Some(t) = self.stats.services.get(svc.id.slot as usize) {
            t.adopt(svc.id.gen);
            bump(&t.conns, 1);
        }
    }
}
