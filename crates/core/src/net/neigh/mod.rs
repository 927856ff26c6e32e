//! Neighbor table owned by the control thread, and the immutable snapshot
//! workers read: one per address family — `NeighTable<u32>` for IPv4
//! (resolved with ARP), `NeighTable<u128>` for IPv6 (resolved with
//! Neighbour Discovery); the same states, timers and bounds for both.
//!
//! **Clock:** every method takes `now_ns`, a monotonic time in nanoseconds
//! injected by the caller (the unit of every clock in dirigo's core), so
//! aging is testable without sleeping.
//!
//! Life of an entry:
//! * `resolve(ip)` on an unknown IP creates an **Incomplete** entry and says
//!   [`ResolveAction::SendRequest`]; further calls say `Pending` until
//!   `retry_ns` (1 s) has passed since the last request — at most one ARP
//!   request per IP per `retry_ns`. [`NeighTable::tick`] retries and drops
//!   the entry after `max_tries` unanswered requests.
//! * `learn` (from an ARP reply/request) makes it **Reachable**.
//! * From `reachable_ns - probe_lead_ns` after the last confirmation, `tick`
//!   re-probes (one request per `retry_ns`, at most `max_tries`), so a live
//!   neighbor is confirmed before it expires.
//! * Unconfirmed at `reachable_ns`, it turns **Stale**: still published and
//!   used, probed again up to `max_tries` times, removed after `stale_ns`.
//! * **Static** entries never age and are never probed.
//!
//! The table holds at most `max_entries`; when full, the oldest Incomplete
//! and then the oldest Stale entry is evicted to make room, else the new IP
//! is refused.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// An address a neighbor table is keyed by: `u32` (IPv4) or `u128` (IPv6).
pub trait NeighAddr: Copy + Eq + Hash + std::fmt::Debug {}
impl NeighAddr for u32 {}
impl NeighAddr for u128 {}

/// Timers and bounds of the neighbor table (all times in nanoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NeighConfig {
    /// How long a confirmation keeps an entry Reachable (default 300 s).
    pub reachable_ns: u64,
    /// Start re-probing this long before Reachable ends (default 30 s).
    pub probe_lead_ns: u64,
    /// How long an entry stays Stale (still used) before removal (default 60 s).
    pub stale_ns: u64,
    /// Minimum interval between ARP requests for one IP (default 1 s).
    pub retry_ns: u64,
    /// Requests per phase (incomplete, pre-expiry, stale) before giving up (default 3).
    pub max_tries: u32,
    /// Maximum number of entries, static ones included (default 4096).
    pub max_entries: usize,
}

const SEC: u64 = 1_000_000_000;

impl Default for NeighConfig {
    fn default() -> Self {
        NeighConfig {
            reachable_ns: 300 * SEC,
            probe_lead_ns: 30 * SEC,
            stale_ns: 60 * SEC,
            retry_ns: SEC,
            max_tries: 3,
            max_entries: 4096,
        }
    }
}

/// State of a neighbor entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NeighState {
    /// Resolution in progress, no MAC yet (not published).
    Incomplete,
    /// Confirmed recently.
    Reachable,
    /// Not confirmed for `reachable_ns`; still published, being probed.
    Stale,
    /// Configured; never ages.
    Static,
}

/// One entry as shown to operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NeighInfo {
    /// State.
    pub state: NeighState,
    /// MAC (zeros while Incomplete).
    pub mac: [u8; 6],
    /// Port the neighbor is on.
    pub port: u16,
    /// When the entry entered its current state / was last confirmed (ns).
    pub since_ns: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    info: NeighInfo,
    last_req_ns: Option<u64>,
    tries: u32,
}

/// What the caller of [`NeighTable::resolve`] should do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolveAction {
    /// Send an ARP request for the IP on `port` now.
    SendRequest {
        /// Port to send the request on.
        port: u16,
    },
    /// A request was sent less than `retry_ns` ago; wait.
    Pending,
    /// The MAC is known (Reachable, Stale or Static).
    Known,
    /// The table is full of live entries; the IP was not recorded.
    Full,
}

/// An ARP request [`NeighTable::tick`] wants sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe<A = u32> {
    /// IP to ask for.
    pub ip: A,
    /// Port to ask on.
    pub port: u16,
}

/// Errors from static-entry configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NeighError {
    /// The table is at `max_entries`.
    #[error("neighbor table full")]
    Full,
}

/// The control thread's neighbor table (IPv4 by default; `NeighTable<u128>`
/// for IPv6).
#[derive(Clone, Debug)]
pub struct NeighTable<A = u32> {
    cfg: NeighConfig,
    map: HashMap<A, Entry>,
    changed: bool,
}

impl<A: NeighAddr> Default for NeighTable<A> {
    /// An empty table with the default timers and bounds.
    fn default() -> Self {
        NeighTable::new(NeighConfig::default())
    }
}

impl<A: NeighAddr> NeighTable<A> {
    /// An empty table.
    pub fn new(cfg: NeighConfig) -> Self {
        NeighTable {
            cfg,
            map: HashMap::new(),
            changed: false,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &NeighConfig {
        &self.cfg
    }

    /// Number of entries (all states).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The entry for `ip`.
    pub fn get(&self, ip: A) -> Option<NeighInfo> {
        self.map.get(&ip).map(|e| e.info)
    }

    /// Every entry (unordered).
    pub fn iter(&self) -> impl Iterator<Item = (A, NeighInfo)> + '_ {
        self.map.iter().map(|(ip, e)| (*ip, e.info))
    }

    /// True (once) when the published content changed since the last call:
    /// the control thread then builds and publishes a new [`snapshot`](Self::snapshot).
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Add or replace a static entry.
    pub fn add_static(&mut self, ip: A, mac: [u8; 6], port: u16) -> Result<(), NeighError> {
        if !self.map.contains_key(&ip) && !self.make_room() {
            return Err(NeighError::Full);
        }
        self.map.insert(
            ip,
            Entry {
                info: NeighInfo {
                    state: NeighState::Static,
                    mac,
                    port,
                    since_ns: 0,
                },
                last_req_ns: None,
                tries: 0,
            },
        );
        self.changed = true;
        Ok(())
    }

    /// Remove an entry of any state. True when one was removed.
    pub fn remove(&mut self, ip: A) -> bool {
        let removed = self.map.remove(&ip);
        if let Some(e) = removed {
            if e.info.state != NeighState::Incomplete {
                self.changed = true;
            }
        }
        removed.is_some()
    }

    /// Record that `ip` sits at `mac` on `port` (from ARP). Updates an
    /// existing non-static entry; creates one only when `create` (the ARP
    /// was addressed to us) and there is room. Returns true when the
    /// published content changed.
    pub fn learn(&mut self, ip: A, mac: [u8; 6], port: u16, now_ns: u64, create: bool) -> bool {
        let room = self.map.contains_key(&ip) || (create && self.make_room());
        let changed = match self.map.get_mut(&ip) {
            Some(e) if e.info.state == NeighState::Static => false,
            Some(e) => {
                let changed = e.info.state == NeighState::Incomplete
                    || e.info.mac != mac
                    || e.info.port != port;
                e.info = NeighInfo {
                    state: NeighState::Reachable,
                    mac,
                    port,
                    since_ns: now_ns,
                };
                e.last_req_ns = None;
                e.tries = 0;
                changed
            }
            None if room => {
                self.map.insert(
                    ip,
                    Entry {
                        info: NeighInfo {
                            state: NeighState::Reachable,
                            mac,
                            port,
                            since_ns: now_ns,
                        },
                        last_req_ns: None,
                        tries: 0,
                    },
                );
                true
            }
            None => false,
        };
        self.changed |= changed;
        changed
    }

    /// Ask for `ip` to be resolved on `port` (a worker found no MAC for it).
    /// Rate limited: at most one `SendRequest` per IP per `retry_ns`.
    pub fn resolve(&mut self, ip: A, port: u16, now_ns: u64) -> ResolveAction {
        let retry = self.cfg.retry_ns;
        if let Some(e) = self.map.get_mut(&ip) {
            return match e.info.state {
                NeighState::Reachable | NeighState::Static => ResolveAction::Known,
                state => {
                    if due(e.last_req_ns, now_ns, retry) && e.tries < self.cfg.max_tries {
                        e.last_req_ns = Some(now_ns);
                        e.tries += 1;
                        ResolveAction::SendRequest { port: e.info.port }
                    } else if state == NeighState::Stale {
                        ResolveAction::Known
                    } else {
                        ResolveAction::Pending
                    }
                }
            };
        }
        if !self.make_room() {
            return ResolveAction::Full;
        }
        self.map.insert(
            ip,
            Entry {
                info: NeighInfo {
                    state: NeighState::Incomplete,
                    mac: [0; 6],
                    port,
                    since_ns: now_ns,
                },
                last_req_ns: Some(now_ns),
                tries: 1,
            },
        );
        ResolveAction::SendRequest { port }
    }

    /// Age entries and collect the ARP requests to send now into `probes`
    /// (appended; the caller clears it). Call about every `retry_ns`.
    /// Returns true when the published content changed.
    pub fn tick(&mut self, now_ns: u64, probes: &mut Vec<Probe<A>>) -> bool {
        let c = self.cfg;
        let mut changed = false;
        self.map.retain(|&ip, e| {
            let age = now_ns.saturating_sub(e.info.since_ns);
            let mut probe = |e: &mut Entry| {
                if e.tries < c.max_tries && due(e.last_req_ns, now_ns, c.retry_ns) {
                    e.tries += 1;
                    e.last_req_ns = Some(now_ns);
                    probes.push(Probe {
                        ip,
                        port: e.info.port,
                    });
                }
            };
            match e.info.state {
                NeighState::Static => true,
                NeighState::Incomplete => {
                    if e.tries >= c.max_tries && due(e.last_req_ns, now_ns, c.retry_ns) {
                        return false;
                    }
                    probe(e);
                    true
                }
                NeighState::Reachable => {
                    if age >= c.reachable_ns {
                        e.info.state = NeighState::Stale;
                        e.info.since_ns = now_ns;
                        e.tries = 0;
                        probe(e);
                    } else if age.saturating_add(c.probe_lead_ns) >= c.reachable_ns {
                        probe(e);
                    }
                    true
                }
                NeighState::Stale => {
                    if age >= c.stale_ns {
                        changed = true;
                        return false;
                    }
                    probe(e);
                    true
                }
            }
        });
        self.changed |= changed;
        changed
    }

    /// Build the immutable snapshot for workers: every Reachable, Stale and
    /// Static entry.
    pub fn snapshot(&self) -> NeighSnapshot<A> {
        let mut map = HashMap::with_capacity_and_hasher(self.map.len(), Default::default());
        for (ip, e) in &self.map {
            if e.info.state != NeighState::Incomplete {
                map.insert(*ip, (e.info.mac, e.info.port));
            }
        }
        NeighSnapshot { map }
    }

    /// Make room for one more entry; false when the table is full of live
    /// entries.
    fn make_room(&mut self) -> bool {
        if self.map.len() < self.cfg.max_entries {
            return true;
        }
        let victim = self
            .map
            .iter()
            .filter(|(_, e)| e.info.state == NeighState::Incomplete)
            .min_by_key(|(_, e)| e.info.since_ns)
            .or_else(|| {
                self.map
                    .iter()
                    .filter(|(_, e)| e.info.state == NeighState::Stale)
                    .min_by_key(|(_, e)| e.info.since_ns)
            })
            .map(|(ip, e)| (*ip, e.info.state));
        match victim {
            Some((ip, state)) => {
                self.map.remove(&ip);
                if state == NeighState::Stale {
                    self.changed = true;
                }
                true
            }
            None => false,
        }
    }
}

fn due(last: Option<u64>, now: u64, retry: u64) -> bool {
    match last {
        None => true,
        Some(t) => now.saturating_sub(t) >= retry,
    }
}

/// A cheap multiplicative hasher for address keys (addresses are not
/// attacker-chosen in a neighbor table: only on-link hosts get entries).
#[derive(Clone, Copy, Debug, Default)]
pub struct IpHasher(u64);

impl Hasher for IpHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ *b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, v: u32) {
        let h = (v as u64 ^ self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 29);
    }
    fn write_u128(&mut self, v: u128) {
        self.write_u32(v as u32 ^ (v >> 32) as u32);
        self.write_u32((v >> 64) as u32 ^ (v >> 96) as u32);
    }
}

/// The immutable neighbor map workers read without locks (published by the
/// control thread, e.g. through `arc_swap::ArcSwap<NeighSnapshot>` or inside
/// a [`crate::net::view::NetView`]).
#[derive(Clone, Debug)]
pub struct NeighSnapshot<A = u32> {
    map: HashMap<A, ([u8; 6], u16), BuildHasherDefault<IpHasher>>,
}

impl<A: NeighAddr> Default for NeighSnapshot<A> {
    fn default() -> Self {
        NeighSnapshot {
            map: HashMap::default(),
        }
    }
}

impl<A: NeighAddr> NeighSnapshot<A> {
    /// MAC and port of `ip`, if resolved. Never allocates.
    #[inline]
    pub fn lookup(&self, ip: A) -> Option<([u8; 6], u16)> {
        self.map.get(&ip).copied()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests;
