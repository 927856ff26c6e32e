//! The balancer's side of the SYN proxy: cookies for SYNs, the proving
//! ACK turned into the SYN to the real server, the pending connection
//! until its SYN/ACK, the RSTs when it never comes.

use super::resets::reset_for;
use crate::lb::balancer::burst::BurstCtx;
use crate::lb::balancer::machine::Balancer;
use crate::lb::conn::{Conn, F_ACTIVE, F_SP_PENDING, F_SYNPROXY};
use crate::lb::snapshot::Service;
use crate::lb::state::{tcp_next, Dir, TcpState};
use crate::lb::stats::bump;
use crate::lb::synproxy::{
    build_reset, cookie, segment, synack_options, Aux, CookieError, SynProxy, SynproxyCount,
    A_RESCALE, A_TS, A_WS, PENDING_MS, RESET_FRAME_LEN,
};
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::lb::xmit::{self, nat::Side};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{tcp_flags, FlowKey, PacketMeta};
use crate::net::wire::{ipv4, tcp, tcpopt};

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

fn fields<B: PacketBuf>(buf: &B, meta: &PacketMeta) -> Option<Fields> {
    let d = buf.data();
    let end = (meta.l3_off as usize + meta.ip_len as usize).min(d.len());
    let t = tcp::Packet::new_checked(d.get(meta.l4_off as usize..end)?).ok()?;
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

    /// Record `idx` and its SYN proxy state.
    fn conn_aux(&self, idx: u32) -> Option<(Conn, Aux)> {
        let c = *self.table.get(idx)?;
        let a = *self.sp.as_ref()?.aux(idx)?;
        Some((c, a))
    }

    /// A segment to a `--synproxy` service that matched no connection: a
    /// SYN is answered with a cookie; an ACK proving one opens the
    /// connection; anything else is not tracked.
    pub(in crate::lb::balancer) fn synproxy_new<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        svc: &Service,
        buf: &mut B,
        meta: &PacketMeta,
        key: &FlowKey,
    ) -> LbVerdict {
        let (egress, now) = (at.egress, at.now);
        let Some(sp) = self.sp.as_ref() else {
            // the snapshot refuses --synproxy without the reserved state
            return self.drop(LbDrop::NotTracked);
        };
        let flags = meta.tcp_flags & (SYN | ACK | RST | FIN);
        let Some(f) = fields(buf, meta) else {
            return self.drop(LbDrop::Malformed);
        };
        if flags == SYN {
            let so = synack_options(&f.opts, now);
            let c = sp
                .keys()
                .make(key, f.seq, f.opts.mss.unwrap_or(536), cookie::count_of(now));
            return match segment::syn_ack(buf, meta, c, &so, egress) {
                Ok(port) => {
                    self.sp_count(SynproxyCount::CookiesSent);
                    LbVerdict::Tx { port }
                }
                Err(e) => self.xmit_failed(e, egress, key.src),
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
        let probe = self.table.unprobed(self.table.hash(key));
        let idx = match self.new_conn(at, svc, key, probe, TcpState::None) {
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
        if let Some(a) = self.sp.as_mut().and_then(|s| s.aux_mut(idx)) {
            *a = Aux {
                seq: cookie,
                ts: f.opts.ts.map_or(0, |t| t.ecr),
                window: f.window,
                wscale: 0,
                flags: aflags,
            };
        }
        let state = tcp_next(TcpState::None, Dir::Input, SYN);
        if let Some(c) = self.table.get_mut(idx) {
            c.flags |= F_SYNPROXY | F_SP_PENDING;
            c.state = state as u8;
            c.expires = now.wrapping_add(PENDING_MS);
        }
        let Some(c) = self.table.get(idx).copied() else {
            return self.drop(LbDrop::Malformed);
        };
        self.proxy_syn(at, &c, buf, meta, &f, mss)
    }

    /// Turn the client's ACK into the SYN to the real server of `c` (again,
    /// for a held or repeated ACK: the SYN is sent once per such ACK), with
    /// the MSS its cookie carried.
    fn proxy_syn<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        c: &Conn,
        buf: &mut B,
        meta: &PacketMeta,
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
        let nh = match xmit::next_hop(egress, c.daddr) {
            Ok(n) => n,
            Err(e) => return self.xmit_failed(e, egress, c.daddr),
        };
        if let Err(e) = segment::ack_to_syn(buf, meta, &so, &nh) {
            return self.xmit_failed(e, egress, c.daddr);
        }
        // the segment has a fresh 20-byte IPv4 header now
        let mut m = *meta;
        m.l4_off = m.l3_off + ipv4::MIN_HEADER_LEN as u16;
        m.ip_len = (buf.len() - m.l3_off as usize) as u16;
        m.tcp_flags = SYN;
        let res = xmit::nat::nat(buf, &m, Side::Dst, c.daddr, c.dport, c.daddr, egress);
        self.finish(at, res, c, false, &m, buf)
    }

    /// A segment of a connection waiting for its real server's SYN/ACK.
    pub(in crate::lb::balancer) fn synproxy_pending<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        idx: u32,
        reply: bool,
    ) -> LbVerdict {
        let (snap, egress, now, now_ns) = (at.snap, at.egress, at.now, at.now_ns);
        let Some((c, a)) = self.conn_aux(idx) else {
            return self.drop(LbDrop::Malformed);
        };
        let flags = meta.tcp_flags;
        if !reply {
            if flags & RST != 0 {
                // the client gives up: so does the connection
                let res = xmit::nat::nat(buf, meta, Side::Dst, c.daddr, c.dport, c.daddr, egress);
                let v = self.finish(at, res, &c, false, meta, buf);
                self.expire_idx::<u32>(idx, now_ns);
                return v;
            }
            let Some(f) = fields(buf, meta) else {
                return self.drop(LbDrop::Malformed);
            };
            if f.payload || flags & (FIN | SYN) != 0 {
                // held until the server answers (bounded by the caller)
                return LbVerdict::Wait { conn: idx };
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
                .check(&meta.key, f.seq.wrapping_sub(1), a.seq, count)
            {
                Ok(m) => m,
                Err(_) => return self.drop(LbDrop::SynproxyCookieExpired),
            };
            return self.proxy_syn(at, &c, buf, meta, &f, mss);
        }
        if flags & RST != 0 {
            // the server refused: tell the client
            self.sp_count(SynproxyCount::ServerReset);
            let r = reset_for(&c, &a);
            let v = match segment::reset_in_place(buf, meta, &r, egress) {
                Ok(port) => LbVerdict::Tx { port },
                Err(e) => self.xmit_failed(e, egress, c.caddr),
            };
            self.expire_idx::<u32>(idx, now_ns);
            return v;
        }
        let Some(h) = segment::server_hello(buf, meta) else {
            return self.drop(LbDrop::NotTracked);
        };
        let port = match segment::synack_to_ack(buf, meta, a.window, egress) {
            Ok(p) => p,
            Err(e) => return self.xmit_failed(e, egress, c.daddr),
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
        if let Some(s) = self.sp.as_mut().and_then(|s| s.aux_mut(idx)) {
            *s = n;
        }
        let st = tcp_next(TcpState::from_u8(c.state), Dir::Output, SYN | ACK);
        let st = tcp_next(st, Dir::Input, ACK);
        let mut cf = (c.flags & !(F_SP_PENDING | crate::lb::conn::F_NOOUTPUT)) | F_SYNPROXY;
        if st.is_active() != (cf & F_ACTIVE != 0) {
            if let Some(t) = self.dest_rec(c.dest) {
                if st.is_active() {
                    t.adjust(1, -1, 0);
                } else {
                    t.adjust(-1, 1, 0);
                }
            }
            self.trees.changed(c.dest);
            cf ^= F_ACTIVE;
        }
        if let Some(m) = self.table.get_mut(idx) {
            m.flags = cf;
            m.state = st as u8;
            m.expires = now.wrapping_add(snap.timeouts.tcp(st));
        }
        self.sp_count(SynproxyCount::Opened);
        LbVerdict::Tx { port }
    }

    /// A segment found its pending connection expired: the real server did
    /// not answer in time (a SYN/ACK now is too late); the segment becomes
    /// the client's RST.
    pub(in crate::lb::balancer) fn synproxy_timed_out<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        idx: u32,
    ) -> LbVerdict {
        let (egress, now_ns) = (at.egress, at.now_ns);
        let Some((c, a)) = self.conn_aux(idx) else {
            return self.drop(LbDrop::Malformed);
        };
        self.expire_idx::<u32>(idx, now_ns);
        self.sp_count(SynproxyCount::ServerTimeout);
        match segment::reset_in_place(buf, meta, &reset_for(&c, &a), egress) {
            Ok(port) => LbVerdict::Tx { port },
            Err(e) => self.xmit_failed(e, egress, c.caddr),
        }
    }

    /// Build the RSTs the sweep queued and hand each frame, with its
    /// egress port, to `f` (the worker allocates and sends them). Call it
    /// at housekeeping.
    pub fn drain_resets(
        &mut self,
        egress: &(impl Egress + Egress6),
        f: &mut dyn FnMut(u16, &[u8]),
    ) {
        let Some(sp) = self.sp.as_mut() else {
            return;
        };
        let mut lost = 0;
        for r in sp.take_resets() {
            let mut frame = [0u8; RESET_FRAME_LEN];
            match build_reset(&mut frame, &r, egress) {
                Ok((port, len)) => f(port, &frame[..len]),
                Err(_) => lost += 1,
            }
        }
        bump(
            &self.stats.synproxy[SynproxyCount::ResetsLost.index()],
            lost,
        );
    }

    /// The SYN proxy's reserved state (None without `synproxy`).
    pub fn synproxy(&self) -> Option<&SynProxy> {
        self.sp.as_ref()
    }
}
