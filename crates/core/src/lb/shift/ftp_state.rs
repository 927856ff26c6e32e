//! The FTP helper's per-worker state, pure and bounded (allocated once,
//! when a snapshot first has an FTP service; nothing per packet):
//!
//! * [`Controls`] — the [`Shift`] of each FTP control connection, in a
//!   side table keyed by the connection's client → VIP tuple (so the
//!   32-byte IPv4 record does not grow, and a record the table moves
//!   keeps its state). Open addressing, [`PROBES`] slots from the key's
//!   home; a slot is taken back once the connection it names is no
//!   longer an FTP connection of the table (the caller says).
//! * [`Expects`] — the data connections a `PORT`/`EPRT` or `227`/`229`
//!   made expected, each for [`EXPECT_MS`], at most [`EXPECT_SLOTS`]:
//!   consulted only where the service lookup misses.
//! * [`FtpCount`] — what the helper counts; [`FtpState`] — both tables,
//!   a worker's.

use super::adjust::Shift;
use super::seq::at_or_after;
use crate::counters::counter_enum;
use crate::net::meta::{FlowKey, Seed};

/// The control port the helper is on.
pub const FTP_PORT: u16 = 21;

/// A worker's FTP helper state: the balancer's (`lb::balancer::ftp`).
pub struct FtpState {
    /// The control connections' shifts.
    pub controls: Controls,
    /// The expected data connections.
    pub expects: Expects,
}

/// Changes kept per direction of a control connection (a retransmitted
/// reply of the last two rewritten maps exactly).
pub const KEPT: usize = 2;

/// A control connection's shift.
pub type FtpShift = Shift<KEPT>;

/// Control connections a worker can help at once.
pub const CONTROL_SLOTS: usize = 4096;

/// Slots looked at from a key's home.
pub const PROBES: usize = 8;

/// Data connections a worker can expect at once.
pub const EXPECT_SLOTS: usize = 64;

/// How long a data connection stays expected (ms).
pub const EXPECT_MS: u32 = 30_000;

counter_enum! {
    /// What the FTP helper did (its packet drops are
    /// [`crate::lb::verdict::LbDrop`]s).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum FtpCount {
        /// Control connections given the helper.
        Controls: count = "ftp_controls",
        /// Control connections forwarded without the helper: its side
        /// table was full around their key.
        ControlsFull: drop = "ftp_controls_full",
        /// `227` replies rewritten.
        Rewritten: count = "ftp_rewritten",
        /// Lines of the helper's kinds that did not parse, or named
        /// another client: left alone.
        Unparsed: count = "ftp_unparsed",
        /// Data connections expected.
        Expected: count = "ftp_expected",
        /// Data connections not expected: the expectation table was full.
        ExpectFull: drop = "ftp_expect_full",
        /// Expected data connections opened.
        DataOpened: count = "ftp_data_opened",
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    key: FlowKey,
    used: bool,
    shift: FtpShift,
}

/// The control connections' shifts (see the module docs).
pub struct Controls {
    slots: Box<[Slot]>,
    seed: Seed,
}

impl Controls {
    /// A table of [`CONTROL_SLOTS`] slots (about 80 bytes each).
    pub fn new(seed: u32) -> Controls {
        Controls {
            slots: vec![Slot::default(); CONTROL_SLOTS].into_boxed_slice(),
            seed: Seed::new(seed),
        }
    }

    /// The slots a key may be in.
    #[inline]
    fn probe(&self, key: &FlowKey) -> impl Iterator<Item = usize> {
        let home = key.hash_with(self.seed) as usize;
        let mask = self.slots.len() - 1;
        (0..PROBES).map(move |i| (home + i) & mask)
    }

    /// The shift of the control connection `key` (its client → VIP
    /// tuple), when it has a slot.
    #[inline]
    pub fn get_mut(&mut self, key: &FlowKey) -> Option<&mut FtpShift> {
        let i = self
            .probe(key)
            .find(|&i| self.slots[i].used && self.slots[i].key == *key)?;
        Some(&mut self.slots[i].shift)
    }

    /// A slot, with no shift, for a new control connection `key`: its
    /// own slot again, else a free one, else one whose connection `live`
    /// says is gone. False when every slot around the key is taken.
    pub fn claim(&mut self, key: &FlowKey, live: impl Fn(&FlowKey) -> bool) -> bool {
        let mut free = None;
        for i in self.probe(key) {
            let s = &self.slots[i];
            if s.used && s.key == *key {
                free = Some(i);
                break;
            }
            if free.is_none() && (!s.used || !live(&s.key)) {
                free = Some(i);
            }
        }
        let Some(i) = free else {
            return false;
        };
        self.slots[i] = Slot {
            key: *key,
            used: true,
            shift: FtpShift::NONE,
        };
        true
    }

    /// Slots in use (for tests and listings).
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.used).count()
    }

    /// No slot in use.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A data connection to expect: its client → VIP tuple (`key`; a
/// `sport` of 0 takes any client port: passive mode's) and where it goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    /// Client → VIP tuple (`sport` 0: any).
    pub key: FlowKey,
    /// The real server's address.
    pub daddr: u32,
    /// The real server's port.
    pub dport: u16,
    /// The control connection's service slot.
    pub svc: u16,
    /// The control connection's real-server slot.
    pub dest: u32,
}

impl Expect {
    /// Whether a client → VIP segment of tuple `k` opens it.
    #[inline]
    fn request(&self, k: &FlowKey) -> bool {
        let e = &self.key;
        k.proto == e.proto
            && k.src == e.src
            && k.dst == e.dst
            && k.dport == e.dport
            && (e.sport == 0 || k.sport == e.sport)
    }

    /// Whether a real server → client segment of tuple `k` opens it
    /// (active mode: the server connects to the client's port).
    #[inline]
    fn reply(&self, k: &FlowKey) -> bool {
        let e = &self.key;
        e.sport != 0
            && k.proto == e.proto
            && k.src == self.daddr
            && k.sport == self.dport
            && k.dst == e.src
            && k.dport == e.sport
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct ESlot {
    e: Expect,
    expires: u32,
    used: bool,
}

/// What [`Expects::add`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// A new expectation.
    New,
    /// The same one again (a retransmitted line): its time restarted.
    Again,
    /// No room: not expected.
    Full,
}

/// The expected data connections (see the module docs).
pub struct Expects {
    s: [ESlot; EXPECT_SLOTS],
    n: usize,
}

impl Default for Expects {
    fn default() -> Self {
        Expects {
            s: [ESlot::default(); EXPECT_SLOTS],
            n: 0,
        }
    }
}

impl Expects {
    /// Expect `e` from `now` (ms tick) for [`EXPECT_MS`].
    pub fn add(&mut self, e: Expect, now: u32) -> Added {
        let expires = now.wrapping_add(EXPECT_MS);
        if let Some(s) = self.s.iter_mut().find(|s| s.used && s.e == e) {
            s.expires = expires;
            return Added::Again;
        }
        let Some(s) = self
            .s
            .iter_mut()
            .find(|s| !s.used || at_or_after(now, s.expires))
        else {
            return Added::Full;
        };
        if !s.used {
            self.n += 1;
        }
        *s = ESlot {
            e,
            expires,
            used: true,
        };
        Added::New
    }

    /// Whether nothing is expected (not even expired entries are kept).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The live expectation a segment of tuple `k` opens (`reply`: a real
    /// server → client segment), if any.
    #[inline]
    fn find(&self, k: &FlowKey, reply: bool, now: u32) -> Option<usize> {
        if self.n == 0 {
            return None;
        }
        self.s.iter().position(|s| {
            s.used
                && !at_or_after(now, s.expires)
                && if reply { s.e.reply(k) } else { s.e.request(k) }
        })
    }

    /// Whether a segment of tuple `k` opens an expected connection.
    #[inline]
    pub fn expects(&self, k: &FlowKey, reply: bool, now: u32) -> bool {
        self.find(k, reply, now).is_some()
    }

    /// The expectation a segment of tuple `k` opens, taken (it opens one
    /// connection only).
    pub fn take(&mut self, k: &FlowKey, reply: bool, now: u32) -> Option<Expect> {
        let i = self.find(k, reply, now)?;
        let s = &mut self.s[i];
        s.used = false;
        self.n -= 1;
        Some(s.e)
    }

    /// Expectations held (expired ones included until taken back).
    pub fn len(&self) -> usize {
        self.n
    }
}
