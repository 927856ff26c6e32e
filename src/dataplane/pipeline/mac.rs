//! Whether a frame is addressed to a port (its MAC, or a group address),
//! shared by the burst loop and the early IPv6 stage.
//!
//! The test is one 8-byte load: the destination MAC is the frame's first
//! six bytes, read little-endian with the two bytes after it masked off,
//! against the port's MAC as the same word ([`MacWord`]), computed once per
//! burst.

/// A port's MAC as the low 48 bits of a little-endian word, or
/// [`MacWord::NONE`] for a port that has none (which no frame matches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MacWord(u64);

/// The low 48 bits: a MAC's six bytes.
const MAC_BITS: u64 = (1 << 48) - 1;

impl MacWord {
    /// No MAC: above 48 bits, so no masked frame word equals it.
    pub(super) const NONE: MacWord = MacWord(u64::MAX);

    /// `mac` as a word, or [`Self::NONE`].
    #[inline]
    pub(super) fn of(mac: Option<[u8; 6]>) -> MacWord {
        match mac {
            Some(m) => {
                let mut w = [0u8; 8];
                w[..6].copy_from_slice(&m);
                MacWord(u64::from_le_bytes(w))
            }
            None => MacWord::NONE,
        }
    }
}

/// Whether a frame is for a port whose MAC is `mac` (see `WorkerPipeline::for_us`):
/// its destination is that MAC or a group address (the I/G bit, the first
/// byte's lowest). A frame shorter than an Ethernet header is "ours": classify
/// counts it as truncated.
#[inline(always)]
pub(super) fn for_mac(frame: &[u8], mac: MacWord) -> bool {
    let Some(h) = frame.get(..14) else {
        return true;
    };
    let Ok(w): Result<[u8; 8], _> = h[..8].try_into() else {
        return true;
    };
    let dst = u64::from_le_bytes(w) & MAC_BITS;
    dst & 1 != 0 || dst == mac.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];

    fn frame(dst: [u8; 6], len: usize) -> Vec<u8> {
        let mut f = vec![0xeeu8; len];
        f[..6].copy_from_slice(&dst[..]);
        f
    }

    #[test]
    fn ours_group_and_others() {
        let m = MacWord::of(Some(OURS));
        assert!(for_mac(&frame(OURS, 60), m));
        assert!(for_mac(&frame([0xff; 6], 60), m), "broadcast");
        assert!(
            for_mac(&frame([0x33, 0x33, 0, 0, 0, 1], 60), m),
            "IPv6 multicast"
        );
        assert!(
            for_mac(&frame([0x01, 0, 0x5e, 0, 0, 1], 60), m),
            "IPv4 multicast"
        );
        let mut other = OURS;
        other[5] = 2;
        assert!(!for_mac(&frame(other, 60), m), "another host");
        other = OURS;
        other[0] = 0x06;
        assert!(!for_mac(&frame(other, 60), m), "another host, first byte");
        // the bytes after the destination (the source MAC) do not matter
        let mut f = frame(OURS, 60);
        f[6..8].copy_from_slice(&[0, 0]);
        assert!(for_mac(&f, m));
    }

    #[test]
    fn no_mac_matches_only_groups() {
        let m = MacWord::of(None);
        assert_eq!(m, MacWord::NONE);
        assert!(!for_mac(&frame(OURS, 60), m));
        assert!(!for_mac(&frame([0; 6], 60), m));
        assert!(for_mac(&frame([0xff; 6], 60), m));
    }

    #[test]
    fn short_frames_are_ours() {
        let m = MacWord::of(Some(OURS));
        for len in 0..14 {
            let f = vec![0x02u8; len];
            assert!(for_mac(&f, m), "length {len}");
        }
    }
}
