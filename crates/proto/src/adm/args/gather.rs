//! The options' values gathered in one pass, before the command is built:
//! one command, no option twice, each value parsed as ipvsadm does.

use super::options::{class, optname, O};
use super::values::{number, parse_addr_port, timeout};
use crate::adm::command::{Command, ListCmd};
use crate::adm::defaults::PERSISTENT_TIMEOUT;
use crate::adm::error::AdmError;
use dirigo_core::lb::sched::SchedKind;
use dirigo_core::lb::spec::{ClientAddress, Method, Proto, TunCsum, TunType};
use std::net::IpAddr;

/// What the options gave.
pub(super) struct Given {
    pub(super) cmd: Option<O>,
    pub(super) seen: Vec<O>,
    pub(super) svc: Option<(Proto, IpAddr, Option<u16>)>,
    /// `-f`: an fwmark service's mark (then `svc` is None).
    pub(super) fwmark: Option<u32>,
    /// `-6` after `-f`: the fwmark service is IPv6.
    pub(super) v6: bool,
    pub(super) sched: Option<SchedKind>,
    pub(super) flags_arg: Option<String>,
    pub(super) persistent: Option<u32>,
    /// Read once the service's family is known (an IPv6 service takes a
    /// prefix length).
    pub(super) netmask_arg: Option<String>,
    pub(super) synproxy: bool,
    pub(super) client_address: ClientAddress,
    pub(super) ops: bool,
    pub(super) real_arg: Option<String>,
    pub(super) method: Method,
    pub(super) weight: u32,
    pub(super) upper: u32,
    pub(super) lower: u32,
    /// `--tun-type`, `--tun-port`, and the `--tun-*csum` given (with
    /// its option, for ipvsadm's conflict message).
    pub(super) tun_type: Option<TunType>,
    pub(super) tun_port: Option<u16>,
    pub(super) tun_csum: Option<(TunCsum, O)>,
    pub(super) list: ListCmd,
    /// `-z`: a FullNAT local address.
    pub(super) laddr: Option<IpAddr>,
}

impl Default for Given {
    fn default() -> Self {
        Given {
            cmd: None,
            seen: Vec::new(),
            svc: None,
            fwmark: None,
            v6: false,
            sched: None,
            flags_arg: None,
            persistent: None,
            netmask_arg: None,
            synproxy: false,
            client_address: ClientAddress::None,
            ops: false,
            real_arg: None,
            method: Method::Dr,
            weight: 1,
            upper: 0,
            lower: 0,
            tun_type: None,
            tun_port: None,
            tun_csum: None,
            list: ListCmd::default(),
            laddr: None,
        }
    }
}

impl Given {
    /// Take one option; `Some` ends the parse early (`-h`, `-v`).
    pub(super) fn take(&mut self, o: O, v: String) -> Result<Option<Command>, AdmError> {
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
            | O::Save
            | O::AddLaddr
            | O::DelLaddr
            | O::GetLaddr => {
                if self.cmd.is_some() {
                    return Err(AdmError::usage("multiple commands specified"));
                }
                self.cmd = Some(o);
                return Ok(None);
            }
            O::Help => return Ok(Some(Command::Help)),
            O::Version => return Ok(Some(Command::Version)),
            O::Sort => return Ok(None),
            O::Ipv6 => {
                // ipvsadm's words: -6 qualifies the -f before it
                if self.fwmark.is_none() || self.v6 {
                    return Err(AdmError::usage("-6 used before -f"));
                }
                self.v6 = true;
                return Ok(None);
            }
            _ => {}
        }
        if self.seen.iter().any(|s| class(*s) == class(o)) {
            return Err(AdmError::usage(format!(
                "multiple '{}' options specified",
                optname(o)
            )));
        }
        self.seen.push(o);
        self.take_service_opt(o, v)?;
        Ok(None)
    }

    /// A service option's value; others go on to the server options.
    fn take_service_opt(&mut self, o: O, v: String) -> Result<(), AdmError> {
        match o {
            O::Tcp | O::Udp => {
                let proto = if o == O::Tcp { Proto::Tcp } else { Proto::Udp };
                let (a, p) = parse_addr_port(&v, proto).ok_or_else(|| {
                    AdmError::usage("illegal virtual server address[:port] specified")
                })?;
                self.svc = Some((proto, a, p));
            }
            O::Fwmark => {
                let m = v
                    .parse::<u32>()
                    .ok()
                    .filter(|m| *m != 0)
                    .ok_or_else(|| AdmError::usage("illegal fwmark specified"))?;
                self.fwmark = Some(m);
            }
            O::Sched => {
                self.sched = Some(
                    v.parse()
                        .map_err(|_| AdmError::usage("Scheduler not found"))?,
                )
            }
            O::SchedFlags => self.flags_arg = Some(v),
            O::Persistent => {
                self.persistent = Some(if v.is_empty() {
                    PERSISTENT_TIMEOUT
                } else {
                    timeout(&v, 1)?
                })
            }
            O::Netmask => self.netmask_arg = Some(v),
            O::Synproxy => self.synproxy = synproxy(&v)?,
            O::Ops => self.ops = true,
            O::ClientAddr => {
                self.client_address = ClientAddress::parse(&v).ok_or_else(|| {
                    AdmError::usage(
                        "illegal client-address value specified (none, toa, proxy-v1 or proxy-v2)",
                    )
                })?
            }
            _ => return self.take_dest_opt(o, v),
        }
        Ok(())
    }

    /// A real server option's value; others go on to the list flags.
    fn take_dest_opt(&mut self, o: O, v: String) -> Result<(), AdmError> {
        match o {
            O::Real => self.real_arg = Some(v),
            O::Masq => self.method = Method::Nat,
            O::Ipip => self.method = Method::Tun,
            O::Gate => self.method = Method::Dr,
            O::FullNat => self.method = Method::FullNat,
            O::Laddr => {
                self.laddr = Some(
                    v.parse()
                        .map_err(|_| AdmError::usage("illegal local address specified"))?,
                )
            }
            O::Weight => {
                self.weight = number(&v, 0, 65535)
                    .ok_or_else(|| AdmError::usage("illegal weight specified"))?
                    as u32
            }
            O::UThr => {
                self.upper = number(&v, 0, i32::MAX as u64)
                    .ok_or_else(|| AdmError::usage("illegal u_threshold specified"))?
                    as u32
            }
            O::LThr => {
                self.lower = number(&v, 0, i32::MAX as u64)
                    .ok_or_else(|| AdmError::usage("illegal l_threshold specified"))?
                    as u32
            }
            O::TunType => {
                self.tun_type = Some(
                    TunType::parse(&v)
                        .ok_or_else(|| AdmError::usage("illegal tunnel type specified"))?,
                )
            }
            O::TunPort => {
                self.tun_port = Some(
                    number(&v, 1, 65535)
                        .ok_or_else(|| AdmError::usage("illegal tunnel port specified"))?
                        as u16,
                )
            }
            O::TunNoCsum | O::TunCsum | O::TunRemCsum => {
                let c = match o {
                    O::TunNoCsum => TunCsum::None,
                    O::TunCsum => TunCsum::Csum,
                    _ => TunCsum::Remcsum,
                };
                if let Some((_, first)) = self.tun_csum {
                    return Err(AdmError::usage(format!(
                        "The option '{}' conflicts with the '{}' option",
                        optname(o),
                        optname(first)
                    )));
                }
                self.tun_csum = Some((c, o));
            }
            _ => self.take_list_flag(o),
        }
        Ok(())
    }

    /// A list option (`-n`, `-c`, `--stats`, ...).
    fn take_list_flag(&mut self, o: O) {
        let list = &mut self.list;
        match o {
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
            O::TunInfo => list.tun_info = true,
            _ => {}
        }
    }
}

/// `--synproxy`'s value: none or `enable`, or `disable`.
fn synproxy(v: &str) -> Result<bool, AdmError> {
    match v {
        "" | "enable" => Ok(true),
        "disable" => Ok(false),
        _ => Err(AdmError::usage(
            "illegal synproxy value specified (enable or disable)",
        )),
    }
}
