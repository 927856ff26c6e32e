//! The packet buffer the sans-IO core works on.
//!
//! the daemon's `pmd` implements [`PacketBuf`] for a DPDK mbuf; tests use [`VecBuf`].
//! The core may rewrite bytes in place, prepend a header into headroom
//! (IPIP), or strip/trim bytes, so that one packet in becomes at most one
//! packet out without copying or allocating.

/// A contiguous packet with headroom in front of its data.
/// Packets dirigo handles at once: the worker's rx burst, a TX batch, a
/// steering-ring dequeue, and the largest slice the burst paths of the
/// pipeline and the balancer stage (hash, prefetch) in one pass. The one
/// burst size of the crate.
pub const BURST: usize = 32;

pub trait PacketBuf {
    /// The packet bytes, starting at the Ethernet header.
    fn data(&self) -> &[u8];
    /// The packet bytes, mutable.
    fn data_mut(&mut self) -> &mut [u8];
    /// Grow the packet at the front by `n` bytes (taken from headroom).
    /// Returns false, changing nothing, when headroom is too small.
    fn prepend(&mut self, n: usize) -> bool;
    /// Remove `n` bytes from the front. False (no change) when `n > len`.
    fn adj(&mut self, n: usize) -> bool;
    /// Shorten the packet to `len` bytes. False (no change) when longer.
    fn trim_to(&mut self, len: usize) -> bool;
    /// Grow the packet at the tail by `n` bytes (contents unspecified).
    /// False (no change) when tailroom is too small.
    fn append(&mut self, n: usize) -> bool;
    /// Length of the packet in bytes.
    fn len(&self) -> usize {
        self.data().len()
    }
    /// True when the packet holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A heap buffer with headroom, for tests, benchmarks and the control thread.
#[derive(Clone, Debug)]
pub struct VecBuf {
    buf: Vec<u8>,
    head: usize,
    tail: usize,
    /// Headroom given at construction (restored by [`VecBuf::load`]).
    room: usize,
}

impl VecBuf {
    /// Default headroom, the same as DPDK's RTE_PKTMBUF_HEADROOM.
    pub const HEADROOM: usize = 128;

    /// A buffer holding `bytes` with [`Self::HEADROOM`] bytes in front and
    /// room to grow to 2048 bytes of data.
    pub fn new(bytes: &[u8]) -> Self {
        Self::with_room(bytes, Self::HEADROOM, 2048usize.saturating_sub(bytes.len()))
    }

    /// A buffer with explicit headroom and tailroom.
    pub fn with_room(bytes: &[u8], headroom: usize, tailroom: usize) -> Self {
        let mut buf = vec![0u8; headroom + bytes.len() + tailroom];
        buf[headroom..headroom + bytes.len()].copy_from_slice(bytes);
        VecBuf {
            buf,
            head: headroom,
            tail: headroom + bytes.len(),
            room: headroom,
        }
    }

    /// Replace the contents with `bytes` (truncated to the room there is),
    /// restoring the original headroom, without allocating: one buffer can
    /// carry many packets (benchmarks).
    pub fn load(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - self.room);
        self.head = self.room;
        self.tail = self.room + n;
        self.buf[self.head..self.tail].copy_from_slice(&bytes[..n]);
    }

    /// Bytes of headroom left.
    pub fn headroom(&self) -> usize {
        self.head
    }

    /// The packet as an owned vector.
    pub fn to_vec(&self) -> Vec<u8> {
        self.data().to_vec()
    }
}

impl PacketBuf for VecBuf {
    #[inline]
    fn data(&self) -> &[u8] {
        &self.buf[self.head..self.tail]
    }
    #[inline]
    fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.head..self.tail]
    }
    #[inline]
    fn prepend(&mut self, n: usize) -> bool {
        if n > self.head {
            return false;
        }
        self.head -= n;
        true
    }
    #[inline]
    fn adj(&mut self, n: usize) -> bool {
        if n > self.tail - self.head {
            return false;
        }
        self.head += n;
        true
    }
    #[inline]
    fn trim_to(&mut self, len: usize) -> bool {
        if len > self.tail - self.head {
            return false;
        }
        self.tail = self.head + len;
        true
    }
    #[inline]
    fn append(&mut self, n: usize) -> bool {
        if self.tail + n > self.buf.len() {
            return false;
        }
        self.tail += n;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vecbuf_ops() {
        let mut b = VecBuf::with_room(&[1, 2, 3, 4], 2, 1);
        assert!(!b.prepend(3));
        assert!(b.prepend(2));
        assert_eq!(b.len(), 6);
        b.data_mut()[0] = 9;
        assert_eq!(b.data()[..3], [9, 0, 1]);
        assert!(b.adj(2));
        assert_eq!(b.data(), &[1, 2, 3, 4]);
        assert!(!b.adj(5));
        assert!(b.append(1));
        assert!(!b.append(1));
        assert!(b.trim_to(2));
        assert_eq!(b.data(), &[1, 2]);
        assert!(!b.trim_to(3));
        b.load(&[7, 8, 9]);
        assert_eq!(b.data(), &[7, 8, 9]);
        assert_eq!(b.headroom(), 2);
        b.load(&[1; 10]);
        assert_eq!(b.len(), 5, "truncated to the buffer");
    }
}
