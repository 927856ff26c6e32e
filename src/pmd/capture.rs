//! Capture by DPDK's secondary processes (`dpdk-dumpcap`, `dpdk-pdump`):
//! [`Pdump::init`] starts the pdump library's server in this (primary)
//! process. When a capture tool asks, that server adds DPDK's own RX/TX
//! callbacks to the port's queues, which copy each packet into the tool's
//! mempool and ring; when it stops, they are removed. Nothing of dirigo's
//! fast path changes. The tool attaches to this process's shared memory,
//! so EAL must keep it in hugepage files (no `--in-memory`, `--no-shconf`,
//! `--no-huge`; `dirigo_config` refuses those with capture enabled).

use super::error::{DpdkError, Result};

/// The pdump server, running until dropped (`rte_pdump_uninit`).
#[derive(Debug)]
pub struct Pdump {
    _private: (),
}

impl Pdump {
    /// `rte_pdump_init`: answer the capture tools' requests from now on.
    /// Needs a live EAL with multi-process support.
    pub fn init() -> Result<Pdump> {
        if !super::eal::Eal::is_live() {
            return Err(DpdkError {
                what: "rte_pdump_init".into(),
                reason: "EAL is not initialised".into(),
            });
        }
        // SAFETY: EAL is live (checked above); the call registers a
        // multi-process action and reserves a memzone for its counters.
        let rc = unsafe { dpdk_sys::rte_pdump_init() };
        if rc < 0 {
            return Err(DpdkError::from_errno("rte_pdump_init"));
        }
        Ok(Pdump { _private: () })
    }
}

impl Drop for Pdump {
    fn drop(&mut self) {
        // SAFETY: the server was started by init; EAL is still live (the
        // daemon drops this before the Eal handle).
        unsafe {
            dpdk_sys::rte_pdump_uninit();
        }
    }
}
