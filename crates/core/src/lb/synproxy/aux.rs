//! The state a proxied connection needs beyond its record ([`Aux`]),
//! kept beside the table and indexed by the record.

/// `Aux::flags`: the client uses timestamps.
pub const A_TS: u8 = 1;
/// `Aux::flags`: the server announced a window scale other than ours
/// (or none while the client has one): rescale its windows.
pub const A_RESCALE: u8 = 2;
/// `Aux::flags`: the client announced a window scale (dirigo answered
/// with [`SynProxy::WSCALE`](super::proxy::SynProxy::WSCALE)).
pub const A_WS: u8 = 4;

/// What a proxied connection needs beyond its record (12 bytes).
///
/// While pending (waiting for the server): `seq` = the cookie (the ISN the
/// client knows for the server), `ts` = the TSval of dirigo's SYN/ACK,
/// `window` = the client's window. Spliced: `seq` = server ISN - cookie,
/// `ts` = server TSval - dirigo's, `wscale` = the server's window scale.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Aux {
    /// Cookie, then the sequence delta.
    pub seq: u32,
    /// dirigo's TSval, then the timestamp delta.
    pub ts: u32,
    /// The client's window (pending).
    pub window: u16,
    /// The server's window scale (spliced).
    pub wscale: u8,
    /// `A_*`.
    pub flags: u8,
}
