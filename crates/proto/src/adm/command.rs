//! What one dirigoadm invocation asks: [`Command`], and the listing
//! options of `-L` ([`ListCmd`]).

use crate::proto::{BatchCmd, ListOpts};
use dirigo_core::lb::spec::ServiceKey;

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
    /// `--tun-info`: each real server's tunnel (ipvsadm 1.31).
    pub tun_info: bool,
}

/// One parsed dirigoadm invocation (or one `-R` line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// A change to the service table: `-A -E -D -C -a -e -d --set -Z`.
    Mutate(BatchCmd),
    /// `-L` / `-l` (and no arguments at all).
    List(ListCmd),
    /// `--get-laddr` (DPVS's `-G`): the FullNAT local addresses.
    GetLaddr {
        /// Only this service.
        service: Option<ServiceKey>,
    },
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
