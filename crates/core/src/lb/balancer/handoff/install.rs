//! A handoff entry installed into the worker that owns it (at start,
//! before the ports forward; never per packet). Every entry is checked
//! against this process's configuration, and refused alone, with its
//! reason, when it cannot be kept exactly: never a wrong translation.

use super::export::ip_bits;
use crate::lb::balancer::lane::Lane;
use crate::lb::balancer::machine::Balancer;
use crate::lb::balancer::persist::keys::{template_dest, template_svc, F_PERSIST, TAG_BITS};
use crate::lb::conn::{mapped, tick_of, Conn, Conn6, ConnOf, Nat64Leg, F_ACTIVE, F_SYNPROXY};
use crate::lb::conn::{F_SP_PENDING, F_USED};
use crate::lb::handoff::{ConnEntry, Entry, HandoffCount, TemplateEntry};
use crate::lb::persist::client_key6;
use crate::lb::shift::{HeaderInsert, Phase};
use crate::lb::snapshot::{Dest, Service, Snapshot};
use crate::lb::spec::Method;
use crate::lb::state::TCP_STATES;
use crate::lb::synproxy::Aux;
use crate::net::family::{V4, V6};
use crate::net::meta::{Flow, PROTO_TCP, PROTO_UDP};

/// What the handoff needs of a family beyond its [`Lane`]: the record
/// with its extension, the insert that says where the record went, and
/// the SYN proxy's state of that record.
trait HandoffLane: Lane + Into<u128> {
    /// The record of `e` for service slot `svc`, real server slot `dest`.
    fn record(
        e: &ConnEntry,
        svc: u16,
        dest: u32,
        expires: u32,
        flags: u8,
    ) -> ConnOf<Self, Self::Ext>;
    /// Insert `c` (never evicting); its record index.
    fn insert(b: &mut Balancer, c: ConnOf<Self, Self::Ext>, now_ns: u64) -> Option<u32>;
    /// Store the SYN proxy state of record `idx`; false without a proxy.
    fn set_aux(b: &mut Balancer, idx: u32, aux: Aux) -> bool;
}

fn record_of<A: Copy, X>(
    e: &ConnEntry,
    a: (A, A, A),
    ids: (u16, u32),
    expires: u32,
    flags: u8,
    ext: X,
) -> ConnOf<A, X> {
    ConnOf {
        caddr: a.0,
        vaddr: a.1,
        daddr: a.2,
        dest: ids.1,
        expires,
        cport: e.cport,
        vport: e.vport,
        dport: e.dport,
        svc: ids.0,
        proto: e.proto,
        state: e.state,
        flags,
        method: e.method,
        ext,
    }
}

impl HandoffLane for u32 {
    fn record(e: &ConnEntry, svc: u16, dest: u32, expires: u32, flags: u8) -> Conn {
        let a = (e.caddr as u32, e.vaddr as u32, e.daddr as u32);
        record_of(e, a, (svc, dest), expires, flags, ())
    }
    fn insert(b: &mut Balancer, c: Conn, now_ns: u64) -> Option<u32> {
        if b.table.len() >= b.table.capacity() {
            return None;
        }
        let ins = b.table.insert(c, tick_of(now_ns));
        b.follow_moves(&ins);
        if let Some(ev) = ins.evicted {
            b.release(&ev, now_ns);
        }
        ins.result.ok()
    }
    fn set_aux(b: &mut Balancer, idx: u32, aux: Aux) -> bool {
        match b.sp.as_mut().and_then(|s| s.lane_mut::<V4>().aux_mut(idx)) {
            Some(a) => {
                *a = aux;
                true
            }
            None => false,
        }
    }
}

impl HandoffLane for u128 {
    fn record(e: &ConnEntry, svc: u16, dest: u32, expires: u32, flags: u8) -> Conn6 {
        // NAT64's and IPv4 FullNAT's IPv4 local address, or IPv6
        // FullNAT's IPv6 one (0 when none)
        let leg = Nat64Leg {
            laddr4: e.nat64.0,
            cip: e.cip,
            ..Nat64Leg::local6(e.laddr6, e.nat64.1)
        };
        record_of(
            e,
            (e.caddr, e.vaddr, e.daddr),
            (svc, dest),
            expires,
            flags,
            leg,
        )
    }
    fn insert(b: &mut Balancer, c: Conn6, now_ns: u64) -> Option<u32> {
        if b.table6.len() >= b.table6.capacity() {
            return None;
        }
        let ins = b.table6.insert(c, tick_of(now_ns));
        if let Some(ev) = ins.evicted {
            b.release(&ev, now_ns);
        }
        ins.result.ok()
    }
    fn set_aux(b: &mut Balancer, idx: u32, aux: Aux) -> bool {
        match b.sp.as_mut().and_then(|s| s.lane_mut::<V6>().aux_mut(idx)) {
            Some(a) => {
                *a = aux;
                true
            }
            None => false,
        }
    }
}

impl Balancer {
    /// Install handoff entry `e` under `snap` (this process's first
    /// snapshot) at `now_ns` (this worker's clock). Returns what became
    /// of it: [`HandoffCount::Installed`] or
    /// [`HandoffCount::TemplatesInstalled`], or the reason it was
    /// refused. The real servers' active and inactive counts follow the
    /// installed connections.
    pub fn install_handoff(&mut self, snap: &Snapshot, e: &Entry, now_ns: u64) -> HandoffCount {
        self.see_epoch(snap);
        match e {
            Entry::Conn(c) if c.v6 => self.install_conn::<u128>(snap, c, now_ns),
            Entry::Conn(c) => self.install_conn::<u32>(snap, c, now_ns),
            Entry::Template(t) => self.install_template(snap, t, now_ns),
        }
    }

    /// The service and real server an entry names here, or why not.
    fn handoff_dest<'s, A: HandoffLane>(
        &self,
        snap: &'s Snapshot,
        e: &ConnEntry,
    ) -> Result<(&'s Service, &'s Dest), HandoffCount> {
        let leg = Leg::of(e);
        let svc = match leg {
            // an fwmark service: by its mark, in the connection's family
            _ if e.fwmark != 0 => fwmark_service(snap, e.fwmark, !e.ipv4_client()),
            // an IPv4 connection kept in the IPv6 table: the IPv4 service
            Leg::FullNat4 => snap
                .service(e.proto, e.vaddr as u32, e.vport)
                .map(|(_, s)| s),
            _ => A::service(snap, e.proto, A::narrow(e.vaddr), e.vport),
        };
        let svc = svc.ok_or(HandoffCount::NoService)?;
        let d = svc
            .dests
            .iter()
            .find(|d| {
                let port = if d.port == 0 { e.vport } else { d.port };
                let addr = match leg {
                    Leg::Nat64 | Leg::FullNat4 => (d.addr6 == 0).then(|| mapped(d.addr)),
                    _ => A::dest_addr(d).map(Into::into),
                };
                port == e.dport && addr == Some(e.daddr)
            })
            .ok_or(HandoffCount::NoDest)?;
        // a connection whose client's address reaches the server another
        // way now would be translated wrongly from here on
        // (an IPv4 FullNAT server behind an IPv6 VIP: its records are NAT64's)
        let fullnat64 = leg == Leg::Nat64 && d.method == Method::FullNat;
        let method = if fullnat64 { Method::Nat } else { d.method };
        if method != e.method || (e.cip != 0 && e.cip != svc.spec.client_address as u8) {
            return Err(HandoffCount::MethodChanged);
        }
        // the local leg: an address of this service's pool (NAT64's, the
        // service's local addresses), a port this worker owns
        let (laddr4, lport) = e.nat64;
        let pool = match leg {
            Leg::None => true,
            Leg::Nat64 if fullnat64 => svc.local4.contains(&laddr4),
            Leg::Nat64 => snap.is_pool4(laddr4),
            Leg::FullNat4 => svc.local4.contains(&laddr4),
            Leg::FullNat6 => svc.local6.contains(&e.laddr6),
        };
        if !pool || (leg != Leg::None && !self.nat64.owns(lport)) {
            return Err(HandoffCount::Nat64Pool);
        }
        Ok((svc, d))
    }

    fn install_conn<A: HandoffLane>(
        &mut self,
        snap: &Snapshot,
        e: &ConnEntry,
        now_ns: u64,
    ) -> HandoffCount {
        let tcp = e.proto == PROTO_TCP;
        // a FullNAT connection lives in the IPv6 table, whatever its
        // family; an entry that says otherwise is not one dirigo wrote
        if (!tcp && e.proto != PROTO_UDP)
            || e.state as usize >= TCP_STATES
            || (e.method == Method::FullNat && (!e.v6 || Leg::of(e) == Leg::None))
        {
            return HandoffCount::Unsupported;
        }
        if e.left_ms == 0 {
            return HandoffCount::Expired;
        }
        let key = Flow {
            src: A::narrow(e.caddr),
            dst: A::narrow(e.vaddr),
            sport: e.cport,
            dport: e.vport,
            proto: e.proto,
        };
        if A::find(self, &key).is_some() {
            return HandoffCount::Exists;
        }
        let (svc, d) = match self.handoff_dest::<A>(snap, e) {
            Ok(x) => x,
            Err(why) => return why,
        };
        // a persistent service's bits are its template's: attached again
        // below, under this process's tag
        let persistent = svc.spec.persistent.is_some();
        let mut flags = e.flags & !F_USED;
        if persistent {
            flags &= !(F_PERSIST | TAG_BITS);
        } else if flags & (F_SYNPROXY | F_SP_PENDING) != 0 {
            if self.sp.is_none() {
                return HandoffCount::NoSynproxy;
            }
            if e.sp.is_none() {
                return HandoffCount::Unsupported;
            }
        }
        // the client's address: its header's state goes in beside the
        // record (the snapshot's service keeps the state allocated)
        let insert = match (e.cip, e.insert) {
            (0, _) => None,
            (_, Some((at, len, phase))) if self.cip.is_some() => match Phase::from_number(phase) {
                Some(p) => Some(HeaderInsert::resume(at, len, p)),
                None => return HandoffCount::Unsupported,
            },
            _ => return HandoffCount::Unsupported,
        };
        let expires = tick_of(now_ns).wrapping_add(e.left_ms);
        let rec = A::record(e, svc.id.slot as u16, d.id.slot, expires, flags);
        let Some(idx) = A::insert(self, rec, now_ns) else {
            return HandoffCount::TableFull;
        };
        if let Some(h) = insert {
            if let Some(slot) = self.cip.as_mut().and_then(|s| s.get_mut(idx)) {
                *slot = h;
            }
        }
        if let (false, Some(aux)) = (persistent, e.sp) {
            A::set_aux(self, idx, aux);
        }
        if persistent {
            let client = if !e.ipv4_client() {
                client_key6(e.caddr, svc.spec.prefix6)
            } else {
                e.caddr as u32
            };
            if let Some(bits) = self.persist_attach_bits(svc, client, d, now_ns) {
                if let Some(c) = A::record_mut(self, idx) {
                    c.flags = (c.flags & !TAG_BITS) | bits;
                }
            }
        }
        self.synced_counted(d, svc, flags & F_ACTIVE != 0);
        HandoffCount::Installed
    }

    fn install_template(
        &mut self,
        snap: &Snapshot,
        t: &TemplateEntry,
        now_ns: u64,
    ) -> HandoffCount {
        let svc = if t.fwmark != 0 {
            fwmark_service(snap, t.fwmark, t.v6)
        } else if t.v6 {
            snap.service6(t.proto, t.vip, t.vport).map(|(_, s)| s)
        } else {
            snap.service(t.proto, t.vip as u32, t.vport).map(|(_, s)| s)
        };
        let Some(svc) = svc.filter(|s| s.spec.persistent.is_some()) else {
            return HandoffCount::NoService;
        };
        let Some(d) = svc
            .dests
            .iter()
            .find(|d| ip_bits(d.key.addr) == t.daddr && d.key.port == t.dport)
        else {
            return HandoffCount::NoDest;
        };
        if t.left_ms == 0 {
            return HandoffCount::Expired;
        }
        // a template without connections, alive for what it had left
        let (ks, left_ns) = (template_svc(svc.id), t.left_ms as u64 * 1_000_000);
        if self
            .persist
            .attach(ks, t.client, template_dest(d.id), left_ns, now_ns)
            .is_err()
        {
            return HandoffCount::TableFull;
        }
        self.persist.detach(ks, t.client, now_ns);
        HandoffCount::TemplatesInstalled
    }
}

/// The fwmark service of `mark` in family `v6` (or the service group
/// that has the mark as a member).
fn fwmark_service(snap: &Snapshot, mark: u32, v6: bool) -> Option<&Service> {
    snap.services().iter().find(|s| {
        std::iter::once(&s.spec.key)
            .chain(&s.spec.members)
            .any(|k| k.fwmark == mark && k.vip.is_ipv6() == v6)
    })
}

/// The local leg an entry carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leg {
    /// None: the client's address is kept.
    None,
    /// NAT64: an IPv6 client, an IPv4 pool address and port.
    Nat64,
    /// IPv4 FullNAT (in the IPv6 table, its addresses IPv4-mapped).
    FullNat4,
    /// IPv6 FullNAT.
    FullNat6,
}

impl Leg {
    fn of(e: &ConnEntry) -> Leg {
        match (e.method, e.nat64, e.laddr6) {
            (Method::FullNat, (0, _), 0) => Leg::None,
            (Method::FullNat, (0, _), _) => Leg::FullNat6,
            (Method::FullNat, _, 0) if e.v6 && e.ipv4_client() => Leg::FullNat4,
            (Method::FullNat, _, _) => Leg::None,
            (_, (0, 0), _) => Leg::None,
            _ => Leg::Nat64,
        }
    }
}
