//! The planner's copies of DPDK's constants and its Toeplitz hash, checked
//! against DPDK's own (through the shim; no EAL needed).

use crate::dataplane::rss::*;
use crate::pmd::port::{rss_bits, softrss};
use proptest::prelude::*;

#[test]
fn rss_bits_are_dpdks() {
    assert_eq!(
        rss_bits(),
        [
            RSS_IPV4,
            RSS_FRAG_IPV4,
            RSS_NONFRAG_IPV4_TCP,
            RSS_NONFRAG_IPV4_UDP,
            RSS_NONFRAG_IPV4_OTHER,
            RSS_L3_SRC_ONLY,
            RSS_L3_DST_ONLY,
            RSS_PLAIN,
        ]
    );
}

#[test]
fn softrss_needs_the_key_it_reads() {
    assert_eq!(softrss(&KEY[..7], &[1]), None);
    assert!(softrss(&KEY[..8], &[1]).is_some());
}

proptest! {
    /// One address (what an L3_SRC_ONLY / L3_DST_ONLY port hashes), and
    /// the two addresses plus ports of the published vectors' shape:
    /// dirigo's Toeplitz is DPDK's rte_softrss.
    #[test]
    fn toeplitz_is_rte_softrss(addr in any::<u32>(), dst in any::<u32>(), ports in any::<u32>()) {
        let owner = ClientOwner::new(&KEY, &[0]);
        prop_assert_eq!(Some(owner.hash(addr)), softrss(&KEY, &[addr]));
        prop_assert_eq!(Some(toeplitz(&KEY, &addr.to_be_bytes())), softrss(&KEY, &[addr]));
        let mut input = Vec::new();
        for w in [addr, dst, ports] {
            input.extend_from_slice(&w.to_be_bytes());
        }
        prop_assert_eq!(Some(toeplitz(&KEY, &input)), softrss(&KEY, &[addr, dst, ports]));
    }
}
