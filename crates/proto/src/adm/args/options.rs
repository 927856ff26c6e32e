//! ipvsadm's options: the table of short and long names, the tokenizer
//! (bundling, attached values, `-p`'s optional value) and the
//! command/option compatibility rules with ipvsadm's wording.

use super::refused;
use crate::adm::error::AdmError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arg {
    No,
    Req,
    Opt,
}

/// Every option; the first group are commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum O {
    Add,
    Edit,
    Del,
    Clear,
    List,
    Zero,
    AddDest,
    EditDest,
    DelDest,
    Set,
    Help,
    Version,
    Restore,
    Save,
    AddLaddr,
    DelLaddr,
    GetLaddr,
    Tcp,
    Udp,
    Fwmark,
    Ipv6,
    Sched,
    SchedFlags,
    Persistent,
    Netmask,
    Synproxy,
    ClientAddr,
    Ops,
    Real,
    Masq,
    Ipip,
    Gate,
    FullNat,
    Laddr,
    Weight,
    UThr,
    LThr,
    Numeric,
    Conn,
    Timeout,
    Daemon,
    Stats,
    Rate,
    Thresholds,
    PersistConn,
    NoSort,
    Sort,
    Exact,
    TunInfo,
    TunType,
    TunPort,
    TunNoCsum,
    TunCsum,
    TunRemCsum,
}

/// One ipvsadm option: its names, whether it takes a value, what it is,
/// and how `dirigoadm`'s man page and completions describe it
/// ([`super::command`] is built from this table, so they cannot drift).
pub(super) struct Opt {
    /// `-A`.
    pub(super) short: Option<char>,
    /// `--add-service`; a second row with the same long name only adds
    /// its short name (`-l` beside `-L`).
    pub(super) long: &'static str,
    /// Whether it takes a value.
    pub(super) arg: Arg,
    /// What it is.
    pub(super) o: O,
    /// The value's name in the help (`service-address`); for `--set`, the
    /// three words it takes.
    pub(super) value: &'static str,
    /// One paragraph of help.
    pub(super) help: &'static str,
}

const fn opt(
    short: Option<char>,
    long: &'static str,
    arg: Arg,
    o: O,
    value: &'static str,
    help: &'static str,
) -> Opt {
    Opt {
        short,
        long,
        arg,
        o,
        value,
        help,
    }
}

/// Every option ipvsadm 1.31 has that dirigoadm takes; the commands first.
pub(super) const TABLE: &[Opt] = &[
    opt(Some('A'), "add-service", Arg::No, O::Add, "",
        "Add a virtual service, named by -t or -u; -s, -p, -M and -b set how it schedules."),
    opt(Some('E'), "edit-service", Arg::No, O::Edit, "",
        "Change a virtual service's scheduler, persistence, netmask or flags; \
         its real servers and connections stay."),
    opt(Some('D'), "delete-service", Arg::No, O::Del, "",
        "Delete a virtual service and its real servers."),
    opt(Some('C'), "clear", Arg::No, O::Clear, "",
        "Delete every virtual service."),
    opt(Some('L'), "list", Arg::No, O::List, "",
        "List the virtual service table, or one service with -t/-u (-l is the same)."),
    opt(Some('l'), "list", Arg::No, O::List, "", ""),
    opt(Some('Z'), "zero", Arg::No, O::Zero, "",
        "Zero the packet, byte and rate counters of every service, or of one with -t/-u."),
    opt(Some('a'), "add-server", Arg::No, O::AddDest, "",
        "Add a real server (-r) to a service (-t/-u); -g/-i/-m, -w, -x and -y describe it."),
    opt(Some('e'), "edit-server", Arg::No, O::EditDest, "",
        "Change a real server's forwarding method, weight or thresholds."),
    opt(Some('d'), "delete-server", Arg::No, O::DelDest, "",
        "Delete a real server from a service; its connections expire by timeout \
         (or at once with [dataplane] expire_nodest_conn)."),
    opt(None, "set", Arg::No, O::Set, "tcp tcpfin udp",
        "Set the connection timeouts in seconds: TCP established, TCP after a FIN, UDP; \
         0 keeps a timeout as it is."),
    opt(Some('h'), "help", Arg::No, O::Help, "",
        "Print the usage and exit."),
    opt(Some('v'), "version", Arg::No, O::Version, "",
        "Print ipvsadm's version line with dirigoadm's version, git commit and DPDK version, and exit."),
    opt(Some('R'), "restore", Arg::No, O::Restore, "",
        "Read rules in the -S format from standard input and apply them as one batch: \
         all or none (ipvsadm applies line by line)."),
    opt(Some('S'), "save", Arg::No, O::Save, "",
        "Print the service table as rules that -R reads."),
    opt(Some('P'), "add-laddr", Arg::No, O::AddLaddr, "",
        "Add a FullNAT local address (-z) to a service (-t/-u), DPVS's spelling: the source \
         address FullNAT (-b) real servers see; it must be of the real servers' family."),
    opt(Some('Q'), "del-laddr", Arg::No, O::DelLaddr, "",
        "Remove a FullNAT local address (-z) from a service (-t/-u); its connections keep it \
         until they end. The last one cannot go while the service has FullNAT real servers."),
    opt(Some('G'), "get-laddr", Arg::No, O::GetLaddr, "",
        "List the FullNAT local addresses of every service, or of one with -t/-u."),
    opt(Some('t'), "tcp-service", Arg::Req, O::Tcp, "service-address",
        "A TCP virtual service: host[:port]; a host name or a port name from /etc/services is resolved."),
    opt(Some('u'), "udp-service", Arg::Req, O::Udp, "service-address",
        "A UDP virtual service: host[:port]."),
    opt(Some('f'), "fwmark-service", Arg::Req, O::Fwmark, "fwmark",
        "An fwmark virtual service: the packets dirigo's mark rules ([[mark]], dirigoctl mark) \
         give this mark (1..4294967295), of any address, port and protocol the rules name."),
    opt(Some('6'), "ipv6", Arg::No, O::Ipv6, "",
        "After -f: the fwmark service is IPv6 (its real servers and its rules are IPv6)."),
    opt(Some('s'), "scheduler", Arg::Req, O::Sched, "scheduler",
        "The scheduler: rr, wrr, lc, wlc (the default), sed, nq, sh, dh, mh or fo."),
    opt(Some('b'), "sched-flags", Arg::Req, O::SchedFlags, "sched-flags",
        "Scheduler flags, comma separated: sh-fallback and sh-port for sh, \
         mh-fallback and mh-port for mh."),
    opt(Some('p'), "persistent", Arg::Opt, O::Persistent, "timeout",
        "Persistence: a client keeps its real server until timeout seconds (default 300) \
         after its last connection."),
    opt(Some('M'), "netmask", Arg::Req, O::Netmask, "netmask",
        "Persistence granularity: the clients in one netmask share a real server \
         (default 255.255.255.255)."),
    opt(Some('j'), "synproxy", Arg::Opt, O::Synproxy, "enable|disable",
        "SYN proxy (dirigo's addition, DPVS's spelling): dirigo answers SYNs with SYN cookies and \
         opens a connection to the real server only for a client that completes the handshake; \
         NAT (-m) real servers only. --synproxy alone enables it, -j disable turns it off."),
    opt(None, "client-address", Arg::Req, O::ClientAddr, "none|toa|proxy-v1|proxy-v2",
        "How a FullNAT (--fullnat) TCP service's real servers learn the client's address \
         (dirigo's option; TOML client_address): none (the default), toa (DPVS's TOA option, \
         read by the toa kernel module), proxy-v1 or proxy-v2 (a PROXY protocol header before \
         the client's first byte)."),
    opt(Some('o'), "ops", Arg::No, O::Ops, "",
        "One-packet scheduling, UDP services only: each datagram is scheduled on its own and \
         no connection entry is made (DNS, syslog). DR (-g) and TUN (-i) real servers only, \
         not with -p: a NAT reply needs the entry to be translated back."),
    opt(Some('r'), "real-server", Arg::Req, O::Real, "server-address",
        "The real server: host[:port]; only NAT (-m) may give it another port than the service's."),
    opt(Some('m'), "masquerading", Arg::No, O::Masq, "",
        "Forward by NAT (masquerading): the real server's default gateway is dirigo."),
    opt(Some('i'), "ipip", Arg::No, O::Ipip, "",
        "Forward by IP-in-IP tunnelling (IPIP only)."),
    opt(None, "fullnat", Arg::No, O::FullNat, "",
        "Forward by FullNAT (DPVS's -b, which dirigoadm reads as --fullnat with -a and -e and \
         as --sched-flags elsewhere): the client's address becomes one of the service's local \
         addresses (--add-laddr), so the real server replies to dirigo from any network."),
    opt(Some('z'), "laddr", Arg::Req, O::Laddr, "local-address",
        "With --add-laddr or --del-laddr: the local address."),
    opt(Some('g'), "gatewaying", Arg::No, O::Gate, "",
        "Forward by direct routing (the default): the real server is on a port's network."),
    opt(None, "tun-type", Arg::Req, O::TunType, "type",
        "With -i: the tunnel, ipip (the default), gue or gre, as Linux IPVS 5.3/5.4. \
         GUE is UDP to --tun-port then a 4-byte GUE header; GRE is a 4-byte GRE header."),
    opt(None, "tun-port", Arg::Req, O::TunPort, "port",
        "With --tun-type gue (and required there): the real server's GUE UDP port."),
    opt(None, "tun-nocsum", Arg::No, O::TunNoCsum, "",
        "GUE or GRE without a checksum (the default): GUE's UDP checksum is 0."),
    opt(None, "tun-csum", Arg::No, O::TunCsum, "",
        "GUE or GRE with a checksum: GUE's UDP checksum, GRE's checksum (C bit)."),
    opt(None, "tun-remcsum", Arg::No, O::TunRemCsum, "",
        "Remote checksum offload: as Linux for a forwarded packet (its checksum is complete), \
         GUE with a UDP checksum and no option, GRE without a checksum."),
    opt(Some('w'), "weight", Arg::Req, O::Weight, "weight",
        "Weight 0..65535 (default 1); 0 quiesces the server: no new connections."),
    opt(Some('x'), "u-threshold", Arg::Req, O::UThr, "uthreshold",
        "Upper connection threshold: no new connections above it (0: none)."),
    opt(Some('y'), "l-threshold", Arg::Req, O::LThr, "lthreshold",
        "Lower connection threshold: new connections again below it (0: none)."),
    opt(Some('n'), "numeric", Arg::No, O::Numeric, "",
        "Numeric output; dirigoadm always prints numbers, the option is accepted."),
    opt(Some('c'), "connection", Arg::No, O::Conn, "",
        "With -L: list the connections."),
    opt(None, "timeout", Arg::No, O::Timeout, "",
        "With -L: list the timeouts (tcp tcpfin udp)."),
    opt(None, "daemon", Arg::No, O::Daemon, "",
        "With -L: the connection sync daemon ([sync]): a master line when it sends, a backup line when it receives."),
    opt(None, "stats", Arg::No, O::Stats, "",
        "With -L: packet and byte counters."),
    opt(None, "rate", Arg::No, O::Rate, "",
        "With -L: rates (per second, smoothed over 2 s)."),
    opt(None, "thresholds", Arg::No, O::Thresholds, "",
        "With -L: each real server's upper and lower thresholds beside its connection counts."),
    opt(None, "persistent-conn", Arg::No, O::PersistConn, "",
        "With -L: each real server's persistent connection count."),
    opt(None, "tun-info", Arg::No, O::TunInfo, "",
        "With -L: each real server's tunnel (ipip, gue:PORT:FLAGS, gre:FLAGS; -c no checksum, \
         +c checksum, r+c remote checksum; n/a when not TUN)."),
    opt(None, "nosort", Arg::No, O::NoSort, "",
        "With -L: services and real servers in the order they were added."),
    opt(None, "sort", Arg::No, O::Sort, "",
        "Accepted and ignored (listings are sorted unless --nosort)."),
    opt(Some('X'), "exact", Arg::No, O::Exact, "",
        "With -L: exact numbers (no K, M, G)."),
];

/// Whether `o` is a command (`-A`, `-L`, `--set`, ...) rather than an
/// option of one.
pub(super) fn is_command(o: O) -> bool {
    use O::*;
    matches!(
        o,
        Add | Edit
            | Del
            | Clear
            | List
            | Zero
            | AddDest
            | EditDest
            | DelDest
            | Set
            | Help
            | Version
            | Restore
            | Save
            | AddLaddr
            | DelLaddr
            | GetLaddr
    )
}

/// Option classes for the compatibility check (ipvsadm's `optnames`).
pub(super) const OPTNAMES: &[(O, &str)] = &[
    (O::Numeric, "numeric"),
    (O::Conn, "connection"),
    (O::Tcp, "service-address"),
    (O::Sched, "scheduler"),
    (O::Persistent, "persistent"),
    (O::Netmask, "netmask"),
    (O::Synproxy, "synproxy"),
    (O::ClientAddr, "client-address"),
    (O::Ops, "ops"),
    (O::Real, "real-server"),
    (O::Gate, "forwarding-method"),
    (O::Weight, "weight"),
    (O::UThr, "u-threshold"),
    (O::LThr, "l-threshold"),
    (O::Timeout, "timeout"),
    (O::Daemon, "daemon"),
    (O::Stats, "stats"),
    (O::Rate, "rate"),
    (O::Thresholds, "thresholds"),
    (O::PersistConn, "persistent-conn"),
    (O::NoSort, "nosort"),
    (O::Exact, "exact"),
    (O::SchedFlags, "sched-flags"),
    (O::Laddr, "laddr"),
    (O::TunInfo, "tun-info"),
    (O::TunType, "tun-type"),
    (O::TunPort, "tun-port"),
    (O::TunNoCsum, "tun-nocsum"),
    (O::TunCsum, "tun-csum"),
    (O::TunRemCsum, "tun-remcsum"),
];

/// The option class of `o` (service and forwarding options share one).
pub(super) fn class(o: O) -> O {
    match o {
        O::Udp | O::Fwmark => O::Tcp,
        O::Masq | O::Ipip | O::FullNat => O::Gate,
        other => other,
    }
}

pub(super) fn optname(o: O) -> &'static str {
    OPTNAMES
        .iter()
        .find(|(k, _)| *k == class(o))
        .map(|(_, n)| *n)
        .unwrap_or("?")
}

fn cmdname(c: O) -> &'static str {
    match c {
        O::Add => "add-service",
        O::Edit => "edit-service",
        O::Del => "delete-service",
        O::Clear => "flush",
        O::List => "list",
        O::AddDest => "add-server",
        O::DelDest => "delete-server",
        O::EditDest => "edit-server",
        O::Set => "set",
        O::Restore => "restore",
        O::Save => "save",
        O::Zero => "zero",
        O::AddLaddr => "add-laddr",
        O::DelLaddr => "del-laddr",
        O::GetLaddr => "get-laddr",
        _ => "?",
    }
}

/// `' '` allowed, `'+'` required, `'1'` allowed but exclusive with other
/// `'1'`s; anything not listed is illegal (`'x'`).
fn rule(cmd: O, opt: O) -> char {
    use O::*;
    match (cmd, class(opt)) {
        (Add | Edit, Tcp) => '+',
        (Add | Edit, Sched | Persistent | Netmask | SchedFlags | Synproxy | Ops | ClientAddr) => {
            ' '
        }
        (Del, Tcp) => '+',
        (List, Numeric | Stats | Rate | Thresholds | PersistConn | NoSort | Exact | TunInfo) => ' ',
        (List, Conn | Tcp | Timeout | Daemon) => '1',
        (AddDest | EditDest, Tcp | Real) => '+',
        (AddDest | EditDest, Gate | Weight | UThr | LThr) => ' ',
        (AddDest | EditDest, TunType | TunPort | TunNoCsum | TunCsum | TunRemCsum) => ' ',
        (DelDest, Tcp | Real) => '+',
        (Save, Numeric) => ' ',
        (Zero, Tcp) => ' ',
        (AddLaddr | DelLaddr, Tcp | Laddr) => '+',
        (GetLaddr, Tcp) => ' ',
        _ => 'x',
    }
}

pub(super) fn check(cmd: O, seen: &[O]) -> Result<(), AdmError> {
    for (o, name) in OPTNAMES {
        let present = seen.iter().any(|s| class(*s) == *o);
        let r = rule(cmd, *o);
        if !present && r == '+' {
            return Err(AdmError::usage(format!(
                "You need to supply the '{name}' option for the '{}' command",
                cmdname(cmd)
            )));
        }
        if present && r == 'x' {
            return Err(AdmError::usage(format!(
                "Illegal '{name}' option with the '{}' command",
                cmdname(cmd)
            )));
        }
    }
    let mut last: Option<&str> = None;
    for (o, name) in OPTNAMES {
        if rule(cmd, *o) == '1' && seen.iter().any(|s| class(*s) == *o) {
            if let Some(l) = last {
                return Err(AdmError::usage(format!(
                    "The option '{name}' conflicts with the '{l}' option in the '{}' command",
                    cmdname(cmd)
                )));
            }
            last = Some(name);
        }
    }
    Ok(())
}

/// Split `argv[1..]` into (option, value) pairs and positional words.
/// Options with their values, and positional words.
pub(super) type Tokens = (Vec<(O, Option<String>)>, Vec<String>);

pub(super) fn tokenize(args: &[String]) -> Result<Tokens, AdmError> {
    // DPVS's `-b` is --fullnat with a real server command, ipvsadm's
    // --sched-flags (which takes a value) elsewhere
    let dest_cmd = args.iter().skip(1).any(|a| {
        matches!(a.as_str(), "--add-server" | "--edit-server")
            || (!a.starts_with("--") && (a.starts_with("-a") || a.starts_with("-e")))
    });
    let mut opts = Vec::new();
    let mut pos = Vec::new();
    let mut i = 1;
    let next_val = |i: &mut usize, kind: Arg, name: &str| -> Result<Option<String>, AdmError> {
        match (kind, args.get(*i + 1)) {
            (Arg::Req, Some(v)) => {
                *i += 1;
                Ok(Some(v.clone()))
            }
            (Arg::Req, None) => Err(AdmError::usage(format!(
                "{name}: missing argument\nTry `ipvsadm -h' or 'ipvsadm --help' for more information."
            ))),
            (Arg::Opt, Some(v)) if !v.starts_with('-') => {
                *i += 1;
                Ok(Some(v.clone()))
            }
            _ => Ok(None),
        }
    };
    while i < args.len() {
        let a = &args[i];
        if let Some(long) = a.strip_prefix("--") {
            if long.is_empty() {
                pos.extend(args[i + 1..].iter().cloned());
                break;
            }
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let Opt { arg: kind, o, .. } =
                TABLE.iter().find(|t| t.long == name).ok_or_else(|| {
                    match refused::by_long(name) {
                        Some(r) => AdmError::usage(r.message(&format!("--{name}"))),
                        None => AdmError::usage(format!("invalid option `{a}'")),
                    }
                })?;
            let val = match (kind, inline) {
                (Arg::No, Some(_)) => {
                    return Err(AdmError::usage(format!(
                        "option `--{name}' takes no argument"
                    )))
                }
                (_, Some(v)) => Some(v),
                (k, None) => next_val(&mut i, *k, a)?,
            };
            opts.push((*o, val));
        } else if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                if c == 'b' && dest_cmd {
                    opts.push((O::FullNat, None));
                    j += 1;
                    continue;
                }
                let Opt { arg: kind, o, .. } = TABLE
                    .iter()
                    .find(|t| t.short == Some(c))
                    .ok_or_else(|| match refused::by_short(c) {
                        Some(r) => AdmError::usage(r.message(&format!("-{c}"))),
                        None => AdmError::usage(format!("invalid option `-{c}'")),
                    })?;
                let rest: String = chars[j + 1..].iter().collect();
                if *kind != Arg::No && !rest.is_empty() {
                    opts.push((*o, Some(rest)));
                    break;
                }
                let val = if *kind == Arg::No {
                    None
                } else {
                    next_val(&mut i, *kind, &format!("-{c}"))?
                };
                opts.push((*o, val));
                j += 1;
            }
        } else {
            pos.push(a.clone());
        }
        i += 1;
    }
    Ok((opts, pos))
}
