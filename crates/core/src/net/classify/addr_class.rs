//! IPv4 address classes classify and the pipeline judge by: martian
//! sources, destinations that are no unicast host, link-local multicast.

/// True for a source address no host may use: 0.0.0.0/8, 127.0.0.0/8,
/// 224.0.0.0/4 (multicast) and 240.0.0.0/4 (class E, incl. broadcast).
#[inline]
pub const fn is_martian_src(a: u32) -> bool {
    let o = a >> 24;
    o == 0 || o == 127 || o >= 224
}

/// True for a destination that is not a unicast host address:
/// 0.0.0.0/8, 127.0.0.0/8, multicast, class E and broadcast.
#[inline]
pub const fn is_not_unicast_dst(a: u32) -> bool {
    is_martian_src(a)
}

/// Whether `a` is in 224.0.0.0/24, the link-local multicast block routing
/// protocols speak on (OSPF, VRRP, RIP v2, PIM); never forwarded by routers.
#[inline]
pub const fn is_link_local_multicast(a: u32) -> bool {
    a >> 8 == 0xe0_00_00
}
