//! dirigoctl: ports, addresses, routes, neighbors, lcores, drops, reload,
//! scheduler table fingerprints and version of a running dirigo. `--json` prints the daemon's raw response.
//! `top` is a live view of services, workers and drops (`--once`: one
//! plain-text frame).
//! `keepalived-convert FILE` works offline: keepalived.conf's virtual
//! servers as dirigo TOML on stdout, warnings on stderr.

use dirigo_config::keepalived;
use dirigo_core::lb::mark::MarkRule;
use dirigo_core::lb::spec::{DestKey, Proto, ServiceKey};
use dirigo_core::net::addr::{Ipv4Cidr, Ipv6Cidr};
use dirigo_proto::cli::ctl::{
    AddrOp, Cli, Cmd, HealthOp, MarkOp, NeighOp, RouteOp, SnatOp, TopArgs,
};
use dirigo_proto::client::{socket_path, Client, ClientError};
use dirigo_proto::proto::{Request, Response, ResponseEnvelope};
use dirigo_proto::table;
use dirigo_tools::top;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4};
use std::process::ExitCode;

/// `[tcp:|udp:]VIP:PORT`, an IPv6 VIP in brackets (`[2001:db8::10]:80`,
/// as dirigoctl and ipvsadm print it).
fn parse_service(s: &str) -> Result<ServiceKey, String> {
    let (proto, rest) = match s.split_once(':') {
        Some(("tcp", r)) => (Proto::Tcp, r),
        Some(("udp", r)) => (Proto::Udp, r),
        _ => (Proto::Tcp, s),
    };
    let a: SocketAddr = rest
        .parse()
        .map_err(|_| format!("bad service '{s}': want [tcp:|udp:]VIP:PORT"))?;
    Ok(ServiceKey {
        fwmark: 0,
        proto,
        vip: a.ip(),
        port: a.port(),
    })
}

/// `RIP[:PORT]` (port 0: the service's).
fn parse_server(s: &str) -> Result<DestKey, String> {
    if let Ok(a) = s.parse::<SocketAddrV4>() {
        return Ok(DestKey {
            addr: std::net::IpAddr::V4(*a.ip()),
            port: a.port(),
        });
    }
    let addr: Ipv4Addr = s
        .parse()
        .map_err(|_| format!("bad real server '{s}': want RIP[:PORT]"))?;
    Ok(DestKey {
        addr: std::net::IpAddr::V4(addr),
        port: 0,
    })
}

/// `ADDR[/PREFIX]`, IPv4 or IPv6 (a bare address is /32 or /128).
fn parse_cidr(s: &str) -> Result<(IpAddr, u8), String> {
    if s.split('/').next().is_some_and(|a| a.contains(':')) {
        let c: Ipv6Cidr = s
            .parse()
            .map_err(|_| format!("bad address '{s}': not an IPv6 address with prefix length"))?;
        return Ok((Ipv6Addr::from(c.addr).into(), c.len));
    }
    let c: Ipv4Cidr = s.parse().map_err(|e| format!("bad address '{s}': {e}"))?;
    Ok((Ipv4Addr::from(c.addr).into(), c.len))
}

/// A mark rule from `dirigoctl mark add|del`'s words.
fn mark_rule(words: &[String]) -> Result<MarkRule, String> {
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    MarkRule::from_words(&w).map_err(|e| format!("bad mark rule '{}': {e}", words.join(" ")))
}

fn request(cmd: &Cmd) -> Result<Request, String> {
    Ok(match cmd {
        Cmd::Ports { xstats } => Request::Ports { xstats: *xstats },
        Cmd::Addr { op: AddrOp::List } => Request::Addresses,
        Cmd::Addr { op: AddrOp::Add(a) } => {
            let (addr, prefix_len) = parse_cidr(&a.addr)?;
            Request::AddrAdd {
                port: a.port,
                addr,
                prefix_len,
            }
        }
        Cmd::Addr { op: AddrOp::Del(a) } => {
            let (addr, _) = parse_cidr(&a.addr)?;
            Request::AddrDel { port: a.port, addr }
        }
        Cmd::Route { op: RouteOp::List } => Request::Routes,
        Cmd::Neigh { op: NeighOp::List } => Request::Neighbors,
        Cmd::Neigh {
            op: NeighOp::Add { addr, mac, port },
        } => Request::NeighAdd {
            port: *port,
            addr: *addr,
            mac: *mac,
        },
        Cmd::Neigh {
            op: NeighOp::Flush { port },
        } => Request::NeighFlush { port: *port },
        Cmd::Lcores => Request::Lcores,
        Cmd::Drops => Request::Drops,
        Cmd::Reload => Request::Reload,
        Cmd::Health {
            op: None | Some(HealthOp::Show),
        } => Request::Health,
        Cmd::Health {
            op: Some(HealthOp::Disable(a) | HealthOp::Enable(a)),
        } => Request::HealthSet {
            service: parse_service(&a.service)?,
            dest: parse_server(&a.server)?,
            enable: matches!(
                cmd,
                Cmd::Health {
                    op: Some(HealthOp::Enable(_))
                }
            ),
        },
        Cmd::Vips => Request::Vips,
        Cmd::Census => Request::Census,
        Cmd::Version => Request::Version,
        Cmd::Sync => Request::Sync,
        Cmd::Handoff => Request::Handoff,
        Cmd::Mark { op: MarkOp::List } => Request::Marks,
        Cmd::Snat { op: SnatOp::List } => Request::Snat,
        Cmd::Mark {
            op: MarkOp::Add { rule },
        } => Request::MarkAdd {
            rule: mark_rule(rule)?,
        },
        Cmd::Mark {
            op: MarkOp::Del { rule },
        } => Request::MarkDel {
            rule: mark_rule(rule)?,
        },
        Cmd::Fingerprint { service } => Request::Fingerprint {
            service: service.as_deref().map(parse_service).transpose()?,
        },
        Cmd::KeepalivedConvert { .. } => return Err("keepalived-convert needs no daemon".into()),
        Cmd::Top(_) => return Err("top is not one request".into()),
    })
}

fn render(resp: Response) -> String {
    match resp {
        Response::Done => String::new(),
        Response::Ports(p) => table::ports(&p),
        Response::Addresses(a) => table::addresses(&a),
        Response::Routes(r) => table::routes(&r),
        Response::Neighbors(n) => table::neighbors(&n),
        Response::Lcores(l) => table::lcores(&l),
        Response::Drops(d) => table::drops(&d),
        Response::Version(v) => table::version(&v),
        Response::Health(h) => table::health(&h),
        Response::Sync(s) => table::sync(s.as_ref()),
        Response::Handoff(h) => table::handoff(&h),
        Response::Fingerprints(f) => table::fingerprints(&f),
        Response::Vips(v) => table::vips(&v),
        Response::Census(c) => table::census(&c),
        Response::Marks(m) => m.iter().map(|r| format!("{r}\n")).collect(),
        Response::Snat(s) => {
            let mut out: String = s
                .rules
                .iter()
                .map(|r| format!("{}  conns {} live {}\n", r.rule, r.conns, r.live))
                .collect();
            out += &format!("snat connections {} of {}\n", s.live, s.bound);
            out
        }
        other => format!("{other:?}\n"),
    }
}

fn run(cli: Cli) -> Result<(), String> {
    let req = request(&cli.cmd)?;
    let path = socket_path(cli.socket.as_deref());
    let mut client =
        Client::connect(&path).map_err(|e| format!("cannot connect to dirigo: {e}"))?;
    if cli.json {
        let line = client.call_raw(req).map_err(|e| e.to_string())?;
        println!("{line}");
        let env: ResponseEnvelope =
            serde_json::from_str(&line).map_err(|e| format!("bad response from daemon: {e}"))?;
        return env.into_result().map(|_| ()).map_err(|e| e.msg);
    }
    match client.call(req) {
        Ok(Response::Census(c)) if c.iter().any(|w| !w.consistent) => {
            print!("{}", table::census(&c));
            Err("census: a worker's connection counts disagree".into())
        }
        Ok(resp) => {
            print!("{}", render(resp));
            Ok(())
        }
        Err(ClientError::Server(e)) => Err(e.msg),
        Err(e) => Err(e.to_string()),
    }
}

/// `keepalived-convert FILE`: the TOML on stdout only when the whole file
/// converted; each warning and the error as `file:line: ...` on stderr.
fn keepalived_convert(file: &std::path::Path) -> ExitCode {
    match keepalived::convert_file(file) {
        Ok(c) => {
            for w in &c.warnings {
                eprintln!("{w}");
            }
            print!("{}", c.toml);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// `top`: the live view, or `--once` frames.
fn run_top(cli: &Cli, a: &TopArgs) -> Result<(), String> {
    if cli.json {
        return Err("top has no JSON output (use lcores, drops or dirigoadm -L --stats)".into());
    }
    top::run(&top::Options {
        socket: socket_path(cli.socket.as_deref()),
        delay: a.delay,
        batch: a.once.then(|| a.iterations.unwrap_or(1)),
        color: top::color_allowed(),
    })
}

fn main() -> ExitCode {
    let cli: Cli = dirigo_proto::cli::parse();
    if let Cmd::KeepalivedConvert { file } = &cli.cmd {
        return keepalived_convert(file);
    }
    let res = match &cli.cmd {
        Cmd::Top(a) => run_top(&cli, a),
        _ => run(cli),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dirigoctl: {e}");
            ExitCode::FAILURE
        }
    }
}
