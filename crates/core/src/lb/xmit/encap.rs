//! The tunnel header between TUN's outer IP header and the client's
//! packet, for either family: nothing (IPIP), UDP + GUE, or GRE (see
//! [`crate::lb::tunnel`] for what Linux IPVS writes and why).

use crate::lb::tunnel::{TunType, Tunnel};
use crate::net::meta::{Flow, PROTO_UDP};
use crate::net::wire::{gre, gue, udp};

/// IP protocol of GRE.
pub const PROTO_GRE: u8 = 47;

/// The outer IP header's protocol (next header) for tunnel `t`, whose
/// plain IP-in-IP protocol is `ipip` (4, or 41 for IPv6).
#[inline(always)]
pub fn outer_proto(t: &Tunnel, ipip: u8) -> u8 {
    match t.tun_type {
        TunType::Ipip => ipip,
        TunType::Gue => PROTO_UDP,
        TunType::Gre => PROTO_GRE,
    }
}

/// GUE's UDP source port for an inner flow, as Linux's
/// `udp_flow_src_port` chooses it: the flow's hash scaled into the
/// ephemeral range 32768..60999 (Linux's default `ip_local_port_range`),
/// so one flow keeps one port (one ECMP path, one RSS queue on the real
/// server) and flows spread.
#[inline(always)]
pub fn src_port<A: Copy + Into<u128>>(key: &Flow<A>) -> u16 {
    let (s, d): (u128, u128) = (key.src.into(), key.dst.into());
    let a = (s ^ (s >> 64) ^ (d.rotate_left(17)) ^ (d >> 64)) as u64;
    let a = a ^ ((key.sport as u64) << 16 | key.dport as u64) ^ ((key.proto as u64) << 40);
    let h = (a.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as u32;
    const MIN: u32 = 32768;
    const MAX: u32 = 61000;
    (MIN + ((h as u64 * (MAX - MIN) as u64) >> 32) as u32) as u16
}

/// Write tunnel `t`'s header at the front of `d`, which holds exactly the
/// header ([`Tunnel::extra_len`] bytes) and then the inner packet. The
/// inner packet is IPv4 (`v4`) or IPv6. `sport`: GUE's UDP source port
/// ([`src_port`]). GUE's UDP checksum is left 0: with `t.udp_csum()` the
/// caller fills it under its family's pseudo header (see
/// [`udp_checksum_needed`]); GRE's checksum is filled here. Nothing is
/// written for IPIP. Every write goes through a view over `d`, which
/// writes nothing out of bounds.
#[inline]
pub fn emit(d: &mut [u8], t: &Tunnel, v4: bool, sport: u16) {
    match t.tun_type {
        TunType::Ipip => {}
        TunType::Gue => {
            let Ok(len) = u16::try_from(d.len()) else {
                return;
            };
            let mut u = udp::Packet::new_unchecked(&mut *d);
            u.set_src_port(sport);
            u.set_dst_port(t.tun_port);
            u.set_len(len);
            u.set_checksum(0);
            let g = d.get_mut(udp::HEADER_LEN..).unwrap_or_default();
            let inner = if v4 { 4 } else { 41 };
            gue::Packet::new_unchecked(g).emit(inner);
        }
        TunType::Gre => {
            let proto = if v4 { 0x0800 } else { 0x86dd };
            let mut g = gre::Packet::new_unchecked(d);
            g.emit(proto, t.gre_csum());
            if t.gre_csum() {
                g.fill_checksum();
            }
        }
    }
}

/// Whether the caller is to fill GUE's UDP checksum (csum or remcsum).
#[inline(always)]
pub fn udp_checksum_needed(t: &Tunnel) -> bool {
    t.tun_type == TunType::Gue && t.udp_csum()
}
