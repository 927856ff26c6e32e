//! The open-addressing service index of one family: its construction
//! from the services and the hash both it and the lookups use.

use super::addr::fold6;
use super::group::Member;
use super::service::Service;

/// The open-addressing index of the services of one family. An entry
/// below `services.len()` is a service's index; one at or above it is
/// `services.len()` plus the index of a service group's member key in
/// `members` (so a snapshot without groups looks up as before).
pub(super) fn index(services: &[Service], members: &[Member], v4: bool) -> Vec<u32> {
    let own = services
        .iter()
        .enumerate()
        // an fwmark service is found by its mark, never by an address
        .filter(|(_, s)| s.spec.key.vip.is_ipv4() == v4 && !s.spec.key.is_fwmark())
        .map(|(i, s)| {
            let k = &s.spec.key;
            (
                i,
                svc_hash(k.proto.number(), s.vip4 ^ fold6(s.vip6), k.port),
            )
        });
    let n = services.len();
    let grouped = members
        .iter()
        .enumerate()
        .filter(|(_, m)| m.v6 != v4)
        .map(|(j, m)| (n + j, svc_hash(m.proto, m.vip4 ^ fold6(m.vip6), m.port)));
    let entries: Vec<(usize, u32)> = own.chain(grouped).collect();
    let tsize = (entries.len() * 2).next_power_of_two().max(8);
    let mut idx = vec![u32::MAX; tsize];
    for (i, h) in entries {
        let mut h = h as usize;
        loop {
            let slot = &mut idx[h & (tsize - 1)];
            if *slot == u32::MAX {
                *slot = i as u32;
                break;
            }
            h = h.wrapping_add(1);
        }
    }
    idx
}

#[inline]
pub(super) fn svc_hash(proto: u8, vip: u32, port: u16) -> u32 {
    let x = ((vip as u64) << 24) ^ ((port as u64) << 8) ^ proto as u64;
    let h = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 32) as u32
}
