//! Service groups in a snapshot: the rules a group's member keys follow
//! and the member table the service index points into beside the
//! services (see [`crate::lb::group`]).

use super::addr::{v4_bits, v6_bits};
use super::marks::check_fwmark;
use super::service::Service;
use crate::lb::spec::{DestSpec, ServiceKey, ServiceSpec, MAX_MEMBERS};

/// A member key of a service group as the index finds it: the key's
/// protocol number, VIP and port, and the index of its service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Member {
    pub proto: u8,
    pub vip4: u32,
    pub vip6: u128,
    pub port: u16,
    pub v6: bool,
    pub svc: u32,
}

/// Why a service group is refused: a member key taken (the group's
/// service, the member, the service that has it) or a rule broken (the
/// group's service, the reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum GroupError {
    Taken(ServiceKey, ServiceKey, ServiceKey),
    Rule(ServiceKey, String),
}

/// Why a group's member key is refused (the caller names the service).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MemberError {
    TooMany,
    Family(ServiceKey),
    Proto(ServiceKey),
    PortZero(ServiceKey),
    Fwmark(ServiceKey, &'static str),
}

/// A group's own rules: at most [`MAX_MEMBERS`] members, each of the
/// service's family, the address ones of its protocol (any, under an
/// fwmark key, which takes both), port 0 only with persistence, and an
/// fwmark member only where an fwmark service could be (no SYN proxy,
/// no FullNAT). The addresses are checked by the caller, the
/// collisions too (they span services).
pub(super) fn check_members(spec: &ServiceSpec, dests: &[DestSpec]) -> Result<(), MemberError> {
    let k = spec.key;
    if spec.members.len() > MAX_MEMBERS {
        return Err(MemberError::TooMany);
    }
    for m in &spec.members {
        if m.vip.is_ipv6() != k.vip.is_ipv6() {
            return Err(MemberError::Family(*m));
        }
        if m.is_fwmark() {
            let mut as_fwmark = spec.clone();
            as_fwmark.key = *m;
            if let Err(Some(what)) = check_fwmark(&as_fwmark, dests) {
                return Err(MemberError::Fwmark(*m, what));
            }
            continue;
        }
        if !k.is_fwmark() && m.proto != k.proto {
            return Err(MemberError::Proto(*m));
        }
        if m.port == 0 && spec.persistent.is_none() {
            return Err(MemberError::PortZero(*m));
        }
    }
    Ok(())
}

/// The member table of `services`: every address member key with its
/// service's index (fwmark members are found through the mark rules).
pub(super) fn members(services: &[Service]) -> Vec<Member> {
    services
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.spec
                .members
                .iter()
                .filter(|m| !m.is_fwmark())
                .map(move |m| Member {
                    proto: m.proto.number(),
                    vip4: v4_bits(m.vip),
                    vip6: v6_bits(m.vip),
                    port: m.port,
                    v6: m.vip.is_ipv6(),
                    svc: i as u32,
                })
        })
        .collect()
}

/// Every key `s` is reached under: its own and its members'.
pub(super) fn keys(s: &ServiceSpec) -> impl Iterator<Item = &ServiceKey> {
    std::iter::once(&s.key).chain(s.members.iter())
}

/// A key in messages: `TCP 192.0.2.1:80`, `fwmark 7`, `fwmark 7 (IPv6)`.
pub fn key_text(k: &ServiceKey) -> String {
    if k.is_fwmark() {
        let v6 = if k.vip.is_ipv6() { " (IPv6)" } else { "" };
        format!("fwmark {}{v6}", k.fwmark)
    } else {
        format!(
            "{} {}",
            k.proto.upper(),
            std::net::SocketAddr::new(k.vip, k.port)
        )
    }
}

/// A service group's member keys: the group's rules, and each key
/// nobody else's (`owners` holds every key
/// seen so far with its service's).
pub(super) fn check_group(
    spec: &ServiceSpec,
    dests: &[DestSpec],
    owners: &mut std::collections::HashMap<ServiceKey, ServiceKey>,
) -> Result<(), GroupError> {
    let k = spec.key;
    let family = |m: &ServiceKey| if m.vip.is_ipv6() { "IPv6" } else { "IPv4" };
    check_members(spec, dests).map_err(|e| {
        let why = match e {
            MemberError::TooMany => format!(
                "{} members, a group has at most {}",
                spec.members.len(),
                crate::lb::spec::MAX_MEMBERS
            ),
            MemberError::Family(m) => format!(
                "member {} is {}, the group's service {}: a group is of one family",
                key_text(&m),
                family(&m),
                family(&k)
            ),
            MemberError::Proto(m) => format!(
                "member {} is not {}: a group's address members are of its protocol",
                key_text(&m),
                k.proto.upper()
            ),
            MemberError::PortZero(m) => {
                format!("member {}: port 0 requires persistence", key_text(&m))
            }
            MemberError::Fwmark(m, what) => format!(
                "member {}: {what} is not available for fwmark services",
                key_text(&m)
            ),
        };
        GroupError::Rule(k, why)
    })?;
    for m in &spec.members {
        if let Some(owner) = owners.insert(*m, k) {
            return Err(GroupError::Taken(k, *m, owner));
        }
    }
    Ok(())
}
