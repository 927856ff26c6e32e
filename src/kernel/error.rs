//! [`KernelError`], the one-line failure of a namespace or interface
//! operation, and how its parts are printed.

use std::fmt;
use std::io;

/// A failure to configure a namespace or an interface, printed as one line
/// (`netns 'x': cannot create /run/netns/x: Permission denied`).
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// A namespace operation (a file, mount or namespace system call) failed.
    #[error("netns '{name}': {what}: {}", ErrText(.err))]
    Netns {
        /// The namespace's name.
        name: String,
        /// What was attempted (`cannot create /run/netns/x`).
        what: String,
        /// The system's reason.
        err: io::Error,
    },
    /// A name was refused before anything was attempted.
    #[error("{kind} '{name}': invalid name: {why}")]
    InvalidName {
        /// `netns` or `interface`.
        kind: &'static str,
        /// The name as given (escaped if it has control characters).
        name: String,
        /// Why it is refused (one sentence).
        why: String,
    },
    /// The kernel refused a netlink request, or the socket failed.
    #[error("{target}: {what}: {}{}", ErrText(.err), Extack(.extack))]
    Netlink {
        /// The interface (`interface 'eth0'`, `link 7`) or `netlink`.
        target: String,
        /// What was attempted (`cannot set MTU 9000`).
        what: String,
        /// The errno's text (from the kernel's negative error code).
        err: io::Error,
        /// The kernel's extended-ack message, when it sent one.
        extack: Option<String>,
    },
    /// The kernel's answer could not be understood.
    #[error("{target}: {what}: malformed netlink reply: {why}")]
    Reply {
        /// As in [`KernelError::Netlink`].
        target: String,
        /// What was attempted.
        what: String,
        /// What was wrong with the reply.
        why: String,
    },
}

impl KernelError {
    /// The errno behind this error, when there is one (`libc::ENODEV`, ...).
    pub fn errno(&self) -> Option<i32> {
        match self {
            KernelError::Netns { err, .. } | KernelError::Netlink { err, .. } => err.raw_os_error(),
            KernelError::InvalidName { .. } | KernelError::Reply { .. } => None,
        }
    }
}

/// Formats an `io::Error` as the system's text alone (`No such device`,
/// not `No such device (os error 19)`), as `ip` prints it.
struct ErrText<'a>(&'a io::Error);

impl fmt::Display for ErrText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.to_string();
        match self.0.raw_os_error() {
            Some(code) => {
                let suffix = format!(" (os error {code})");
                f.write_str(text.strip_suffix(&suffix).unwrap_or(&text))
            }
            None => f.write_str(&text),
        }
    }
}

/// Formats the optional extended-ack text as ` (text)`.
struct Extack<'a>(&'a Option<String>);

impl fmt::Display for Extack<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(m) if !m.is_empty() => write!(f, " ({m})"),
            _ => Ok(()),
        }
    }
}

/// A name as it may be shown on one line: control characters escaped.
pub(super) fn printable(name: &str) -> String {
    if name.chars().any(char::is_control) {
        name.escape_debug().to_string()
    } else {
        name.to_string()
    }
}
