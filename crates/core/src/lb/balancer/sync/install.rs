//! The balancer's side of sync: the sender set up, the resend of the
//! whole table, the install of received connections.

use super::out::{synced_state, SyncOut};
use crate::lb::balancer::lane::Lane;
use crate::lb::balancer::machine::Balancer;
use crate::lb::conn::{tick_of, tick_reached, ConnOf, Hit, F_ACTIVE, F_NOOUTPUT, F_SYNCED};
use crate::lb::snapshot::{Dest, Service, Snapshot};
use crate::lb::spec::Method;
use crate::lb::state::{TcpState, MAX_TIMEOUT_S, TCP_STATES};
use crate::lb::stats::bump;
use crate::lb::sync::{SyncConn, SyncCount, SyncPolicy, SyncQueue};
use crate::net::meta::{Flow, PROTO_TCP, PROTO_UDP};
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
    /// knows none of them): [`Balancer::resend_step`] walks the IPv4
    /// table from its start, then the IPv6 one. A resend in progress
    /// starts over.
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
        // the IPv4 table's slots, then the IPv6 table's
        let cap4 = self.table.slots();
        let cap = cap4.saturating_add(self.table6.capacity());
        let end = idx.saturating_add(budget).min(cap);
        let mut queued = 0;
        // the time left of a connection worth sending (ms)
        let left_of = |proto: u8, state: u8, expires: u32| -> Option<u32> {
            let left = expires.wrapping_sub(now) as i32;
            let worth = if proto == PROTO_TCP {
                synced_state(state)
            } else {
                state >= out.policy.udp_threshold
            };
            (worth && left > 0).then_some(left as u32)
        };
        while idx < end {
            let s = if idx < cap4 {
                self.table.get(idx).and_then(|c| {
                    <u32 as Lane>::to_sync(c, c.state, left_of(c.proto, c.state, c.expires)?)
                })
            } else {
                self.table6.get(idx - cap4).and_then(|c| {
                    <u128 as Lane>::to_sync(c, c.state, left_of(c.proto, c.state, c.expires)?)
                })
            };
            if let Some(s) = s {
                if out.queue.push(s).is_err() {
                    break; // full: go on from here next time
                }
                queued += 1;
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

    /// What the entry says of the connection's state and timer, or why it
    /// is not installed: (state, expiry tick, active, method).
    fn synced_fields(
        snap: &Snapshot,
        s: &SyncConn,
        now: u32,
    ) -> Result<(TcpState, u32, bool, Method), SyncCount> {
        let tcp = s.proto == PROTO_TCP;
        if s.template || (!tcp && s.proto != PROTO_UDP) || (tcp && s.state as usize >= TCP_STATES) {
            return Err(SyncCount::Unsupported);
        }
        let Some(method) = s.method else {
            return Err(SyncCount::Unsupported);
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
        let active = tcp && state.is_active();
        Ok((state, now.wrapping_add(timeout_ms), active, method))
    }

    /// A synced copy's state and timer changed from `was_active`: the real
    /// server's active/inactive counts follow.
    fn synced_activity(&mut self, dest: u32, was_active: bool, active: bool) {
        if was_active != active {
            if let Some(t) = self.dest_rec(dest) {
                if was_active {
                    t.adjust(-1, 1, 0);
                } else {
                    t.adjust(1, -1, 0);
                }
            }
            self.trees.changed(dest);
        }
    }

    /// An entry whose tuple is in family `A`'s table already (record
    /// `c` at `h`) with the word `(state, expiry tick, active)`: a record
    /// past its time is expired and the entry installed anew (`None`);
    /// one this director forwards is kept; a peer's copy takes the newer
    /// state and timer.
    fn synced_existing<A: Lane>(
        &mut self,
        h: Hit,
        c: &ConnOf<A, A::Ext>,
        (state, expires, active): (TcpState, u32, bool),
        now_ns: u64,
    ) -> Option<SyncCount> {
        if tick_reached(tick_of(now_ns), c.expires) {
            self.expire_idx::<A>(h.idx, now_ns);
            return None;
        }
        if c.flags & F_SYNCED == 0 || h.reply {
            return Some(SyncCount::LocalKept);
        }
        // a newer word about a copy: its state and timer
        self.synced_activity(c.dest, c.flags & F_ACTIVE != 0, active);
        let flags = (c.flags & !F_ACTIVE) | if active { F_ACTIVE } else { 0 };
        if let Some(m) = A::record_mut(self, h.idx) {
            (m.state, m.flags, m.expires) = (state as u8, flags, expires);
        }
        Some(SyncCount::Updated)
    }

    /// A synced connection is in: its real server's and service's counts.
    pub(in crate::lb::balancer) fn synced_counted(
        &mut self,
        d: &Dest,
        svc: &Service,
        active: bool,
    ) {
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
    }

    fn install(&mut self, snap: &Snapshot, s: &SyncConn, now_ns: u64) -> SyncCount {
        if s.v6 {
            self.install_in::<u128>(snap, s, now_ns)
        } else {
            self.install_in::<u32>(snap, s, now_ns)
        }
    }

    /// [`Self::install`] into family `A`'s table: a real server of the
    /// service as configured here (IPv6: never a NAT64 one, which is not
    /// sent), reached by the method configured here.
    fn install_in<A: Lane>(&mut self, snap: &Snapshot, s: &SyncConn, now_ns: u64) -> SyncCount {
        let now = tick_of(now_ns);
        let (state, expires, active, method) = match Self::synced_fields(snap, s, now) {
            Ok(f) => f,
            Err(why) => return why,
        };
        let (caddr, vaddr) = (A::narrow(s.caddr), A::narrow(s.vaddr));
        let key = Flow {
            src: caddr,
            dst: vaddr,
            sport: s.cport,
            dport: s.vport,
            proto: s.proto,
        };
        if let Some((h, c)) = A::find(self, &key) {
            if let Some(done) = self.synced_existing::<A>(h, &c, (state, expires, active), now_ns) {
                return done;
            }
        }
        let Some(svc) = A::service(snap, s.proto, vaddr, s.vport) else {
            return SyncCount::NoService;
        };
        let daddr = A::narrow(s.daddr);
        let Some((d, daddr)) = svc.dests.iter().find_map(|d| {
            let port = if d.port == 0 { s.vport } else { d.port };
            A::dest_addr(d)
                .filter(|a| *a == daddr && port == s.dport)
                .map(|a| (d, a))
        }) else {
            return SyncCount::NoDest;
        };
        if !A::sync_room(self) {
            return SyncCount::TableFull;
        }
        // the local configuration says how the server is reached
        let method = if d.method == method { method } else { d.method };
        let conn = ConnOf {
            caddr,
            vaddr,
            daddr,
            dest: d.id.slot,
            expires,
            cport: s.cport,
            vport: s.vport,
            dport: s.dport,
            svc: svc.id.slot as u16,
            proto: s.proto,
            state: state as u8,
            flags: synced_flags(method, s.no_output, active),
            method,
            ext: A::Ext::default(),
        };
        if !A::insert_synced(self, conn, now_ns) {
            return SyncCount::TableFull;
        }
        self.synced_counted(d, svc, active);
        SyncCount::Installed
    }
}

/// A synced record's flags: synced, no output unless NAT said it saw a
/// reply, active when ESTABLISHED.
fn synced_flags(method: Method, no_output: bool, active: bool) -> u8 {
    F_SYNCED
        | if method != Method::Nat || no_output {
            F_NOOUTPUT
        } else {
            0
        }
        | if active { F_ACTIVE } else { 0 }
}
