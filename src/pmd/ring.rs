//! rte_ring of mbufs: hands packets between lcores without locks.

use super::error::{DpdkError, Result};
use super::mbuf::{Burst, Mbuf, BURST};
use std::ffi::CString;
use std::ptr::NonNull;

/// A multi-producer/multi-consumer (or single, by flags) ring of mbufs.
#[derive(Debug)]
pub struct MbufRing {
    raw: NonNull<dpdk_sys::rte_ring>,
}

// SAFETY: rte_ring is a lock-free queue designed for use across lcores; the
// producer/consumer mode chosen at creation is respected by the owner.
unsafe impl Send for MbufRing {}
// SAFETY: as above.
unsafe impl Sync for MbufRing {}

impl MbufRing {
    /// Create a ring of `size` slots (a power of two). `single_producer` /
    /// `single_consumer` select the faster SP/SC modes.
    pub fn new(
        name: &str,
        size: u32,
        single_producer: bool,
        single_consumer: bool,
    ) -> Result<MbufRing> {
        let c = CString::new(name).map_err(|_| DpdkError {
            what: "ring create".into(),
            reason: "name contains NUL".into(),
        })?;
        let mut flags = 0u32;
        if single_producer {
            flags |= dpdk_sys::RING_F_SP_ENQ;
        }
        if single_consumer {
            flags |= dpdk_sys::RING_F_SC_DEQ;
        }
        // SAFETY: c is a valid C string; SOCKET_ID_ANY = -1.
        let r = unsafe { dpdk_sys::rte_ring_create(c.as_ptr(), size, -1, flags) };
        NonNull::new(r)
            .map(|raw| MbufRing { raw })
            .ok_or_else(|| DpdkError::from_errno(format!("ring create '{name}'")))
    }

    /// Enqueue one mbuf; gives it back when the ring is full.
    #[inline]
    pub fn enqueue(&self, m: Mbuf) -> std::result::Result<(), Mbuf> {
        let p = m.into_raw();
        let objs = [p as *mut std::os::raw::c_void];
        // SAFETY: objs holds one valid mbuf pointer; on success the ring owns it.
        let n = unsafe { dpdk_sys::dg_ring_enqueue_burst(self.raw.as_ptr(), objs.as_ptr(), 1) };
        if n == 1 {
            Ok(())
        } else {
            // SAFETY: not enqueued, so we still own p.
            Err(unsafe { Mbuf::from_raw(p) }.expect("non-null"))
        }
    }

    /// Dequeue into the free space of `burst`; returns how many.
    #[inline]
    pub fn dequeue(&self, burst: &mut Burst) -> usize {
        let len = burst.len();
        let room = BURST - len;
        if room == 0 {
            return 0;
        }
        // SAFETY: slots len..BURST are free; the ring hands over ownership
        // of n valid mbuf pointers.
        let n = unsafe {
            dpdk_sys::dg_ring_dequeue_burst(
                self.raw.as_ptr(),
                burst.raw_slots().add(len) as *mut *mut std::os::raw::c_void,
                room as u32,
            )
        } as usize;
        // SAFETY: the n new slots were just filled with owned mbufs.
        unsafe { burst.set_len(len + n) };
        n
    }

    /// Number of mbufs queued.
    pub fn count(&self) -> u32 {
        // SAFETY: the ring is live.
        unsafe { dpdk_sys::dg_ring_count(self.raw.as_ptr()) }
    }
}

impl Drop for MbufRing {
    fn drop(&mut self) {
        let mut b = Burst::new();
        while self.dequeue(&mut b) > 0 {
            b.free_all();
        }
        // SAFETY: the ring is empty and no other handle uses it.
        unsafe { dpdk_sys::rte_ring_free(self.raw.as_ptr()) };
    }
}
