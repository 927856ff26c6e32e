//! ipvsadm 1.31's command line: short and long options, bundling (`-Ln`),
//! attached values (`-t1.2.3.4:80`, `--weight=3`), `-p`'s optional value,
//! the command/option compatibility checks and ipvsadm's error wording.
//!
//! `options` tokenizes and checks, `values` parses option values, and
//! [`parse`] builds the [`Command`]. [`command`] describes the same options
//! to clap, for the man page and the shell completions.

mod describe;
mod options;
mod values;

pub use describe::command;
pub use values::{lookup_service, parse_addr_port};

use super::command::{Command, ListCmd};
use super::defaults::PERSISTENT_TIMEOUT;
use super::error::AdmError;
use crate::proto::BatchCmd;
use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec, Timeouts};
use options::{check, class, optname, tokenize, O};
use std::net::{IpAddr, Ipv4Addr};
use values::{number, parse_sched_flags, timeout};

/// Parse a full argv (`args[0]` is the program name) into a [`Command`].
pub fn parse(args: &[String]) -> Result<Command, AdmError> {
    if args.len() <= 1 {
        return Ok(Command::List(ListCmd::default()));
    }
    let (opts, pos) = tokenize(args)?;
    let mut cmd: Option<O> = None;
    let mut seen: Vec<O> = Vec::new();
    let mut svc: Option<(Proto, IpAddr, Option<u16>)> = None;
    let mut sched: Option<SchedKind> = None;
    let mut flags_arg: Option<String> = None;
    let mut persistent: Option<u32> = None;
    let mut netmask_arg: Option<String> = None;
    let mut synproxy = false;
    let mut real_arg: Option<String> = None;
    let mut method = Method::Dr;
    let mut weight = 1u32;
    let (mut upper, mut lower) = (0u32, 0u32);
    let mut list = ListCmd::default();
    for (o, val) in opts {
        let v = val.unwrap_or_default();
        match o {
            O::Add
            | O::Edit
            | O::Del
            | O::Clear
            | O::List
            | O::Zero
            | O::AddDest
            | O::EditDest
            | O::DelDest
            | O::Set
            | O::Restore
            | O::Save => {
                if cmd.is_some() {
                    return Err(AdmError::usage("multiple commands specified"));
                }
                cmd = Some(o);
                continue;
            }
            O::Help => return Ok(Command::Help),
            O::Version => return Ok(Command::Version),
            O::Sort => continue,
            _ => {}
        }
        if seen.iter().any(|s| class(*s) == class(o)) {
            return Err(AdmError::usage(format!(
                "multiple '{}' options specified",
                optname(o)
            )));
        }
        seen.push(o);
        match o {
            O::Tcp | O::Udp => {
                let proto = if o == O::Tcp { Proto::Tcp } else { Proto::Udp };
                let (a, p) = parse_addr_port(&v, proto).ok_or_else(|| {
                    AdmError::usage("illegal virtual server address[:port] specified")
                })?;
                svc = Some((proto, a, p));
            }
            O::Sched => {
                sched = Some(
                    v.parse()
                        .map_err(|_| AdmError::usage("Scheduler not found"))?,
                )
            }
            O::SchedFlags => flags_arg = Some(v),
            O::Persistent => {
                persistent = Some(if v.is_empty() {
                    PERSISTENT_TIMEOUT
                } else {
                    timeout(&v, 1)?
                })
            }
            // read once the service's family is known (an IPv6 service
            // takes a prefix length)
            O::Netmask => netmask_arg = Some(v),
            O::Synproxy => {
                synproxy = match v.as_str() {
                    "" | "enable" => true,
                    "disable" => false,
                    _ => {
                        return Err(AdmError::usage(
                            "illegal synproxy value specified (enable or disable)",
                        ))
                    }
                }
            }
            O::Real => real_arg = Some(v),
            O::Masq => method = Method::Nat,
            O::Ipip => method = Method::Tun,
            O::Gate => method = Method::Dr,
            O::Weight => {
                weight = number(&v, 0, 65535)
                    .ok_or_else(|| AdmError::usage("illegal weight specified"))?
                    as u32
            }
            O::UThr => {
                upper = number(&v, 0, i32::MAX as u64)
                    .ok_or_else(|| AdmError::usage("illegal u_threshold specified"))?
                    as u32
            }
            O::LThr => {
                lower = number(&v, 0, i32::MAX as u64)
                    .ok_or_else(|| AdmError::usage("illegal l_threshold specified"))?
                    as u32
            }
            O::Numeric => list.numeric = true,
            O::Conn => list.conns = true,
            O::Timeout => list.timeout = true,
            O::Daemon => list.daemon = true,
            O::Stats => list.stats = true,
            O::Rate => list.rate = true,
            O::Thresholds => list.thresholds = true,
            O::PersistConn => list.persist_conn = true,
            O::NoSort => list.nosort = true,
            O::Exact => list.exact = true,
            _ => {}
        }
    }
    let cmd = cmd.ok_or_else(|| {
        AdmError::usage("Try `ipvsadm -h' or 'ipvsadm --help' for more information.")
    })?;
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
    check(cmd, &seen)?;

    let real =
        match &real_arg {
            Some(r) => {
                let proto = svc.map_or(Proto::Tcp, |s| s.0);
                Some(parse_addr_port(r, proto).ok_or_else(|| {
                    AdmError::usage("illegal real server address[:port] specified")
                })?)
            }
            None => None,
        };
    let (mut netmask, mut prefix6) = (Ipv4Addr::BROADCAST, 128u8);
    if let Some(m) = &netmask_arg {
        if svc.is_some_and(|(_, vip, _)| vip.is_ipv6()) {
            prefix6 = values::prefix6(m)?;
        } else {
            netmask = m
                .parse()
                .map_err(|_| AdmError::usage("illegal virtual server persistent mask specified"))?;
        }
    }
    let key = svc.map(|(proto, vip, port)| ServiceKey {
        proto,
        vip,
        port: port.unwrap_or(0),
    });
    // check() guarantees the service (and real server) where required.
    let need_key = || key.ok_or_else(|| AdmError::usage("no service specified"));
    Ok(match cmd {
        O::Add | O::Edit => {
            let key = need_key()?;
            if key.port == 0 && persistent.is_none() {
                return Err(AdmError::usage(
                    "Zero port specified for non-persistent service",
                ));
            }
            let sched = sched.unwrap_or(SchedKind::Wlc);
            let flags = match &flags_arg {
                Some(f) => parse_sched_flags(sched, f)?,
                None => SchedFlags::default(),
            };
            let spec = ServiceSpec {
                key,
                sched,
                flags,
                persistent,
                netmask,
                prefix6,
                synproxy,
            };
            Command::Mutate(if cmd == O::Add {
                BatchCmd::AddService { service: spec }
            } else {
                BatchCmd::EditService { service: spec }
            })
        }
        O::Del => Command::Mutate(BatchCmd::DelService { key: need_key()? }),
        O::Clear => Command::Mutate(BatchCmd::Clear),
        O::AddDest | O::EditDest | O::DelDest => {
            let key = need_key()?;
            let (addr, rport) = real.ok_or_else(|| AdmError::usage("no real server specified"))?;

            let mut port = rport.unwrap_or(key.port);
            // as ipvsadm: a DR or TUN server added or edited takes the
            // service's port; `-d` deletes the server at the port given (a
            // NAT server on another port can be deleted without `-m`)
            if method != Method::Nat && cmd != O::DelDest {
                port = key.port;
            }
            let dkey = DestKey { addr, port };
            let spec = DestSpec {
                key: dkey,
                method,
                weight,
                upper,
                lower,
            };
            Command::Mutate(match cmd {
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
            })
        }
        O::List => {
            if (list.conns || list.timeout || list.daemon)
                && (list.stats || list.rate || list.thresholds || list.persist_conn)
            {
                return Err(AdmError::usage("options conflicts in the list command"));
            }
            list.service = key;
            Command::List(list)
        }
        O::Zero => Command::Mutate(BatchCmd::Zero { service: key }),
        O::Set => Command::Mutate(BatchCmd::SetTimeouts {
            timeouts: Timeouts {
                tcp: timeout(&pos[0], 0)?,
                tcpfin: timeout(&pos[1], 0)?,
                udp: timeout(&pos[2], 0)?,
            },
        }),
        O::Restore => Command::Restore,
        O::Save => Command::Save {
            numeric: list.numeric,
        },
        _ => return Err(AdmError::usage("unknown command")),
    })
}
