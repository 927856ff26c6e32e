//! The [`Command`] built from the gathered options, with the checks ipvsadm
//! makes once all are read.

use super::gather::Given;
use super::options::{optname, O};
use super::values::{self, parse_addr_port, parse_sched_flags, timeout};
use crate::adm::command::Command;
use crate::adm::error::AdmError;
use crate::proto::BatchCmd;
use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::spec::{
    DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec, Timeouts, TunType, Tunnel,
};
use std::net::{IpAddr, Ipv4Addr};

/// The positional arguments: three timeouts for `--set`, none otherwise.
pub(super) fn check_positionals(cmd: O, pos: &[String]) -> Result<(), AdmError> {
    if cmd == O::Set {
        if pos.len() < 3 {
            return Err(AdmError::usage("--set option requires 3 timeout values"));
        }
    } else if let Some(p) = pos.first() {
        return Err(AdmError::usage(format!("unexpected argument {p}")));
    }
    if pos.len() > 3 {
        return Err(AdmError::usage(format!("unexpected argument {}", pos[3])));
    }
    Ok(())
}

/// The addresses and masks read after the options' compatibility check.
struct Resolved {
    key: Option<ServiceKey>,
    real: Option<(IpAddr, Option<u16>)>,
    netmask: Ipv4Addr,
    prefix6: u8,
}

/// `-r`'s address, in the service's protocol (TCP without one).
fn real_addr(g: &Given) -> Result<Option<(IpAddr, Option<u16>)>, AdmError> {
    match &g.real_arg {
        Some(r) => {
            let proto = g.svc.map_or(Proto::Tcp, |s| s.0);
            Ok(Some(parse_addr_port(r, proto).ok_or_else(|| {
                AdmError::usage("illegal real server address[:port] specified")
            })?))
        }
        None => Ok(None),
    }
}

/// `-M`: a netmask for an IPv4 service, a prefix length for an IPv6 one.
fn masks(g: &Given) -> Result<(Ipv4Addr, u8), AdmError> {
    let (mut netmask, mut prefix6) = (Ipv4Addr::BROADCAST, 128u8);
    if let Some(m) = &g.netmask_arg {
        if g.svc.is_some_and(|(_, vip, _)| vip.is_ipv6()) || g.v6 {
            prefix6 = values::prefix6(m)?;
        } else {
            netmask = m
                .parse()
                .map_err(|_| AdmError::usage("illegal virtual server persistent mask specified"))?;
        }
    }
    Ok((netmask, prefix6))
}

/// Build `cmd` from what the options gave and the positionals.
pub(super) fn build(cmd: O, mut g: Given, pos: &[String]) -> Result<Command, AdmError> {
    let real = real_addr(&g)?;
    let (netmask, prefix6) = masks(&g)?;
    let key = match g.fwmark {
        Some(m) => Some(ServiceKey::fwmark(m, g.v6)),
        None => g.svc.map(|(proto, vip, port)| ServiceKey {
            fwmark: 0,
            proto,
            vip,
            port: port.unwrap_or(0),
        }),
    };
    let r = Resolved {
        key,
        real,
        netmask,
        prefix6,
    };
    Ok(match cmd {
        O::Add | O::Edit => service_cmd(cmd, &g, &r)?,
        O::Del => Command::Mutate(BatchCmd::DelService { key: need_key(&r)? }),
        O::Clear => Command::Mutate(BatchCmd::Clear),
        O::AddDest | O::EditDest | O::DelDest => dest_cmd(cmd, &g, &r)?,
        O::List => {
            let list = &mut g.list;
            if (list.conns || list.timeout || list.daemon)
                && (list.stats || list.rate || list.thresholds || list.persist_conn)
            {
                return Err(AdmError::usage("options conflicts in the list command"));
            }
            list.service = r.key;
            Command::List(*list)
        }
        O::Zero => Command::Mutate(BatchCmd::Zero { service: r.key }),
        O::AddLaddr | O::DelLaddr => {
            let service = need_key(&r)?;
            let addr = g
                .laddr
                .ok_or_else(|| AdmError::usage("no local address specified"))?;
            Command::Mutate(if cmd == O::AddLaddr {
                BatchCmd::AddLaddr { service, addr }
            } else {
                BatchCmd::DelLaddr { service, addr }
            })
        }
        O::GetLaddr => Command::GetLaddr { service: r.key },
        O::Set => Command::Mutate(BatchCmd::SetTimeouts {
            timeouts: Timeouts {
                tcp: timeout(&pos[0], 0)?,
                tcpfin: timeout(&pos[1], 0)?,
                udp: timeout(&pos[2], 0)?,
            },
        }),
        O::Restore => Command::Restore,
        O::Save => Command::Save {
            numeric: g.list.numeric,
        },
        _ => return Err(AdmError::usage("unknown command")),
    })
}

/// The service; check() guarantees it (and the real server) where required.
fn need_key(r: &Resolved) -> Result<ServiceKey, AdmError> {
    r.key.ok_or_else(|| AdmError::usage("no service specified"))
}

/// `-A` or `-E`.
fn service_cmd(cmd: O, g: &Given, r: &Resolved) -> Result<Command, AdmError> {
    let key = need_key(r)?;
    if key.port == 0 && g.persistent.is_none() && !key.is_fwmark() {
        return Err(AdmError::usage(
            "Zero port specified for non-persistent service",
        ));
    }
    if g.ops && key.proto != Proto::Udp {
        // ipvsadm's words
        return Err(AdmError::usage(
            "One-Packet Scheduling is only for UDP virtual services",
        ));
    }
    let sched = g.sched.unwrap_or(SchedKind::Wlc);
    let flags = match &g.flags_arg {
        Some(f) => parse_sched_flags(sched, f)?,
        None => SchedFlags::default(),
    };
    let spec = ServiceSpec {
        key,
        sched,
        flags,
        persistent: g.persistent,
        netmask: r.netmask,
        prefix6: r.prefix6,
        synproxy: g.synproxy,
        // -E keeps the service's local addresses (--add-laddr changes them)
        local_addresses: Vec::new(),
        ops: g.ops,
        client_address: g.client_address,
        // ipvsadm has no group verb: -E keeps a group's members (the
        // config file and the state file set them)
        members: Vec::new(),
    };
    Ok(Command::Mutate(if cmd == O::Add {
        BatchCmd::AddService { service: spec }
    } else {
        BatchCmd::EditService { service: spec }
    }))
}

/// `-a`, `-e` or `-d`.
fn dest_cmd(cmd: O, g: &Given, r: &Resolved) -> Result<Command, AdmError> {
    let key = need_key(r)?;
    let (addr, rport) = r
        .real
        .ok_or_else(|| AdmError::usage("no real server specified"))?;

    let mut port = rport.unwrap_or(key.port);
    // as ipvsadm: a DR or TUN server added or edited takes the
    // service's port; `-d` deletes the server at the port given (a
    // NAT server on another port can be deleted without `-m`)
    if !matches!(g.method, Method::Nat | Method::FullNat) && cmd != O::DelDest {
        port = key.port;
    }
    let dkey = DestKey { addr, port };
    let tun = if cmd == O::DelDest {
        Tunnel::IPIP
    } else {
        tunnel(g)?
    };
    let spec = DestSpec {
        key: dkey,
        method: g.method,
        weight: g.weight,
        upper: g.upper,
        lower: g.lower,
        tun,
    };
    Ok(Command::Mutate(match cmd {
        O::AddDest => BatchCmd::AddDest {
            service: key,
            dest: spec,
        },
        O::EditDest => BatchCmd::EditDest {
            service: key,
            dest: spec,
        },
        _ => BatchCmd::DelDest {
            service: key,
            dest: dkey,
        },
    }))
}

/// The real server's tunnel from `--tun-*`, checked as ipvsadm 1.31's
/// `tunnel_opt_check` does (with its words).
fn tunnel(g: &Given) -> Result<Tunnel, AdmError> {
    let given = g.tun_type.is_some() || g.tun_port.is_some() || g.tun_csum.is_some();
    if given && g.method != Method::Tun {
        return Err(AdmError::usage(
            "Tunnel options conflict with forward method",
        ));
    }
    let t = Tunnel {
        tun_type: g.tun_type.unwrap_or_default(),
        tun_port: g.tun_port.unwrap_or(0),
        tun_csum: g.tun_csum.map(|(c, _)| c).unwrap_or_default(),
    };
    let name = t.tun_type.name();
    match t.tun_type {
        TunType::Gue if g.tun_port.is_none() => Err(AdmError::usage(format!(
            "You need to supply the 'tun-port' option for the '{name}' tunnel type"
        ))),
        TunType::Ipip | TunType::Gre if g.tun_port.is_some() => Err(AdmError::usage(format!(
            "Illegal 'tun-port' option with the '{name}' tunnel type"
        ))),
        TunType::Ipip if g.tun_csum.is_some() => {
            let o = g.tun_csum.map(|(_, o)| optname(o)).unwrap_or("?");
            Err(AdmError::usage(format!(
                "Illegal '{o}' option with the '{name}' tunnel type"
            )))
        }
        _ => Ok(t),
    }
}
