//! FullNAT's `client_address`: how a real server that sees only the
//! service's local address as the source learns the client's (issue 51).
//!
//! * `proxy-v1`, `proxy-v2`: a PROXY protocol header goes before the
//!   client's first byte, exactly once ([`HeaderInsert`]): on the
//!   handshake's last ACK (so that a server that speaks first gets it
//!   before it is asked anything), again on any client segment at that
//!   place until the server has acknowledged it. Every later client
//!   segment's sequence number moves forward by the header's length,
//!   every server segment's acknowledgment number and SACK edges back.
//!   The server's SYN/ACK announces an MSS lowered by the header's length
//!   (a full segment carrying it stays within the path's MTU).
//! * `toa`: DPVS's TOA option (kind 254: the client's port and address)
//!   is put first in the options of the client's segments at the start
//!   of its stream (the handshake's last ACK, the first data segment and
//!   its retransmissions: the segment that makes the server's socket is
//!   among them, and the `toa` module reads the option from it); the
//!   SYN/ACK's MSS is lowered by the option's length. Nothing is shifted.
//!
//! The state is one [`HeaderInsert`] (28 bytes) per record of the IPv6
//! table (where every FullNAT connection lives), allocated when the first
//! snapshot with such a service is seen, never otherwise; a record says
//! it uses it by [`Nat64Leg::cip`](crate::lb::conn::Nat64Leg::cip), so a
//! plain FullNAT packet never reads it. It is set by the client's SYN
//! (its ISN places the header); a connection not opened by a SYN (sloppy
//! TCP, a connection taken over) carries nothing. Whatever cannot be done
//! (no tailroom for the bytes added, options that cannot take the TOA
//! option even pruned) is a drop counted as
//! [`LbDrop::ClientAddrNoRoom`].

use super::machine::Balancer;
use crate::lb::conn::Conn6;
use crate::lb::shift::table::Inserts;
use crate::lb::shift::{segment, HeaderInsert};
use crate::lb::snapshot::{Service, Snapshot};
use crate::lb::spec::ClientAddress;
use crate::lb::verdict::LbDrop;
use crate::lb::xmit::grow::{grow_segment, SegAt};
use crate::net::buf::PacketBuf;
use crate::net::meta::{tcp_flags, FlowKey, Meta, PacketMeta, PacketMeta6, PROTO_TCP};
use crate::net::wire::proxy::{Addrs, V1_MAX_LEN};
use crate::net::wire::toa::{self, Toa};
use crate::net::wire::{ipv4, tcp};

/// The longest header inserted (a version 1 line; version 2 for IPv6 is
/// 52 bytes).
const HEADER_MAX: usize = V1_MAX_LEN;

/// Whether FullNAT connection `c`'s client is an IPv4 one (held
/// IPv4-mapped, `::ffff:a.b.c.d`); an IPv6 client of an IPv4 server
/// (NAT64's translation) is not.
#[inline]
fn v4_client(c: &Conn6) -> bool {
    c.caddr >> 32 == 0xffff
}

/// The client and the service of FullNAT connection `c`: IPv4 ones are
/// held IPv4-mapped; an IPv6 client's addresses are IPv6 whatever the
/// real server's family.
fn addrs(c: &Conn6) -> Addrs {
    if v4_client(c) {
        Addrs::V4 {
            src: c.caddr as u32,
            dst: c.vaddr as u32,
            sport: c.cport,
            dport: c.vport,
        }
    } else {
        Addrs::V6 {
            src: c.caddr,
            dst: c.vaddr,
            sport: c.cport,
            dport: c.vport,
        }
    }
}

/// The TOA option naming `c`'s client.
fn toa_of(c: &Conn6) -> Toa {
    if v4_client(c) {
        Toa::V4 {
            port: c.cport,
            addr: c.caddr as u32,
        }
    } else {
        Toa::V6 {
            port: c.cport,
            addr: c.caddr,
        }
    }
}

/// The PROXY header of `c` for `how` into `out`: its length (0 for
/// anything but the PROXY protocol).
fn header(how: ClientAddress, c: &Conn6, out: &mut [u8; HEADER_MAX]) -> usize {
    let a = addrs(c);
    let r = match how {
        ClientAddress::ProxyV1 => a.emit_v1(out),
        ClientAddress::ProxyV2 => a.emit_v2(out),
        ClientAddress::None | ClientAddress::Toa => Ok(0),
    };
    r.unwrap_or(0)
}

/// What the state's insertion adds to a client segment, for the MSS
/// announced to the client.
fn growth(how: ClientAddress, c: &Conn6, h: &HeaderInsert) -> u16 {
    match how {
        ClientAddress::Toa => toa_of(c).len() as u16,
        _ => h.len(),
    }
}

/// Whether a TOA connection's non-SYN segment may carry the option: a
/// client segment with ACK, without RST, at the stream's start (its
/// sequence number read from the frame: a segment too short for it is
/// left to the full path's checks).
#[inline]
fn toa_candidate<A>(
    ins: Option<&Inserts>,
    frame: &[u8],
    meta: &Meta<A>,
    idx: u32,
    reply: bool,
) -> bool {
    if reply || meta.tcp_flags & (tcp_flags::ACK | tcp_flags::RST) != tcp_flags::ACK {
        return false;
    }
    let Some(seg) = frame.get(meta.l4_off as usize..) else {
        return true;
    };
    if seg.len() < tcp::MIN_HEADER_LEN {
        return true;
    }
    let seq = tcp::Packet::new_unchecked(seg).seq_number();
    ins.and_then(|s| s.get(idx)).is_some_and(|h| h.at() == seq)
}

impl Balancer {
    /// Keep the per-record state once a snapshot has a service that needs
    /// it (`see_epoch`, at a new snapshot: never per packet).
    #[inline]
    pub(super) fn client_addrs_for(&mut self, snap: &Snapshot) {
        if snap.client_address && self.cip.is_none() {
            self.client_addrs_alloc();
        }
    }

    /// Allocate the per-record state (one [`HeaderInsert`] per record of
    /// the IPv6 table).
    #[cold]
    #[inline(never)]
    pub(super) fn client_addrs_alloc(&mut self) {
        self.cip = Some(Inserts::new(self.table6.capacity()));
    }

    /// The [`Nat64Leg::cip`](crate::lb::conn::Nat64Leg::cip) of a new
    /// FullNAT connection of `svc`: its `client_address` when the state
    /// is kept and a SYN opens it (`syn`), else 0.
    #[inline]
    pub(super) fn client_addr_byte(&self, svc: &Service, proto: u8, syn: bool) -> u8 {
        let how = svc.spec.client_address;
        if how.is_none() || proto != PROTO_TCP || !syn || self.cip.is_none() {
            return 0;
        }
        how as u8
    }

    /// A packet of FullNAT connection `idx` (record `c`, `c.ext.cip` not
    /// 0) that xmit has rewritten: the client's address put on a client
    /// segment, the numbers shifted, the MSS of the server's SYN/ACK
    /// clamped.
    #[inline(never)]
    pub(super) fn client_addr<A, B: PacketBuf>(
        &mut self,
        buf: &mut B,
        meta: &Meta<A>,
        idx: u32,
        c: &Conn6,
        reply: bool,
        v6: bool,
    ) -> Result<(), LbDrop> {
        let how = ClientAddress::from_u8(c.ext.cip);
        if how == ClientAddress::Toa
            && meta.tcp_flags & tcp_flags::SYN == 0
            && !toa_candidate(self.cip.as_ref(), buf.data(), meta, idx, reply)
        {
            // TOA's established segments: a look at the flags and the
            // sequence number, nothing written
            return Ok(());
        }
        if how != ClientAddress::Toa && !reply && meta.tcp_flags & tcp_flags::SYN == 0 {
            // a PROXY client segment: its sequence number moved; only the
            // segments at the header's place go on to grow
            let Some(h) = self.cip.as_mut().and_then(|s| s.get_mut(idx)) else {
                return Ok(()); // never: cip is set only while the state is kept
            };
            let seg = buf
                .data_mut()
                .get_mut(meta.l4_off as usize..)
                .filter(|s| s.len() >= tcp::MIN_HEADER_LEN)
                .ok_or(LbDrop::Malformed)?;
            if !segment::client_segment(&mut tcp::Packet::new_unchecked(seg), h).prepend {
                return Ok(());
            }
            return self.prepend_header(buf, meta, c, how, v6);
        }
        let l3 = meta.l3_off as usize;
        let at = SegAt::checked(
            l3,
            meta.l4_off as usize,
            l3 + meta.ip_len as usize,
            v6,
            buf.len(),
        )
        .ok_or(LbDrop::Malformed)?;
        let Some(h) = self.cip.as_mut().and_then(|s| s.get_mut(idx)) else {
            return Ok(()); // never: cip is set only while the state is kept
        };
        let d = buf.data_mut();
        let seg = d.get_mut(at.l4..at.end).ok_or(LbDrop::Malformed)?;
        let mut t = tcp::Packet::new_checked(seg).map_err(|_| LbDrop::Malformed)?;
        let flags = t.flags();
        let syn = flags & tcp_flags::SYN != 0;
        if reply {
            if how != ClientAddress::Toa {
                segment::server_segment(&mut t, h);
            }
            if syn {
                toa::clamp_mss_in(&mut t, growth(how, c, h));
            }
            return Ok(());
        }
        if syn {
            // the client's SYN (again): the header's place is its ISN + 1
            if flags & tcp_flags::ACK == 0 {
                let mut b = [0u8; HEADER_MAX];
                *h = HeaderInsert::new(t.seq_number(), header(how, c, &mut b) as u16);
            }
            return Ok(());
        }
        if how == ClientAddress::Toa {
            let first = t.seq_number() == h.at()
                && flags & tcp_flags::RST == 0
                && flags & tcp_flags::ACK != 0;
            if !first {
                return Ok(());
            }
            let o = toa_of(c);
            return grow_segment(buf, at, o.len(), |seg, len| toa::insert(seg, len, &o).ok())
                .map(|_| ())
                .map_err(|_| LbDrop::ClientAddrNoRoom);
        }
        Ok(()) // not reached: PROXY's client segments are above
    }

    /// [`Self::client_addr`] for a request of an IPv6 client's connection
    /// to an IPv4 FullNAT server once NAT64's translation has written it
    /// (`meta6` said where the IPv6 packet's parts were; the IPv4 header
    /// of 20 bytes now stands where the IPv6 one and its extension headers
    /// were).
    pub(super) fn client_addr_to4<B: PacketBuf>(
        &mut self,
        buf: &mut B,
        meta6: &PacketMeta6,
        idx: u32,
        c: &Conn6,
    ) -> Result<(), LbDrop> {
        let hdr = meta6
            .l4_off
            .checked_sub(meta6.l3_off)
            .ok_or(LbDrop::Malformed)?;
        let seg = meta6.ip_len.checked_sub(hdr).ok_or(LbDrop::Malformed)?;
        let ip4 = ipv4::MIN_HEADER_LEN as u16;
        let meta = PacketMeta {
            port: meta6.port,
            vlan: meta6.vlan,
            l3_off: meta6.l3_off,
            l4_off: meta6.l3_off + ip4,
            ip_len: seg.checked_add(ip4).ok_or(LbDrop::Malformed)?,
            key: FlowKey {
                src: 0,
                dst: 0,
                sport: meta6.key.sport,
                dport: meta6.key.dport,
                proto: meta6.key.proto,
            },
            tcp_flags: meta6.tcp_flags,
            ttl: meta6.ttl,
            df: meta6.df,
            icmp: None,
        };
        self.client_addr(buf, &meta, idx, c, false, false)
    }

    /// The PROXY header of connection `c` put before the payload of the
    /// client segment `buf` (its numbers already written).
    #[cold]
    fn prepend_header<A, B: PacketBuf>(
        &mut self,
        buf: &mut B,
        meta: &Meta<A>,
        c: &Conn6,
        how: ClientAddress,
        v6: bool,
    ) -> Result<(), LbDrop> {
        let l3 = meta.l3_off as usize;
        let at = SegAt::checked(
            l3,
            meta.l4_off as usize,
            l3 + meta.ip_len as usize,
            v6,
            buf.len(),
        )
        .ok_or(LbDrop::Malformed)?;
        let mut b = [0u8; HEADER_MAX];
        let n = header(how, c, &mut b);
        let bytes = b.get(..n).ok_or(LbDrop::Malformed)?;
        grow_segment(buf, at, n, |seg, len| {
            segment::prepend(seg, len, bytes).ok()
        })
        .map(|_| ())
        .map_err(|_| LbDrop::ClientAddrNoRoom)
    }
}
