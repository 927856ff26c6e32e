//! A fingerprint of a service's scheduler table, for operators to compare
//! across directors (`dirigoctl fingerprint`): directors behind one ECMP
//! group send a flow to the same real server exactly when their tables
//! for the service are equal, whatever order the servers were added in.
//!
//! The fingerprint is SipHash-2-4 (keys 0, 0: deterministic across
//! processes, builds and machines) over, in order:
//! the scheduler's name, a zero byte, a flags byte (1 = fallback,
//! 2 = port), the table's size (u32, big-endian), then each slot or
//! bucket's server as its address and port (u16), big-endian. The address
//! is the service's family's: 4 bytes for an IPv4 service, 16 for an IPv6
//! one (a NAT64 server, IPv4 behind an IPv6 VIP, as its IPv4-mapped
//! `::ffff:a.b.c.d`); an empty slot is `0.0.0.0:0` or `[::]:0`. Entries
//! are servers, not list positions, so the order of the service's list
//! does not enter; the port is the one connections go to (the service's
//! for DR and TUN).

use super::service::Service;
use crate::lb::sched::NO_DEST;
use siphasher::sip::SipHasher24;
use std::hash::Hasher;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The fingerprint of one service's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    /// Slots (mh) or buckets (sh, dh) in the table.
    pub entries: u32,
    /// Distinct servers that own at least one entry.
    pub servers: u32,
    /// The hash (see the module docs).
    pub hash: u64,
}

impl Service {
    /// The fingerprint of this service's scheduler table, `None` for a
    /// scheduler without one (rr, wrr, lc, wlc, sed, nq, fo).
    pub fn fingerprint(&self) -> Option<Fingerprint> {
        let tab = self.prepared.flow_table()?;
        let mut h = SipHasher24::new_with_keys(0, 0);
        h.write(self.spec.sched.name().as_bytes());
        h.write_u8(0);
        h.write_u8(u8::from(self.spec.flags.fallback) | (u8::from(self.spec.flags.port) << 1));
        h.write(&(tab.len() as u32).to_be_bytes());
        // `Dest::addr` is 0 for an IPv6 server: an IPv6 service's entries
        // hash the whole address, or all its servers would look alike
        let v6 = self.spec.key.vip.is_ipv6();
        let mut owners = vec![false; self.dests.len()];
        for &i in tab {
            let (addr, port) = match self.dests.get(i as usize) {
                Some(d) if i != NO_DEST => {
                    owners[i as usize] = true;
                    (d.key.addr, d.port)
                }
                _ if v6 => (IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
                _ => (IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
            };
            match addr {
                IpAddr::V4(a) if v6 => h.write(&a.to_ipv6_mapped().octets()),
                IpAddr::V4(a) => h.write(&a.octets()),
                IpAddr::V6(a) => h.write(&a.octets()),
            }
            h.write(&port.to_be_bytes());
        }
        Some(Fingerprint {
            entries: tab.len() as u32,
            servers: owners.iter().filter(|&&o| o).count() as u32,
            hash: h.finish(),
        })
    }
}
