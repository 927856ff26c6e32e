//! Why a buffer could not be viewed as a header.

/// Why a buffer could not be viewed as a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The buffer is shorter than the header (or than a length it states).
    Truncated,
    /// The IP version field is not the view's (4 for `ipv4`, 6 for `ipv6`).
    BadVersion,
    /// A header-length field is below the minimum (IHL < 5, TCP offset < 5).
    BadHeaderLen,
    /// A total-length field is inconsistent (below the header length or
    /// beyond the buffer).
    BadTotalLen,
    /// Fields describe a format dirigo does not handle (e.g. non-Ethernet/IPv4 ARP).
    Unsupported,
}
