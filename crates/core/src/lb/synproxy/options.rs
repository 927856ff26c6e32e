//! The options of the SYN/ACK dirigo answers a SYN with, and the window
//! rescaling a server with another window scale needs.

use super::cookie::{self, CookieTuple};
use super::family::ProxyFamily;
use super::proxy::SynProxy;
use crate::net::wire::tcpopt;

/// Options of the SYN/ACK answering a SYN of family `F` with options
/// `o`, at `now` ms: the MSS is the value its cookie carries (the
/// family's table), at most the family's [`ProxyFamily::MSS`].
pub fn synack_options<F: ProxyFamily>(o: &tcpopt::TcpOptions, now: u32) -> tcpopt::SynOptions {
    let table = <F::Key as CookieTuple>::MSS_TABLE;
    let mss = table[cookie::mss_index(&table, o.mss.unwrap_or(536)) as usize].min(F::MSS);
    match o.ts {
        Some(ts) => tcpopt::SynOptions {
            mss,
            wscale: o.wscale.map(|_| SynProxy::WSCALE),
            sack_perm: o.sack_perm,
            ts: Some((
                cookie::ts_encode(
                    now,
                    cookie::TsOptions {
                        wscale: o.wscale,
                        sack: o.sack_perm,
                    },
                ),
                ts.val,
            )),
        },
        // without timestamps a cookie carries neither scale nor SACK
        None => tcpopt::SynOptions {
            mss,
            wscale: None,
            sack_perm: false,
            ts: None,
        },
    }
}

/// A window from a server announcing `server_ws` as the client reads it
/// with the scale dirigo announced (`client_ws`: [`SynProxy::WSCALE`], or
/// 0 when the client has no scaling).
#[inline]
pub fn rescale(window: u16, server_ws: u8, client_ws: u8) -> u16 {
    let bytes = (window as u64) << server_ws.min(14);
    (bytes >> client_ws.min(14)).min(u16::MAX as u64) as u16
}
