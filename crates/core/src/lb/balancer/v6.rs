//! IPv6 services: the same state machine as IPv4's ([`Balancer::process`])
//! over a table of its own ([`ConnTable<Conn6>`], 128 bytes per
//! connection), so IPv4 records stay 64 bytes and IPv4's burst path is
//! untouched.
//!
//! Per packet ([`Balancer::process6`]): an ICMPv6 error quoting a tracked
//! connection is forwarded to its real server (DR, TUN) or translated
//! (NAT; NAT64 to ICMPv4 for its IPv4 real server); a TCP/UDP packet matching a connection (client→VIP, or RS→client
//! for NAT) updates its state and timer and is forwarded; otherwise a SYN
//! (or any UDP datagram) to an IPv6 service is scheduled with the
//! service's scheduler over this worker's live loads — schedulers that
//! hash an address (sh, dh, mh) hash it folded to 32 bits
//! ([`crate::lb::snapshot::fold6`]) — and inserted. Counters are the
//! IPv4 ones (per service, per real server, drops by reason).
//!
//! Persistence (`-p`, `-M PREFIXLEN`): the templates are IPv4's, keyed by
//! the client address masked to the service's prefix length and folded to
//! 32 bits ([`client_key6`]).
//!
//! Connection sync: an IPv6 connection (DR, TUN, NAT) is sent when it is
//! due as IPv4's are ([`super::sync`]), in an IPv6 entry; a NAT64 one
//! (`laddr4` set) is not sent (the entry has no room for its pool address
//! and port). While sync is on, the established shortcut is not taken, so
//! that every packet's refresh is checked (as IPv4's).
//!
//! The SYN proxy (`--synproxy`, NAT) is IPv4's, written once for both
//! families ([`super::synproxy`]): a SYN to an IPv6 proxied service is
//! answered with an IPv6 cookie, the proving ACK opens the connection in
//! this table, its segments are translated in [`Balancer::transmit6`].
//! Not with NAT64 (an IPv4 real server behind a proxied IPv6 service:
//! refused, [`crate::lb::snapshot::BuildError::Ipv6Unsupported`]).
//!
//! An IPv6 packet whose next hop is unresolved is handed back unchanged
//! ([`LbVerdict::Unresolved6`]), as IPv4's: the pipeline asks for a
//! solicitation and the worker holds the packet until the neighbour
//! answers (a NAT reply to an on-link client not yet learned, a real
//! server or gateway whose entry just expired).

use super::burst::BurstCtx;
use super::established::keeps_established;
use super::forward::Counted;
use super::load::release_counters;
use super::machine::Balancer;
use super::new_conn::record;
use super::persist::keys::{detach_conn6, TAG_BITS};
use super::synproxy::{lane::HasParts, resets};
use crate::lb::conn::{mapped, tick_of, tick_reached, Conn6, ConnTable, FlowKey6, Nat64Leg, Probe};
use crate::lb::conn::{F_SP_PENDING, F_SYNPROXY};
use crate::lb::persist::client_key6;
use crate::lb::snapshot::{fold6, MarkHit, Service};
use crate::lb::spec::Method;
use crate::lb::state::TcpState;
use crate::lb::stats::bump;
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::lb::xmit::{self, nat::Side, v6 as x6, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::family::V6;
use crate::net::meta::{tcp_flags, FlowKey, PacketMeta6, PROTO_TCP, PROTO_UDP};

/// The IPv6 key a packet is looked up by (ICMPv6 errors: the quoted tuple
/// reversed).
#[inline]
pub fn lookup_key6(meta: &PacketMeta6) -> FlowKey6 {
    match meta.icmp {
        Some(q) => q.inner_key.reversed(),
        None => meta.key,
    }
}

/// The tuple folded to IPv4's shape for the schedulers that hash it.
#[inline]
pub(super) fn folded(k: &FlowKey6) -> FlowKey {
    FlowKey {
        src: fold6(k.src),
        dst: fold6(k.dst),
        sport: k.sport,
        dport: k.dport,
        proto: k.proto,
    }
}

impl Balancer {
    /// The IPv6 connection table (read-only).
    pub fn table6(&self) -> &ConnTable<Conn6> {
        &self.table6
    }

    /// Sweep up to `budget` IPv6 records (the worker's housekeeping calls
    /// it beside [`Self::expire`]); returns how many were removed.
    pub fn expire6(&mut self, now_ns: u64, budget: u32) -> u32 {
        if self.table6.is_empty() {
            return 0;
        }
        let now = tick_of(now_ns);
        let Balancer {
            table6,
            stats,
            persist,
            pcfg,
            trees,
            sp,
            ..
        } = self;
        let n = table6.sweep(now, budget, |idx, c| {
            release_counters(stats, trees, c);
            detach_conn6(persist, pcfg, c, now_ns);
            if c.flags & F_SP_PENDING != 0 {
                resets::swept::<V6>(sp.as_mut(), stats, idx, &c.parts());
            }
        });
        bump(&self.stats.expired, n as u64);
        self.store_conns();
        n
    }

    /// The IPv6 table's hash of `key` with its bucket prefetched: the
    /// first stage of an IPv6 burst lookup (the IPv4 one's
    /// [`Self::prepare_key`]).
    #[inline]
    pub fn prepare6(&self, key: &FlowKey6) -> u32 {
        let hash = self.table6.hash(key);
        self.table6.touch(hash);
        hash
    }

    /// The second stage: once its bucket has had time to arrive, prefetch
    /// the record of the key whose hash [`Self::prepare6`] returned.
    #[inline]
    pub fn touch_prepared6(&self, hash: u32) {
        self.table6.touch_records(hash);
    }

    /// Process one IPv6 packet (see the module docs).
    pub fn process6<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta6,
    ) -> LbVerdict {
        self.process6_hashed(at, buf, meta, None)
    }

    /// [`Self::process6`] with the hash of its lookup key when the caller
    /// has it ([`Self::prepare6`] of `lookup_key6(meta)`), so that the
    /// key is not hashed again.
    pub fn process6_hashed<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta6,
        hashed: Option<u32>,
    ) -> LbVerdict {
        self.see_epoch(at.snap);
        let key = lookup_key6(meta);
        if key.proto != PROTO_TCP && key.proto != PROTO_UDP {
            return LbVerdict::NotForUs;
        }
        let hash = match hashed {
            Some(h) => {
                debug_assert_eq!(h, self.table6.hash(&key), "hash of another key");
                h
            }
            None => self.table6.hash(&key),
        };
        let plain = self.plain(at.snap);
        self.process6_key(at, buf, meta, &key, hash, plain)
    }

    /// [`Self::process6_hashed`] past its preliminaries: the packet's
    /// lookup key `key` (TCP or UDP, [`lookup_key6`]) and its hash;
    /// `plain`: [`Balancer::plain`] for the burst (the epoch seen).
    #[inline(always)]
    pub(super) fn process6_key<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta6,
        key: &FlowKey6,
        hash: u32,
        plain: bool,
    ) -> LbVerdict {
        let (snap, now, now_ns) = (at.snap, at.now, at.now_ns);
        let (hit, mut probe) = match self.table6.lookup_probe_rec(key, hash) {
            // the common case, a segment of an ESTABLISHED connection that
            // changes nothing but its timer (as IPv4's; not while sync is
            // on, which checks every packet for a refresh): no state
            // table, only the timer restarted; decided on the record in
            // the table, of which only what the rewrite and the counters
            // need is read (no copy of the 96 bytes)
            Ok((h, c))
                if plain
                    && meta.icmp.is_none()
                    && c.ext.lport == 0
                    && c.flags & F_SYNPROXY == 0
                    && keeps_established(c.proto, c.state, c.flags, meta.tcp_flags, h.reply)
                    && !tick_reached(now, c.expires) =>
            {
                let to = Counted::of(c);
                let (method, vaddr, vport, caddr, dport) =
                    (c.method, c.vaddr, c.vport, c.caddr, c.dport);
                let expires = now.wrapping_add(snap.timeouts.tcp(TcpState::Established));
                self.table6.set_expires(h.idx, expires);
                let egress = at.egress;
                let res = match (method, h.reply) {
                    (Method::Dr, false) => xmit::dr::dr(buf, to.daddr, egress),
                    (Method::Tun, false) => {
                        let t = snap.tunnel(to.dest);
                        x6::tun6(buf, meta, to.daddr, None, egress, t)
                    }
                    (Method::Nat, false) => {
                        xmit::nat::nat(buf, meta, Side::Dst, to.daddr, dport, to.daddr, egress)
                    }
                    (Method::Nat, true) => {
                        xmit::nat::nat(buf, meta, Side::Src, vaddr, vport, caddr, egress)
                    }
                    (_, true) => Err(XmitError::Malformed), // DR and TUN see no replies
                    // not reached: FullNAT's records have a local port
                    (Method::FullNat, false) => Err(XmitError::Malformed),
                };
                return self.finish_to(at, res, to, h.reply, meta, buf);
            }
            Ok((h, c)) => (Some((h, *c)), None),
            Err(p) => (None, Some(p)),
        };
        if meta.icmp.is_some() {
            return match hit {
                Some((h, c)) if !tick_reached(now, c.expires) => {
                    self.icmp6(at, buf, meta, &c, h.reply)
                }
                _ => LbVerdict::NotForUs,
            };
        }
        if let Some((h, c)) = hit {
            let expired = tick_reached(now, c.expires);
            if c.flags & F_SP_PENDING != 0 {
                return self.synproxy_hit::<V6, B, E>(at, buf, meta, h.idx, h.reply, expired);
            }
            let reuse = !h.reply && is_new_syn6(meta) && reusable6(&c);
            if !(expired || reuse) {
                return self.forward6(at, buf, meta, h.idx, c, h.reply);
            }
            self.expire_idx::<u128>(h.idx, now_ns);
            if h.reply {
                return LbVerdict::NotForUs;
            }
            probe = Some(self.table6.unprobed(hash));
        }
        let svc = match snap.service6(key.proto, key.dst, key.dport) {
            Some((_, svc)) => svc,
            // only a miss asks the mark rules (fwmark services)
            None if snap.has_marks6() => {
                match snap.mark_service6(key.proto, key.src, key.dst, key.dport) {
                    Some(MarkHit::Service(_, svc)) => svc,
                    Some(MarkHit::NoService(_)) => return self.drop(LbDrop::MarkNoService),
                    None if snap.is_vip6(key.dst) => return self.drop(LbDrop::NotAService),
                    None => return LbVerdict::NotForUs,
                }
            }
            None if snap.is_vip6(key.dst) => return self.drop(LbDrop::NotAService),
            None => return LbVerdict::NotForUs,
        };
        if svc.spec.synproxy && key.proto == PROTO_TCP {
            return self.synproxy_new::<V6, B, E>(at, svc, buf, meta, key);
        }
        if svc.spec.ops {
            return self.ops6(at, svc, buf, meta, key);
        }
        if key.proto == PROTO_TCP
            && (meta.tcp_flags & tcp_flags::RST != 0
                || (meta.tcp_flags & tcp_flags::SYN == 0 && !snap.sloppy_tcp))
        {
            return self.drop(LbDrop::NotTracked);
        }
        let start = if key.proto == PROTO_TCP && meta.tcp_flags & tcp_flags::SYN == 0 {
            TcpState::Established
        } else {
            TcpState::None
        };
        let probe = probe.unwrap_or_else(|| self.table6.unprobed(hash));
        match self.new_conn6(at, svc, key, probe, start) {
            Ok((idx, c)) => self.forward6(at, buf, meta, idx, c, false),
            Err(why) => self.drop(why),
        }
    }

    /// Schedule (persistence template first, for a persistent service)
    /// and insert a new IPv6 connection.
    pub(super) fn new_conn6<E>(
        &mut self,
        at: &BurstCtx<E>,
        svc: &Service,
        key: &FlowKey6,
        probe: Probe,
        start: TcpState,
    ) -> Result<(u32, Conn6), LbDrop> {
        let (snap, now, now_ns) = (at.snap, at.now, at.now_ns);
        // a pinned client (a via-VIP health check's socket) neither
        // creates nor follows a persistence template
        let pinned = svc.pinned(key.src, key.sport);
        let ckey = svc
            .spec
            .persistent
            .filter(|_| pinned.is_none())
            .map(|_| client_key6(key.src, svc.spec.prefix6));
        let d = match pinned.or_else(|| ckey.and_then(|k| self.persist_pick(snap, svc, k, now_ns)))
        {
            Some(d) => Some(d),
            None => self.sched_pick(snap, svc, &folded(key)),
        };
        let d = d.ok_or(LbDrop::NoDest)?;
        let dport = if d.port == 0 { key.dport } else { d.port };
        // NAT64: an IPv4 real server, reached from a pool address and a
        // port this worker owns; a FullNAT one from the service's IPv4
        // local addresses (the same translation: its record is NAT64's)
        let fullnat64 = d.key.addr.is_ipv4() && d.method == Method::FullNat;
        let (daddr, leg) = if d.key.addr.is_ipv4() {
            let (pool, exhausted) = if fullnat64 {
                (&svc.local4[..], LbDrop::FullNatPortsExhausted)
            } else {
                (&snap.nat64_pool[..], LbDrop::Nat64PortsExhausted)
            };
            let (laddr4, lport) = self
                .nat64
                .take(pool, &self.table6, d.addr, dport, key.proto)
                .ok_or(exhausted)?;
            let leg = Nat64Leg {
                laddr4,
                lport,
                cip: if fullnat64 {
                    self.client_addr_byte(svc, key.proto, start == TcpState::None)
                } else {
                    0
                },
                laddr6: [0; 4],
            };
            (mapped(d.addr), leg)
        } else if d.method == Method::FullNat {
            // FullNAT: from a local address and a port this worker owns
            let mut leg = self.take_local6(svc, d.addr6, dport, key.proto)?;
            leg.cip = self.client_addr_byte(svc, key.proto, start == TcpState::None);
            (d.addr6, leg)
        } else {
            (d.addr6, Nat64Leg::default())
        };
        let mut conn = record(at, svc, d, key, daddr, leg, start);
        if fullnat64 {
            conn.method = Method::Nat;
        }
        let ins = self.table6.insert_probed(conn, probe, now);
        if let Some(ev) = ins.evicted {
            self.release(&ev, now_ns);
            bump(&self.stats.evicted, 1);
        }
        let idx = ins.result.map_err(|_| LbDrop::TableFull)?;
        if let Some(bits) = ckey.and_then(|k| self.persist_attach_bits(svc, k, d, now_ns)) {
            if let Some(c) = self.table6.get_mut(idx) {
                c.flags = (c.flags & !TAG_BITS) | bits;
            }
        }
        self.count_new(svc, d);
        let c = self.table6.get(idx).copied().ok_or(LbDrop::Malformed)?;
        Ok((idx, c))
    }

    /// State, timer and transmission of connection `idx` (record `c`).
    fn forward6<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta6,
        idx: u32,
        c: Conn6,
        reply: bool,
    ) -> LbVerdict {
        if let Err(v) = self.touch(at, idx, &c, reply, meta.tcp_flags) {
            return v;
        }
        self.transmit6(at, buf, meta, idx, &c, reply)
    }

    /// Transmission of a packet of connection `c` whose state and timer
    /// are done: a spliced SYN proxy connection's sequence translation, the
    /// method's rewrite (NAT64's translation), then [`Self::finish`].
    fn transmit6<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta6,
        idx: u32,
        c: &Conn6,
        reply: bool,
    ) -> LbVerdict {
        let egress = at.egress;
        if c.method == Method::FullNat {
            // IPv6 FullNAT (an IPv4 FullNAT connection has no IPv6 packet)
            return self.transmit_fullnat6(at, buf, meta, idx, c, reply);
        }
        if c.ext.laddr4 != 0 {
            // NAT64: a request leaves as IPv4 from the pool (its replies
            // come back as IPv4: Self::nat64_reply)
            if reply {
                return self.drop(LbDrop::Malformed); // not reached: IPv4 replies
            }
            let res = x6::nat64::to4(buf, meta, leg4(c), &mut self.ip_id, egress);
            // FullNAT to an IPv4 server: the client's address, in the
            // translated packet
            if res.is_ok() && c.ext.cip != 0 {
                if let Err(why) = self.client_addr_to4(buf, meta, idx, c) {
                    return self.drop(why);
                }
            }
            return self.finish64(at, res, c, meta, buf);
        }
        if c.flags & F_SYNPROXY != 0 {
            self.sp_translate::<V6, B>(buf, meta, idx, reply);
        }
        let res = match (c.method, reply) {
            (Method::Nat, true) => {
                xmit::nat::nat(buf, meta, Side::Src, c.vaddr, c.vport, c.caddr, egress)
            }
            (Method::Nat, false) => {
                xmit::nat::nat(buf, meta, Side::Dst, c.daddr, c.dport, c.daddr, egress)
            }
            (_, true) => Err(XmitError::Malformed), // DR and TUN see no replies
            (Method::FullNat, false) => Err(XmitError::Malformed), // not an IPv6 packet's
            (Method::Tun, false) => {
                x6::tun6(buf, meta, c.daddr, None, egress, at.snap.tunnel(c.dest))
            }
            (Method::Dr, false) => xmit::dr::dr(buf, c.daddr, egress),
        };
        self.finish(at, res, c, reply, meta, buf)
    }

    /// What became of a packet of NAT64 connection `c` translated to
    /// IPv4 toward its real server: the IPv4 next hop's failures are
    /// IPv4's ([`Self::xmit_failed`]), the rest is counted as IPv6's.
    fn finish64<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        res: Result<u16, XmitError>,
        c: &Conn6,
        meta: &PacketMeta6,
        buf: &mut B,
    ) -> LbVerdict {
        match res {
            Err(e @ (XmitError::Unresolved | XmitError::NoRoute)) => {
                self.xmit_failed(e, at.egress, c.daddr as u32)
            }
            r => self.finish(at, r, c, false, meta, buf),
        }
    }

    /// Forward or translate an ICMPv6 error quoting connection `c`.
    ///
    /// NAT64: an error quoting a reply as dirigo sent it (VIP → client,
    /// looked up as the client's tuple, so `reply` is false) is translated
    /// to ICMPv4 for the real server, quoting the reply as the server sent
    /// it ([`x6::nat64::icmp_to4`]): a Packet Too Big from the client's
    /// side lowers the server's path MTU toward the pool address. Nothing
    /// else of a NAT64 connection is quoted in IPv6.
    fn icmp6<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta6,
        c: &Conn6,
        reply: bool,
    ) -> LbVerdict {
        let egress = at.egress;
        if c.method == Method::FullNat {
            return self.icmp_fullnat6(at, buf, meta, c, reply);
        }
        if c.ext.laddr4 != 0 {
            if reply {
                return LbVerdict::NotForUs; // not reached: its reply key is IPv4
            }
            let res = x6::nat64::icmp_to4(buf, meta, leg4(c), &mut self.ip_id, egress);
            return self.finish64(at, res, c, meta, buf);
        }
        let res = match (c.method, reply) {
            (Method::Dr, false) => xmit::dr::dr(buf, c.daddr, egress),
            (Method::Tun, false) => {
                x6::tun6(buf, meta, c.daddr, None, egress, at.snap.tunnel(c.dest))
            }
            (Method::Nat, false) => x6::nat6_icmp(buf, meta, Side::Dst, c.daddr, c.dport, egress),
            (Method::Nat, true) => x6::nat6_icmp(buf, meta, Side::Src, c.vaddr, c.vport, egress),
            (Method::Dr | Method::Tun, true) | (Method::FullNat, _) => return LbVerdict::NotForUs,
        };
        self.finish(at, res, c, reply, meta, buf)
    }
}

/// The IPv4 leg of NAT64 connection `c`: from its pool address and port
/// to its real server.
#[inline]
fn leg4(c: &Conn6) -> x6::nat64::Leg4 {
    x6::nat64::Leg4 {
        src: c.ext.laddr4,
        sport: c.ext.lport,
        dst: c.daddr as u32,
        dport: c.dport,
    }
}

/// A TCP SYN that starts a new connection.
#[inline]
fn is_new_syn6(meta: &PacketMeta6) -> bool {
    meta.key.proto == PROTO_TCP
        && meta.tcp_flags & (tcp_flags::SYN | tcp_flags::ACK | tcp_flags::FIN | tcp_flags::RST)
            == tcp_flags::SYN
}

/// TIME_WAIT or CLOSE: a new SYN may reuse the tuple.
#[inline]
fn reusable6(c: &Conn6) -> bool {
    c.proto == PROTO_TCP
        && matches!(
            TcpState::from_u8(c.state),
            TcpState::TimeWait | TcpState::Close
        )
}
