//! IPv4 FullNAT's sub-machine: a client's connection to an IPv4 FullNAT
//! service leaves from one of the service's local addresses and a source
//! port this worker owns, so that the real server's replies come back to
//! dirigo whatever its default gateway, and to this worker (the steering
//! and the NIC find the owner by the port alone: `port % workers`).
//!
//! The connections live in the IPv6 table, as NAT64's do: IPv4's records
//! are 32 bytes and have no room for the local address and port, so a
//! FullNAT connection is a [`Conn6`] with its addresses IPv4-mapped
//! (`::ffff:a.b.c.d`) and its local address and port in the record's
//! [`Nat64Leg`]; its reply tuple (real server → local address:port,
//! mapped) is NAT64's, so the replies and the ICMP errors about requests
//! arrive by the NAT64 path ([`Balancer::nat64_reply`], which hands them
//! here) and the source ports come from the same per-worker allocator
//! ([`super::nat64::ports::Nat64Ports`]). 128 bytes per connection (the
//! record's 96 and its share of the index), against IPv4's 64.
//!
//! Per packet, the request side: the IPv4 path, having missed in its own
//! table, finds the service FullNAT ([`Balancer::fullnat_flow`]) and looks
//! here; a miss schedules and inserts. An ICMP error from the client's
//! side (to the VIP) is looked up here when the snapshot has an IPv4
//! FullNAT service ([`Balancer::fullnat_icmp_in`]).

use super::burst::BurstCtx;
use super::established::is_new_syn;
use super::forward::Counted;
use super::machine::Balancer;
use super::new_conn::record;
use super::persist::keys::TAG_BITS;
use crate::lb::conn::{mapped, tick_reached, Conn6, FlowKey6, Nat64Leg, Probe};
use crate::lb::snapshot::Service;
use crate::lb::spec::Method;
use crate::lb::state::TcpState;
use crate::lb::stats::bump;
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::lb::xmit::fullnat::{fullnat, fullnat_icmp, End};
use crate::lb::xmit::XmitError;
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{tcp_flags, FlowKey, PacketMeta, PROTO_TCP};

/// An IPv4 tuple as the IPv6 table holds it: both addresses IPv4-mapped.
#[inline]
pub(super) fn widen(k: &FlowKey) -> FlowKey6 {
    FlowKey6 {
        src: mapped(k.src),
        dst: mapped(k.dst),
        sport: k.sport,
        dport: k.dport,
        proto: k.proto,
    }
}

/// What [`Balancer::request4_in6`] found.
pub(super) enum Request4 {
    /// A live record: its index and a copy.
    Known(u32, Conn6),
    /// None: where a new one goes, and its first state.
    New(Probe, TcpState),
}

/// Whether `c` is an IPv4 FullNAT connection (in the IPv6 table).
#[inline]
pub(super) fn is_fullnat4(c: &Conn6) -> bool {
    c.method == Method::FullNat && c.ext.laddr4 != 0
}

impl Balancer {
    /// A TCP/UDP packet to IPv4 FullNAT service `svc` that no record of
    /// the IPv4 table answered (lookup key `key`): a packet of one of its
    /// connections, or the first of a new one.
    #[inline(never)]
    pub(super) fn fullnat_flow<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        key: &FlowKey,
        svc: &Service,
    ) -> LbVerdict {
        let k6 = widen(key);
        match self.request4_in6(at, meta, &k6, is_fullnat4) {
            Ok(Request4::Known(idx, c)) => self.fullnat_forward(at, buf, meta, idx, c, false),
            Ok(Request4::New(probe, start)) => {
                match self.fullnat_conn(at, svc, key, &k6, probe, start) {
                    Ok((idx, c)) => self.fullnat_forward(at, buf, meta, idx, c, false),
                    Err(why) => self.drop(why),
                }
            }
            Err(why) => self.drop(why),
        }
    }

    /// A client's request of an IPv4 connection the IPv6 table keeps
    /// (FullNAT's, SNAT's: `k6` its tuple widened, `kind` whether a record
    /// is one): a live record of that kind, or where a new one goes and
    /// the state it starts in (an expired or reusable record is expired
    /// first); a TCP segment that may not open one is
    /// [`LbDrop::NotTracked`].
    #[inline]
    pub(super) fn request4_in6<E>(
        &mut self,
        at: &BurstCtx<E>,
        meta: &PacketMeta,
        k6: &FlowKey6,
        kind: fn(&Conn6) -> bool,
    ) -> Result<Request4, LbDrop> {
        let hash = self.table6.hash(k6);
        let probe = match self.table6.lookup_probe(k6, hash) {
            Ok(h) if !h.reply => {
                let c = self.table6.get(h.idx).copied().ok_or(LbDrop::Malformed)?;
                let expired = tick_reached(at.now, c.expires);
                let reuse = is_new_syn(meta) && reusable(&c);
                if !(expired || reuse) && kind(&c) {
                    return Ok(Request4::Known(h.idx, c));
                }
                self.expire_idx::<u128>(h.idx, at.now_ns);
                self.table6.unprobed(hash)
            }
            Ok(_) => self.table6.unprobed(hash),
            Err(p) => p,
        };
        let tcp = meta.key.proto == PROTO_TCP;
        if tcp
            && (meta.tcp_flags & tcp_flags::RST != 0
                || (meta.tcp_flags & tcp_flags::SYN == 0 && !at.snap.sloppy_tcp))
        {
            return Err(LbDrop::NotTracked);
        }
        let start = if tcp && meta.tcp_flags & tcp_flags::SYN == 0 {
            TcpState::Established
        } else {
            TcpState::None
        };
        Ok(Request4::New(probe, start))
    }

    /// Schedule (pinned client, persistence template, scheduler) and
    /// insert a new IPv4 FullNAT connection for `key` (`k6` widened),
    /// from a local address and a port of this worker's: none free is
    /// [`LbDrop::FullNatPortsExhausted`], and no connection is evicted
    /// for it.
    fn fullnat_conn<E>(
        &mut self,
        at: &BurstCtx<E>,
        svc: &Service,
        key: &FlowKey,
        k6: &FlowKey6,
        probe: Probe,
        start: TcpState,
    ) -> Result<(u32, Conn6), LbDrop> {
        let (snap, now, now_ns) = (at.snap, at.now, at.now_ns);
        let pinned = svc.pinned(key.src, key.sport);
        let was_pinned = pinned.is_some();
        let d = match pinned.or_else(|| self.persist_pick(snap, svc, key.src, now_ns)) {
            Some(d) => Some(d),
            None => self.sched_pick(snap, svc, key),
        };
        let d = d.ok_or(LbDrop::NoDest)?;
        let dport = if d.port == 0 { key.dport } else { d.port };
        let (laddr4, lport) = self
            .nat64
            .take(&svc.local4, &self.table6, d.addr, dport, key.proto)
            .ok_or(LbDrop::FullNatPortsExhausted)?;
        let conn = record(
            at,
            svc,
            d,
            k6,
            mapped(d.addr),
            Nat64Leg {
                laddr4,
                lport,
                cip: self.client_addr_byte(svc, key.proto, start == TcpState::None),
                laddr6: [0; 4],
            },
            start,
        );
        let ins = self.table6.insert_probed(conn, probe, now);
        if let Some(ev) = ins.evicted {
            self.release(&ev, now_ns);
            bump(&self.stats.evicted, 1);
        }
        let idx = ins.result.map_err(|_| LbDrop::TableFull)?;
        if !was_pinned {
            if let Some(bits) = self.persist_attach_bits(svc, key.src, d, now_ns) {
                if let Some(c) = self.table6.get_mut(idx) {
                    c.flags = (c.flags & !TAG_BITS) | bits;
                }
            }
        }
        self.count_new(svc, d);
        let c = self.table6.get(idx).copied().ok_or(LbDrop::Malformed)?;
        Ok((idx, c))
    }

    /// State, timer and the rewrite of a packet of IPv4 FullNAT
    /// connection `idx` (record `c`): a request from the local address to
    /// the real server, a reply from the VIP to the client.
    pub(super) fn fullnat_forward<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        idx: u32,
        c: Conn6,
        reply: bool,
    ) -> LbVerdict {
        if let Err(v) = self.touch(at, idx, &c, reply, meta.tcp_flags) {
            return v;
        }
        let (src, dst) = ends(&c, reply);
        let res = fullnat(buf, meta, src, dst, at.egress);
        if res.is_ok() && c.ext.cip != 0 {
            if let Err(why) = self.client_addr(buf, meta, idx, &c, reply, false) {
                return self.drop(why);
            }
        }
        self.fullnat_done(at, res, &c, reply, meta, buf, dst.addr)
    }

    /// A packet to an IPv4 FullNAT connection's local address, found by
    /// its reply tuple ([`Balancer::nat64_reply`]): a reply, or an ICMP
    /// error quoting a request (translated for the client: from the VIP,
    /// quoting client → VIP).
    pub(super) fn fullnat_reply<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        idx: u32,
        c: Conn6,
    ) -> LbVerdict {
        if meta.icmp.is_none() {
            return self.fullnat_forward(at, buf, meta, idx, c, true);
        }
        let (vip, client) = (c.vaddr as u32, c.caddr as u32);
        // SNAT's (the destination is no VIP): from the router that said it
        let from = if crate::lb::snat::rule_of(c.svc, c.dest).is_some() {
            meta.key.src
        } else {
            vip
        };
        let res = fullnat_icmp(
            buf,
            meta,
            from,
            client,
            End {
                addr: client,
                port: c.cport,
            },
            End {
                addr: vip,
                port: c.vport,
            },
            at.egress,
        );
        self.fullnat_done(at, res, &c, true, meta, buf, client)
    }

    /// An ICMP error to a VIP whose quote no IPv4 record answered (lookup
    /// key `key`, client → VIP), while an IPv4 FullNAT service exists:
    /// about a reply of one of its connections, it is translated for the
    /// real server (from the local address, quoting RIP → local address);
    /// else not ours.
    #[inline(never)]
    pub(super) fn fullnat_icmp_in<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        key: &FlowKey,
    ) -> LbVerdict {
        let k6 = widen(key);
        let hash = self.table6.hash(&k6);
        let Ok(h) = self.table6.lookup_probe(&k6, hash) else {
            return LbVerdict::NotForUs;
        };
        let Some(c) = self.table6.get(h.idx).copied() else {
            return LbVerdict::NotForUs;
        };
        if h.reply || !is_fullnat4(&c) || tick_reached(at.now, c.expires) {
            return LbVerdict::NotForUs;
        }
        let (rip, laddr) = (c.daddr as u32, c.ext.laddr4);
        let res = fullnat_icmp(
            buf,
            meta,
            laddr,
            rip,
            End {
                addr: rip,
                port: c.dport,
            },
            End {
                addr: laddr,
                port: c.ext.lport,
            },
            at.egress,
        );
        self.fullnat_done(at, res, &c, false, meta, buf, rip)
    }

    /// Count what xmit did with a packet of FullNAT connection `c` sent
    /// toward `to`, or turn its failure into a verdict (an unresolved next
    /// hop is `to`'s).
    #[allow(clippy::too_many_arguments)]
    fn fullnat_done<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        res: Result<u16, XmitError>,
        c: &Conn6,
        reply: bool,
        meta: &PacketMeta,
        buf: &mut B,
        to: u32,
    ) -> LbVerdict {
        match res {
            Err(e) => self.xmit_failed::<u32, E>(e, at.egress, to),
            ok => {
                let to = Counted {
                    dest: c.dest,
                    svc: c.svc,
                    daddr: c.daddr as u32,
                };
                self.finish_to(at, ok, to, reply, meta, buf)
            }
        }
    }
}

/// The source and destination a packet of IPv4 FullNAT connection `c`
/// leaves with: a request from the local address to the real server, a
/// reply from the VIP to the client.
#[inline]
fn ends(c: &Conn6, reply: bool) -> (End<u32>, End<u32>) {
    if reply {
        (
            End {
                addr: c.vaddr as u32,
                port: c.vport,
            },
            End {
                addr: c.caddr as u32,
                port: c.cport,
            },
        )
    } else {
        (
            End {
                addr: c.ext.laddr4,
                port: c.ext.lport,
            },
            End {
                addr: c.daddr as u32,
                port: c.dport,
            },
        )
    }
}

/// TIME_WAIT or CLOSE: a new SYN may reuse the tuple.
#[inline]
fn reusable(c: &Conn6) -> bool {
    c.proto == PROTO_TCP
        && matches!(
            TcpState::from_u8(c.state),
            TcpState::TimeWait | TcpState::Close
        )
}
