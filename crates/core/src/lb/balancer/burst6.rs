//! The IPv6 burst entry: the packets a burst's early IPv6 stage
//! classified (fast path: TCP or UDP, no ICMPv6 quote) and hashed, each
//! processed with its hash ([`Balancer::process6_key`]), the burst's
//! preliminaries (epoch, [`Balancer::plain`]) taken once, as IPv4's
//! [`Balancer::process_prepared_with`] does.

use super::burst::BurstCtx;
use super::machine::Balancer;
use crate::lb::verdict::LbVerdict;
use crate::net::buf::PacketBuf;
use crate::net::egress::{Egress, Egress6};
use crate::net::meta::{PacketMeta6, PROTO_TCP, PROTO_UDP};

impl Balancer {
    /// Process the IPv6 packets `sel` selects (bit `i` for `bufs[i]`,
    /// `metas[i]`, `hashes[i]`): each meta is classify's fast path's (no
    /// ICMPv6 quote, so its key is its lookup key) and each hash the IPv6
    /// table's hash of that key ([`Balancer::prepare6`]). Each verdict
    /// goes to `emit` with the packet's position as soon as it is known.
    #[inline(always)]
    pub fn process6_selected_with<B: PacketBuf, E: Egress + Egress6>(
        &mut self,
        at: &BurstCtx<E>,
        bufs: &mut [B],
        metas: &[PacketMeta6],
        hashes: &[u32],
        mut sel: u32,
        mut emit: impl FnMut(usize, LbVerdict),
    ) {
        self.see_epoch(at.snap);
        let plain = self.plain(at.snap);
        while sel != 0 {
            let i = sel.trailing_zeros() as usize;
            sel &= sel - 1;
            if let (Some(buf), Some(meta), Some(&hash)) =
                (bufs.get_mut(i), metas.get(i), hashes.get(i))
            {
                let v = if meta.icmp.is_none()
                    && (meta.key.proto == PROTO_TCP || meta.key.proto == PROTO_UDP)
                {
                    debug_assert_eq!(hash, self.table6.hash(&meta.key), "hash of another key");
                    self.process6_key(at, buf, meta, &meta.key, hash, plain)
                } else {
                    self.process6_hashed(at, buf, meta, None)
                };
                emit(i, v);
            }
        }
    }
}
