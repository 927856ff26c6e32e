//! Whether a frame is addressed to a port (its MAC, or a group address),
//! shared by the burst loop and the early IPv6 stage.

/// Whether a frame is for a port whose MAC is `mac` (see `WorkerPipeline::for_us`).
#[inline]
pub(super) fn for_mac(frame: &[u8], mac: Option<[u8; 6]>) -> bool {
    if frame.len() < 14 {
        return true; // classify counts it as truncated
    }
    let Some(dst) = frame.get(0..6) else {
        return true;
    };
    if dst[0] & 1 != 0 {
        return true;
    }
    mac.is_some_and(|m| dst == m)
}
