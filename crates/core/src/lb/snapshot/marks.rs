//! The mark rules of a snapshot, compiled per family with the index of
//! the fwmark service each rule's mark names.

use super::service::Service;
use crate::lb::mark::{bits4, bits6, compile, Compiled, MarkRule};

/// The IPv4 and the IPv6 rules of `rules`, each pointing at the fwmark
/// service of its mark and family among `services` (or none).
pub(super) fn compile_marks(
    rules: &[MarkRule],
    services: &[Service],
) -> (Vec<Compiled<u32>>, Vec<Compiled<u128>>) {
    let find = |v6: bool| {
        move |mark: u32| {
            services
                .iter()
                .position(|s| s.spec.key.fwmark == mark && s.spec.key.vip.is_ipv6() == v6)
        }
    };
    (
        compile(rules, false, bits4, find(false)),
        compile(rules, true, bits6, find(true)),
    )
}
