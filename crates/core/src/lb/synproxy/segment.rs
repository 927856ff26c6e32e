//! The segments the SYN proxy writes: the SYN/ACK with a cookie, the
//! client's ACK turned into the SYN to the real server, the server's
//! SYN/ACK turned into the ACK that completes its handshake, RSTs, and the
//! per-packet sequence translation of a spliced connection.
//!
//! A segment dirigo writes gets a fresh IP header (20-byte IPv4, 40-byte
//! IPv6: [`ProxyFamily`]) and a TCP
//! header emitted from a `tcp::Repr` of values read first (so IP options
//! and any payload of the packet it reuses are dropped); every checksum
//! is computed in full. Translation only rewrites fields in place, with
//! incremental checksums. Headers are written only through `net::wire`.

use super::aux::{Aux, A_RESCALE, A_TS, A_WS};
use super::family::ProxyFamily;
use super::options::rescale;
use super::proxy::{Reset, SynProxy};
use crate::lb::xmit::{set_eth, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::egress::NextHopOf;
use crate::net::meta::{tcp_flags, Meta};
use crate::net::wire::{ethernet, ipv6, tcp, tcpopt};

/// What a segment dirigo writes carries: its addresses and its TCP
/// header (options included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seg<A> {
    /// Source address.
    pub src: A,
    /// Destination address.
    pub dst: A,
    /// The TCP header.
    pub tcp: tcp::Repr,
}

/// Bytes of a generated IPv4 RST frame (Ethernet + IPv4 + TCP, padded to
/// the Ethernet minimum).
pub const RESET_FRAME_LEN: usize = 60;
/// Bytes of a generated IPv6 RST frame (Ethernet + IPv6 + TCP).
pub const RESET_FRAME_LEN6: usize = ethernet::HEADER_LEN + ipv6::HEADER_LEN + tcp::MIN_HEADER_LEN;

/// Bytes of the RST frame of family `F`.
pub const fn reset_frame_len<F: ProxyFamily>() -> usize {
    let n = ethernet::HEADER_LEN + F::IP_HEADER_LEN + tcp::MIN_HEADER_LEN;
    if n < RESET_FRAME_LEN {
        RESET_FRAME_LEN
    } else {
        n
    }
}

/// The TCP header of `buf` at `meta`'s L4 offset (checked).
fn tcp_of<'a, F: ProxyFamily, B: PacketBuf>(
    buf: &'a B,
    meta: &Meta<F::Addr>,
) -> Result<tcp::Packet<&'a [u8]>, XmitError> {
    let v = F::view(meta);
    let d = buf.data();
    let seg = d
        .get(v.l4_off..v.end.min(d.len()))
        .ok_or(XmitError::Malformed)?;
    tcp::Packet::new_checked(seg).map_err(|_| XmitError::Malformed)
}

/// Write `s` as the whole IP packet after `l3` bytes of link header,
/// resizing the buffer, and address the frame to `nh`.
fn emit<F: ProxyFamily, B: PacketBuf>(
    buf: &mut B,
    l3: usize,
    s: &Seg<F::Addr>,
    nh: &NextHopOf<F>,
) -> Result<u16, XmitError> {
    let tcp_len = s.tcp.header_len();
    let total = l3 + F::IP_HEADER_LEN + tcp_len;
    let ok = if buf.len() >= total {
        buf.trim_to(total)
    } else {
        buf.append(total - buf.len())
    };
    if !ok {
        return Err(XmitError::NoRoom);
    }
    let d = buf.data_mut();
    set_eth(d, nh)?;
    let (ip, seg) = d
        .get_mut(l3..total)
        .ok_or(XmitError::Malformed)?
        .split_at_mut(F::IP_HEADER_LEN);
    F::emit_ip(ip, s.src, s.dst, tcp_len as u16);
    let mut t = tcp::Packet::new_unchecked(seg);
    s.tcp.emit(&mut t);
    F::fill_checksum(&mut t, s.src, s.dst);
    Ok(nh.port)
}

/// Answer a client's SYN in place with a SYN/ACK whose sequence number is
/// `cookie`, built with [`super::synack_options`] from the SYN's options
/// (`opts`), addressed to `nh` (the next hop toward the client).
pub fn syn_ack<F: ProxyFamily, B: PacketBuf>(
    buf: &mut B,
    meta: &Meta<F::Addr>,
    cookie: u32,
    opts: &tcpopt::SynOptions,
    nh: &NextHopOf<F>,
) -> Result<u16, XmitError> {
    let isn = tcp_of::<F, B>(buf, meta)?.seq_number();
    let k = F::view(meta);
    let s = Seg {
        src: k.dst,
        dst: k.src,
        tcp: tcp::Repr {
            src_port: k.dport,
            dst_port: k.sport,
            seq_number: cookie,
            ack_number: isn.wrapping_add(1),
            flags: tcp_flags::SYN | tcp_flags::ACK,
            window: SynProxy::WINDOW,
            options: (*opts).into(),
        },
    };
    emit::<F, B>(buf, k.l3_off, &s, nh)
}

/// Turn the client's ACK that proved its cookie into the SYN the real
/// server gets (the client's ISN, its options `opts`, the ACK's window),
/// still addressed client → VIP: NAT rewrites it afterwards. The frame is
/// addressed to `nh` (NAT sets it again).
pub fn ack_to_syn<F: ProxyFamily, B: PacketBuf>(
    buf: &mut B,
    meta: &Meta<F::Addr>,
    opts: &tcpopt::SynOptions,
    nh: &NextHopOf<F>,
) -> Result<(), XmitError> {
    let (seq, window) = {
        let t = tcp_of::<F, B>(buf, meta)?;
        (t.seq_number(), t.window())
    };
    let k = F::view(meta);
    let s = Seg {
        src: k.src,
        dst: k.dst,
        tcp: tcp::Repr {
            src_port: k.sport,
            dst_port: k.dport,
            seq_number: seq.wrapping_sub(1),
            ack_number: 0,
            flags: tcp_flags::SYN,
            window,
            options: (*opts).into(),
        },
    };
    emit::<F, B>(buf, k.l3_off, &s, nh).map(|_| ())
}

/// What the real server's SYN/ACK told: its ISN and TSval, its window
/// scale.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerHello {
    /// The server's ISN.
    pub isn: u32,
    /// Its TSval, if it uses timestamps.
    pub tsval: Option<u32>,
    /// Its window scale, if any.
    pub wscale: Option<u8>,
}

/// Read the server's SYN/ACK of a pending connection; None when the
/// segment is not a SYN/ACK.
pub fn server_hello<F: ProxyFamily, B: PacketBuf>(
    buf: &B,
    meta: &Meta<F::Addr>,
) -> Option<ServerHello> {
    let t = tcp::Repr::parse(&tcp_of::<F, B>(buf, meta).ok()?).ok()?;
    let f = t.flags;
    if f & (tcp_flags::SYN | tcp_flags::ACK | tcp_flags::RST) != tcp_flags::SYN | tcp_flags::ACK {
        return None;
    }
    Some(ServerHello {
        isn: t.seq_number,
        tsval: t.options.ts.map(|(val, _)| val),
        wscale: t.options.wscale,
    })
}

/// Turn the server's SYN/ACK into the ACK that completes its handshake
/// (the client's window `window`; timestamps echoed when the server sent
/// them), sent back to the server through `nh`.
pub fn synack_to_ack<F: ProxyFamily, B: PacketBuf>(
    buf: &mut B,
    meta: &Meta<F::Addr>,
    window: u16,
    nh: &NextHopOf<F>,
) -> Result<u16, XmitError> {
    let t = tcp::Repr::parse(&tcp_of::<F, B>(buf, meta)?).map_err(|_| XmitError::Malformed)?;
    let k = F::view(meta); // server -> client
    let s = Seg {
        src: k.dst,
        dst: k.src,
        tcp: tcp::Repr {
            src_port: k.dport,
            dst_port: k.sport,
            seq_number: t.ack_number,
            ack_number: t.seq_number.wrapping_add(1),
            flags: tcp_flags::ACK,
            window,
            // the server's timestamps echoed
            options: tcpopt::Options {
                ts: t.options.ts.map(|(val, ecr)| (ecr, val)),
                ..tcpopt::Options::default()
            },
        },
    };
    emit::<F, B>(buf, k.l3_off, &s, nh)
}

/// Turn any packet of a proxied connection into an RST to its client
/// (from `vip:vport`, sequence `seq`), through `nh` (toward the client).
pub fn reset_in_place<F: ProxyFamily, B: PacketBuf>(
    buf: &mut B,
    meta: &Meta<F::Addr>,
    r: &Reset<F::Addr>,
    nh: &NextHopOf<F>,
) -> Result<u16, XmitError> {
    emit::<F, B>(buf, F::view(meta).l3_off, &reset_seg(r), nh)
}

fn reset_seg<A: Copy>(r: &Reset<A>) -> Seg<A> {
    Seg {
        src: r.vip,
        dst: r.client,
        tcp: tcp::Repr {
            src_port: r.vport,
            dst_port: r.cport,
            seq_number: r.seq,
            ack_number: 0,
            flags: tcp_flags::RST,
            window: 0,
            options: tcpopt::Options::default(),
        },
    }
}

/// A buffer that writes into a fixed array (a generated RST).
struct Fixed<'a> {
    b: &'a mut [u8],
    len: usize,
}

impl PacketBuf for Fixed<'_> {
    fn data(&self) -> &[u8] {
        &self.b[..self.len]
    }
    fn data_mut(&mut self) -> &mut [u8] {
        &mut self.b[..self.len]
    }
    fn prepend(&mut self, _: usize) -> bool {
        false
    }
    fn adj(&mut self, _: usize) -> bool {
        false
    }
    fn trim_to(&mut self, len: usize) -> bool {
        if len > self.len {
            return false;
        }
        self.len = len;
        true
    }
    fn append(&mut self, n: usize) -> bool {
        if self.len + n > self.b.len() {
            return false;
        }
        self.len += n;
        true
    }
}

/// Build the RST frame for `r` into `out` (at least
/// [`reset_frame_len`] bytes), through `nh` (toward the client): the
/// egress port and the frame's length, or the reason it cannot be sent.
pub fn build_reset<F: ProxyFamily>(
    out: &mut [u8],
    r: &Reset<F::Addr>,
    nh: &NextHopOf<F>,
) -> Result<(u16, usize), XmitError> {
    let len = reset_frame_len::<F>();
    let out = out.get_mut(..len).ok_or(XmitError::NoRoom)?;
    out.fill(0);
    let l3 = ethernet::HEADER_LEN;
    let mut f = Fixed { b: out, len: l3 };
    ethernet::Frame::new_unchecked(f.data_mut()).set_ethertype(F::ETHERTYPE);
    let port = emit::<F, _>(&mut f, l3, &reset_seg(r), nh)?;
    Ok((port, len))
}

/// Translate a spliced connection's segment in place: toward the server
/// (`reply` false) the acknowledgment, SACK blocks and TSecr move by the
/// deltas; toward the client the sequence number and TSval move back, and
/// the window is rescaled when the server's scale differs. Checksums are
/// updated incrementally; a segment whose header is not all there is left
/// alone (NAT refuses it next).
#[inline]
pub fn translate<F: ProxyFamily, B: PacketBuf>(
    buf: &mut B,
    meta: &Meta<F::Addr>,
    a: &Aux,
    reply: bool,
) {
    let v = F::view(meta);
    let l4 = v.l4_off;
    let end = v.end.min(buf.len());
    let Some(seg) = buf.data_mut().get_mut(l4..end) else {
        return;
    };
    let Ok(mut t) = tcp::Packet::new_checked(seg) else {
        return;
    };
    let opts = if t.header_len() > tcp::MIN_HEADER_LEN {
        tcpopt::parse(t.options())
    } else {
        tcpopt::TcpOptions::default()
    };
    if reply {
        let s = t.seq_number().wrapping_sub(a.seq);
        t.set_seq_number_update_checksum(s);
        if let Some(ts) = opts.ts.filter(|_| a.flags & A_TS != 0) {
            t.set_u32_update_checksum(ts.val_at(), ts.val.wrapping_sub(a.ts));
        }
        if a.flags & A_RESCALE != 0 && t.flags() & tcp_flags::SYN == 0 {
            let client_ws = if a.flags & A_WS != 0 {
                SynProxy::WSCALE
            } else {
                0
            };
            let w = rescale(t.window(), a.wscale, client_ws);
            t.set_window_update_checksum(w);
        }
    } else {
        if t.flags() & tcp_flags::ACK != 0 {
            let n = t.ack_number().wrapping_add(a.seq);
            t.set_ack_number_update_checksum(n);
        }
        if let Some(ts) = opts.ts.filter(|_| a.flags & A_TS != 0) {
            t.set_u32_update_checksum(ts.ecr_at(), ts.ecr.wrapping_add(a.ts));
        }
        for at in opts.sack_edges() {
            let edge = t.u32_at(at);
            t.set_u32_update_checksum(at, edge.wrapping_add(a.seq));
        }
    }
}
