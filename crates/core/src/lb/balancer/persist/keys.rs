//! What persistence keeps beside the table: the template keys and
//! values, the connection flag bits of an attached connection, the
//! per-service-slot record, and the detach of an ending connection
//! (standalone: the sweep calls it without the balancer).

use crate::lb::conn::{Conn, Conn6};
use crate::lb::ids::SlotId;
use crate::lb::persist::{client_key, client_key6, PersistTable};
use crate::lb::spec::Method;
/// `Conn::flags` bits: the connection is attached to a persistence
/// template when any is set; they hold the netmask tag it attached under
/// plus one (1 to 3). The two bits the connection's own flags leave free
/// (`conn::F_*` use the low six): a persistent connection's flags must
/// never read as SYN-proxied, pending or synced.
pub const F_PERSIST: u8 = 0xC0;
/// Where the tag (plus one) sits in `Conn::flags`.
pub(super) const TAG_SHIFT: u32 = 6;
pub(in crate::lb::balancer) const TAG_BITS: u8 = F_PERSIST;
/// Netmask tags (0 to 2; a connection's flags hold the tag plus one).
pub(super) const TAGS: u8 = 3;

pub(super) const NS_PER_S: u64 = 1_000_000_000;

/// The template service key of a service: slot (16 bits, services are at
/// most 65536) and low 16 bits of its generation.
#[inline]
pub fn template_svc(id: SlotId) -> u32 {
    (id.slot & 0xffff) | (id.gen << 16)
}

/// The template value naming a real server: generation and slot.
#[inline]
pub fn template_dest(id: SlotId) -> u64 {
    ((id.gen as u64) << 32) | id.slot as u64
}

/// Inverse of [`template_dest`].
#[inline]
pub fn template_dest_id(v: u64) -> SlotId {
    SlotId {
        slot: v as u32,
        gen: (v >> 32) as u32,
    }
}

/// What the worker remembers per service slot to detach connections
/// without a snapshot (sweep) and to notice netmask changes.
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::lb::balancer) struct PersistCfg {
    /// [`template_svc`] of the slot's current service.
    pub(super) key: u32,
    /// Netmask connections of this slot attach under (an IPv6 service:
    /// its prefix length).
    pub(super) mask: u32,
    /// The IPv6 prefix length connections of this slot attach under.
    pub(super) prefix6: u8,
    /// Bumped (mod [`TAGS`]) at each netmask change.
    pub(super) tag: u8,
    /// The slot has been seen at all.
    pub(super) known: bool,
    /// The service has been persistent under `key` (templates may exist).
    pub(super) persistent: bool,
}

/// A connection ended: detach it from its template, if it attached.
#[inline]
pub(in crate::lb::balancer) fn detach_conn(
    persist: &mut PersistTable,
    cfgs: &[PersistCfg],
    c: &Conn,
    now_ns: u64,
) {
    detach(persist, cfgs, (c.flags, c.svc), now_ns, |cfg| {
        client_key(c.caddr, cfg.mask)
    });
}

/// [`detach_conn`] for an IPv6 connection.
#[inline]
pub(in crate::lb::balancer) fn detach_conn6(
    persist: &mut PersistTable,
    cfgs: &[PersistCfg],
    c: &Conn6,
    now_ns: u64,
) {
    detach(persist, cfgs, (c.flags, c.svc), now_ns, |cfg| {
        if c.method == Method::FullNat && c.ext.laddr4 != 0 {
            // an IPv4 FullNAT connection: its client is IPv4's (mapped)
            client_key(c.caddr as u32, cfg.mask)
        } else {
            client_key6(c.caddr, cfg.prefix6)
        }
    });
}

/// A connection of either family with `(flags, service slot)` ended:
/// detach it from the template its service keys by `client` (the masked
/// client address under the slot's record), if it attached under the
/// slot's current netmask.
#[inline]
fn detach(
    persist: &mut PersistTable,
    cfgs: &[PersistCfg],
    (flags, svc): (u8, u16),
    now_ns: u64,
    client: impl FnOnce(&PersistCfg) -> u32,
) {
    if flags & F_PERSIST == 0 {
        return;
    }
    let Some(cfg) = cfgs.get(svc as usize) else {
        return;
    };
    if (flags & TAG_BITS) >> TAG_SHIFT != cfg.tag + 1 {
        return; // attached under a former netmask: that template is gone
    }
    persist.detach(cfg.key, client(cfg), now_ns);
}
