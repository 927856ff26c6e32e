//! The length check the views of a header that states its own length
//! share.

use super::error::WireError;

/// The length check of a header that states its own length (`stated`, read
/// only once `min` bytes are known to be there): the buffer holds `min`
/// bytes, the stated length is at least `min` and fits in the buffer.
#[inline]
pub(crate) fn check_stated_len(
    len: usize,
    min: usize,
    stated: impl FnOnce() -> usize,
) -> Result<(), WireError> {
    if len < min {
        return Err(WireError::Truncated);
    }
    let l = stated();
    if l < min {
        return Err(WireError::BadHeaderLen);
    }
    if l > len {
        return Err(WireError::Truncated);
    }
    Ok(())
}
