//! Stable identities for services and real servers across snapshots.
//!
//! Every service and every real server gets a [`SlotId`] from a
//! [`SlotAllocator`] that lives on the control thread and outlives the
//! snapshots it helps build. Connections store only the slot; per-lcore
//! counters are arrays indexed by slot. So editing a service (weights, new
//! or removed servers, another scheduler) keeps every existing connection
//! pointing at the same counters, and active/inactive counts stay exact.
//!
//! Reuse rule: when a key disappears from the configuration its slot is
//! *retired* at the epoch of the snapshot that dropped it. A retired slot is
//! reused only after (1) every worker has loaded a snapshot of that epoch or
//! later (so no worker can create a new connection on it) and (2) no worker
//! still holds a connection on it (the control side reads the per-worker
//! live counts, see [`crate::lb::stats`]). [`SlotAllocator::reclaim`] checks
//! both. Each reuse bumps the slot's generation, so a reader can tell a new
//! owner's statistics from the old one's (workers reset a slot's traffic
//! counters when they first see a new generation).

use std::collections::HashMap;
use std::hash::Hash;

/// A stable slot index plus its generation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SlotId {
    /// Index into the per-lcore counter arrays.
    pub slot: u32,
    /// Incremented each time the slot is reused.
    pub gen: u32,
}

/// Assigns slots to keys; owned by the control thread.
#[derive(Clone, Debug)]
pub struct SlotAllocator<K: Eq + Hash + Clone> {
    cap: u32,
    live: HashMap<K, SlotId>,
    gens: Vec<u32>,
    free: Vec<u32>,
    retired: Vec<(u32, u64)>,
    next: u32,
}

impl<K: Eq + Hash + Clone> SlotAllocator<K> {
    /// An allocator for at most `cap` slots (the workers' counter arrays
    /// must have `cap` entries).
    pub fn new(cap: u32) -> Self {
        SlotAllocator {
            cap,
            live: HashMap::new(),
            gens: Vec::new(),
            free: Vec::new(),
            retired: Vec::new(),
            next: 0,
        }
    }

    /// Capacity in slots.
    pub fn capacity(&self) -> u32 {
        self.cap
    }

    /// The slot of a live key.
    pub fn get(&self, key: &K) -> Option<SlotId> {
        self.live.get(key).copied()
    }

    /// Number of slots that a key would need but are not yet assigned.
    pub fn missing<'a>(&self, keys: impl Iterator<Item = &'a K>) -> usize
    where
        K: 'a,
    {
        keys.filter(|k| !self.live.contains_key(k)).count()
    }

    /// Free slots available now (never used, or reclaimed).
    pub fn available(&self) -> usize {
        (self.cap - self.next) as usize + self.free.len()
    }

    /// The slot of `key`, assigning one if it has none. None when full.
    pub fn assign(&mut self, key: &K) -> Option<SlotId> {
        if let Some(id) = self.live.get(key) {
            return Some(*id);
        }
        let slot = if let Some(s) = self.free.pop() {
            s
        } else if self.next < self.cap {
            self.next += 1;
            self.gens.push(0);
            self.next - 1
        } else {
            return None;
        };
        let id = SlotId {
            slot,
            gen: self.gens[slot as usize],
        };
        self.live.insert(key.clone(), id);
        Some(id)
    }

    /// Retire every live key for which `keep` is false, at `epoch`.
    pub fn retire_except(&mut self, epoch: u64, mut keep: impl FnMut(&K) -> bool) {
        let mut gone = Vec::new();
        for (k, id) in &self.live {
            if !keep(k) {
                gone.push((k.clone(), id.slot));
            }
        }
        for (k, slot) in gone {
            self.live.remove(&k);
            self.retired.push((slot, epoch));
        }
    }

    /// Make retired slots reusable once every worker has processed with a
    /// snapshot at least as new as their retirement epoch (`min_epoch_seen`)
    /// and `in_use(slot)` is false (no worker holds a connection on it).
    /// Returns how many were reclaimed.
    pub fn reclaim(&mut self, min_epoch_seen: u64, mut in_use: impl FnMut(u32) -> bool) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < self.retired.len() {
            let (slot, ep) = self.retired[i];
            if ep <= min_epoch_seen && !in_use(slot) {
                self.retired.swap_remove(i);
                if let Some(g) = self.gens.get_mut(slot as usize) {
                    *g = g.wrapping_add(1);
                }
                self.free.push(slot);
                n += 1;
            } else {
                i += 1;
            }
        }
        n
    }

    /// Slots retired but not yet reclaimed.
    pub fn retired(&self) -> usize {
        self.retired.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_and_reused_after_grace() {
        let mut a: SlotAllocator<&str> = SlotAllocator::new(2);
        let x = a.assign(&"x").unwrap();
        let y = a.assign(&"y").unwrap();
        assert_eq!(a.assign(&"x"), Some(x));
        assert_ne!(x.slot, y.slot);
        assert_eq!(a.assign(&"z"), None);
        a.retire_except(5, |k| *k != "x");
        assert_eq!(a.assign(&"z"), None, "retired slot not free yet");
        assert_eq!(a.reclaim(4, |_| false), 0, "a worker still on epoch 4");
        assert_eq!(a.reclaim(5, |_| true), 0, "connections remain");
        assert_eq!(a.reclaim(5, |_| false), 1);
        let z = a.assign(&"z").unwrap();
        assert_eq!(z.slot, x.slot);
        assert_eq!(z.gen, x.gen + 1);
        assert_eq!(a.get(&"y"), Some(y));
    }
}
