//! The balancer's side of sync: the sender set up, the resend of the
//! whole table, the install of received connections.

use super::out::{synced_state, to_sync, SyncOut};
use crate::lb::balancer::machine::Balancer;
use crate::lb::conn::{tick_of, tick_reached, Conn, F_ACTIVE, F_NOOUTPUT, F_SYNCED};
use crate::lb::snapshot::Snapshot;
use crate::lb::spec::Method;
use crate::lb::state::{TcpState, MAX_TIMEOUT_S, TCP_STATES};
use crate::lb::stats::bump;
use crate::lb::sync::{SyncConn, SyncCount, SyncPolicy, SyncQueue, SYNC_FILL_LIMIT};
use crate::net::meta::{FlowKey, PROTO_TCP, PROTO_UDP};
use std::sync::Arc;

impl Balancer {
    /// Send received connections' changes to `queue` under `policy`
    /// (`None`: no sync, the default).
    pub fn set_sync(&mut self, out: Option<(Arc<SyncQueue>, SyncPolicy)>) {
        self.sync = out.map(|(queue, policy)| SyncOut {
            queue,
            policy,
            resend: None,
        });
    }

    /// Send every live connection again (another director started and
    /// knows none of them): [`Balancer::resend_step`] walks the table from
    /// its start. A resend in progress starts over.
    pub fn resend_all(&mut self) {
        if let Some(out) = self.sync.as_mut() {
            out.resend = Some(0);
        }
    }

    /// Whether a resend is in progress.
    pub fn resending(&self) -> bool {
        self.sync.as_ref().is_some_and(|o| o.resend.is_some())
    }

    /// Look at up to `budget` records of a resend in progress (at
    /// housekeeping): queue those in a state worth sending, with the time
    /// they have left. A full queue pauses the walk until the next call.
    /// Returns how many were queued.
    pub fn resend_step(&mut self, now_ns: u64, budget: u32) -> u32 {
        let now = tick_of(now_ns);
        let Some(out) = self.sync.as_mut() else {
            return 0;
        };
        let Some(mut idx) = out.resend else {
            return 0;
        };
        let cap = self.table.slots();
        let end = idx.saturating_add(budget).min(cap);
        let mut queued = 0;
        while idx < end {
            if let Some(c) = self.table.get(idx) {
                let left = c.expires.wrapping_sub(now) as i32;
                let worth = if c.proto == PROTO_TCP {
                    synced_state(c.state)
                } else {
                    c.state >= out.policy.udp_threshold
                };
                if worth && left > 0 {
                    if out.queue.push(to_sync(c, c.state, left as u32)).is_err() {
                        break; // full: go on from here next time
                    }
                    queued += 1;
                }
            }
            idx += 1;
        }
        out.resend = (idx < cap).then_some(idx);
        bump(&self.stats.sync[SyncCount::Resent.index()], queued as u64);
        queued
    }

    fn sync_count(&self, c: SyncCount) {
        bump(&self.stats.sync[c.index()], 1);
    }

    /// Hand `s` to the sync sender (a full queue is a counted loss).
    #[cold]
    pub(in crate::lb::balancer) fn sync_push(&self, s: SyncConn) {
        let Some(out) = self.sync.as_ref() else {
            return;
        };
        if out.queue.push(s).is_ok() {
            self.sync_count(SyncCount::Queued);
        } else {
            self.sync_count(SyncCount::QueueFull);
        }
    }

    /// Install a connection another director sent (at housekeeping, never
    /// per packet). Counted by outcome in [`SyncCount`].
    pub fn install_synced(&mut self, snap: &Snapshot, s: &SyncConn, now_ns: u64) {
        let outcome = self.install(snap, s, now_ns);
        self.sync_count(outcome);
    }

    fn install(&mut self, snap: &Snapshot, s: &SyncConn, now_ns: u64) -> SyncCount {
        let now = tick_of(now_ns);
        let tcp = s.proto == PROTO_TCP;
        if s.template || (!tcp && s.proto != PROTO_UDP) || (tcp && s.state as usize >= TCP_STATES) {
            return SyncCount::Unsupported;
        }
        let Some(method) = s.method else {
            return SyncCount::Unsupported;
        };
        let state = if tcp {
            TcpState::from_u8(s.state)
        } else {
            TcpState::None
        };
        let timeout_ms = match s.timeout_s {
            0 if tcp => snap.timeouts.tcp(state),
            0 => snap.timeouts.udp_ms,
            t => t.min(MAX_TIMEOUT_S) * 1000,
        };
        let expires = now.wrapping_add(timeout_ms);
        let active = tcp && state.is_active();
        let key = FlowKey {
            src: s.caddr,
            dst: s.vaddr,
            sport: s.cport,
            dport: s.vport,
            proto: s.proto,
        };
        if let Some(h) = self.table.lookup(&key) {
            let Some(c) = self.table.get(h.idx).copied() else {
                return SyncCount::Unsupported;
            };
            if tick_reached(now, c.expires) {
                self.expire_idx(h.idx, now_ns);
            } else if c.flags & F_SYNCED == 0 || h.reply {
                return SyncCount::LocalKept;
            } else {
                // a newer word about a copy: its state and timer
                let was = c.flags & F_ACTIVE != 0;
                if was != active {
                    if let Some(t) = self.dest_rec(c.dest) {
                        if was {
                            t.adjust(-1, 1, 0);
                        } else {
                            t.adjust(1, -1, 0);
                        }
                    }
                    self.trees.changed(c.dest);
                }
                if let Some(m) = self.table.get_mut(h.idx) {
                    m.state = state as u8;
                    m.flags = (m.flags & !F_ACTIVE) | if active { F_ACTIVE } else { 0 };
                    m.expires = expires;
                }
                return SyncCount::Updated;
            }
        }
        let Some((_, svc)) = snap.service(s.proto, s.vaddr, s.vport) else {
            return SyncCount::NoService;
        };
        let Some(d) = svc
            .dests
            .iter()
            .find(|d| d.addr == s.daddr && (if d.port == 0 { s.vport } else { d.port }) == s.dport)
        else {
            return SyncCount::NoDest;
        };
        let cap = self.table.capacity();
        if self.table.len() >= cap / 8 * SYNC_FILL_LIMIT {
            return SyncCount::TableFull;
        }
        // the local configuration says how the server is reached
        let method = if d.method == method { method } else { d.method };
        let conn = Conn {
            caddr: s.caddr,
            vaddr: s.vaddr,
            daddr: d.addr,
            dest: d.id.slot,
            expires,
            cport: s.cport,
            vport: s.vport,
            dport: s.dport,
            svc: svc.id.slot as u16,
            proto: s.proto,
            state: state as u8,
            flags: F_SYNCED
                | if method != Method::Nat || s.no_output {
                    F_NOOUTPUT
                } else {
                    0
                }
                | if active { F_ACTIVE } else { 0 },
            method,
        };
        let ins = self.table.insert(conn, now);
        self.follow_moves(&ins);
        if let Some(ev) = ins.evicted {
            self.release(&ev, now_ns);
            bump(&self.stats.evicted, 1);
        }
        if ins.result.is_err() {
            return SyncCount::TableFull;
        }
        if let Some(t) = self.stats.dests.get(d.id.slot as usize) {
            t.adopt(d.id.gen);
            if active {
                t.adjust(1, 0, 1);
            } else {
                t.adjust(0, 1, 1);
            }
        }
        self.trees.changed(d.id.slot);
        if let Some(t) = self.stats.services.get(svc.id.slot as usize) {
            t.adopt(svc.id.gen);
            t.adjust(0, 0, 1);
        }
        self.store_conns();
        SyncCount::Installed
    }
}
