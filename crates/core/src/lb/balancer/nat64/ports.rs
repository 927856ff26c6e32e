//! The local source ports of one worker (NAT64's and FullNAT's), and the
//! pick of a free one.

use crate::lb::conn::{mapped, Conn6, ConnTable, FlowKey6};

/// The NAT64 source ports of one worker: `port % workers == worker`, so
/// that the replies' steering finds the owner by the port alone.
pub(in crate::lb::balancer) struct Nat64Ports {
    cursor: u32,
    worker: u32,
    workers: u32,
}

impl Nat64Ports {
    pub(in crate::lb::balancer) fn new(seed: u32, worker: u32, workers: u32) -> Self {
        Nat64Ports {
            cursor: seed,
            worker,
            workers: workers.max(1),
        }
    }

    /// Whether pool port `port` is one this worker hands out.
    pub(in crate::lb::balancer) fn owns(&self, port: u16) -> bool {
        port as u32 % self.workers == self.worker
    }

    /// A free NAT64 source for a connection to `rip`:`rport`: an address
    /// of `pool` and a port this worker owns, whose reply tuple is not in
    /// `table`. At most 64 candidates are tried from a cursor that moves
    /// on; None when all were taken.
    pub(in crate::lb::balancer) fn take(
        &mut self,
        pool: &[u32],
        table: &ConnTable<Conn6>,
        rip: u32,
        rport: u16,
        proto: u8,
    ) -> Option<(u32, u16)> {
        self.take_with(pool, table, |addr, port| FlowKey6 {
            src: mapped(rip),
            dst: mapped(addr),
            sport: rport,
            dport: port,
            proto,
        })
    }

    /// [`Self::take`] over either family's pool (IPv6 FullNAT's local
    /// addresses): `reply` is the reply tuple of a connection from
    /// address `a` and port `p` of the pool, as the table holds it.
    pub(in crate::lb::balancer) fn take_with<A: Copy>(
        &mut self,
        pool: &[A],
        table: &ConnTable<Conn6>,
        reply: impl Fn(A, u16) -> FlowKey6,
    ) -> Option<(A, u16)> {
        self.take_range(pool, table, (1024, 65535), reply)
    }

    /// [`Self::take_with`] from the ports `lo..=hi` only (SNAT's `ports`).
    pub(in crate::lb::balancer) fn take_range<A: Copy>(
        &mut self,
        pool: &[A],
        table: &ConnTable<Conn6>,
        (lo, hi): (u16, u16),
        reply: impl Fn(A, u16) -> FlowKey6,
    ) -> Option<(A, u16)> {
        if pool.is_empty() {
            return None;
        }
        let (w, i) = (self.workers, self.worker);
        let (lo, hi) = (lo as u32, hi as u32);
        // ports p = i + w * k within lo..=hi
        let kmin = (lo.saturating_sub(i)).div_ceil(w);
        let kmax = hi.checked_sub(i)? / w;
        let n = kmax.checked_sub(kmin)? + 1;
        for _ in 0..64 {
            let c = self.cursor;
            self.cursor = c.wrapping_add(1);
            let port = i + w * (kmin + c % n);
            let addr = pool[((c / n) as usize) % pool.len()];
            let reply = reply(addr, port as u16);
            let h = table.hash(&reply);
            if table.lookup_probe(&reply, h).is_err() {
                return Some((addr, port as u16));
            }
        }
        None
    }
}
