//! ipvsadm 1.31's command line: short and long options, bundling (`-Ln`),
//! attached values (`-t1.2.3.4:80`, `--weight=3`), `-p`'s optional value,
//! the command/option compatibility checks and ipvsadm's error wording.
//!
//! `options` tokenizes and checks (`refused` lists the ipvsadm options
//! dirigoadm refuses, with their reasons), `values` parses option values, `gather`
//! collects them and `build` makes the [`Command`] that [`parse`] returns. [`command`] describes the same options
//! to clap, for the man page and the shell completions.

mod build;
mod describe;
mod gather;
mod options;
pub mod refused;
mod values;

pub use describe::command;
pub use values::{lookup_service, parse_addr_port};

use super::command::{Command, ListCmd};
use super::error::AdmError;
use gather::Given;
use options::{check, tokenize};

/// Parse a full argv (`args[0]` is the program name) into a [`Command`].
pub fn parse(args: &[String]) -> Result<Command, AdmError> {
    if args.len() <= 1 {
        return Ok(Command::List(ListCmd::default()));
    }
    let (opts, pos) = tokenize(args)?;
    let mut given = Given::default();
    for (o, val) in opts {
        if let Some(done) = given.take(o, val.unwrap_or_default())? {
            return Ok(done);
        }
    }
    let cmd = given.cmd.ok_or_else(|| {
        AdmError::usage("Try `ipvsadm -h' or 'ipvsadm --help' for more information.")
    })?;
    build::check_positionals(cmd, &pos)?;
    check(cmd, &given.seen)?;
    build::build(cmd, given, &pos)
}
