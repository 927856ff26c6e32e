//! A full table's evictions: which records may go ([`evictable`]), the
//! sequential scan that finds one when no record is free, and the choice
//! among the records a key's buckets reference when both are full.

use super::bucket::{EMPTY, REPLY};
use super::clock::tick_reached;
use super::limits::EVICT_SCAN;
use super::record::Record;
use super::table::{ConnTable, InsertError};
use crate::hint;

/// Whether a full table may evict `c`: expired, or an embryonic TCP
/// connection (SYN_RECV / SYN_SENT / SYNACK) that saw no packet for `grace`
/// ms ([`super::EMBRYONIC_GRACE_MS`] by default). Never an ESTABLISHED one.
#[inline]
fn evictable<R: Record>(c: &R, now: u32, grace: u32) -> bool {
    use crate::lb::state::{TcpState, TimeoutTable};
    if tick_reached(now, c.expires()) {
        return true;
    }
    if c.proto() != crate::net::meta::PROTO_TCP {
        return false;
    }
    let s = TcpState::from_u8(c.state());
    if !s.is_embryonic() {
        return false;
    }
    // embryonic timeouts are IPVS's fixed ones, so the last packet's time
    // is the expiry minus that timeout
    let timeout = TimeoutTable::DEFAULT_TCP_S
        .get(s as usize)
        .map_or(0, |t| t.saturating_mul(1000));
    let last_seen = c.expires().wrapping_sub(timeout);
    tick_reached(now, last_seen.wrapping_add(grace))
}

impl<R: Record> ConnTable<R> {
    /// A record to evict when no record is free: the first expired or
    /// embryonic one at most [`EVICT_SCAN`] records after the eviction
    /// cursor, which moves on (so repeated full inserts walk the whole
    /// table). Sequential, so it costs a few cache lines, not one random
    /// miss per candidate.
    ///
    /// Returns the record and, when the previous scan already hashed it
    /// (see [`Self::prefetch_unlink`]), its in-key hash.
    pub(super) fn scan_victim(&mut self, now: u32) -> Option<(u32, Option<u32>)> {
        let n = self.recs.len() as u32;
        for _ in 0..EVICT_SCAN.min(n) {
            let idx = self.evict_cursor;
            self.evict_cursor = if idx + 1 >= n { 0 } else { idx + 1 };
            if self.get(idx).is_some_and(|c| evictable(c, now, self.grace)) {
                let (hi, hh) = self.victim_hint;
                let known = (hi == idx).then_some(hh);
                self.prefetch_unlink(self.evict_cursor);
                return Some((idx, known));
            }
        }
        None
    }

    /// Prefetch the index buckets of record `idx` (the next eviction
    /// candidate), so that unlinking it on the next full insert does not
    /// wait for a random index line, and keep its hash for that unlink
    /// ([`ConnTable::take`]).
    #[inline]
    fn prefetch_unlink(&mut self, idx: u32) {
        if let Some(c) = self.get(idx) {
            let h = self.hash(&c.in_key());
            for b in self.pair(h) {
                if let Some(k) = self.buckets.get(b as usize) {
                    hint::prefetch(k);
                }
            }
            self.victim_hint = (idx, h);
        }
    }

    fn victim(&self, hashes: &[u32], now: u32) -> Option<u32> {
        let mut best: Option<(u32, u32, bool)> = None; // (idx, expires, expired)
        for &h in hashes {
            for b in self.pair(h) {
                let Some(bucket) = self.buckets.get(b as usize) else {
                    continue;
                };
                for &r in &bucket.idx {
                    if r == EMPTY {
                        continue;
                    }
                    let idx = r & !REPLY;
                    let Some(c) = self.recs.get(idx as usize) else {
                        continue;
                    };
                    if !evictable(c, now, self.grace) {
                        continue;
                    }
                    let expired = tick_reached(now, c.expires());
                    let better = match best {
                        None => true,
                        Some((_, e, x)) => {
                            (expired && !x)
                                || (expired == x && (c.expires().wrapping_sub(e) as i32) < 0)
                        }
                    };
                    if better {
                        best = Some((idx, c.expires(), expired));
                    }
                }
            }
        }
        best.map(|b| b.0)
    }

    /// Both buckets of `hash` full even after displacement: evict an
    /// evictable entry from them (at most one eviction per insert).
    pub(super) fn evict_for(
        &mut self,
        hash: u32,
        now: u32,
        evicted: &mut Option<R>,
    ) -> Result<(u32, usize), InsertError> {
        if evicted.is_some() {
            return Err(InsertError::Full);
        }
        let v = self.victim(&[hash], now).ok_or(InsertError::Full)?;
        *evicted = self.remove(v);
        self.free_slot(hash).ok_or(InsertError::Full)
    }
}
