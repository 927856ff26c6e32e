//! ICMP echo responder (in place) and a token-bucket rate limiter for the
//! ICMP errors dirigo generates.

use crate::net::addr::OwnAddrs;
use crate::net::buf::PacketBuf;
use crate::net::checksum;
use crate::net::meta::{PacketMeta, PROTO_ICMP};
use crate::net::wire::{ethernet, icmp, ipv4, mac_is_group};

/// TTL of the echo replies dirigo sends.
pub const REPLY_TTL: u8 = 64;

crate::counters::counter_enum! {
    /// Why an ICMP packet was not answered.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum IcmpIgnore {
        /// Headers do not match the meta (not ICMP, truncated).
        Malformed: drop = "icmp_malformed",
        /// Not an echo request (echo replies, errors and other types are left
        /// to the caller).
        NotEchoRequest: drop = "icmp_not_echo_request",
        /// Destination is not one of our addresses or VIPs.
        NotForUs: drop = "icmp_not_for_us",
        /// Sent to a group MAC (broadcast/multicast ping).
        NotUnicast: drop = "icmp_not_unicast",
        /// ICMP checksum wrong.
        BadChecksum: drop = "icmp_bad_checksum",
    }
}

/// Outcome of [`echo_input`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcmpAction {
    /// The frame now holds the echo reply: transmit it on the receiving port.
    Reply,
    /// Not answered; frame unchanged.
    Ignore(IcmpIgnore),
}

/// Answer an ICMP echo request addressed to one of `addrs`' addresses or
/// VIPs by rewriting `frame` in place: MACs swapped, IPs swapped, TTL 64,
/// type 0, both checksums fixed (IP options and Ethernet padding are kept).
/// `meta` is what [`crate::net::classify::classify`] returned for the
/// frame. Never panics, never allocates; the work is one checksum pass over
/// the ICMP message.
pub fn echo_input(frame: &mut [u8], meta: &PacketMeta, addrs: &OwnAddrs) -> IcmpAction {
    match echo_inner(frame, meta, addrs) {
        Ok(()) => IcmpAction::Reply,
        Err(r) => IcmpAction::Ignore(r),
    }
}

fn echo_inner(frame: &mut [u8], meta: &PacketMeta, addrs: &OwnAddrs) -> Result<(), IcmpIgnore> {
    let l3 = meta.l3_off as usize;
    let l3_end = l3 + meta.ip_len as usize;
    let l4 = meta.l4_off as usize;
    if meta.key.proto != PROTO_ICMP {
        return Err(IcmpIgnore::Malformed);
    }
    {
        let eth = ethernet::Frame::new_checked(&*frame).map_err(|_| IcmpIgnore::Malformed)?;
        if eth.header_len() != l3 {
            return Err(IcmpIgnore::Malformed);
        }
        if mac_is_group(eth.dst()) {
            return Err(IcmpIgnore::NotUnicast);
        }
    }
    let ip_bytes = frame.get(l3..l3_end).ok_or(IcmpIgnore::Malformed)?;
    let ip = ipv4::Packet::new_checked(ip_bytes).map_err(|_| IcmpIgnore::Malformed)?;
    if l3 + ip.header_len() != l4 || ip.protocol() != PROTO_ICMP {
        return Err(IcmpIgnore::Malformed);
    }
    let msg = icmp::Packet::new_checked(ip.payload()).map_err(|_| IcmpIgnore::Malformed)?;
    if msg.msg_type() != icmp::msg_type::ECHO_REQUEST {
        return Err(IcmpIgnore::NotEchoRequest);
    }
    let (src, dst) = (ip.src(), ip.dst());
    if !addrs.is_local(dst) {
        return Err(IcmpIgnore::NotForUs);
    }
    if !msg.verify_checksum() {
        return Err(IcmpIgnore::BadChecksum);
    }

    // ICMP: type 8 -> 0, incremental checksum over the type/code word.
    let code = msg.code();
    let old_check = msg.checksum();
    let icmp_bytes = frame.get_mut(l4..l3_end).ok_or(IcmpIgnore::Malformed)?;
    let mut m = icmp::Packet::new_unchecked(icmp_bytes);
    m.set_msg_type(icmp::msg_type::ECHO_REPLY);
    m.set_checksum(checksum::update16(
        old_check,
        u16::from_be_bytes([icmp::msg_type::ECHO_REQUEST, code]),
        u16::from_be_bytes([icmp::msg_type::ECHO_REPLY, code]),
    ));

    let ip_bytes = frame.get_mut(l3..l3_end).ok_or(IcmpIgnore::Malformed)?;
    let mut ip = ipv4::Packet::new_unchecked(ip_bytes);
    ip.set_src(dst);
    ip.set_dst(src);
    ip.set_ttl(REPLY_TTL);
    ip.fill_checksum();

    ethernet::Frame::new_unchecked(frame).swap_macs();
    Ok(())
}

/// Longest ICMP error dirigo emits (IP bytes), per RFC 1812 4.3.2.3.
pub const ERROR_MAX_IP_LEN: usize = 576;
/// Bytes an ICMP error adds in front of the quoted packet (IPv4 + ICMP header).
pub const ERROR_OVERHEAD: usize = ipv4::MIN_HEADER_LEN + icmp::HEADER_LEN;

/// Turn the received packet in `buf` (classified as `meta`) into an ICMP
/// error about it, in place: 28 bytes are prepended from headroom, the
/// Ethernet header (and VLAN tag) moves to the front with its MACs swapped,
/// then a new IPv4 header from `src_ip` to the packet's source (TTL 64,
/// TOS 0xc0), the ICMP header (`icmp_type`, `code`, the 4 bytes `rest`,
/// e.g. the next-hop MTU for "fragmentation needed"), and the original IP
/// packet, trimmed so the error is at most [`ERROR_MAX_IP_LEN`] IP bytes.
///
/// Returns false, leaving `buf` unchanged, when the meta does not match
/// the buffer, headroom is short, or the packet is itself an ICMP error
/// (never answer an error with an error). Rate limiting
/// ([`RateLimiter`]) is the caller's. Never allocates.
pub fn error_in_place<B: PacketBuf + ?Sized>(
    buf: &mut B,
    meta: &PacketMeta,
    icmp_type: u8,
    code: u8,
    rest: u32,
    src_ip: u32,
) -> bool {
    let l3 = meta.l3_off as usize;
    let ip_len = meta.ip_len as usize;
    {
        let data = buf.data();
        let Ok(eth) = ethernet::Frame::new_checked(data) else {
            return false;
        };
        if eth.header_len() != l3 {
            return false;
        }
        let Some(ip_bytes) = data.get(l3..l3 + ip_len) else {
            return false;
        };
        let Ok(ip) = ipv4::Packet::new_checked(ip_bytes) else {
            return false;
        };
        if ip.protocol() == PROTO_ICMP {
            let t = ip.payload().first().copied().unwrap_or(0);
            if icmp::msg_type::is_error(t) {
                return false;
            }
        }
    }
    if !buf.prepend(ERROR_OVERHEAD) {
        return false;
    }
    let quote_len = ip_len.min(ERROR_MAX_IP_LEN - ERROR_OVERHEAD);
    let total = ERROR_OVERHEAD + quote_len;
    // The prepend cannot have moved data: the trim only shortens.
    let _ = buf.trim_to(l3 + total);
    let data = buf.data_mut();
    if data.len() < l3 + total {
        return false; // unreachable: checked above
    }
    data.copy_within(ERROR_OVERHEAD..ERROR_OVERHEAD + l3, 0);
    let orig_src = ipv4::Packet::new_unchecked(&data[l3 + ERROR_OVERHEAD..]).src();
    ethernet::Frame::new_unchecked(&mut data[..l3]).swap_macs();
    let (ip_part, icmp_part) = data[l3..l3 + total].split_at_mut(ipv4::MIN_HEADER_LEN);
    let mut ip = ipv4::Packet::new_unchecked(ip_part);
    ip.set_version_and_header_len(ipv4::MIN_HEADER_LEN);
    ip.set_dscp_ecn(0xc0);
    ip.set_total_len(total as u16);
    ip.set_ident(0);
    ip.set_flags_frag(0);
    ip.set_ttl(REPLY_TTL);
    ip.set_protocol(PROTO_ICMP);
    ip.set_src(src_ip);
    ip.set_dst(orig_src);
    ip.fill_checksum();
    let mut m = icmp::Packet::new_unchecked(icmp_part);
    m.set_msg_type(icmp_type);
    m.set_code(code);
    m.set_rest(rest);
    m.fill_checksum();
    true
}

/// A token bucket: `rate` tokens per second, holding at most `burst`.
/// Time is the caller's monotonic clock in nanoseconds; no allocation,
/// integer arithmetic only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimiter {
    /// Tokens added per second.
    rate: u64,
    /// Capacity in nano-tokens (`burst * 1e9`).
    cap: u64,
    /// Current fill in nano-tokens (1 token = 1e9).
    level: u64,
    /// Time of the last refill.
    last_ns: u64,
}

const NANO: u64 = 1_000_000_000;

impl RateLimiter {
    /// A bucket allowing `rate_per_sec` on average and bursts of `burst`;
    /// it starts full.
    pub fn new(rate_per_sec: u32, burst: u32) -> Self {
        let cap = burst as u64 * NANO;
        RateLimiter {
            rate: rate_per_sec as u64,
            cap,
            level: cap,
            last_ns: 0,
        }
    }

    /// Take one token if there is one at `now_ns`.
    pub fn allow(&mut self, now_ns: u64) -> bool {
        let elapsed = now_ns.saturating_sub(self.last_ns);
        if now_ns > self.last_ns {
            self.last_ns = now_ns;
        }
        self.level = self
            .level
            .saturating_add(elapsed.saturating_mul(self.rate))
            .min(self.cap);
        if self.level >= NANO {
            self.level -= NANO;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests;
