//! The balancer's lane, named by a family's address type: `u32` for
//! IPv4, `u128` for IPv6.
//!
//! What a packet of a known connection goes through is written once over
//! `A: Lane`: its state machine and timer ([`Balancer::touch`]), what
//! became of its transmission ([`Balancer::finish_to`],
//! [`Balancer::xmit_failed`]), and the end of a connection
//! ([`Balancer::release`], [`Balancer::expire_idx`]); so is a new
//! connection's count ([`Balancer::count_new`]). Each is monomorphised,
//! so IPv4 keeps its own machine code.
//!
//! The lane is keyed by the address type rather than by
//! [`crate::net::family::V4`] or [`crate::net::family::V6`] so that a
//! record ([`ConnOf<A, _>`]) or an address says which lane it is in:
//! callers write `self.touch(at, idx, &c, ..)` for either family.
//!
//! What each family answers here is what differs in kind: its table, its
//! persistence key, its "too big" message (ICMP fragmentation needed,
//! ICMPv6 Packet Too Big), its verdict for an unresolved next hop, and
//! which of its connections sync may send (not NAT64's).

use super::load::release_counters;
use super::machine::Balancer;
use super::persist::keys::{detach_conn, detach_conn6};
use super::sync::out as sync;
use crate::lb::conn::{tick_of, Conn, Conn6, ConnExt, ConnOf, Hit, Nat64Leg};
use crate::lb::snapshot::{Dest, Service, Snapshot};
use crate::lb::stats::bump;
use crate::lb::sync::{SyncConn, SYNC_FILL_LIMIT};
use crate::lb::verdict::LbVerdict;
use crate::lb::xmit::{self, v6 as x6, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{Flow, FlowKey, FlowKey6, Meta};

impl Balancer {
    /// Give back what ending connection `c` held (its real server's and
    /// service's counts, its persistence template), either family.
    pub(super) fn release<A: Lane>(&mut self, c: &ConnOf<A, A::Ext>, now_ns: u64) {
        release_counters(&self.stats, &mut self.trees, c);
        A::detach(self, c, now_ns);
        self.store_conns();
    }

    /// End connection `idx` of family `A`'s table, if it is there.
    pub(super) fn expire_idx<A: Lane>(&mut self, idx: u32, now_ns: u64) {
        if let Some(c) = A::remove(self, idx) {
            self.release(&c, now_ns);
            bump(&self.stats.expired, 1);
        }
    }
}

/// A family's lane (see the module docs), implemented by its address
/// type.
pub(crate) trait Lane: Copy + Eq + Default + 'static {
    /// What the family's records keep beside the shared fields.
    type Ext: ConnExt<Self>;

    /// Set connection `idx`'s state, flags and expiry.
    fn set_hot(b: &mut Balancer, idx: u32, state: u8, flags: u8, expires: u32);
    /// Take connection `idx` out of its table.
    fn remove(b: &mut Balancer, idx: u32) -> Option<ConnOf<Self, Self::Ext>>;
    /// Detach the ending connection `c` from its persistence template.
    fn detach(b: &mut Balancer, c: &ConnOf<Self, Self::Ext>, now_ns: u64);
    /// What the sync protocol says of `c` (`None`: sync does not send
    /// this kind of connection).
    fn to_sync(c: &ConnOf<Self, Self::Ext>, state: u8, timeout_ms: u32) -> Option<SyncConn>;
    /// The family's "too big" answer to the packet's source, for a path
    /// MTU of `mtu`.
    fn too_big<B: PacketBuf, E: Egress + Egress6>(
        b: &mut Balancer,
        buf: &mut B,
        meta: &Meta<Self>,
        mtu: u16,
        egress: &E,
    ) -> Result<u16, XmitError>;
    /// The next hop toward `dst` when it is unresolved: its address (as
    /// the verdict holds it) and port.
    fn unresolved<E: Egress + Egress6>(egress: &E, dst: Self) -> Option<LbVerdict>;

    // The table and the snapshot as connection sync installs into them
    // (off the packet path).

    /// An address of this family from a sync entry's 128-bit field.
    fn narrow(a: u128) -> Self;
    /// The connection of tuple `key`, either side: where it is, whether
    /// `key` is its reply side, its record.
    fn find(b: &Balancer, key: &Flow<Self>) -> Option<(Hit, ConnOf<Self, Self::Ext>)>;
    /// Connection `idx`'s record to change.
    fn record_mut(b: &mut Balancer, idx: u32) -> Option<&mut ConnOf<Self, Self::Ext>>;
    /// Whether sync may still add to the table (it leaves room for the
    /// director's own connections).
    fn sync_room(b: &Balancer) -> bool;
    /// Insert `c` (a synced connection); whether it went in. A record it
    /// evicted is released.
    fn insert_synced(b: &mut Balancer, c: ConnOf<Self, Self::Ext>, now_ns: u64) -> bool;
    /// The service of `proto` at `vip`:`port`.
    fn service(snap: &Snapshot, proto: u8, vip: Self, port: u16) -> Option<&Service>;
    /// Real server `d`'s address in this family (IPv6: `None` for an IPv4
    /// one, a NAT64 server).
    fn dest_addr(d: &Dest) -> Option<Self>;
}

impl Lane for u32 {
    #[inline]
    fn narrow(a: u128) -> u32 {
        a as u32
    }
    fn find(b: &Balancer, key: &FlowKey) -> Option<(Hit, Conn)> {
        let h = b.table.lookup(key)?;
        Some((h, *b.table.get(h.idx)?))
    }
    fn record_mut(b: &mut Balancer, idx: u32) -> Option<&mut Conn> {
        b.table.get_mut(idx)
    }
    fn sync_room(b: &Balancer) -> bool {
        b.table.len() < b.table.capacity() / 8 * SYNC_FILL_LIMIT
    }
    fn insert_synced(b: &mut Balancer, c: Conn, now_ns: u64) -> bool {
        let ins = b.table.insert(c, tick_of(now_ns));
        b.follow_moves(&ins);
        if let Some(ev) = ins.evicted {
            b.release(&ev, now_ns);
            bump(&b.stats.evicted, 1);
        }
        ins.result.is_ok()
    }
    fn service(snap: &Snapshot, proto: u8, vip: u32, port: u16) -> Option<&Service> {
        snap.service(proto, vip, port).map(|(_, s)| s)
    }
    fn dest_addr(d: &Dest) -> Option<u32> {
        Some(d.addr)
    }

    type Ext = ();
    #[inline(always)]
    fn set_hot(b: &mut Balancer, idx: u32, state: u8, flags: u8, expires: u32) {
        b.table.set_hot(idx, state, flags, expires);
    }
    #[inline]
    fn remove(b: &mut Balancer, idx: u32) -> Option<Conn> {
        b.table.remove(idx)
    }
    #[inline]
    fn detach(b: &mut Balancer, c: &Conn, now_ns: u64) {
        detach_conn(&mut b.persist, &b.pcfg, c, now_ns);
    }
    #[inline]
    fn to_sync(c: &Conn, state: u8, timeout_ms: u32) -> Option<SyncConn> {
        Some(sync::to_sync(c, false, state, timeout_ms))
    }
    #[inline(never)]
    fn too_big<B: PacketBuf, E: Egress + Egress6>(
        b: &mut Balancer,
        buf: &mut B,
        meta: &Meta<u32>,
        mtu: u16,
        egress: &E,
    ) -> Result<u16, XmitError> {
        xmit::icmp::frag_needed(buf, meta, mtu, egress, &mut b.ip_id)
    }
    #[inline]
    fn unresolved<E: Egress + Egress6>(egress: &E, dst: u32) -> Option<LbVerdict> {
        match egress.next_hop(dst) {
            crate::net::egress::Resolve::Unresolved { ip, port } => {
                Some(LbVerdict::Unresolved { ip, port })
            }
            _ => None,
        }
    }
}

impl Lane for u128 {
    #[inline]
    fn narrow(a: u128) -> u128 {
        a
    }
    fn find(b: &Balancer, key: &FlowKey6) -> Option<(Hit, Conn6)> {
        let h = b.table6.lookup(key)?;
        Some((h, *b.table6.get(h.idx)?))
    }
    fn record_mut(b: &mut Balancer, idx: u32) -> Option<&mut Conn6> {
        b.table6.get_mut(idx)
    }
    fn sync_room(b: &Balancer) -> bool {
        b.table6.len() < b.table6.capacity() / 8 * SYNC_FILL_LIMIT
    }
    fn insert_synced(b: &mut Balancer, c: Conn6, now_ns: u64) -> bool {
        let ins = b.table6.insert(c, tick_of(now_ns));
        if let Some(ev) = ins.evicted {
            b.release(&ev, now_ns);
            bump(&b.stats.evicted, 1);
        }
        ins.result.is_ok()
    }
    fn service(snap: &Snapshot, proto: u8, vip: u128, port: u16) -> Option<&Service> {
        snap.service6(proto, vip, port).map(|(_, s)| s)
    }
    fn dest_addr(d: &Dest) -> Option<u128> {
        (d.addr6 != 0).then_some(d.addr6)
    }

    type Ext = Nat64Leg;
    #[inline(always)]
    fn set_hot(b: &mut Balancer, idx: u32, state: u8, flags: u8, expires: u32) {
        b.table6.set_hot(idx, state, flags, expires);
    }
    #[inline]
    fn remove(b: &mut Balancer, idx: u32) -> Option<Conn6> {
        b.table6.remove(idx)
    }
    #[inline]
    fn detach(b: &mut Balancer, c: &Conn6, now_ns: u64) {
        detach_conn6(&mut b.persist, &b.pcfg, c, now_ns);
    }
    /// Not a connection with a local leg (NAT64, FullNAT): an IPv6 entry
    /// would say nothing of its local address and port.
    #[inline]
    fn to_sync(c: &Conn6, state: u8, timeout_ms: u32) -> Option<SyncConn> {
        (c.ext.lport == 0).then(|| sync::to_sync(c, true, state, timeout_ms))
    }
    #[inline(never)]
    fn too_big<B: PacketBuf, E: Egress + Egress6>(
        _: &mut Balancer,
        buf: &mut B,
        meta: &Meta<u128>,
        mtu: u16,
        egress: &E,
    ) -> Result<u16, XmitError> {
        x6::packet_too_big6(buf, meta, mtu, egress)
    }
    #[inline]
    fn unresolved<E: Egress + Egress6>(egress: &E, dst: u128) -> Option<LbVerdict> {
        match egress.next_hop6(dst) {
            crate::net::egress::Resolve6::Unresolved { ip, port } => Some(LbVerdict::Unresolved6 {
                ip: ip.into(),
                port,
            }),
            _ => None,
        }
    }
}
