//! dirigoadm's failure ([`AdmError`]) and how ipvsadm words the daemon's
//! errors ([`error_message`]).

use super::command::Command;
use crate::proto::{BatchCmd, CtlError, ErrCode};
use std::fmt;

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
