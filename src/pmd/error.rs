//! The pmd layer's error: what was attempted and DPDK's reason.

use std::ffi::CStr;

/// An error from DPDK: what was attempted and DPDK's reason.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {reason}")]
pub struct DpdkError {
    /// The operation that failed.
    pub what: String,
    /// DPDK's error text.
    pub reason: String,
}

impl DpdkError {
    /// Build from a negative errno-style return code (or rte_errno).
    pub fn from_code(what: impl Into<String>, code: i32) -> Self {
        let code = code.abs();
        // SAFETY: rte_strerror returns a pointer to a static or thread-local
        // NUL-terminated string for any errno value.
        let reason = unsafe { CStr::from_ptr(dpdk_sys::rte_strerror(code)) }
            .to_string_lossy()
            .into_owned();
        DpdkError {
            what: what.into(),
            reason,
        }
    }

    /// Build from the current `rte_errno`.
    pub fn from_errno(what: impl Into<String>) -> Self {
        // SAFETY: reads the per-thread rte_errno; no preconditions.
        let code = unsafe { dpdk_sys::dg_errno() };
        Self::from_code(what, code)
    }
}

/// Result alias for the pmd layer.
pub type Result<T> = std::result::Result<T, DpdkError>;
