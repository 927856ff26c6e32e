//! dirigo's own addresses: each port's IPv4 and IPv6 addresses with prefix
//! lengths (from config; every port also has its EUI-64 link-local IPv6
//! address, [`link_local_of`]) and the set of service VIPs.
//!
//! Built by the control thread, read by workers (lookups never allocate:
//! a short scan of port addresses and a binary search over sorted VIPs).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// An IPv4 address with a prefix length, e.g. `10.0.0.1/24`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ipv4Cidr {
    /// Address (host order); for a route prefix, bits past `len` are zero.
    pub addr: u32,
    /// Prefix length, 0..=32.
    pub len: u8,
}

impl Ipv4Cidr {
    /// A CIDR; `None` when `len > 32`.
    pub fn new(addr: u32, len: u8) -> Option<Self> {
        (len <= 32).then_some(Ipv4Cidr { addr, len })
    }

    /// Netmask for `len` (host order).
    #[inline]
    pub fn mask_of(len: u8) -> u32 {
        match len {
            0 => 0,
            l if l >= 32 => u32::MAX,
            l => u32::MAX << (32 - l),
        }
    }

    /// Netmask (host order).
    #[inline]
    pub fn mask(&self) -> u32 {
        Self::mask_of(self.len)
    }

    /// Network address (host bits cleared).
    #[inline]
    pub fn network(&self) -> u32 {
        self.addr & self.mask()
    }

    /// The same prefix with host bits cleared.
    pub fn to_network(&self) -> Ipv4Cidr {
        Ipv4Cidr {
            addr: self.network(),
            len: self.len,
        }
    }

    /// True when `ip` is inside the prefix.
    #[inline]
    pub fn contains(&self, ip: u32) -> bool {
        ip & self.mask() == self.network()
    }
}

impl fmt::Display for Ipv4Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", Ipv4Addr::from(self.addr), self.len)
    }
}

impl std::str::FromStr for Ipv4Cidr {
    type Err = AddrError;
    /// Parse `a.b.c.d/len` (or a bare address as /32).
    fn from_str(s: &str) -> Result<Self, AddrError> {
        let (a, l) = match s.split_once('/') {
            Some((a, l)) => (a, l.parse::<u8>().map_err(|_| AddrError::Parse)?),
            None => (s, 32),
        };
        let a: Ipv4Addr = a.parse().map_err(|_| AddrError::Parse)?;
        Ipv4Cidr::new(u32::from(a), l).ok_or(AddrError::Parse)
    }
}

/// An IPv6 address with a prefix length, e.g. `2001:db8:1::1/64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ipv6Cidr {
    /// Address (host order).
    pub addr: u128,
    /// Prefix length, 0..=128.
    pub len: u8,
}

impl Ipv6Cidr {
    /// A CIDR; `None` when `len > 128`.
    pub fn new(addr: u128, len: u8) -> Option<Self> {
        (len <= 128).then_some(Ipv6Cidr { addr, len })
    }

    /// Netmask for `len` (host order).
    #[inline]
    pub fn mask_of(len: u8) -> u128 {
        match len {
            0 => 0,
            l if l >= 128 => u128::MAX,
            l => u128::MAX << (128 - l),
        }
    }

    /// True when `ip` is inside the prefix.
    #[inline]
    pub fn contains(&self, ip: u128) -> bool {
        let m = Self::mask_of(self.len);
        ip & m == self.addr & m
    }
}

impl fmt::Display for Ipv6Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", Ipv6Addr::from(self.addr), self.len)
    }
}

impl std::str::FromStr for Ipv6Cidr {
    type Err = AddrError;
    /// Parse `x:y::z/len` (or a bare address as /128).
    fn from_str(s: &str) -> Result<Self, AddrError> {
        let (a, l) = match s.split_once('/') {
            Some((a, l)) => (a, l.parse::<u8>().map_err(|_| AddrError::Parse)?),
            None => (s, 128),
        };
        let a: Ipv6Addr = a.parse().map_err(|_| AddrError::Parse)?;
        Ipv6Cidr::new(u128::from(a), l).ok_or(AddrError::Parse)
    }
}

/// The EUI-64 link-local address (fe80::/64) of a port with MAC `mac`
/// (RFC 4291 appendix A, RFC 2464 §5): the universal/local bit of the
/// first octet flipped and ff:fe inserted in the middle.
pub fn link_local_of(mac: [u8; 6]) -> u128 {
    let iid = u64::from_be_bytes([
        mac[0] ^ 0x02,
        mac[1],
        mac[2],
        0xff,
        0xfe,
        mac[3],
        mac[4],
        mac[5],
    ]);
    0xfe80u128 << 112 | iid as u128
}

/// Why `a` cannot be one of dirigo's IPv6 unicast addresses, if it cannot:
/// unspecified, loopback, multicast, link-local (each port has its own,
/// derived from its MAC) or IPv4-mapped.
pub fn ipv6_unusable(a: u128) -> Option<&'static str> {
    use crate::net::wire::ipv6;
    if a == ipv6::UNSPECIFIED {
        Some("the unspecified address")
    } else if a == 1 {
        Some("the loopback address")
    } else if ipv6::is_multicast(a) {
        Some("a multicast address")
    } else if ipv6::is_link_local(a) {
        Some("link-local (every port has one from its MAC)")
    } else if a >> 32 == 0xffff {
        Some("IPv4-mapped")
    } else {
        None
    }
}

/// Errors building an [`OwnAddrs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddrError {
    /// Not `a.b.c.d[/len]` with len <= 32.
    #[error("not an IPv4 address with prefix length")]
    Parse,
    /// The address is already configured (on some port).
    #[error("address {0} configured twice")]
    Duplicate(Ipv4Addr),
    /// Not a usable unicast host address.
    #[error("address {0} is not a unicast host address")]
    NotUnicast(Ipv4Addr),
    /// The IPv6 address is already configured (on some port).
    #[error("address {0} configured twice")]
    Duplicate6(Ipv6Addr),
    /// Not a usable IPv6 unicast address (multicast, unspecified, loopback).
    #[error("address {0} is not a unicast address")]
    NotUnicast6(Ipv6Addr),
}

/// One IPv6 address of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IfAddr6 {
    /// Port index.
    pub port: u16,
    /// Address and prefix length.
    pub cidr: Ipv6Cidr,
}

/// One address configured on a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IfAddr {
    /// Port index.
    pub port: u16,
    /// Address and prefix length (the connected network is `cidr.to_network()`).
    pub cidr: Ipv4Cidr,
}

/// Own addresses: per-port addresses and service VIPs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnAddrs {
    ifaddrs: Vec<IfAddr>,
    ifaddrs6: Vec<IfAddr6>,
    vips: Vec<u32>,
    vips6: Vec<u128>,
}

impl OwnAddrs {
    /// No addresses.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add an address to `port`. The first address added to a port is its
    /// primary address.
    pub fn add_port_addr(&mut self, port: u16, cidr: Ipv4Cidr) -> Result<(), AddrError> {
        let ip = Ipv4Addr::from(cidr.addr);
        if crate::net::classify::is_martian_src(cidr.addr) {
            return Err(AddrError::NotUnicast(ip));
        }
        if self.is_port_addr(cidr.addr) {
            return Err(AddrError::Duplicate(ip));
        }
        self.ifaddrs.push(IfAddr { port, cidr });
        Ok(())
    }

    /// Add an IPv6 address to `port`: a global one from the config, or the
    /// port's link-local one ([`link_local_of`]). Multicast, unspecified
    /// and loopback are refused, and so is an address on any port already.
    pub fn add_port_addr6(&mut self, port: u16, cidr: Ipv6Cidr) -> Result<(), AddrError> {
        use crate::net::wire::ipv6;
        let ip = Ipv6Addr::from(cidr.addr);
        if cidr.addr == ipv6::UNSPECIFIED || cidr.addr == 1 || ipv6::is_multicast(cidr.addr) {
            return Err(AddrError::NotUnicast6(ip));
        }
        if self.is_local6(cidr.addr) {
            return Err(AddrError::Duplicate6(ip));
        }
        self.ifaddrs6.push(IfAddr6 { port, cidr });
        Ok(())
    }

    /// Add a service VIP (adding one twice is harmless: VIPs are a set,
    /// several services share one VIP).
    pub fn add_vip(&mut self, vip: u32) {
        if let Err(i) = self.vips.binary_search(&vip) {
            self.vips.insert(i, vip);
        }
    }

    /// Replace the VIP set.
    pub fn set_vips<I: IntoIterator<Item = u32>>(&mut self, vips: I) {
        self.vips = vips.into_iter().collect();
        self.vips.sort_unstable();
        self.vips.dedup();
    }

    /// Remove a VIP.
    pub fn remove_vip(&mut self, vip: u32) {
        if let Ok(i) = self.vips.binary_search(&vip) {
            self.vips.remove(i);
        }
    }

    /// True when `ip` is one of our port addresses or a VIP.
    #[inline]
    pub fn is_local(&self, ip: u32) -> bool {
        self.is_port_addr(ip) || self.is_vip(ip)
    }

    /// True when `ip` is configured on a port.
    #[inline]
    pub fn is_port_addr(&self, ip: u32) -> bool {
        self.ifaddrs.iter().any(|a| a.cidr.addr == ip)
    }

    /// True when `ip` is a service VIP.
    #[inline]
    pub fn is_vip(&self, ip: u32) -> bool {
        self.vips.binary_search(&ip).is_ok()
    }

    /// The port `ip` is configured on (None for VIPs and foreign addresses).
    #[inline]
    pub fn port_of(&self, ip: u32) -> Option<u16> {
        self.ifaddrs
            .iter()
            .find(|a| a.cidr.addr == ip)
            .map(|a| a.port)
    }

    /// The port's primary (first configured) address.
    #[inline]
    pub fn primary(&self, port: u16) -> Option<u32> {
        self.ifaddrs
            .iter()
            .find(|a| a.port == port)
            .map(|a| a.cidr.addr)
    }

    /// The address on `port` whose connected network contains `ip`, else
    /// the primary address: the right source for an ARP request to `ip`.
    pub fn source_for(&self, port: u16, ip: u32) -> Option<u32> {
        self.ifaddrs
            .iter()
            .filter(|a| a.port == port && a.cidr.contains(ip))
            .max_by_key(|a| a.cidr.len)
            .map(|a| a.cidr.addr)
            .or_else(|| self.primary(port))
    }

    /// The port whose connected network contains `ip` (longest prefix wins).
    #[inline]
    pub fn on_link(&self, ip: u32) -> Option<u16> {
        let mut best: Option<(u8, u16)> = None;
        for a in &self.ifaddrs {
            if a.cidr.contains(ip) && best.is_none_or(|(l, _)| a.cidr.len > l) {
                best = Some((a.cidr.len, a.port));
            }
        }
        best.map(|(_, p)| p)
    }

    /// Connected networks: `(port, network prefix)` for every port address.
    pub fn connected(&self) -> impl Iterator<Item = (u16, Ipv4Cidr)> + '_ {
        self.ifaddrs.iter().map(|a| (a.port, a.cidr.to_network()))
    }

    /// Every configured port address.
    pub fn port_addrs(&self) -> &[IfAddr] {
        &self.ifaddrs
    }

    /// True when `ip` is one of the ports' IPv6 addresses (link-local
    /// ones included).
    #[inline]
    pub fn is_local6(&self, ip: u128) -> bool {
        self.ifaddrs6.iter().any(|a| a.cidr.addr == ip)
    }

    /// The port the IPv6 address `ip` belongs to.
    #[inline]
    pub fn port_of6(&self, ip: u128) -> Option<u16> {
        self.ifaddrs6
            .iter()
            .find(|a| a.cidr.addr == ip)
            .map(|a| a.port)
    }

    /// True when `ip` is one of `port`'s IPv6 addresses.
    #[inline]
    pub fn is_port_addr6(&self, port: u16, ip: u128) -> bool {
        self.ifaddrs6
            .iter()
            .any(|a| a.port == port && a.cidr.addr == ip)
    }

    /// The port whose connected IPv6 prefix (of a global address) holds
    /// `ip`, if any.
    #[inline]
    pub fn on_link6(&self, ip: u128) -> Option<u16> {
        use crate::net::wire::ipv6::is_link_local;
        self.ifaddrs6
            .iter()
            .find(|a| !is_link_local(a.cidr.addr) && a.cidr.contains(ip))
            .map(|a| a.port)
    }

    /// Every IPv6 port address (link-local ones included).
    pub fn port_addrs6(&self) -> &[IfAddr6] {
        &self.ifaddrs6
    }

    /// The source address for IPv6 packets dirigo itself sends on `port`
    /// to `dst` (a Neighbour Solicitation): the port's link-local address
    /// for a link-local `dst`, else the port's global address whose prefix
    /// holds `dst`, else its first global one, else its link-local one.
    pub fn source6_for(&self, port: u16, dst: u128) -> Option<u128> {
        use crate::net::wire::ipv6::is_link_local;
        let on = || self.ifaddrs6.iter().filter(move |a| a.port == port);
        let ll = || {
            on().find(|a| is_link_local(a.cidr.addr))
                .map(|a| a.cidr.addr)
        };
        if is_link_local(dst) {
            return ll();
        }
        on().filter(|a| !is_link_local(a.cidr.addr))
            .find(|a| a.cidr.contains(dst))
            .or_else(|| on().find(|a| !is_link_local(a.cidr.addr)))
            .map(|a| a.cidr.addr)
            .or_else(ll)
    }

    /// Every VIP, sorted.
    pub fn vips(&self) -> &[u32] {
        &self.vips
    }

    /// Replace the IPv6 VIPs (answered for neighbour solicitations and
    /// echo requests on every port, as IPv4 VIPs are for ARP).
    pub fn set_vips6<I: IntoIterator<Item = u128>>(&mut self, vips: I) {
        self.vips6 = vips.into_iter().collect();
        self.vips6.sort_unstable();
        self.vips6.dedup();
    }

    /// Whether `ip` is an IPv6 VIP.
    #[inline]
    pub fn is_vip6(&self, ip: u128) -> bool {
        self.vips6.binary_search(&ip).is_ok()
    }

    /// Every IPv6 VIP, sorted.
    pub fn vips6(&self) -> &[u128] {
        &self.vips6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> u32 {
        u32::from(s.parse::<Ipv4Addr>().unwrap())
    }

    fn sample() -> OwnAddrs {
        let mut a = OwnAddrs::new();
        a.add_port_addr(0, "10.0.0.1/24".parse().unwrap()).unwrap();
        a.add_port_addr(0, "10.0.1.1/16".parse().unwrap()).unwrap();
        a.add_port_addr(1, "192.168.5.9/30".parse().unwrap())
            .unwrap();
        a.set_vips([ip("203.0.113.10"), ip("203.0.113.1"), ip("203.0.113.10")]);
        a
    }

    #[test]
    fn cidr() {
        let c: Ipv4Cidr = "10.1.2.3/8".parse().unwrap();
        assert_eq!(c.mask(), 0xff00_0000);
        assert_eq!(c.network(), 0x0a00_0000);
        assert!(c.contains(ip("10.255.0.1")));
        assert!(!c.contains(ip("11.0.0.1")));
        assert_eq!(c.to_string(), "10.1.2.3/8");
        assert_eq!(Ipv4Cidr::mask_of(0), 0);
        assert_eq!(Ipv4Cidr::mask_of(32), u32::MAX);
        assert!(Ipv4Cidr::new(0, 0).unwrap().contains(ip("1.2.3.4")));
        assert_eq!("1.2.3.4".parse::<Ipv4Cidr>().unwrap().len, 32);
        assert_eq!("1.2.3.4/33".parse::<Ipv4Cidr>(), Err(AddrError::Parse));
        assert_eq!("1.2.3/3".parse::<Ipv4Cidr>(), Err(AddrError::Parse));
    }

    #[test]
    fn lookups() {
        let a = sample();
        assert!(a.is_local(ip("10.0.0.1")));
        assert!(a.is_local(ip("203.0.113.1")));
        assert!(!a.is_local(ip("10.0.0.2")));
        assert!(a.is_vip(ip("203.0.113.10")) && !a.is_port_addr(ip("203.0.113.10")));
        assert_eq!(a.vips(), &[ip("203.0.113.1"), ip("203.0.113.10")]);
        assert_eq!(a.port_of(ip("192.168.5.9")), Some(1));
        assert_eq!(a.port_of(ip("203.0.113.1")), None);
        assert_eq!(a.primary(0), Some(ip("10.0.0.1")));
        assert_eq!(a.primary(1), Some(ip("192.168.5.9")));
        assert_eq!(a.primary(2), None);
        assert_eq!(a.on_link(ip("10.0.0.77")), Some(0));
        assert_eq!(a.on_link(ip("192.168.5.10")), Some(1));
        assert_eq!(a.on_link(ip("192.168.5.12")), None);
        assert_eq!(a.source_for(0, ip("10.0.200.3")), Some(ip("10.0.1.1")));
        assert_eq!(a.source_for(0, ip("10.0.0.3")), Some(ip("10.0.0.1")));
        let c: Vec<_> = a.connected().collect();
        assert_eq!(c[1], (0, "10.0.0.0/16".parse().unwrap()));
        assert_eq!(c[2], (1, "192.168.5.8/30".parse().unwrap()));
    }

    #[test]
    fn ipv6_addresses() {
        let c: Ipv6Cidr = "2001:db8:1::1/64".parse().unwrap();
        assert_eq!(c.addr, 0x2001_0db8_0001_0000_0000_0000_0000_0001);
        assert_eq!(c.to_string(), "2001:db8:1::1/64");
        assert!(c.contains(0x2001_0db8_0001_0000_ffff_0000_0000_0009));
        assert!(!c.contains(0x2001_0db8_0002_0000_0000_0000_0000_0001));
        assert_eq!("::1".parse::<Ipv6Cidr>().unwrap().len, 128);
        assert_eq!("::1/129".parse::<Ipv6Cidr>(), Err(AddrError::Parse));
        assert_eq!("10.0.0.1/8".parse::<Ipv6Cidr>(), Err(AddrError::Parse));
        assert_eq!(Ipv6Cidr::mask_of(0), 0);
        assert_eq!(Ipv6Cidr::mask_of(128), u128::MAX);
        assert_eq!(Ipv6Cidr::mask_of(64), u128::MAX << 64);

        // RFC 4291 appendix A: 02:00:5e:10:00:01 -> fe80::5eff:fe10:1 (U/L
        // bit flipped off), and a universal MAC gets it set
        let ll = link_local_of([0x02, 0x00, 0x5e, 0x10, 0x00, 0x01]);
        assert_eq!(
            Ipv6Addr::from(ll),
            "fe80::5eff:fe10:1".parse::<Ipv6Addr>().unwrap()
        );
        let ll = link_local_of([0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc]);
        assert_eq!(
            Ipv6Addr::from(ll),
            "fe80::21b:21ff:feaa:bbcc".parse::<Ipv6Addr>().unwrap()
        );

        let mut a = sample();
        a.add_port_addr6(0, c).unwrap();
        a.add_port_addr6(0, Ipv6Cidr::new(ll, 64).unwrap()).unwrap();
        a.add_port_addr6(1, "2001:db8:2::1/64".parse().unwrap())
            .unwrap();
        assert!(a.is_local6(c.addr) && a.is_local6(ll));
        assert!(!a.is_local6(c.addr + 1));
        assert_eq!(a.port_of6(ll), Some(0));
        assert_eq!(a.port_of6(0x2001_0db8_0002 << 80 | 1), Some(1));
        assert_eq!(a.port_of6(7), None);
        assert!(a.is_port_addr6(0, c.addr) && !a.is_port_addr6(1, c.addr));
        assert_eq!(a.port_addrs6().len(), 3);
        // the IPv4 side is untouched
        assert_eq!(a.primary(0), Some(ip("10.0.0.1")));
        assert_eq!(
            a.add_port_addr6(1, c),
            Err(AddrError::Duplicate6(Ipv6Addr::from(c.addr)))
        );
        for bad in ["::/128", "::1/128", "ff02::1/128"] {
            assert!(matches!(
                a.add_port_addr6(0, bad.parse().unwrap()),
                Err(AddrError::NotUnicast6(_))
            ));
        }
        assert_eq!(ipv6_unusable(c.addr), None);
        assert!(ipv6_unusable(ll).unwrap().contains("link-local"));
        assert!(ipv6_unusable(0).is_some() && ipv6_unusable(1).is_some());
        assert!(ipv6_unusable(0xff05 << 112).is_some());
        assert!(ipv6_unusable(0xffff_0a00_0001).is_some());
    }

    #[test]
    fn ipv6_source_for_what_dirigo_sends() {
        let p6 = |s: &str| u128::from(s.parse::<Ipv6Addr>().unwrap());
        let mut a = OwnAddrs::new();
        a.add_port_addr6(0, "fe80::1/64".parse().unwrap()).unwrap();
        a.add_port_addr6(0, "2001:db8:1::1/64".parse().unwrap())
            .unwrap();
        a.add_port_addr6(0, "2001:db8:9::1/64".parse().unwrap())
            .unwrap();
        a.add_port_addr6(1, "fe80::2/64".parse().unwrap()).unwrap();
        // a link-local destination: the port's link-local address
        assert_eq!(a.source6_for(0, p6("fe80::99")), Some(p6("fe80::1")));
        assert_eq!(a.source6_for(1, p6("fe80::99")), Some(p6("fe80::2")));
        // a global one: the address of its prefix, else the first global
        assert_eq!(
            a.source6_for(0, p6("2001:db8:9::5")),
            Some(p6("2001:db8:9::1"))
        );
        assert_eq!(
            a.source6_for(0, p6("2001:db8:77::5")),
            Some(p6("2001:db8:1::1"))
        );
        // a port with only its link-local address uses it for everything
        assert_eq!(a.source6_for(1, p6("2001:db8:1::5")), Some(p6("fe80::2")));
        assert_eq!(a.source6_for(2, p6("2001:db8:1::5")), None);
    }

    #[test]
    fn errors_and_vip_edits() {
        let mut a = sample();
        assert_eq!(
            a.add_port_addr(1, "10.0.0.1/24".parse().unwrap()),
            Err(AddrError::Duplicate(Ipv4Addr::new(10, 0, 0, 1)))
        );
        assert!(matches!(
            a.add_port_addr(1, "224.0.0.1/4".parse().unwrap()),
            Err(AddrError::NotUnicast(_))
        ));
        a.add_vip(ip("1.1.1.1"));
        a.add_vip(ip("1.1.1.1"));
        assert_eq!(a.vips().len(), 3);
        a.remove_vip(ip("203.0.113.1"));
        assert!(!a.is_local(ip("203.0.113.1")));
    }
}
