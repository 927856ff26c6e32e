//! The service table as the control side keeps it, and one mutation
//! applied to a copy of it.

use crate::lb::snapshot::key_text;
use crate::lb::spec::{DestKey, DestSpec, ServiceKey, ServiceSpec, Timeouts};
use dirigo_proto::proto::{BatchCmd, CtlError, ErrCode};

/// The services as the operator configured them, in order.
pub type ServiceTable = Vec<(ServiceSpec, Vec<DestSpec>)>;

fn find_service(t: &ServiceTable, k: &ServiceKey) -> Option<usize> {
    t.iter().position(|(s, _)| s.key == *k)
}

/// [`find_service`], or the error for a key that is none: "No such
/// service", or, for a service group's member, which service to name
/// instead (ipvsadm has no group verb: a member is changed through its
/// group's service, in the config file or the state file).
fn service_at(t: &ServiceTable, k: &ServiceKey) -> Result<usize, CtlError> {
    if let Some(i) = find_service(t, k) {
        return Ok(i);
    }
    match t.iter().find(|(s, _)| s.members.contains(k)) {
        Some((s, _)) => Err(CtlError::new(
            ErrCode::NoService,
            format!(
                "{} is a member of the service group of {}: change that service",
                key_text(k),
                key_text(&s.key)
            ),
        )),
        None => Err(CtlError::no_service()),
    }
}

fn dest_pos(d: &[DestSpec], svc: &ServiceSpec, k: &DestKey) -> Option<usize> {
    let want = normalize(svc, *k);
    d.iter().position(|x| normalize(svc, x.key) == want)
}

/// Port 0 on a real server means the service's port.
fn normalize(svc: &ServiceSpec, mut k: DestKey) -> DestKey {
    if k.port == 0 {
        k.port = svc.key.port;
    }
    k
}

/// Apply one mutation to a copy of the table (no validation beyond
/// existence; the snapshot build validates the rest).
pub fn apply(
    t: &mut ServiceTable,
    timeouts: &mut Timeouts,
    cmd: &BatchCmd,
) -> Result<(), CtlError> {
    match cmd {
        BatchCmd::AddService { service } => {
            if find_service(t, &service.key).is_some() {
                return Err(CtlError::service_exists());
            }
            t.push((service.clone(), Vec::new()));
        }
        BatchCmd::EditService { service } => {
            let i = service_at(t, &service.key)?;
            // -E leaves the local addresses alone (--add-laddr, --del-laddr),
            // and a group's members (ipvsadm has no group verb)
            let keep = std::mem::take(&mut t[i].0.local_addresses);
            let members = std::mem::take(&mut t[i].0.members);
            t[i].0 = service.clone();
            if t[i].0.local_addresses.is_empty() {
                t[i].0.local_addresses = keep;
            }
            if t[i].0.members.is_empty() {
                t[i].0.members = members;
            }
        }
        BatchCmd::DelService { key } => {
            let i = service_at(t, key)?;
            t.remove(i);
        }
        BatchCmd::Clear => t.clear(),
        BatchCmd::AddDest { service, dest } => {
            let i = service_at(t, service)?;
            let (spec, dests) = &mut t[i];
            if dest_pos(dests, spec, &dest.key).is_some() {
                return Err(CtlError::dest_exists());
            }
            let mut d = dest.clone();
            d.key = normalize(spec, d.key);
            dests.push(d);
        }
        BatchCmd::EditDest { service, dest } => {
            let i = service_at(t, service)?;
            let (spec, dests) = &mut t[i];
            let j = dest_pos(dests, spec, &dest.key).ok_or_else(CtlError::no_dest)?;
            let mut d = dest.clone();
            d.key = normalize(spec, d.key);
            dests[j] = d;
        }
        BatchCmd::DelDest { service, dest } => {
            let i = service_at(t, service)?;
            let (spec, dests) = &mut t[i];
            let j = dest_pos(dests, spec, dest).ok_or_else(CtlError::no_dest)?;
            dests.remove(j);
        }
        BatchCmd::SetTimeouts { timeouts: n } => {
            if n.tcp != 0 {
                timeouts.tcp = n.tcp;
            }
            if n.tcpfin != 0 {
                timeouts.tcpfin = n.tcpfin;
            }
            if n.udp != 0 {
                timeouts.udp = n.udp;
            }
        }
        BatchCmd::AddLaddr { service, addr } => {
            let i = service_at(t, service)?;
            let l = &mut t[i].0.local_addresses;
            if l.contains(addr) {
                return Err(CtlError::new(
                    ErrCode::Exists,
                    "local address already exists",
                ));
            }
            l.push(*addr);
        }
        BatchCmd::DelLaddr { service, addr } => {
            let i = service_at(t, service)?;
            let l = &mut t[i].0.local_addresses;
            let j = l
                .iter()
                .position(|a| a == addr)
                .ok_or_else(|| CtlError::new(ErrCode::NotFound, "No such local address"))?;
            l.remove(j);
        }
        BatchCmd::Zero { .. } => {}
    }
    Ok(())
}
