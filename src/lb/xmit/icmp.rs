//! ICMP "fragmentation needed" generated in place (TUN with DF set).

use super::{next_hop, rd32, set_eth, wr16, wr32, XmitError};
use crate::net::buf::PacketBuf;
use crate::net::checksum::checksum;
use crate::net::egress::Egress;
use crate::net::meta::{PacketMeta, PROTO_ICMP};

/// TTL of generated ICMP messages.
pub const ICMP_TTL: u8 = 64;

/// Turn the packet into an ICMP destination-unreachable /
/// fragmentation-needed (type 3, code 4) carrying next-hop MTU `mtu`, sent
/// from the packet's destination (the VIP) back to its source, quoting the
/// original IP header plus 8 bytes. Routed via `egress`; returns the port.
pub fn frag_needed<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    mtu: u16,
    egress: &impl Egress,
    ip_id: &mut u16,
) -> Result<u16, XmitError> {
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    if l4 < l3 + 20 || buf.len() < l4 + 8 || (meta.ip_len as usize) < l4 - l3 + 8 {
        return Err(XmitError::Malformed);
    }
    let quote = l4 - l3 + 8;
    let (client, vip) = {
        let d = buf.data();
        (rd32(d, l3 + 12)?, rd32(d, l3 + 16)?)
    };
    let nh = next_hop(egress, client)?;
    let new_len = l3 + 28 + quote;
    if buf.len() < new_len && !buf.append(new_len - buf.len()) {
        return Err(XmitError::NoRoom);
    }
    let d = buf.data_mut();
    d.copy_within(l3..l3 + quote, l3 + 28);
    let id = *ip_id;
    *ip_id = id.wrapping_add(1);
    {
        let h = d.get_mut(l3..l3 + 20).ok_or(XmitError::Malformed)?;
        h[0] = 0x45;
        h[1] = 0;
        wr16(h, 2, (28 + quote) as u16)?;
        wr16(h, 4, id)?;
        wr16(h, 6, 0)?;
        h[8] = ICMP_TTL;
        h[9] = PROTO_ICMP;
        wr16(h, 10, 0)?;
        wr32(h, 12, vip)?;
        wr32(h, 16, client)?;
        let c = checksum(h);
        wr16(h, 10, c)?;
    }
    {
        let m = d
            .get_mut(l3 + 20..l3 + 28 + quote)
            .ok_or(XmitError::Malformed)?;
        m[0] = 3;
        m[1] = 4;
        wr16(m, 2, 0)?;
        wr16(m, 4, 0)?;
        wr16(m, 6, mtu)?;
        let c = checksum(m);
        wr16(m, 2, c)?;
    }
    set_eth(d, &nh)?;
    if !buf.trim_to(new_len) {
        return Err(XmitError::Malformed);
    }
    Ok(nh.port)
}
