//! Forwarding a packet of a known connection: its state and timer moved
//! ([`Balancer::forward`]), the packet rewritten and sent by its method
//! ([`Balancer::transmit`]), then counted, or its failure turned into a
//! verdict ([`Balancer::finish_to`], [`Balancer::xmit_failed`]).

use super::burst::BurstCtx;
use super::lane::Lane;
use super::machine::Balancer;
use super::sync::out as sync;
use crate::lb::conn::{Conn, ConnOf, F_ACTIVE, F_NOOUTPUT, F_SYNCED, F_SYNPROXY};
use crate::lb::shift::ftp_state::FTP_PORT;
use crate::lb::spec::Method;
use crate::lb::state::{tcp_next, Dir, TcpState};
use crate::lb::stats::bump;
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::lb::xmit::{self, nat::Side, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::family::V4;
use crate::net::meta::{Meta, PacketMeta, PROTO_TCP};

impl Balancer {
    /// The verdict for a packet xmit could not send toward `dst`: an
    /// unresolved next hop is handed back to the caller (a hold, not a
    /// drop); anything else is a counted drop.
    ///
    /// xmit reports only that the next hop is unresolved: its error stays
    /// a bare variant because every packet's xmit returns that `Result`,
    /// and widening it by the next hop measurably added instructions per
    /// packet. So here, off the fast path, the egress is asked again about
    /// the destination xmit routed toward; a pure query, it names the next
    /// hop to resolve.
    pub(super) fn xmit_failed<A: Lane, E: Egress + Egress6>(
        &mut self,
        e: XmitError,
        egress: &E,
        dst: A,
    ) -> LbVerdict {
        self.drop(match e {
            XmitError::Unresolved => match A::unresolved(egress, dst) {
                Some(v) => return v,
                None => LbDrop::NoRoute, // not reached: the same query, the same answer
            },
            XmitError::NoRoute => LbDrop::NoRoute,
            XmitError::TooBig | XmitError::NeedFrag { .. } => LbDrop::TooBig,
            XmitError::TtlExceeded => LbDrop::TtlExceeded,
            XmitError::NoRoom => LbDrop::NoRoom,
            XmitError::Malformed => LbDrop::Malformed,
        })
    }

    /// Update state/timer of connection `idx` for this packet and send it.
    #[inline(always)]
    pub(super) fn forward<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        idx: u32,
        reply: bool,
    ) -> LbVerdict {
        let Some(c) = self.table.get(idx).copied() else {
            return self.drop(LbDrop::Malformed);
        };
        self.forward_conn(at, buf, meta, idx, c, reply)
    }

    /// [`Self::forward`] for connection `idx` whose record `c` the caller
    /// has just read.
    #[inline(always)]
    pub(super) fn forward_conn<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        idx: u32,
        c: Conn,
        reply: bool,
    ) -> LbVerdict {
        if let Err(v) = self.touch(at, idx, &c, reply, meta.tcp_flags) {
            return v;
        }
        self.transmit(at, buf, meta, idx, &c, reply)
    }

    /// The state machine and timer of connection `idx` (record `c`, as
    /// read before this packet) for a packet with `tcp_flags` in
    /// direction `reply`, for either family; `Err` with the verdict when
    /// its real server is gone (`expire_nodest_conn`). A connection due
    /// for sync is queued.
    #[inline(always)]
    pub(super) fn touch<A: Lane, E>(
        &mut self,
        at: &BurstCtx<E>,
        idx: u32,
        c: &ConnOf<A, A::Ext>,
        reply: bool,
        tcp_flags: u8,
    ) -> Result<(), LbVerdict> {
        let snap = at.snap;
        // (an SNAT connection has no real server: its slot is none)
        if snap.expire_nodest_conn
            && snap.dest_by_slot(c.dest).is_none()
            && c.svc != crate::lb::snat::SNAT_SVC
        {
            self.expire_idx::<A>(idx, at.now_ns);
            return Err(self.drop(LbDrop::DestRemoved));
        }
        // state machine and timer; a packet here makes a synced copy ours
        let mut flags = c.flags & !F_SYNCED;
        let (state, timeout) = if c.proto == PROTO_TCP {
            let dir = if reply {
                flags &= !F_NOOUTPUT;
                Dir::Output
            } else if flags & F_NOOUTPUT != 0 {
                Dir::InputOnly
            } else {
                Dir::Input
            };
            let new = tcp_next(TcpState::from_u8(c.state), dir, tcp_flags);
            let was_active = flags & F_ACTIVE != 0;
            if new.is_active() != was_active {
                if let Some(t) = self.dest_rec(c.dest) {
                    if was_active {
                        t.adjust(-1, 1, 0);
                    } else {
                        t.adjust(1, -1, 0);
                    }
                }
                self.trees.changed(c.dest);
                flags ^= F_ACTIVE;
            }
            (new as u8, snap.timeouts.tcp(new))
        } else {
            flags &= !F_NOOUTPUT;
            // UDP has no state: the byte counts the first packets (sync)
            (c.state.saturating_add(1), snap.timeouts.udp_ms)
        };
        let expires = at.now.wrapping_add(timeout);
        A::set_hot(self, idx, state, flags, expires);
        if let Some(out) = &self.sync {
            if sync::due(&out.policy, c, state, expires) {
                if let Some(s) = A::to_sync(&ConnOf { flags, ..*c }, state, timeout) {
                    self.sync_push(s);
                }
            }
        }
        Ok(())
    }

    /// Rewrite and send a packet of connection `idx` (record `c`) by its
    /// method, and count it.
    #[inline(always)]
    pub(super) fn transmit<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        idx: u32,
        c: &Conn,
        reply: bool,
    ) -> LbVerdict {
        let egress = at.egress;
        // Tests in this order on purpose: as a match on (method, reply)
        // LLVM tests DR, then TUN, then NAT, which costs NAT instructions
        // per packet; NAT first keeps both NAT and DR at or below what the
        // u8 method code cost (callgrind, dirigo-bench micro).
        let res = if c.method == Method::Nat {
            if c.flags & F_SYNPROXY != 0 {
                self.sp_translate::<V4, B>(buf, meta, idx, reply);
            }
            let res = if reply {
                xmit::nat::nat(buf, meta, Side::Src, c.vaddr, c.vport, c.caddr, egress)
            } else {
                xmit::nat::nat(buf, meta, Side::Dst, c.daddr, c.dport, c.daddr, egress)
            };
            // an FTP control connection's line and numbers (`ftp.rs`)
            if self.ftp.is_some() && c.vport == FTP_PORT && res.is_ok() {
                if let Err(why) = self.ftp_segment(at.now, buf, meta, c, reply) {
                    return self.drop(why);
                }
            }
            res
        } else if reply {
            Err(XmitError::Malformed) // DR and TUN see no replies
        } else if c.method == Method::Tun {
            xmit::tun::tun(
                buf,
                meta,
                c.daddr,
                at.snap.tunnel_src,
                egress,
                &mut self.ip_id,
                at.snap.tunnel(c.dest),
            )
        } else {
            xmit::dr::dr(buf, c.daddr, egress)
        };
        self.finish(at, res, c, reply, meta, buf)
    }

    /// Count a packet of connection `c` that xmit sent (`res`), or turn
    /// its failure into a verdict (either family).
    #[inline(always)]
    pub(super) fn finish<A: Lane, B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        res: Result<u16, XmitError>,
        c: &ConnOf<A, A::Ext>,
        reply: bool,
        meta: &Meta<A>,
        buf: &mut B,
    ) -> LbVerdict {
        self.finish_to(at, res, Counted::of(c), reply, meta, buf)
    }

    /// [`Self::finish`] for a connection of which only `to` is at hand.
    #[inline(always)]
    pub(super) fn finish_to<A: Lane, B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        res: Result<u16, XmitError>,
        to: Counted<A>,
        reply: bool,
        meta: &Meta<A>,
        buf: &mut B,
    ) -> LbVerdict {
        let egress = at.egress;
        match res {
            Ok(port) => {
                let bytes = meta.ip_len as u64;
                if let Some(t) = self.dest_rec(to.dest) {
                    t.packet(reply, bytes);
                }
                if let Some(t) = self.stats.services.get(to.svc as usize) {
                    t.packet(reply, bytes);
                }
                LbVerdict::Tx { port }
            }
            Err(XmitError::NeedFrag { mtu }) if meta.icmp.is_none() => {
                if !self.icmp_limit.allow(at.now_ns) {
                    return self.drop(LbDrop::IcmpRateLimited);
                }
                match A::too_big(self, buf, meta, mtu, egress) {
                    Ok(port) => {
                        bump(&self.stats.icmp_frag_sent, 1);
                        LbVerdict::Tx { port }
                    }
                    // the answer goes back to the packet's source
                    Err(e) => self.xmit_failed(e, egress, meta.key.src),
                }
            }
            Err(e) => {
                // xmit routes requests (and ICMP errors about them) to the
                // real server, replies (NAT) to the packet's destination
                let dst = if reply { meta.key.dst } else { to.daddr };
                self.xmit_failed(e, egress, dst)
            }
        }
    }
}

/// What counting a forwarded packet (and reporting a failed one) needs of
/// its connection: the real server's slot, the service's slot, the real
/// server's address.
#[derive(Clone, Copy)]
pub(super) struct Counted<A = u32> {
    pub(super) dest: u32,
    pub(super) svc: u16,
    pub(super) daddr: A,
}

impl<A: Copy> Counted<A> {
    /// What the counters and a rewrite need of connection `c`.
    #[inline(always)]
    pub(super) fn of<X>(c: &ConnOf<A, X>) -> Self {
        Counted {
            dest: c.dest,
            svc: c.svc,
            daddr: c.daddr,
        }
    }
}
