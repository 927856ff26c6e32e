//! The FTP helper on IPv4 NAT services (issue 52), as Linux's ip_vs_ftp:
//! on for every TCP service on port 21 whose real servers are NAT ones.
//!
//! * A control connection (a SYN to such a service, to a NAT real
//!   server) gets a slot in the worker's side table ([`Controls`]: its
//!   shift, keyed by the client → VIP tuple; `Conn` stays 32 bytes and
//!   has no flag bit left, so the record says nothing). A full table
//!   leaves the connection without the helper, counted
//!   ([`FtpCount::ControlsFull`]). While the helper is on, NAT segments
//!   of port 21 leave the established shortcut and come here after
//!   xmit's rewrite ([`Balancer::ftp_segment`]); one without a slot
//!   passes unchanged.
//! * The server's `227 (h1,h2,h3,h4,p1,p2)` names the real server: it is
//!   rewritten to name the VIP, with the same port; the change in length
//!   is recorded in the server → client direction's shift
//!   ([`crate::lb::shift::Shift`]), so every later server segment's
//!   sequence number moves by it and every client segment's
//!   acknowledgment (and SACK edges) moves back. A retransmitted `227`
//!   is rewritten again identically (the shift's repeat), never shifted
//!   twice. `229 (|||p|)` names a port only: nothing is rewritten. Both
//!   make the client's connection to VIP:p expected: it goes to the
//!   control connection's real server, port p (passive mode).
//! * The client's `PORT`/`EPRT` name the client's own address, which a
//!   NAT real server sees as the control connection's source: nothing is
//!   rewritten; the real server's connection from its port 20 (the
//!   control port minus one, as IPVS) to that address and port is
//!   expected, to leave as VIP:20 (active mode). A line naming another
//!   address is left alone and counted ([`FtpCount::Unparsed`]).
//! * The expectations ([`Expects`]) are consulted only where the service
//!   lookup misses, and only by a SYN: the connection they open is an
//!   ordinary NAT record of the control connection's service and real
//!   server. The data connection has the control connection's client
//!   address, so it is this worker's too (ownership by client address).
//!
//! All of it is allocated when a snapshot first has such a service, never
//! otherwise. A NAT packet of another port pays one test (the helper's
//! state is allocated) in the established shortcut and on the general
//! path, and a port compare while the helper is on; DR and TUN nothing.

use super::burst::BurstCtx;
use super::machine::Balancer;
use crate::lb::conn::Conn;
use crate::lb::shift::ftp::{self, Endpoint, Found, Kind, Scan, Side};
use crate::lb::shift::ftp_state::{Added, Controls, Expect, Expects, FtpCount, FtpState, FTP_PORT};
use crate::lb::shift::{segment, Change, Dir};
use crate::lb::snapshot::{Dest, Service, Snapshot};
use crate::lb::spec::{Method, Proto};
use crate::lb::state::TcpState;
use crate::lb::stats::bump;
use crate::lb::verdict::{LbDrop, LbVerdict};
use crate::lb::xmit::grow::{grow_segment, SegAt};
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{tcp_flags, FlowKey, PacketMeta, PROTO_TCP};
use crate::net::wire::tcp;
use std::net::IpAddr;

/// Whether `s` is a service the helper is on: TCP, IPv4, port 21 (not an
/// fwmark service), not FullNAT.
pub fn is_ftp_service(s: &Service) -> bool {
    let k = &s.spec.key;
    k.proto == Proto::Tcp && k.port == FTP_PORT && k.fwmark == 0 && k.vip.is_ipv4() && !s.fullnat
}

/// What announcement `f` of control connection `c` makes expected, and
/// what the line must say instead (None: nothing rewritten). None when
/// nothing is to be expected.
fn plan(c: &Conn, f: &Found) -> Option<(Expect, Option<Endpoint>)> {
    let port = f.at.port;
    if port == 0 {
        return None;
    }
    let passive = |key_sport: u16, dport: u16, vport: u16| Expect {
        key: FlowKey {
            src: c.caddr,
            dst: c.vaddr,
            sport: key_sport,
            dport: vport,
            proto: PROTO_TCP,
        },
        daddr: c.daddr,
        dport,
        svc: c.svc,
        dest: c.dest,
    };
    match f.kind {
        Kind::Pasv => {
            let to = Endpoint {
                addr: Some(IpAddr::V4(c.vaddr.into())),
                port,
            };
            Some((passive(0, port, port), Some(to)))
        }
        Kind::Epsv => Some((passive(0, port, port), None)),
        Kind::Port | Kind::Eprt => {
            if f.at.addr != Some(IpAddr::V4(c.caddr.into())) {
                return None;
            }
            let (vport, dport) = (c.vport.checked_sub(1)?, c.dport.checked_sub(1)?);
            Some((passive(port, dport, vport), None))
        }
    }
}

impl Balancer {
    /// Keep the helper's state once a snapshot has a service it is on
    /// (`see_epoch`, at a new snapshot: never per packet).
    #[inline]
    pub(super) fn ftp_for(&mut self, snap: &Snapshot) {
        if self.ftp.is_none() && snap.services().iter().any(is_ftp_service) {
            self.ftp_alloc();
        }
    }

    /// Allocate the helper's state.
    #[cold]
    #[inline(never)]
    fn ftp_alloc(&mut self) {
        // the slots' hash seed, from the table's secret one
        let seed = self.table.hash(&FlowKey::default());
        self.ftp = Some(Box::new(FtpState {
            controls: Controls::new(seed),
            expects: Expects::default(),
        }));
    }

    /// A new connection of `svc` for `key` to real server `d`, starting
    /// in `start`: a control connection opened by a SYN gets a slot (a
    /// shift of nothing), counted; a full table is counted and the
    /// connection goes without the helper.
    #[inline]
    pub(super) fn ftp_claim(&mut self, svc: &Service, key: &FlowKey, d: &Dest, start: TcpState) {
        if d.method != Method::Nat
            || key.proto != PROTO_TCP
            || start != TcpState::None
            || !is_ftp_service(svc)
        {
            return;
        }
        let Some(f) = self.ftp.as_deref_mut() else {
            return;
        };
        // a slot is taken back once its connection has left the table
        let table = &self.table;
        let live = |k: &FlowKey| table.lookup(k).is_some();
        let c = if f.controls.claim(key, live) {
            FtpCount::Controls
        } else {
            FtpCount::ControlsFull
        };
        bump(&self.stats.ftp[c.index()], 1);
    }

    /// A segment of NAT connection `c` to port 21 (while the helper is
    /// on) that xmit has rewritten (`reply`: from the real server): the line it
    /// starts with looked at, rewritten and its data connection expected;
    /// its numbers shifted.
    #[inline(never)]
    pub(super) fn ftp_segment<B: PacketBuf>(
        &mut self,
        now: u32,
        buf: &mut B,
        meta: &PacketMeta,
        c: &Conn,
        reply: bool,
    ) -> Result<(), LbDrop> {
        if meta.key.proto != PROTO_TCP || meta.icmp.is_some() {
            return Ok(());
        }
        let stats = &self.stats;
        let Some(f) = self.ftp.as_deref_mut() else {
            return Ok(());
        };
        let Some(shift) = f.controls.get_mut(&c.in_key()) else {
            return Ok(()); // not a control connection the helper follows
        };
        let l3 = meta.l3_off as usize;
        let end = l3 + meta.ip_len as usize;
        let at = SegAt::checked(l3, meta.l4_off as usize, end, false, buf.len())
            .ok_or(LbDrop::Malformed)?;
        let (dir, side) = if reply {
            (Dir::Reply, Side::Server)
        } else {
            (Dir::Orig, Side::Client)
        };
        // what the segment's line asks for, read before anything is written
        let (hl, ask) = {
            let seg = buf.data().get(at.l4..at.end).ok_or(LbDrop::Malformed)?;
            let t = tcp::Packet::new_checked(seg).map_err(|_| LbDrop::Malformed)?;
            let hl = t.header_len();
            let payload = seg.get(hl..).unwrap_or(&[]);
            let ask = if payload.is_empty() || t.flags() & (tcp_flags::SYN | tcp_flags::RST) != 0 {
                None
            } else {
                match ftp::scan(payload, side) {
                    Scan::Found(fd) => match plan(c, &fd) {
                        Some((e, to)) => {
                            let text = match to {
                                Some(to) => {
                                    Some(ftp::replacement(&fd, to).map_err(|_| LbDrop::Malformed)?)
                                }
                                None => None,
                            };
                            let same = text.is_some_and(|t| {
                                payload.get(fd.start..fd.end) == Some(t.as_bytes())
                            });
                            Some((fd, e, text, same, t.seq_number()))
                        }
                        None => {
                            bump(&stats.ftp[FtpCount::Unparsed.index()], 1);
                            None
                        }
                    },
                    Scan::Bad(_) => {
                        bump(&stats.ftp[FtpCount::Unparsed.index()], 1);
                        None
                    }
                    Scan::None | Scan::Partial => None,
                }
            };
            (hl, ask)
        };
        let mut seg_end = at.end;
        if let Some((fd, e, text, same, seq)) = ask {
            if let Some(text) = text {
                let change = Change {
                    pos: seq.wrapping_add(fd.start as u32),
                    old_len: (fd.end - fd.start) as u16,
                    new_len: text.as_bytes().len() as u16,
                };
                shift.record(dir, change).map_err(|_| LbDrop::FtpShift)?;
                if !same {
                    let extra = (change.new_len as usize).saturating_sub(change.old_len as usize);
                    let n = grow_segment(buf, at, extra, |s, len| {
                        let p = s.get_mut(hl..)?;
                        let r = ftp::rewrite_in_place(p, len.checked_sub(hl)?, &fd, &text).ok()?;
                        Some(hl + r.len)
                    })
                    .map_err(|_| LbDrop::FtpNoRoom)?;
                    seg_end = at.l4 + n;
                    bump(&stats.ftp[FtpCount::Rewritten.index()], 1);
                }
            }
            match f.expects.add(e, now) {
                Added::New => bump(&stats.ftp[FtpCount::Expected.index()], 1),
                Added::Again => {}
                Added::Full => bump(&stats.ftp[FtpCount::ExpectFull.index()], 1),
            }
        }
        if !shift.is_identity() {
            let seg = buf
                .data_mut()
                .get_mut(at.l4..seg_end)
                .ok_or(LbDrop::Malformed)?;
            segment::apply(&mut tcp::Packet::new_unchecked(seg), shift, dir);
        }
        Ok(())
    }

    /// Whether a segment of tuple `key` that no service takes opens an
    /// expected data connection (a SYN only).
    #[inline]
    pub(super) fn ftp_expects(&self, key: &FlowKey, meta: &PacketMeta, now: u32) -> bool {
        meta.tcp_flags & (tcp_flags::SYN | tcp_flags::ACK | tcp_flags::RST | tcp_flags::FIN)
            == tcp_flags::SYN
            && self.ftp.as_deref().is_some_and(|f| {
                !f.expects.is_empty()
                    && (f.expects.expects(key, false, now) || f.expects.expects(key, true, now))
            })
    }

    /// The expected data connection a SYN of tuple `key` opens
    /// ([`Self::ftp_expects`] said so): made, and the SYN forwarded.
    #[cold]
    #[inline(never)]
    pub(super) fn ftp_data<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        buf: &mut B,
        meta: &PacketMeta,
        key: &FlowKey,
    ) -> LbVerdict {
        let now = at.now;
        let Some(f) = self.ftp.as_deref_mut() else {
            return LbVerdict::NotForUs;
        };
        let (e, reply) = match f.expects.take(key, false, now) {
            Some(e) => (e, false),
            None => match f.expects.take(key, true, now) {
                Some(e) => (e, true),
                None => return LbVerdict::NotForUs,
            },
        };
        let Some((svc, d)) = at.snap.dest_by_slot(e.dest) else {
            return self.drop(LbDrop::NoDest);
        };
        if d.method != Method::Nat || d.addr != e.daddr {
            return self.drop(LbDrop::NoDest); // the server changed since
        }
        let conn = Conn {
            caddr: e.key.src,
            vaddr: e.key.dst,
            daddr: e.daddr,
            dest: e.dest,
            expires: now.wrapping_add(at.snap.timeouts.tcp(TcpState::None)),
            cport: if reply { e.key.sport } else { key.sport },
            vport: e.key.dport,
            dport: e.dport,
            svc: e.svc,
            proto: PROTO_TCP,
            state: TcpState::None as u8,
            flags: 0,
            method: Method::Nat,
            ext: (),
        };
        let hash = self.table.hash(&conn.in_key());
        let ins = self
            .table
            .insert_probed(conn, self.table.unprobed(hash), now);
        self.follow_moves(&ins);
        if let Some(ev) = ins.evicted {
            self.release(&ev, at.now_ns);
            bump(&self.stats.evicted, 1);
        }
        let Ok(idx) = ins.result else {
            return self.drop(LbDrop::TableFull);
        };
        self.count_new(svc, d);
        bump(&self.stats.ftp[FtpCount::DataOpened.index()], 1);
        self.forward(at, buf, meta, idx, reply)
    }

    /// The helper's state, for tests: control connections with a slot,
    /// data connections expected.
    #[cfg(test)]
    pub(crate) fn ftp_len(&self) -> Option<(usize, usize)> {
        self.ftp
            .as_deref()
            .map(|f| (f.controls.len(), f.expects.len()))
    }

    /// A control connection's shift, for tests.
    #[cfg(test)]
    pub(crate) fn ftp_shift(
        &mut self,
        key: &FlowKey,
    ) -> Option<crate::lb::shift::ftp_state::FtpShift> {
        self.ftp
            .as_deref_mut()
            .and_then(|f| f.controls.get_mut(key).copied())
    }
}
