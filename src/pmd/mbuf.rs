//! Owned mbufs and fixed-size bursts.
//!
//! [`Mbuf`] is `repr(transparent)` over a non-null `rte_mbuf` pointer, so a
//! burst's array can be handed to `rte_eth_rx_burst`/`tx_burst` as is and
//! to the core as `&mut [Mbuf]` without a foreign call per packet. Packet
//! data access (`mtod`, length, prepend/adj/trim/append) is done here in
//! Rust on the mbuf fields, for single-segment mbufs (dirigo configures no
//! scatter; a multi-segment mbuf is handled by the core as its first
//! segment only, and classify drops it as truncated if headers do not fit).

use crate::net::buf::PacketBuf;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// An mbuf owned by this handle; freed on drop.
#[repr(transparent)]
#[derive(Debug)]
pub struct Mbuf {
    raw: NonNull<dpdk_sys::rte_mbuf>,
}

// SAFETY: an mbuf is owned by exactly one handle; moving it to another
// lcore (rings) is how DPDK is meant to be used.
unsafe impl Send for Mbuf {}

impl Mbuf {
    /// Wrap a raw mbuf pointer (None for null).
    ///
    /// # Safety
    /// `raw` must be null or an mbuf whose ownership passes to the handle.
    #[inline]
    pub(crate) unsafe fn from_raw(raw: *mut dpdk_sys::rte_mbuf) -> Option<Mbuf> {
        NonNull::new(raw).map(|raw| Mbuf { raw })
    }

    /// Give up ownership, returning the raw pointer.
    #[inline]
    pub(crate) fn into_raw(self) -> *mut dpdk_sys::rte_mbuf {
        let p = self.raw.as_ptr();
        std::mem::forget(self);
        p
    }

    #[inline]
    fn m(&self) -> &dpdk_sys::rte_mbuf {
        // SAFETY: we own a live mbuf.
        unsafe { self.raw.as_ref() }
    }

    #[inline]
    fn m_mut(&mut self) -> &mut dpdk_sys::rte_mbuf {
        // SAFETY: we own a live mbuf exclusively.
        unsafe { self.raw.as_mut() }
    }

    /// Port the mbuf was received on.
    #[inline]
    pub fn port(&self) -> u16 {
        self.m().port
    }

    /// Set the port field (dirigo uses it to tell the worker which port an
    /// injected packet leaves on).
    #[inline]
    pub fn set_port(&mut self, port: u16) {
        self.m_mut().port = port;
    }

    /// Bytes of headroom in front of the data.
    #[inline]
    pub fn headroom(&self) -> usize {
        self.m().data_off as usize
    }

    /// Bytes of room after the data in this segment.
    #[inline]
    pub fn tailroom(&self) -> usize {
        let m = self.m();
        m.buf_len as usize - m.data_off as usize - m.data_len as usize
    }

    /// The offload flags.
    #[inline]
    pub fn ol_flags(&self) -> u64 {
        self.m().ol_flags
    }

    /// Set the TX offload flags and header lengths (for checksum offload).
    #[inline]
    pub fn set_tx_offload(&mut self, flags: u64, l2_len: u8, l3_len: u16) {
        let m = self.m_mut();
        m.ol_flags |= flags;
        // tx_offload bitfield: l2_len:7, l3_len:9, l4_len:8, ...
        // SAFETY: writing the plain u64 view of the tx_offload union.
        unsafe {
            let t = &mut m.__bindgen_anon_3.tx_offload;
            *t = (*t & !0xffff) | (l2_len as u64 & 0x7f) | ((l3_len as u64 & 0x1ff) << 7);
        }
    }

    /// The RSS hash the NIC computed, if any.
    #[inline]
    pub fn rss_hash(&self) -> Option<u32> {
        // SAFETY: reading a constant exported by the shim.
        let flag = unsafe { dpdk_sys::DG_MBUF_F_RX_RSS_HASH };
        if self.m().ol_flags & flag != 0 {
            // SAFETY: the hash union member is valid when the flag is set.
            Some(unsafe { self.m().__bindgen_anon_2.hash.rss })
        } else {
            None
        }
    }

    #[inline]
    fn set_lens(&mut self, data_off: u16, data_len: u16) {
        let m = self.m_mut();
        let diff = data_len as i64 - m.data_len as i64;
        m.data_off = data_off;
        m.data_len = data_len;
        m.pkt_len = (m.pkt_len as i64 + diff) as u32;
    }
}

impl PacketBuf for Mbuf {
    #[inline]
    fn data(&self) -> &[u8] {
        let m = self.m();
        // SAFETY: buf_addr + data_off .. + data_len lies inside the mbuf's
        // data buffer, which we own for the lifetime of &self.
        unsafe {
            std::slice::from_raw_parts(
                (m.buf_addr as *const u8).add(m.data_off as usize),
                m.data_len as usize,
            )
        }
    }

    #[inline]
    fn data_mut(&mut self) -> &mut [u8] {
        let m = self.m();
        // SAFETY: as in data(), and &mut self gives exclusive access.
        unsafe {
            std::slice::from_raw_parts_mut(
                (m.buf_addr as *mut u8).add(m.data_off as usize),
                m.data_len as usize,
            )
        }
    }

    #[inline]
    fn prepend(&mut self, n: usize) -> bool {
        let (off, len) = (self.m().data_off as usize, self.m().data_len as usize);
        if n > off {
            return false;
        }
        self.set_lens((off - n) as u16, (len + n) as u16);
        true
    }

    #[inline]
    fn adj(&mut self, n: usize) -> bool {
        let (off, len) = (self.m().data_off as usize, self.m().data_len as usize);
        if n > len {
            return false;
        }
        self.set_lens((off + n) as u16, (len - n) as u16);
        true
    }

    #[inline]
    fn trim_to(&mut self, new_len: usize) -> bool {
        let (off, len) = (self.m().data_off, self.m().data_len as usize);
        if new_len > len {
            return false;
        }
        self.set_lens(off, new_len as u16);
        true
    }

    #[inline]
    fn append(&mut self, n: usize) -> bool {
        if n > self.tailroom() {
            return false;
        }
        let (off, len) = (self.m().data_off, self.m().data_len as usize);
        self.set_lens(off, (len + n) as u16);
        true
    }
}

impl Drop for Mbuf {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: we own the mbuf; it is not used after this.
        unsafe { dpdk_sys::dg_pktmbuf_free(self.raw.as_ptr()) }
    }
}

/// Maximum burst size dirigo uses (the crate's one burst size).
pub use crate::net::buf::BURST;

/// A burst of up to [`BURST`] owned mbufs.
pub struct Burst {
    pkts: [MaybeUninit<Mbuf>; BURST],
    len: usize,
}

impl Default for Burst {
    fn default() -> Self {
        Self::new()
    }
}

impl Burst {
    /// An empty burst.
    #[inline]
    pub fn new() -> Burst {
        Burst {
            // SAFETY: an array of MaybeUninit needs no initialisation.
            pkts: unsafe { MaybeUninit::uninit().assume_init() },
            len: 0,
        }
    }

    /// Number of mbufs held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when full.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == BURST
    }

    /// Receive up to the free space from `port`/`queue`, appending.
    /// Returns the number received.
    #[inline]
    pub fn rx(&mut self, port: u16, queue: u16) -> usize {
        let room = BURST - self.len;
        // SAFETY: the slots from len..BURST are free; Mbuf has the layout of
        // *mut rte_mbuf, and rx_burst writes at most `room` valid pointers
        // whose ownership passes to us.
        let n = unsafe {
            dpdk_sys::dg_rx_burst(
                port,
                queue,
                self.pkts.as_mut_ptr().add(self.len) as *mut *mut dpdk_sys::rte_mbuf,
                room as u16,
            )
        } as usize;
        self.len += n;
        n
    }

    /// Add an mbuf; gives it back when the burst is full.
    #[inline]
    pub fn push(&mut self, m: Mbuf) -> Result<(), Mbuf> {
        if self.len == BURST {
            return Err(m);
        }
        self.pkts[self.len].write(m);
        self.len += 1;
        Ok(())
    }

    /// The mbufs as a mutable slice.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Mbuf] {
        // SAFETY: the first len slots are initialised Mbufs.
        unsafe { std::slice::from_raw_parts_mut(self.pkts.as_mut_ptr() as *mut Mbuf, self.len) }
    }

    /// The mbufs as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[Mbuf] {
        // SAFETY: the first len slots are initialised Mbufs.
        unsafe { std::slice::from_raw_parts(self.pkts.as_ptr() as *const Mbuf, self.len) }
    }

    /// Take every mbuf out, in order, leaving the burst empty.
    #[inline]
    pub fn drain(&mut self) -> Drain<'_> {
        let len = self.len;
        self.len = 0;
        Drain {
            burst: self,
            pos: 0,
            len,
        }
    }

    /// Transmit everything on `port`/`queue`. Mbufs the driver does not
    /// accept are freed; returns (sent, dropped).
    #[inline]
    pub fn tx(&mut self, port: u16, queue: u16) -> (usize, usize) {
        if self.len == 0 {
            return (0, 0);
        }
        // SAFETY: the first len slots are valid mbuf pointers; tx_burst takes
        // ownership of the first `sent`.
        let sent = unsafe {
            dpdk_sys::dg_tx_burst(
                port,
                queue,
                self.pkts.as_mut_ptr() as *mut *mut dpdk_sys::rte_mbuf,
                self.len as u16,
            )
        } as usize;
        let dropped = self.len - sent;
        if dropped > 0 {
            // SAFETY: slots sent..len are still ours; free them in bulk.
            unsafe {
                dpdk_sys::dg_pktmbuf_free_bulk(
                    self.pkts.as_mut_ptr().add(sent) as *mut *mut dpdk_sys::rte_mbuf,
                    dropped as u32,
                )
            };
        }
        self.len = 0;
        (sent, dropped)
    }

    /// Free every mbuf in one call.
    #[inline]
    pub fn free_all(&mut self) {
        if self.len > 0 {
            // SAFETY: the first len slots are valid mbufs we own.
            unsafe {
                dpdk_sys::dg_pktmbuf_free_bulk(
                    self.pkts.as_mut_ptr() as *mut *mut dpdk_sys::rte_mbuf,
                    self.len as u32,
                )
            };
            self.len = 0;
        }
    }

    /// Raw slot pointer for ring transfers.
    #[inline]
    pub(crate) fn raw_slots(&mut self) -> *mut *mut dpdk_sys::rte_mbuf {
        self.pkts.as_mut_ptr() as *mut *mut dpdk_sys::rte_mbuf
    }

    /// Set the length after a raw fill of slots len..len+n.
    ///
    /// # Safety
    /// The slots must hold valid owned mbufs.
    #[inline]
    pub(crate) unsafe fn set_len(&mut self, len: usize) {
        self.len = len;
    }
}

impl Drop for Burst {
    fn drop(&mut self) {
        self.free_all();
    }
}

/// Iterator taking the mbufs out of a [`Burst`].
pub struct Drain<'a> {
    burst: &'a mut Burst,
    pos: usize,
    len: usize,
}

impl Iterator for Drain<'_> {
    type Item = Mbuf;
    #[inline]
    fn next(&mut self) -> Option<Mbuf> {
        if self.pos == self.len {
            return None;
        }
        // SAFETY: slot pos < len is initialised and is read exactly once.
        let m = unsafe { self.burst.pkts[self.pos].assume_init_read() };
        self.pos += 1;
        Some(m)
    }
}

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        for m in self.by_ref() {
            drop(m);
        }
    }
}
