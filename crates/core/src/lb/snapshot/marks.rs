//! The mark rules of a snapshot, compiled per family with the index of
//! the fwmark service each rule's mark names.

use super::service::Service;
use crate::lb::mark::{bits4, bits6, compile, Compiled, MarkRule};
use crate::lb::spec::{DestSpec, Method, Proto, ServiceSpec};

/// An fwmark service's own rules: its key is the mark alone (`Err(None)`),
/// and it has neither the SYN proxy nor FullNAT (`Err(Some(what))`: their
/// paths look the service up by address).
pub(super) fn check_fwmark(
    spec: &ServiceSpec,
    dests: &[DestSpec],
) -> Result<(), Option<&'static str>> {
    let k = spec.key;
    if !k.vip.is_unspecified() || k.port != 0 || k.proto != Proto::Tcp {
        return Err(None);
    }
    if spec.synproxy {
        return Err(Some("the SYN proxy"));
    }
    if dests.iter().any(|d| d.method == Method::FullNat) || !spec.local_addresses.is_empty() {
        return Err(Some("FullNAT"));
    }
    Ok(())
}

/// The IPv4 and the IPv6 rules of `rules`, each pointing at the fwmark
/// service of its mark and family among `services` (or none).
pub(super) fn compile_marks(
    rules: &[MarkRule],
    services: &[Service],
) -> (Vec<Compiled<u32>>, Vec<Compiled<u128>>) {
    let find = |v6: bool| {
        move |mark: u32| {
            services.iter().position(|s| {
                // a group's fwmark member takes its mark's packets too
                std::iter::once(&s.spec.key)
                    .chain(s.spec.members.iter())
                    .any(|k| k.fwmark == mark && k.vip.is_ipv6() == v6)
            })
        }
    };
    (
        compile(rules, false, bits4, find(false)),
        compile(rules, true, bits6, find(true)),
    )
}
