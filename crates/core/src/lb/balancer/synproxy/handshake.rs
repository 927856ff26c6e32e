//! The balancer's side of the SYN proxy: cookies for SYNs, the proving
//! ACK turned into the SYN to the real server, the pending connection
//! until its SYN/ACK, the RSTs when it never comes.
//!
//! Written once for both families over [`SpLane`]: IPv4's packet path
//! calls it with [`V4`](crate::net::family::V4), IPv6's with
//! [`V6`](crate::net::family::V6).

use super::lane::{HasParts, SpLane};
use super::resets::reset_for;
use crate::lb::balancer::burst::BurstCtx;
use crate::lb::balancer::machine::Balancer;
use crate::lb::conn::{F_ACTIVE, F_NOOUTPUT, F_SP_PENDING, F_SYNPROXY};
use crate::lb::snapshot::Service;
use crate::lb::state::{tcp_next, Dir, TcpState};
use crate::lb::stats::bump;
use crate::lb::synproxy::{
    build_reset, cookie, reset_frame_len, segment, synack_options, Aux, CookieError, LaneOf,
    ProxyFamily, SynProxy, SynproxyCount, A_RESCALE, A_TS, A_WS, PENDING_MS, RESET_FRAME_LEN6,
};
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::family::{V4, V6};
use crate::net::meta::{tcp_flags, Meta};
use crate::net::wire::{tcp, tcpopt};

const SYN: u8 = tcp_flags::SYN;
const ACK: u8 = tcp_flags::ACK;
const RST: u8 = tcp_flags::RST;
const FIN: u8 = tcp_flags::FIN;

/// The TCP fields the proxy reads from a client's segment.
struct Fields {
    seq: u32,
    ack: u32,
    window: u16,
    opts: tcpopt::TcpOptions,
    payload: bool,
}

fn fields<F: ProxyFamily, B: PacketBuf>(buf: &B, meta: &Meta<F::Addr>) -> Option<Fields> {
    let v = F::view(meta);
    let d = buf.data();
    let t = tcp::Packet::new_checked(d.get(v.l4_off..v.end.min(d.len()))?).ok()?;
    Some(Fields {
        seq: t.seq_number(),
        ack: t.ack_number(),
        window: t.window(),
        opts: tcpopt::parse(t.options()),
        payload: !t.payload().is_empty(),
    })
}

impl Balancer {
    fn sp_count(&self, c: SynproxyCount) {
        bump(&self.stats.synproxy[c.index()], 1);
    }

    /// Record `idx` of family `F` and its SYN proxy state.
    fn conn_aux<F: SpLane<E>, E>(&self, idx: u32) -> Option<(F::Conn, Aux)> {
        let c = F::record(self, idx)?;
        let a = *self.sp.as_ref()?.lane::<F>().aux(idx)?;
        Some((c, a))
    }

    /// The SYN proxy state of record `idx` of family `F`, mutable.
    fn aux_mut<F: SpLane<E>, E>(&mut self, idx: u32) -> Option<&mut Aux> {
        self.sp.as_mut()?.lane_mut::<F>().aux_mut(idx)
    }

    /// A segment to a `--synproxy` service that matched no connection: a
    /// SYN is answered with a cookie; an ACK proving one opens the
    /// connection; anything else is not tracked.
    pub(in crate::lb::balancer) fn synproxy_new<F: SpLane<E>, B: PacketBuf, E>(
        &mut self,
        at: &BurstCtx<E>,
        svc: &Service,
        buf: &mut B,
        meta: &Meta<F::Addr>,
        key: &F::Key,
    ) -> LbVerdict {
        let (egress, now) = (at.egress, at.now);
        let Some(sp) = self.sp.as_ref() else {
            // the snapshot refuses --synproxy without the reserved state
            return self.drop(LbDrop::NotTracked);
        };
        let flags = F::tcp_flags(meta) & (SYN | ACK | RST | FIN);
        let Some(f) = fields::<F, B>(buf, meta) else {
            return self.drop(LbDrop::Malformed);
        };
        if flags == SYN {
            let so = synack_options::<F>(&f.opts, now);
            let c = sp
                .keys()
                .make(key, f.seq, f.opts.mss.unwrap_or(536), cookie::count_of(now));
            let client = F::view(meta).src;
            let res = F::hop(egress, client)
                .and_then(|nh| segment::syn_ack::<F, B>(buf, meta, c, &so, &nh));
            return match res {
                Ok(port) => {
                    self.sp_count(SynproxyCount::CookiesSent);
                    LbVerdict::Tx { port }
                }
                Err(e) => F::failed(self, e, egress, client),
            };
        }
        if flags & (SYN | RST) != 0 || flags & ACK == 0 {
            return self.drop(LbDrop::NotTracked);
        }
        let cookie = f.ack.wrapping_sub(1);
        let mss = match sp
            .keys()
            .check(key, f.seq.wrapping_sub(1), cookie, cookie::count_of(now))
        {
            Ok(m) => m,
            Err(e) => {
                return self.drop(match e {
                    CookieError::Invalid => LbDrop::SynproxyBadCookie,
                    CookieError::Expired => LbDrop::SynproxyCookieExpired,
                })
            }
        };
        self.sp_count(SynproxyCount::CookiesValid);
        let idx = match F::open(self, at, svc, key, TcpState::None) {
            Ok(i) => i,
            Err(why) => return self.drop(why),
        };
        let tso = f.opts.ts.map(|t| cookie::ts_decode(t.ecr));
        let mut aflags = 0;
        if f.opts.ts.is_some() {
            aflags |= A_TS;
        }
        if tso.is_some_and(|t| t.wscale.is_some()) {
            aflags |= A_WS;
        }
        if let Some(a) = self.aux_mut::<F, E>(idx) {
            *a = Aux {
                seq: cookie,
                ts: f.opts.ts.map_or(0, |t| t.ecr),
                window: f.window,
                wscale: 0,
                flags: aflags,
            };
        }
        let state = tcp_next(TcpState::None, Dir::Input, SYN);
        let Some(c) = F::record(self, idx) else {
            return self.drop(LbDrop::Malformed);
        };
        let pending = c.parts().flags | F_SYNPROXY | F_SP_PENDING;
        F::set_record(
            self,
            idx,
            pending,
            state as u8,
            now.wrapping_add(PENDING_MS),
        );
        let Some(c) = F::record(self, idx) else {
            return self.drop(LbDrop::Malformed);
        };
        self.proxy_syn::<F, B, E>(at, &c, buf, meta, &f, mss)
    }

    /// Turn the client's ACK into the SYN to the real server of `c` (again,
    /// for a held or repeated ACK: the SYN is sent once per such ACK), with
    /// the MSS its cookie carried.
    fn proxy_syn<F: SpLane<E>, B: PacketBuf, E>(
        &mut self,
        at: &BurstCtx<E>,
        c: &F::Conn,
        buf: &mut B,
        meta: &Meta<F::Addr>,
        f: &Fields,
        mss: u16,
    ) -> LbVerdict {
        let egress = at.egress;
        let tso = f.opts.ts.map(|t| cookie::ts_decode(t.ecr));
        let so = tcpopt::SynOptions {
            mss,
            wscale: tso.and_then(|t| t.wscale),
            sack_perm: tso.is_some_and(|t| t.sack),
            ts: f.opts.ts.map(|t| (t.val, 0)),
        };
        let daddr = c.parts().daddr;
        let res =
            F::hop(egress, daddr).and_then(|nh| segment::ack_to_syn::<F, B>(buf, meta, &so, &nh));
        if let Err(e) = res {
            return F::failed(self, e, egress, daddr);
        }
        // the segment has a fresh IP header now
        let l3 = F::view(meta).l3_off;
        let m = F::rewritten(meta, (buf.len() - l3) as u16, SYN);
        F::to_server(self, at, buf, &m, c)
    }

    /// A segment of a connection waiting for its real server's SYN/ACK.
    pub(in crate::lb::balancer) fn synproxy_pending<F: SpLane<E>, B: PacketBuf, E>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &Meta<F::Addr>,
        idx: u32,
        reply: bool,
    ) -> LbVerdict {
        let (snap, egress, now, now_ns) = (at.snap, at.egress, at.now, at.now_ns);
        let Some((c, a)) = self.conn_aux::<F, E>(idx) else {
            return self.drop(LbDrop::Malformed);
        };
        let p = c.parts();
        let flags = F::tcp_flags(meta);
        if !reply {
            if flags & RST != 0 {
                // the client gives up: so does the connection
                let v = F::to_server(self, at, buf, meta, &c);
                F::expire(self, idx, now_ns);
                return v;
            }
            let Some(f) = fields::<F, B>(buf, meta) else {
                return self.drop(LbDrop::Malformed);
            };
            if f.payload || flags & (FIN | SYN) != 0 {
                // held until the server answers (bounded by the caller)
                return LbVerdict::Wait {
                    conn: idx | F::WAIT_TAG,
                };
            }
            // the handshake's ACK again (or held): the SYN again, if it
            // returns this connection's cookie
            let Some(sp) = self.sp.as_ref() else {
                return self.drop(LbDrop::NotTracked);
            };
            if f.ack.wrapping_sub(1) != a.seq {
                return self.drop(LbDrop::SynproxyBadCookie);
            }
            let count = cookie::count_of(now);
            let mss = match sp
                .keys()
                .check(&F::key(meta), f.seq.wrapping_sub(1), a.seq, count)
            {
                Ok(m) => m,
                Err(_) => return self.drop(LbDrop::SynproxyCookieExpired),
            };
            return self.proxy_syn::<F, B, E>(at, &c, buf, meta, &f, mss);
        }
        if flags & RST != 0 {
            // the server refused: tell the client
            self.sp_count(SynproxyCount::ServerReset);
            let r = reset_for(&p, &a);
            let res = F::hop(egress, p.caddr)
                .and_then(|nh| segment::reset_in_place::<F, B>(buf, meta, &r, &nh));
            let v = match res {
                Ok(port) => LbVerdict::Tx { port },
                Err(e) => F::failed(self, e, egress, p.caddr),
            };
            F::expire(self, idx, now_ns);
            return v;
        }
        let Some(h) = segment::server_hello::<F, B>(buf, meta) else {
            return self.drop(LbDrop::NotTracked);
        };
        // the server's SYN/ACK comes from the real server: back to it
        let server = F::view(meta).src;
        let res = F::hop(egress, server)
            .and_then(|nh| segment::synack_to_ack::<F, B>(buf, meta, a.window, &nh));
        let port = match res {
            Ok(p) => p,
            Err(e) => return F::failed(self, e, egress, p.daddr),
        };
        // spliced: from now on translate
        let mut n = Aux {
            seq: h.isn.wrapping_sub(a.seq),
            ts: 0,
            window: 0,
            wscale: h.wscale.unwrap_or(0),
            flags: a.flags & A_WS,
        };
        if let (true, Some(v)) = (a.flags & A_TS != 0, h.tsval) {
            n.ts = v.wrapping_sub(a.ts);
            n.flags |= A_TS;
        }
        let client_ws = if a.flags & A_WS != 0 {
            SynProxy::WSCALE
        } else {
            0
        };
        if a.flags & A_WS != 0 && n.wscale != client_ws {
            n.flags |= A_RESCALE;
        }
        if let Some(s) = self.aux_mut::<F, E>(idx) {
            *s = n;
        }
        let st = tcp_next(TcpState::from_u8(p.state), Dir::Output, SYN | ACK);
        let st = tcp_next(st, Dir::Input, ACK);
        let mut cf = (p.flags & !(F_SP_PENDING | F_NOOUTPUT)) | F_SYNPROXY;
        if st.is_active() != (cf & F_ACTIVE != 0) {
            if let Some(t) = self.dest_rec(p.dest) {
                if st.is_active() {
                    t.adjust(1, -1, 0);
                } else {
                    t.adjust(-1, 1, 0);
                }
            }
            self.trees.changed(p.dest);
            cf ^= F_ACTIVE;
        }
        F::set_record(
            self,
            idx,
            cf,
            st as u8,
            now.wrapping_add(snap.timeouts.tcp(st)),
        );
        self.sp_count(SynproxyCount::Opened);
        LbVerdict::Tx { port }
    }

    /// A segment found its pending connection expired: the real server did
    /// not answer in time (a SYN/ACK now is too late); the segment becomes
    /// the client's RST.
    pub(in crate::lb::balancer) fn synproxy_timed_out<F: SpLane<E>, B: PacketBuf, E>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &Meta<F::Addr>,
        idx: u32,
    ) -> LbVerdict {
        let (egress, now_ns) = (at.egress, at.now_ns);
        let Some((c, a)) = self.conn_aux::<F, E>(idx) else {
            return self.drop(LbDrop::Malformed);
        };
        let p = c.parts();
        F::expire(self, idx, now_ns);
        self.sp_count(SynproxyCount::ServerTimeout);
        let r = reset_for(&p, &a);
        let res = F::hop(egress, p.caddr)
            .and_then(|nh| segment::reset_in_place::<F, B>(buf, meta, &r, &nh));
        match res {
            Ok(port) => LbVerdict::Tx { port },
            Err(e) => F::failed(self, e, egress, p.caddr),
        }
    }

    /// A segment of a pending SYN proxy connection of family `F` (record
    /// `idx`, found `expired` or not): the packet paths' one entry.
    pub(in crate::lb::balancer) fn synproxy_hit<F: SpLane<E>, B: PacketBuf, E>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &Meta<F::Addr>,
        idx: u32,
        reply: bool,
        expired: bool,
    ) -> LbVerdict {
        if expired {
            // too late, from either side: the segment becomes the
            // client's RST
            return self.synproxy_timed_out::<F, B, E>(at, buf, meta, idx);
        }
        self.synproxy_pending::<F, B, E>(at, buf, meta, idx, reply)
    }

    /// Build the RSTs the sweep queued and hand each frame, with its
    /// egress port, to `f` (the worker allocates and sends them). Call it
    /// at housekeeping.
    pub fn drain_resets<E: Egress + Egress6>(&mut self, egress: &E, f: &mut dyn FnMut(u16, &[u8])) {
        let lost = self.drain_lane::<V4, E>(egress, f) + self.drain_lane::<V6, E>(egress, f);
        bump(
            &self.stats.synproxy[SynproxyCount::ResetsLost.index()],
            lost,
        );
    }

    /// [`Self::drain_resets`] of family `F`'s queue: how many were lost.
    fn drain_lane<F: SpLane<E>, E>(&mut self, egress: &E, f: &mut dyn FnMut(u16, &[u8])) -> u64 {
        let Some(sp) = self.sp.as_mut() else {
            return 0;
        };
        let mut lost = 0;
        for r in sp.lane_mut::<F>().take_resets() {
            let mut frame = [0u8; RESET_FRAME_LEN6];
            let res = F::hop(egress, r.client).and_then(|nh| build_reset::<F>(&mut frame, &r, &nh));
            match res {
                Ok((port, len)) => f(port, &frame[..len.min(reset_frame_len::<F>())]),
                Err(_) => lost += 1,
            }
        }
        lost
    }

    /// Translate a segment of spliced connection `idx` of family `F`
    /// ([`segment::translate`]).
    #[inline]
    pub(in crate::lb::balancer) fn sp_translate<F: ProxyFamily + LaneOf, B: PacketBuf>(
        &self,
        buf: &mut B,
        meta: &Meta<F::Addr>,
        idx: u32,
        reply: bool,
    ) {
        if let Some(a) = self.sp.as_ref().and_then(|s| s.lane::<F>().aux(idx)) {
            segment::translate::<F, B>(buf, meta, a, reply);
        }
    }

    /// The SYN proxy's reserved state (None without `synproxy`).
    pub fn synproxy(&self) -> Option<&SynProxy> {
        self.sp.as_ref()
    }
}
