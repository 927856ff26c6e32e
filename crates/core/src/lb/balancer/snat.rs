//! SNAT's sub-machine (`[[snat]]`, [`crate::lb::snat`]): a real server's
//! own connection to the outside leaves from a pool address and a port of
//! this worker's share, its destination left as it was.
//!
//! It is IPv4 FullNAT with the real server's side played by the
//! destination: the record is a FullNAT [`Conn6`] (addresses IPv4-mapped)
//! whose client is the real server, whose VIP and real server are both the
//! destination, and whose `Nat64Leg` holds the pool address and port. So
//! the requests go through [`Balancer::fullnat_forward`] (source rewritten
//! to the pool address and port, destination unchanged), the replies and
//! the ICMP errors about requests arrive by the pool address
//! ([`Balancer::nat64_reply`], which hands them to FullNAT's reply path:
//! destination rewritten back to the real server), and the ports come from
//! the allocator NAT64 and FullNAT share (`port % workers` this worker's,
//! so the pipeline and the NIC find the owner of a reply by its port).
//! The record names no service and no real server: its service slot is
//! [`SNAT_SVC`] and its real-server slot names the rule
//! ([`crate::lb::snat::rule_of`]), whose counters it keeps
//! ([`crate::lb::stats::WorkerStats::snat`]).
//!
//! The path is asked only for an IPv4 TCP/UDP packet that nothing else
//! took (no connection, no service, no VIP, no pool, none of dirigo's
//! addresses) while the snapshot has SNAT rules.

use super::burst::{lookup_key, BurstCtx};
use super::fullnat::{widen, Request4};
use super::machine::Balancer;
use crate::lb::conn::{mapped, Conn6, FlowKey6, Nat64Leg, Probe};
use crate::lb::snat::{rule_of, Snat4, SNAT_DEST_BASE, SNAT_SVC};
use crate::lb::spec::Method;
use crate::lb::state::TcpState;
use crate::lb::stats::bump;
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{FlowKey, PacketMeta, PROTO_TCP, PROTO_UDP};
use std::sync::atomic::Ordering::Relaxed;

/// Whether `c` is an SNAT connection.
#[inline]
fn is_snat(c: &Conn6) -> bool {
    c.method == Method::FullNat && c.ext.laddr4 != 0 && rule_of(c.svc, c.dest).is_some()
}

impl Balancer {
    /// An IPv4 packet nothing else took (see the module docs): a packet
    /// of an SNAT connection, or the first of a new one from a source of
    /// an SNAT rule; [`LbVerdict::NotForUs`] when no rule has its source.
    #[inline(never)]
    pub fn snat_out<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
    ) -> LbVerdict {
        let key = &meta.key;
        if meta.icmp.is_some() {
            // an ICMP error from a real server about a reply: FullNAT's
            // translation (from the pool address, quoting destination →
            // pool address and port) when it quotes an SNAT connection
            return self.snat_icmp_out(at, buf, meta);
        }
        if key.proto != PROTO_TCP && key.proto != PROTO_UDP {
            return LbVerdict::NotForUs;
        }
        let Some((ri, rule)) = at.snap.snat_rule4(key.src) else {
            return LbVerdict::NotForUs;
        };
        self.see_epoch(at.snap);
        let k6 = widen(key);
        match self.request4_in6(at, meta, &k6, is_snat) {
            Ok(Request4::Known(idx, c)) => self.fullnat_forward(at, buf, meta, idx, c, false),
            Ok(Request4::New(probe, start)) => {
                match self.snat_conn(at, ri, rule, key, &k6, probe, start) {
                    Ok((idx, c)) => self.fullnat_forward(at, buf, meta, idx, c, false),
                    Err(why) => self.drop(why),
                }
            }
            Err(why) => self.drop(why),
        }
    }

    /// Insert a new SNAT connection of rule `ri` for `key` (`k6`
    /// widened), from a pool address and a port of this worker's: over
    /// the bound is [`LbDrop::SnatLimit`], no port free
    /// [`LbDrop::SnatPortsExhausted`]; no connection is evicted for either.
    #[allow(clippy::too_many_arguments)]
    fn snat_conn<E>(
        &mut self,
        at: &BurstCtx<E>,
        ri: usize,
        rule: &Snat4,
        key: &FlowKey,
        k6: &FlowKey6,
        probe: Probe,
        start: TcpState,
    ) -> Result<(u32, Conn6), LbDrop> {
        let live = self.stats.snat_live.load(Relaxed);
        let rule_live = self.stats.snat.get(ri).map_or(0, |t| t.live.load(Relaxed));
        if live >= self.snat_bound() || (rule.max_conns != 0 && rule_live >= rule.max_conns) {
            return Err(LbDrop::SnatLimit);
        }
        let (dst, dport, proto) = (key.dst, key.dport, key.proto);
        let (laddr4, lport) = self
            .nat64
            .take_range(&rule.pool, &self.table6, rule.ports, |a, p| FlowKey6 {
                src: mapped(dst),
                dst: mapped(a),
                sport: dport,
                dport: p,
                proto,
            })
            .ok_or(LbDrop::SnatPortsExhausted)?;
        let init = if key.proto == PROTO_TCP {
            at.snap.timeouts.tcp(start)
        } else {
            at.snap.timeouts.udp_ms
        };
        let conn = Conn6 {
            caddr: k6.src,
            vaddr: k6.dst,
            daddr: mapped(key.dst),
            dest: SNAT_DEST_BASE + ri as u32,
            expires: at.now.wrapping_add(init),
            cport: key.sport,
            vport: key.dport,
            dport: key.dport,
            svc: SNAT_SVC,
            proto: key.proto,
            state: start as u8,
            flags: 0,
            method: Method::FullNat,
            ext: Nat64Leg {
                laddr4,
                lport,
                cip: 0,
                laddr6: [0; 4],
            },
        };
        let ins = self.table6.insert_probed(conn, probe, at.now);
        if let Some(ev) = ins.evicted {
            self.release(&ev, at.now_ns);
            bump(&self.stats.evicted, 1);
        }
        let idx = ins.result.map_err(|_| LbDrop::TableFull)?;
        self.stats.snat_new(ri);
        self.store_conns();
        let c = self.table6.get(idx).copied().ok_or(LbDrop::Malformed)?;
        Ok((idx, c))
    }

    /// An ICMP error from a source of an SNAT rule quoting a packet of one
    /// of its connections (destination → real server): translated as
    /// FullNAT's errors about replies are ([`Balancer::fullnat_icmp_in`]);
    /// else not ours.
    fn snat_icmp_out<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
    ) -> LbVerdict {
        let key = lookup_key(meta);
        if (key.proto != PROTO_TCP && key.proto != PROTO_UDP)
            || at.snap.snat_rule4(meta.key.src).is_none()
        {
            return LbVerdict::NotForUs;
        }
        self.see_epoch(at.snap);
        self.fullnat_icmp_in(at, buf, meta, &key)
    }

    /// The most SNAT connections this worker keeps, all rules together:
    /// half its IPv6 table (which IPv6, NAT64 and FullNAT connections
    /// share), so that the real servers' own connections never fill it.
    #[inline]
    pub fn snat_bound(&self) -> u32 {
        (self.table6.capacity() / 2).max(1)
    }
}
