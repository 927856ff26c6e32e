//! Why a packet could not be forwarded ([`XmitError`]).

/// Why a packet could not be forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XmitError {
    /// No route to the next destination.
    NoRoute,
    /// Neighbor MAC not yet resolved (the packet is left as it was).
    Unresolved,
    /// Encapsulated packet exceeds the egress MTU and may be fragmented —
    /// dirigo does not fragment, so it is dropped.
    TooBig,
    /// Encapsulated packet exceeds the egress MTU with DF set: the caller
    /// should answer with ICMP fragmentation-needed for `mtu` (the value to
    /// quote, i.e. egress MTU − 20).
    NeedFrag {
        /// Next-hop MTU to report.
        mtu: u16,
    },
    /// TTL would reach 0 (NAT).
    TtlExceeded,
    /// Not enough headroom/tailroom in the buffer.
    NoRoom,
    /// Offsets in the metadata do not fit the frame.
    Malformed,
}
