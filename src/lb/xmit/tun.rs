//! IPIP tunnelling: prepend an outer IPv4 header toward the real server.

use super::{next_hop, set_eth, trim_padding, wr16, wr32, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::checksum::checksum;
use crate::net::egress::Egress;
use crate::net::meta::{PacketMeta, PROTO_IPIP};

/// Outer header length (no options).
pub const OUTER_LEN: usize = 20;

/// Encapsulate the IP packet described by `meta` toward `rip`.
///
/// Outer header: source `tunnel_src` (or the egress port's address), dest
/// `rip`, TOS, TTL and DF copied from the inner header, ID from `ip_id`
/// (incremented), checksum computed. The Ethernet header (and any VLAN
/// tag) moves 20 bytes to the front and gets the next hop's MACs; Ethernet
/// padding is trimmed first. When inner length + 20 exceeds the egress MTU
/// the packet is left untouched and [`XmitError::NeedFrag`] (DF set) or
/// [`XmitError::TooBig`] is returned.
pub fn tun<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    rip: u32,
    tunnel_src: Option<u32>,
    egress: &impl Egress,
    ip_id: &mut u16,
) -> Result<u16, XmitError> {
    let nh = next_hop(egress, rip)?;
    let l3 = meta.l3_off as usize;
    let inner_len = meta.ip_len as usize;
    if inner_len + OUTER_LEN > nh.mtu as usize {
        return Err(if meta.df {
            XmitError::NeedFrag {
                mtu: nh.mtu.saturating_sub(OUTER_LEN as u16),
            }
        } else {
            XmitError::TooBig
        });
    }
    let total = u16::try_from(inner_len + OUTER_LEN).map_err(|_| XmitError::TooBig)?;
    if l3 < 14 || buf.len() < l3 + inner_len || inner_len < 20 {
        return Err(XmitError::Malformed);
    }
    let (tos, ttl, df) = {
        let d = buf.data();
        (d[l3 + 1], d[l3 + 8], d[l3 + 6] & 0x40)
    };
    trim_padding(buf, l3, inner_len)?;
    if !buf.prepend(OUTER_LEN) {
        return Err(XmitError::NoRoom);
    }
    let d = buf.data_mut();
    d.copy_within(OUTER_LEN..OUTER_LEN + l3, 0);
    let id = *ip_id;
    *ip_id = id.wrapping_add(1);
    let h = d.get_mut(l3..l3 + OUTER_LEN).ok_or(XmitError::Malformed)?;
    h[0] = 0x45;
    h[1] = tos;
    wr16(h, 2, total)?;
    wr16(h, 4, id)?;
    h[6] = df;
    h[7] = 0;
    h[8] = ttl;
    h[9] = PROTO_IPIP;
    wr16(h, 10, 0)?;
    wr32(h, 12, tunnel_src.unwrap_or(nh.src_ip))?;
    wr32(h, 16, rip)?;
    let c = checksum(h);
    wr16(h, 10, c)?;
    set_eth(d, &nh)?;
    Ok(nh.port)
}
