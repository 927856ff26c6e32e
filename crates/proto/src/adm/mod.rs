//! dirigoadm: ipvsadm's command line, semantics and output formats, kept
//! out of the binary so they are unit-testable.
//!
//! * [`args`] — `argv` → [`Command`] (ipvsadm 1.31 syntax and checks);
//! * [`format`](mod@format) — listings in ipvsadm's exact layouts, `-S` rules.

pub mod args;
pub mod format;
pub mod run;

use crate::proto::{BatchCmd, CtlError, ErrCode, ListOpts};
use dirigo_core::lb::spec::ServiceKey;
use std::fmt;
use std::path::PathBuf;

/// ipvsadm's defaults as constants.
pub mod defaults {
    /// Persistence timeout when `-p` has no value (seconds).
    pub const PERSISTENT_TIMEOUT: u32 = 300;
    /// Largest timeout ipvsadm accepts (31 days).
    pub const MAX_TIMEOUT: u32 = 86400 * 31;
    /// The version line IPVS prints.
    pub const IPVS_VERSION: &str = "1.2.1";
}

/// What to list and how (`-L` options).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListCmd {
    /// A single service (`-t`/`-u` with `-L`).
    pub service: Option<ServiceKey>,
    /// `-n` (dirigoadm always prints numerically; accepted for compatibility).
    pub numeric: bool,
    /// `--stats`.
    pub stats: bool,
    /// `--rate`.
    pub rate: bool,
    /// `--exact`.
    pub exact: bool,
    /// `-c`: connection entries.
    pub conns: bool,
    /// `--timeout`.
    pub timeout: bool,
    /// `--daemon`: the sync daemon.
    pub daemon: bool,
    /// `--thresholds`.
    pub thresholds: bool,
    /// `--persistent-conn`.
    pub persist_conn: bool,
    /// `--nosort`.
    pub nosort: bool,
}

/// One parsed dirigoadm invocation (or one `-R` line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// A change to the service table: `-A -E -D -C -a -e -d --set -Z`.
    Mutate(BatchCmd),
    /// `-L` / `-l` (and no arguments at all).
    List(ListCmd),
    /// `-S`.
    Save {
        /// `-n`.
        numeric: bool,
    },
    /// `-R`.
    Restore,
    /// `-h`.
    Help,
    /// `-v` / `--version`.
    Version,
}

/// A dirigoadm failure: the message and the process exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmError {
    /// Printed on stderr.
    pub msg: String,
    /// Exit status (2 = command line, 1 = refused by the daemon / I/O).
    pub exit: i32,
}

impl AdmError {
    /// A command-line error (exit 2).
    pub fn usage(msg: impl Into<String>) -> Self {
        AdmError {
            msg: msg.into(),
            exit: 2,
        }
    }
    /// A runtime error (exit 1).
    pub fn runtime(msg: impl Into<String>) -> Self {
        AdmError {
            msg: msg.into(),
            exit: 1,
        }
    }
}

impl fmt::Display for AdmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for AdmError {}

impl Command {
    /// The mutation a command sends (`None` for listings etc.).
    pub fn mutation(&self) -> Option<&BatchCmd> {
        match self {
            Command::Mutate(c) => Some(c),
            _ => None,
        }
    }
}

impl ListCmd {
    /// The listing request for these options.
    pub fn to_list_opts(&self) -> ListOpts {
        ListOpts {
            service: self.service,
            stats: self.stats,
            rate: self.rate,
        }
    }
}

/// How ipvsadm words a daemon error for `cmd` (libipvs's `ipvs_strerror`
/// table: dest commands say "Service not defined", service commands
/// "No such service").
pub fn error_message(cmd: &Command, e: &CtlError) -> String {
    let dest_cmd = cmd.mutation().is_some_and(BatchCmd::is_dest);
    match e.code {
        ErrCode::NoService if dest_cmd => "Service not defined".into(),
        ErrCode::NoService => "No such service".into(),
        ErrCode::ServiceExists => "Service already exists".into(),
        ErrCode::DestExists => "Destination already exists".into(),
        ErrCode::NoDest => "No such destination".into(),
        ErrCode::NoMemory => "Memory allocation problem".into(),
        _ => e.msg.clone(),
    }
}

/// Take `--socket PATH` / `--socket=PATH` out of `args` (dirigoadm's only
/// option beyond ipvsadm's). The first element (program name) is kept.
pub fn split_socket(args: &[String]) -> Result<(Option<PathBuf>, Vec<String>), AdmError> {
    let mut out = Vec::with_capacity(args.len());
    let mut sock = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--socket" {
            let v = it
                .next()
                .ok_or_else(|| AdmError::usage("option `--socket' requires an argument"))?;
            sock = Some(PathBuf::from(v));
        } else if let Some(v) = a.strip_prefix("--socket=") {
            sock = Some(PathBuf::from(v));
        } else {
            out.push(a.clone());
        }
    }
    Ok((sock, out))
}

/// Split a `-R` input line into words (whitespace separated, `"..."` and
/// `'...'` quoting, `#` starts a comment). Empty result = skip the line.
pub fn split_line(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c == '#' && !in_word => break,
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Parse ipvsadm-save text into `(line number, command)` pairs; a refused
/// line is `Err((line number, message))`. Every non-empty line must be a
/// mutating command. The one reader of the rule format: `-R` and the
/// daemon's state file both use it.
pub fn parse_rules(text: &str) -> Result<Vec<(usize, Command)>, (usize, String)> {
    let mut cmds = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut words = split_line(line);
        if words.is_empty() {
            continue;
        }
        words.insert(0, "dirigoadm".into());
        let cmd = args::parse(&words).map_err(|e| (n + 1, e.msg))?;
        if cmd.mutation().is_none() {
            return Err((n + 1, format!("not a rule: {}", line.trim())));
        }
        cmds.push((n + 1, cmd));
    }
    Ok(cmds)
}

/// Parse ipvsadm-save text (as `-R` reads it) into `(line number,
/// command)` pairs. Every non-empty line must be a mutating command.
pub fn parse_restore_lines(text: &str) -> Result<Vec<(usize, Command)>, AdmError> {
    parse_rules(text).map_err(|(n, msg)| AdmError::usage(format!("line {n}: {msg}")))
}

/// Parse ipvsadm-save text (as `-R` reads it) into one batch.
pub fn parse_restore(text: &str) -> Result<Vec<BatchCmd>, AdmError> {
    Ok(parse_restore_lines(text)?
        .iter()
        .filter_map(|(_, c)| c.mutation().cloned())
        .collect())
}

#[cfg(test)]
mod tests;
