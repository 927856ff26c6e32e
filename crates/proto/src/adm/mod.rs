//! dirigoadm: ipvsadm's command line, semantics and output formats, kept
//! out of the binary so they are unit-testable.
//!
//! * [`args`] — `argv` → [`Command`] (ipvsadm 1.31 syntax and checks);
//! * [`format`](mod@format) — listings in ipvsadm's exact layouts, `-S` rules;
//! * [`command`] — the parsed invocation ([`Command`], [`ListCmd`]);
//! * [`error`] — [`AdmError`] and ipvsadm's wording of daemon errors;
//! * [`rules`] — ipvsadm-save text read back (`-R`, the state file);
//! * [`socket`] — the `--socket PATH` option;
//! * [`defaults`] — ipvsadm's defaults;
//! * [`run`] — the driver: parse, talk to the daemon, print.

pub mod args;
pub mod command;
pub mod defaults;
pub mod error;
pub mod format;
pub mod rules;
pub mod run;
pub mod socket;

pub use command::{Command, ListCmd};
pub use error::{error_message, AdmError};
pub use rules::{parse_restore, parse_restore_lines, parse_rules, split_line};
pub use socket::split_socket;

#[cfg(test)]
mod tests;
