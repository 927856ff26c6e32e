//! The per-packet state machine of IPv4 (see the module docs of
//! [`super`]): the established shortcuts of DR, TUN and NAT decided on
//! the record in the table, ICMP errors, the SYN proxy's pending
//! connections, expiry and reuse, then a new connection for a service.

use super::burst::{BurstCtx, Prepared};
use super::established::{established_keeps, is_new_syn, keeps_direct, reusable};
use super::forward::Counted;
use super::machine::Balancer;
use crate::lb::conn::lines::LineProbe;
use crate::lb::conn::{tick_reached, F_SP_PENDING};
use crate::lb::shift::ftp_state::FTP_PORT;
use crate::lb::snapshot::MarkHit;
use crate::lb::spec::Method;
use crate::lb::state::TcpState;
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::lb::xmit::{self, nat::Side};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::family::V4;
use crate::net::meta::{tcp_flags, FlowKey, PacketMeta, PROTO_TCP, PROTO_UDP};

impl Balancer {
    /// One prepared packet (`p`, [`Balancer::prepare`]) whose lookup key
    /// is `key` ([`super::lookup_key`], which the caller reads: computed
    /// here it cost 12 instructions per packet more, callgrind); `plain`:
    /// [`Balancer::plain`] for the burst.
    #[inline(always)]
    pub(super) fn process_hashed<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        key: &FlowKey,
        p: &Prepared,
        plain: bool,
    ) -> LbVerdict {
        let (hash, reply) = (p.hash, p.reply);
        let (snap, egress, now) = (at.snap, at.egress, at.now);
        // (a key of another protocol misses: every record is TCP or UDP,
        // and the miss path below answers it)
        // a miss keeps what it learned of the key's buckets for the insert
        let (hit, mut probe) = match self.table.lookup_probe_rec(key, hash, reply) {
            // DR's established path, decided on the record in the table:
            // it reads the three fields DR needs, not a copy of the whole
            // record (which the timer store below would otherwise force
            // to be loaded up front, field by field)
            // (a DR or TUN record has no reply tuple: h.reply is false)
            Ok((h, c)) if keeps_direct(plain, false, c, Method::Dr, meta, now) => {
                let to = Counted::of(c);
                self.restart_established(snap, h.idx, now);
                let res = xmit::dr::dr(buf, to.daddr, egress);
                return self.finish_to(at, res, to, false, meta, buf);
            }
            // TUN's, the same in an arm of its own (one arm for both
            // cost DR instructions)
            Ok((h, c)) if keeps_direct(plain, false, c, Method::Tun, meta, now) => {
                let to = Counted::of(c);
                self.restart_established(snap, h.idx, now);
                let (src, id) = (snap.tunnel_src, &mut self.ip_id);
                let t = snap.tunnel(to.dest);
                let res = xmit::tun::tun(buf, meta, to.daddr, src, egress, id, t);
                return self.finish_to(at, res, to, false, meta, buf);
            }
            // NAT's, either direction (a reply only to a record without
            // F_NOOUTPUT; SYN proxy connections, whose segments are
            // translated, take the general path; so do FTP control
            // connections while the FTP helper is on, `ftp.rs`)
            Ok((h, c))
                if keeps_direct(plain, h.reply, c, Method::Nat, meta, now)
                    && !(self.ftp.is_some() && c.vport == FTP_PORT) =>
            {
                let to = Counted::of(c);
                let (side, addr, port, route) = if h.reply {
                    (Side::Src, c.vaddr, c.vport, c.caddr)
                } else {
                    (Side::Dst, c.daddr, c.dport, c.daddr)
                };
                let reply = h.reply;
                self.restart_established(snap, h.idx, now);
                let res = xmit::nat::nat(buf, meta, side, addr, port, route, egress);
                return self.finish_to(at, res, to, reply, meta, buf);
            }
            // the record is read once here (the lookup has compared its
            // key) and handed on
            Ok((h, c)) => (Some((h, *c)), None),
            Err(_) if key.proto != PROTO_TCP && key.proto != PROTO_UDP => {
                return LbVerdict::NotForUs;
            }
            Err(p) => (None, Some(p)),
        };
        if meta.icmp.is_some() {
            return match hit {
                Some((h, c)) if !tick_reached(now, c.expires) => {
                    self.icmp(at, buf, meta, h.idx, h.reply)
                }
                // about a reply of an IPv4 FullNAT connection (its own table)
                None if snap.fullnat4 => self.fullnat_icmp_in(at, buf, meta, key),
                _ => LbVerdict::NotForUs,
            };
        }
        if let Some((h, c)) = hit {
            let expired = tick_reached(now, c.expires);
            // the common case, a segment of an ESTABLISHED connection
            // that changes nothing but its timer: no state tables, no flag
            // or counter updates
            if established_keeps(&c, meta, h.reply) && !expired && plain {
                let expires = now.wrapping_add(snap.timeouts.tcp(TcpState::Established));
                self.table.set_expires(h.idx, expires);
                return self.transmit(at, buf, meta, h.idx, &c, h.reply);
            }
            let reuse = !h.reply && is_new_syn(meta) && reusable(&c);
            let pending = c.flags & F_SP_PENDING != 0;
            if pending {
                return self.synproxy_hit::<V4, B, E>(at, buf, meta, h.idx, h.reply, expired);
            }
            if expired || reuse {
                self.expire_idx::<u32>(h.idx, at.now_ns);
                if h.reply {
                    return LbVerdict::NotForUs;
                }
                probe = Some(self.table.unprobed(hash));
            } else {
                return self.forward_conn(at, buf, meta, h.idx, c, h.reply);
            }
        }
        self.new_flow(at, buf, meta, key, p, probe)
    }

    /// A packet (lookup key `key`, prepared as `p`) no connection of the table answers,
    /// whose lookup gave `probe` (None: look again at insert): the first
    /// of a new connection to a service, or the SYN proxy's, or a counted
    /// drop or not ours.
    #[inline(always)]
    fn new_flow<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        key: &FlowKey,
        p: &Prepared,
        probe: Option<LineProbe>,
    ) -> LbVerdict {
        let snap = at.snap;
        let svc = match snap.service(key.proto, key.dst, key.dport) {
            Some((_, svc)) => svc,
            // an FTP data connection the helper expects (`ftp.rs`)
            None if self.ftp.is_some() && self.ftp_expects(key, meta, at.now) => {
                return self.ftp_data(at, buf, meta, key);
            }
            // only a miss asks the mark rules (fwmark services)
            None if snap.has_marks4() => {
                match snap.mark_service(key.proto, key.src, key.dst, key.dport) {
                    Some(MarkHit::Service(_, svc)) => svc,
                    Some(MarkHit::NoService(_)) => return self.drop(LbDrop::MarkNoService),
                    None if snap.is_vip(key.dst) => return self.drop(LbDrop::NotAService),
                    None => return LbVerdict::NotForUs,
                }
            }
            None if snap.is_vip(key.dst) => return self.drop(LbDrop::NotAService),
            None => return LbVerdict::NotForUs,
        };
        if svc.fullnat {
            return self.fullnat_flow(at, buf, meta, key, svc);
        }
        if svc.spec.synproxy && key.proto == PROTO_TCP {
            return self.synproxy_new::<V4, B, E>(at, svc, buf, meta, key);
        }
        // one-packet scheduling (UDP only: the snapshot refuses it on TCP)
        if svc.spec.ops {
            return self.ops4(at, svc, buf, meta, key);
        }
        if key.proto == PROTO_TCP
            && (meta.tcp_flags & tcp_flags::RST != 0
                || (meta.tcp_flags & tcp_flags::SYN == 0 && !snap.sloppy_tcp))
        {
            return self.drop(LbDrop::NotTracked);
        }
        // sloppy_tcp: a segment without SYN is a flow taken over
        // mid-stream (another director had it), so it starts ESTABLISHED
        // (IPVS leaves it in NONE, and the ACK moves it to CLOSE)
        let start = if key.proto == PROTO_TCP && meta.tcp_flags & tcp_flags::SYN == 0 {
            TcpState::Established
        } else {
            TcpState::None
        };
        let probe = probe.unwrap_or_else(|| self.table.unprobed(p.hash));
        match self.new_conn(at, svc, key, probe, start) {
            Ok(idx) => self.forward(at, buf, meta, idx, false),
            Err(why) => self.drop(why),
        }
    }
}
