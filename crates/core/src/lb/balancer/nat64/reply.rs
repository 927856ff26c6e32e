//! The replies of NAT64 connections, translated back to IPv6.

use crate::lb::balancer::burst::{lookup_key, BurstCtx};
use crate::lb::balancer::machine::Balancer;
use crate::lb::conn::{mapped, tick_reached, FlowKey6};
use crate::lb::spec::Method;
use crate::lb::stats::bump;
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::lb::xmit::{icmp::frag_needed, v6 as x6, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{PacketMeta, PROTO_TCP, PROTO_UDP};

impl Balancer {
    /// An IPv4 packet to a NAT64 pool address or a FullNAT local address
    /// (the pipeline asks when the IPv4 path found it not its own): an
    /// IPv4 FullNAT connection's reply or ICMP error goes to
    /// [`Self::fullnat_reply`]; the reply of a NAT64 connection is
    /// translated to IPv6 (from the VIP to the client) and sent, as is an
    /// ICMPv4 error quoting one of its requests (RFC 7915 §4.2: Packet Too
    /// Big for fragmentation needed, unreachable, time exceeded); anything
    /// else is a counted drop ([`LbDrop::NotTracked`]).
    ///
    /// A reply too big for the client's link once translated (IPv6's
    /// header is 20 bytes longer) is answered, DF set, with an ICMPv4
    /// fragmentation needed to the real server carrying the IPv4 MTU that
    /// fits (the link's − 20; rate-limited as the other generated errors,
    /// counted in `icmp_frag_sent`), so that the server lowers its path
    /// MTU and sends again; DF clear, it is dropped ([`LbDrop::TooBig`]).
    pub fn nat64_reply<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
    ) -> LbVerdict {
        let egress = at.egress;
        self.see_epoch(at.snap);
        // an ICMP error quoting a request: the connection it quotes
        let k = &lookup_key(meta);
        if k.proto != PROTO_TCP && k.proto != PROTO_UDP {
            return self.drop(LbDrop::NotTracked);
        }
        let key = FlowKey6 {
            src: mapped(k.src),
            dst: mapped(k.dst),
            sport: k.sport,
            dport: k.dport,
            proto: k.proto,
        };
        let hash = self.table6.hash(&key);
        let Ok(h) = self.table6.lookup_probe(&key, hash) else {
            return self.drop(LbDrop::NotTracked);
        };
        let Some(c) = self.table6.get(h.idx).copied() else {
            return self.drop(LbDrop::NotTracked);
        };
        if !h.reply || c.ext.laddr4 == 0 {
            return self.drop(LbDrop::NotTracked);
        }
        if tick_reached(at.now, c.expires) {
            self.expire_idx::<u128>(h.idx, at.now_ns);
            return self.drop(LbDrop::NotTracked);
        }
        if c.method == Method::FullNat {
            // IPv4 FullNAT: the same reply tuple, translated to IPv4
            return self.fullnat_reply(at, buf, meta, h.idx, c);
        }
        if meta.icmp.is_some() {
            // Packet Too Big, unreachable, time exceeded for the client
            return match x6::nat64::icmp_to6(buf, meta, c.vaddr, c.vport, c.caddr, c.cport, egress)
            {
                Ok(port) => LbVerdict::Tx { port },
                Err(e) => self.xmit_failed(e, egress, c.caddr),
            };
        }
        if let Err(v) = self.touch(at, h.idx, &c, true, meta.tcp_flags) {
            return v;
        }
        // an IPv4 FullNAT server's reply to an IPv6 client carrying its
        // address: the numbers shifted back, the SYN/ACK's MSS clamped
        if c.ext.cip != 0 {
            if let Err(why) = self.client_addr(buf, meta, h.idx, &c, true, false) {
                return self.drop(why);
            }
        }
        match x6::nat64::to6(buf, meta, c.vaddr, c.vport, c.caddr, c.cport, egress) {
            Ok(port) => {
                let bytes = meta.ip_len as u64;
                if let Some(t) = self.dest_rec(c.dest) {
                    t.packet(true, bytes);
                }
                if let Some(t) = self.stats.services.get(c.svc as usize) {
                    t.packet(true, bytes);
                }
                LbVerdict::Tx { port }
            }
            Err(XmitError::NeedFrag { mtu }) => {
                if !self.icmp_limit.allow(at.now_ns) {
                    return self.drop(LbDrop::IcmpRateLimited);
                }
                match frag_needed(buf, meta, mtu, egress, &mut self.ip_id) {
                    Ok(port) => {
                        bump(&self.stats.icmp_frag_sent, 1);
                        LbVerdict::Tx { port }
                    }
                    // back to the real server, over IPv4
                    Err(e) => self.xmit_failed(e, egress, meta.key.src),
                }
            }
            Err(e) => self.xmit_failed(e, egress, c.caddr),
        }
    }
}
