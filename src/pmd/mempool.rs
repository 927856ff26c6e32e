//! Packet mbuf pools.

use super::error::{DpdkError, Result};
use std::ffi::CString;
use std::ptr::NonNull;

/// A packet mbuf pool (`rte_pktmbuf_pool_create`). Lives until EAL cleanup.
#[derive(Debug, Clone, Copy)]
pub struct Mempool {
    raw: NonNull<dpdk_sys::rte_mempool>,
}

// SAFETY: a DPDK mempool is designed for concurrent use from every lcore
// (per-lcore caches plus a lock-free ring); the handle is a plain pointer.
unsafe impl Send for Mempool {}
// SAFETY: as above; all operations on the pool are thread-safe.
unsafe impl Sync for Mempool {}

impl Mempool {
    /// Create a pool of `n` mbufs with a per-lcore cache of `cache` and the
    /// default data room (2048 + headroom).
    pub fn new(name: &str, n: u32, cache: u32) -> Result<Mempool> {
        Mempool::with_data_room(name, n, cache, dpdk_sys::RTE_MBUF_DEFAULT_BUF_SIZE as u16)
    }

    /// Create a pool of `n` mbufs whose data room (headroom included) is
    /// `data_room` bytes.
    pub fn with_data_room(name: &str, n: u32, cache: u32, data_room: u16) -> Result<Mempool> {
        let cname = CString::new(name).map_err(|_| DpdkError {
            what: "mempool create".into(),
            reason: "name contains NUL".into(),
        })?;
        // SAFETY: cname is a valid C string; the other arguments are plain
        // values. SOCKET_ID_ANY = -1.
        let p = unsafe {
            dpdk_sys::rte_pktmbuf_pool_create(cname.as_ptr(), n, cache, 0, data_room, -1)
        };
        NonNull::new(p)
            .map(|raw| Mempool { raw })
            .ok_or_else(|| DpdkError::from_errno(format!("mempool create '{name}' ({n} mbufs)")))
    }

    /// The raw pointer, for port queue setup and allocation.
    pub(crate) fn as_ptr(&self) -> *mut dpdk_sys::rte_mempool {
        self.raw.as_ptr()
    }

    /// Number of free mbufs (approximate while in use).
    pub fn available(&self) -> u32 {
        // SAFETY: the pool is live for the process lifetime.
        unsafe { dpdk_sys::dg_mempool_avail_count(self.raw.as_ptr()) }
    }

    /// Allocate one mbuf, or None when the pool is empty.
    #[inline]
    pub fn alloc(&self) -> Option<super::mbuf::Mbuf> {
        // SAFETY: the pool is live; a non-null return is an mbuf we own.
        let m = unsafe { dpdk_sys::dg_pktmbuf_alloc(self.raw.as_ptr()) };
        // SAFETY: m is null or a freshly allocated mbuf owned by the caller.
        unsafe { super::mbuf::Mbuf::from_raw(m) }
    }
}
