//! ICMP "fragmentation needed" generated in place (TUN with DF set).

use super::error::XmitError;
use super::route::{next_hop, set_eth};
use crate::net::buf::PacketBuf;
use crate::net::egress::Egress;
use crate::net::meta::{PacketMeta, PROTO_ICMP};
use crate::net::wire::{icmp, ipv4};

/// TTL of generated ICMP messages.
pub const ICMP_TTL: u8 = 64;

/// Bytes the error puts in front of the quote: its IPv4 and ICMP headers.
const OVERHEAD: usize = ipv4::MIN_HEADER_LEN + icmp::HEADER_LEN;

/// Bytes of the original packet's payload quoted after its IP header.
const QUOTED_PAYLOAD: usize = icmp::QUOTED_PAYLOAD_LEN;

/// Turn the packet into an ICMP destination-unreachable /
/// fragmentation-needed (type 3, code 4) carrying next-hop MTU `mtu`, sent
/// from the packet's destination (the VIP) back to its source, quoting the
/// original IP header plus 8 bytes. Routed via `egress`; returns the port.
/// Rate limiting (a [`super::TokenBucket`]) is the caller's.
pub fn frag_needed<B: PacketBuf>(
    buf: &mut B,
    meta: &PacketMeta,
    mtu: u16,
    egress: &impl Egress,
    ip_id: &mut u16,
) -> Result<u16, XmitError> {
    let l3 = meta.l3_off as usize;
    let l4 = meta.l4_off as usize;
    if l4 < l3 + ipv4::MIN_HEADER_LEN
        || buf.len() < l4 + QUOTED_PAYLOAD
        || (meta.ip_len as usize) < l4 - l3 + QUOTED_PAYLOAD
    {
        return Err(XmitError::Malformed);
    }
    let quote = l4 - l3 + QUOTED_PAYLOAD;
    let (client, vip) = {
        let ip = buf.data().get(l3..l4).ok_or(XmitError::Malformed)?;
        let ip = ipv4::Packet::new_unchecked(ip);
        (ip.src(), ip.dst())
    };
    let nh = next_hop(egress, client)?;
    let new_len = l3 + OVERHEAD + quote;
    if buf.len() < new_len && !buf.append(new_len - buf.len()) {
        return Err(XmitError::NoRoom);
    }
    let d = buf.data_mut();
    d.copy_within(l3..l3 + quote, l3 + OVERHEAD);
    let ident = *ip_id;
    *ip_id = ident.wrapping_add(1);
    let ip = d.get_mut(l3..new_len).ok_or(XmitError::Malformed)?;
    ipv4::Repr {
        src: vip,
        dst: client,
        protocol: PROTO_ICMP,
        payload_len: (icmp::HEADER_LEN + quote) as u16,
        ttl: ICMP_TTL,
        dscp_ecn: 0,
        ident,
        dont_frag: false,
    }
    .emit(&mut ipv4::Packet::new_unchecked(ip));
    let msg = d
        .get_mut(l3 + ipv4::MIN_HEADER_LEN..new_len)
        .ok_or(XmitError::Malformed)?;
    let mut msg = icmp::Packet::new_unchecked(msg);
    msg.set_msg_type(icmp::msg_type::DEST_UNREACHABLE);
    msg.set_code(icmp::CODE_FRAG_NEEDED);
    msg.set_next_hop_mtu(mtu);
    msg.fill_checksum();
    set_eth(d, &nh)?;
    if !buf.trim_to(new_len) {
        return Err(XmitError::Malformed);
    }
    Ok(nh.port)
}
