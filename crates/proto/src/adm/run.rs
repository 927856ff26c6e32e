//! dirigoadm's driver: parse, talk to the daemon, print.

use super::command::Command;
use super::error::{error_message, AdmError};
use super::rules::parse_restore_lines;
use super::socket::split_socket;
use super::{args, format};
use crate::client::{socket_path, Client, ClientError};
use crate::proto::{ListOpts, Request, Response};
use std::io::{Read, Write};
use std::path::Path;

fn connect(path: &Path) -> Result<Client, AdmError> {
    Client::connect(path).map_err(|e| {
        AdmError::usage(format!(
            "Can't initialize ipvs: {e}\nAre you sure that dirigo is running?"
        ))
    })
}

fn call(client: &mut Client, cmd: &Command, req: Request) -> Result<Response, AdmError> {
    client.call(req).map_err(|e| match e {
        ClientError::Server(se) => AdmError::runtime(error_message(cmd, &se)),
        other => AdmError::runtime(other.to_string()),
    })
}

fn unexpected(r: Response) -> AdmError {
    AdmError::runtime(format!("unexpected response from daemon: {r:?}"))
}

/// Run one dirigoadm invocation: `args` is the full argv, `input` is read
/// for `-R`, output goes to `out`. Socket discovery: `--socket`, then
/// `$DIRIGO_SOCKET`, then the default path.
pub fn run(args: &[String], input: &mut dyn Read, out: &mut dyn Write) -> Result<(), AdmError> {
    let (sock, args) = split_socket(args)?;
    let prog = args.first().map(String::as_str).unwrap_or("dirigoadm");
    let cmd = args::parse(&args)?;
    let text = match &cmd {
        Command::Help => format::usage(prog),
        Command::Version => format::version(),
        _ => {
            let path = socket_path(sock.as_deref());
            let mut client = connect(&path)?;
            execute(&mut client, &cmd, input)?
        }
    };
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| AdmError::runtime(format!("write: {e}")))
}

/// Execute a parsed command against a connected daemon; returns the text to
/// print.
pub fn execute(
    client: &mut Client,
    cmd: &Command,
    input: &mut dyn Read,
) -> Result<String, AdmError> {
    match cmd {
        Command::List(l) if l.conns => {
            match call(
                client,
                cmd,
                Request::ListConns {
                    service: None,
                    limit: None,
                },
            )? {
                Response::Conns(c) => Ok(format::conns(&c)),
                r => Err(unexpected(r)),
            }
        }
        Command::List(l) if l.daemon => match call(client, cmd, Request::Sync)? {
            Response::Sync(s) => Ok(format::daemon(s.as_ref())),
            r => Err(unexpected(r)),
        },
        Command::List(l) if l.timeout => match call(client, cmd, Request::GetTimeouts)? {
            Response::Timeouts(t) => Ok(format::timeouts(&t)),
            r => Err(unexpected(r)),
        },
        Command::List(l) => match call(client, cmd, Request::List(l.to_list_opts()))? {
            Response::Services(s) => Ok(format::list(&s, l)),
            r => Err(unexpected(r)),
        },
        Command::GetLaddr { service } => {
            let opts = ListOpts {
                service: *service,
                ..ListOpts::default()
            };
            match call(client, cmd, Request::List(opts))? {
                Response::Services(s) => Ok(format::laddrs(&s)),
                r => Err(unexpected(r)),
            }
        }
        Command::Save { .. } => match call(client, cmd, Request::List(ListOpts::default()))? {
            Response::Services(s) => Ok(format::save(&s)),
            r => Err(unexpected(r)),
        },
        Command::Restore => {
            let mut text = String::new();
            input
                .read_to_string(&mut text)
                .map_err(|e| AdmError::runtime(format!("reading stdin: {e}")))?;
            let lines = parse_restore_lines(&text)?;
            let cmds = lines
                .iter()
                .filter_map(|(_, c)| c.mutation().cloned())
                .collect();
            match client.call(Request::RestoreBatch { cmds }) {
                Ok(_) => Ok(String::new()),
                Err(ClientError::Server(se)) => {
                    let at = se.at.and_then(|i| lines.get(i as usize));
                    Err(AdmError::runtime(match at {
                        Some((line, c)) => format!("line {line}: {}", error_message(c, &se)),
                        None => error_message(cmd, &se),
                    }))
                }
                Err(e) => Err(AdmError::runtime(e.to_string())),
            }
        }
        Command::Mutate(c) => {
            call(client, cmd, Request::Mutate(c.clone()))?;
            Ok(String::new())
        }
        Command::Help | Command::Version => Err(AdmError::usage("nothing to do")),
    }
}
