//! What the SYN proxy's handshake needs of the balancer's lane of a
//! family ([`SpLane`]): its connection table and record, opening a
//! connection, the NAT rewrite toward the real server, the next hop and
//! what a failed transmission becomes. The handshake (`handshake.rs`) is
//! written once over it; IPv4 and IPv6 answer here, mostly with the
//! balancer's own lane ([`crate::lb::balancer::lane::Lane`]: `finish`,
//! `xmit_failed`, `expire_idx` over the address type).

use crate::lb::balancer::burst::BurstCtx;
use crate::lb::balancer::machine::Balancer;
use crate::lb::conn::{Conn, Conn6, ConnOf};
use crate::lb::snapshot::Service;
use crate::lb::state::TcpState;
use crate::lb::synproxy::{LaneOf, ProxyFamily};
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::lb::xmit::{self, nat::Side, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6, NextHopOf};
use crate::net::family::{V4, V6};
use crate::net::meta::{FlowKey, FlowKey6, Meta, PacketMeta, PacketMeta6};

/// What the handshake reads of a record, whatever its family.
#[derive(Clone, Copy, Debug)]
pub(in crate::lb::balancer) struct Parts<A> {
    pub caddr: A,
    pub cport: u16,
    pub vaddr: A,
    pub vport: u16,
    pub daddr: A,
    pub dest: u32,
    pub state: u8,
    pub flags: u8,
}

/// A record of either family, as the SYN proxy reads it.
pub(in crate::lb::balancer) trait HasParts {
    /// Its addresses.
    type Addr;
    /// What the handshake reads of it.
    fn parts(&self) -> Parts<Self::Addr>;
}

impl<A: Copy, X> HasParts for ConnOf<A, X> {
    type Addr = A;
    #[inline]
    fn parts(&self) -> Parts<A> {
        Parts {
            caddr: self.caddr,
            cport: self.cport,
            vaddr: self.vaddr,
            vport: self.vport,
            daddr: self.daddr,
            dest: self.dest,
            state: self.state,
            flags: self.flags,
        }
    }
}

/// The balancer's lane of a family, for the SYN proxy, with egress `E`.
pub(in crate::lb::balancer) trait SpLane<E>: ProxyFamily + LaneOf {
    /// The family's connection record.
    type Conn: Copy + HasParts<Addr = Self::Addr>;
    /// What tells the family's records apart in a hold key
    /// ([`LbVerdict::Wait`]).
    const WAIT_TAG: u32;
    /// Record `idx`.
    fn record(b: &Balancer, idx: u32) -> Option<Self::Conn>;
    /// Set record `idx`'s flags, state and timer.
    fn set_record(b: &mut Balancer, idx: u32, flags: u8, state: u8, expires: u32);
    /// Schedule and insert the connection of `key` (its record index).
    fn open(
        b: &mut Balancer,
        at: &BurstCtx<E>,
        svc: &Service,
        key: &Self::Key,
        start: TcpState,
    ) -> Result<u32, LbDrop>;
    /// NAT a client's segment of `c` to its real server, count it.
    fn to_server<B: PacketBuf>(
        b: &mut Balancer,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &Meta<Self::Addr>,
        c: &Self::Conn,
    ) -> LbVerdict;
    /// Remove record `idx` (released, counted as expired).
    fn expire(b: &mut Balancer, idx: u32, now_ns: u64);
    /// The next hop toward `dst`.
    fn hop(egress: &E, dst: Self::Addr) -> Result<NextHopOf<Self>, XmitError>;
    /// The verdict of a segment that could not be sent toward `dst`.
    fn failed(b: &mut Balancer, e: XmitError, egress: &E, dst: Self::Addr) -> LbVerdict;
}

impl<E: Egress + Egress6> SpLane<E> for V4 {
    type Conn = Conn;
    const WAIT_TAG: u32 = 0;

    fn record(b: &Balancer, idx: u32) -> Option<Conn> {
        b.table.get(idx).copied()
    }

    fn set_record(b: &mut Balancer, idx: u32, flags: u8, state: u8, expires: u32) {
        if let Some(c) = b.table.get_mut(idx) {
            c.flags = flags;
            c.state = state;
            c.expires = expires;
        }
    }

    fn open(
        b: &mut Balancer,
        at: &BurstCtx<E>,
        svc: &Service,
        key: &FlowKey,
        start: TcpState,
    ) -> Result<u32, LbDrop> {
        let probe = b.table.unprobed(b.table.hash(key));
        b.new_conn(at, svc, key, probe, start)
    }

    fn to_server<B: PacketBuf>(
        b: &mut Balancer,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        c: &Conn,
    ) -> LbVerdict {
        let res = xmit::nat::nat(buf, meta, Side::Dst, c.daddr, c.dport, c.daddr, at.egress);
        b.finish(at, res, c, false, meta, buf)
    }

    fn expire(b: &mut Balancer, idx: u32, now_ns: u64) {
        b.expire_idx::<u32>(idx, now_ns);
    }

    fn hop(egress: &E, dst: u32) -> Result<NextHopOf<V4>, XmitError> {
        xmit::next_hop(egress, dst)
    }

    fn failed(b: &mut Balancer, e: XmitError, egress: &E, dst: u32) -> LbVerdict {
        b.xmit_failed(e, egress, dst)
    }
}

impl<E: Egress + Egress6> SpLane<E> for V6 {
    type Conn = Conn6;
    const WAIT_TAG: u32 = 1 << 31;

    fn record(b: &Balancer, idx: u32) -> Option<Conn6> {
        b.table6.get(idx).copied()
    }

    fn set_record(b: &mut Balancer, idx: u32, flags: u8, state: u8, expires: u32) {
        if let Some(c) = b.table6.get_mut(idx) {
            c.flags = flags;
            c.state = state;
            c.expires = expires;
        }
    }

    fn open(
        b: &mut Balancer,
        at: &BurstCtx<E>,
        svc: &Service,
        key: &FlowKey6,
        start: TcpState,
    ) -> Result<u32, LbDrop> {
        let probe = b.table6.unprobed(b.table6.hash(key));
        let (idx, c) = b.new_conn6(at, svc, key, probe, start)?;
        if c.ext.laddr4 != 0 {
            // NAT64 (an IPv4 real server): not proxied (the snapshot
            // refuses the combination; a connection is never half-made)
            b.expire_idx::<u128>(idx, at.now_ns);
            return Err(LbDrop::NotTracked);
        }
        Ok(idx)
    }

    fn to_server<B: PacketBuf>(
        b: &mut Balancer,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta6,
        c: &Conn6,
    ) -> LbVerdict {
        let res = xmit::nat::nat(buf, meta, Side::Dst, c.daddr, c.dport, c.daddr, at.egress);
        b.finish(at, res, c, false, meta, buf)
    }

    fn expire(b: &mut Balancer, idx: u32, now_ns: u64) {
        b.expire_idx::<u128>(idx, now_ns);
    }

    fn hop(egress: &E, dst: u128) -> Result<NextHopOf<V6>, XmitError> {
        xmit::next_hop(egress, dst)
    }

    fn failed(b: &mut Balancer, e: XmitError, egress: &E, dst: u128) -> LbVerdict {
        b.xmit_failed(e, egress, dst)
    }
}
