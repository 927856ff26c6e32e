//! Network requests: ports, port addresses, routes and neighbors.

use super::ctl::{lock, Ctl};
use crate::dataplane::stats::IoCounters;
use crate::net::addr::{Ipv4Cidr, Ipv6Cidr};
use crate::net::neigh::NeighState;
use dirigo_proto::proto::{CtlError, ErrCode, Response};
use dirigo_proto::view::{
    AddrInfo, KernelIfInfo, MacAddr, NamedCounter, NeighInfo, PortInfo, RouteInfo,
};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::Ordering::Relaxed;

impl Ctl {
    pub(super) fn ports(&self, xstats: bool) -> Response {
        Response::Ports(
            self.ports
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let l = p.port.link();
                    PortInfo {
                        id: i as u16,
                        name: p.name.clone(),
                        mac: MacAddr(p.mac),
                        link_up: l.up,
                        speed_mbps: l.speed_mbps,
                        full_duplex: l.full_duplex,
                        mtu: p.mtu,
                        counters: p.port.stats(),
                        xstats: if xstats {
                            p.port
                                .xstats()
                                .into_iter()
                                .map(|(name, value)| NamedCounter { name, value })
                                .collect()
                        } else {
                            Vec::new()
                        },
                        kernel: self.kernel_info(i),
                    }
                })
                .collect(),
        )
    }

    /// Port `i`'s kernel interface and its counters (the workers' and the
    /// exception thread's).
    fn kernel_info(&self, i: usize) -> Option<KernelIfInfo> {
        let x = self.exception.as_ref()?;
        let k = x.of_port(i as u16)?;
        let io: IoCounters = self.shared.workers.iter().map(|w| w.io.port(i)).sum();
        Some(KernelIfInfo {
            name: k.name.clone(),
            netns: x.netns.as_ref().map(|n| n.name().to_string()),
            backend: x.backend.name().into(),
            to_kernel: k.counters.to_kernel.load(Relaxed),
            from_kernel: k.counters.from_kernel.load(Relaxed),
            rate_limited: io.kernel_limited,
            ring_full: io.kernel_full,
            write_failed: k.counters.write_failed.load(Relaxed),
            inject_full: k.counters.inject_full.load(Relaxed),
        })
    }

    pub(super) fn addresses(&self) -> Response {
        let st = lock(&self.state);
        let v4 = st.port_addrs.iter().map(|(p, c)| AddrInfo {
            port: *p,
            addr: Ipv4Addr::from(c.addr).into(),
            prefix_len: c.len,
        });
        let v6 = st.port_addrs6.iter().map(|(p, c)| AddrInfo {
            port: *p,
            addr: Ipv6Addr::from(c.addr).into(),
            prefix_len: c.len,
        });
        Response::Addresses(v4.chain(v6).collect())
    }

    pub(super) fn addr_add(
        &self,
        port: u16,
        addr: IpAddr,
        prefix_len: u8,
    ) -> Result<Response, CtlError> {
        if port as usize >= self.ports.len() {
            return Err(CtlError::new(ErrCode::NotFound, format!("no port {port}")));
        }
        let bad_len = || CtlError::invalid(format!("bad prefix length {prefix_len}"));
        let exists = || CtlError::new(ErrCode::Exists, format!("{addr} already configured"));
        let mut st = lock(&self.state);
        match addr {
            IpAddr::V4(a) => {
                let c = Ipv4Cidr::new(u32::from(a), prefix_len).ok_or_else(bad_len)?;
                if st.port_addrs.iter().any(|(_, x)| x.addr == c.addr) {
                    return Err(exists());
                }
                st.port_addrs.push((port, c));
                if let Err(e) = st.publish_net(&self.shared) {
                    st.port_addrs.pop();
                    return Err(e);
                }
                st.pending_garp.push(c.addr);
            }
            IpAddr::V6(a) => {
                let c = Ipv6Cidr::new(u128::from(a), prefix_len).ok_or_else(bad_len)?;
                if let Some(why) = crate::net::addr::ipv6_unusable(c.addr) {
                    return Err(CtlError::invalid(format!(
                        "{addr} cannot be a port address: {why}"
                    )));
                }
                if st.port_addrs6.iter().any(|(_, x)| x.addr == c.addr) {
                    return Err(exists());
                }
                st.port_addrs6.push((port, c));
                if let Err(e) = st.publish_net(&self.shared) {
                    st.port_addrs6.pop();
                    return Err(e);
                }
                // an unsolicited NA, as a gratuitous ARP for IPv4
                st.pending_na6.push(c.addr);
            }
        }
        drop(st);
        self.kernel_addr(port, addr, prefix_len, true)?;
        Ok(Response::Done)
    }

    pub(super) fn addr_del(&self, port: u16, addr: IpAddr) -> Result<Response, CtlError> {
        let mut st = lock(&self.state);
        let not_found = || CtlError::new(ErrCode::NotFound, format!("{addr} not on port {port}"));
        let len = match addr {
            IpAddr::V4(a) => {
                let a = u32::from(a);
                let i = st
                    .port_addrs
                    .iter()
                    .position(|(p, c)| *p == port && c.addr == a)
                    .ok_or_else(not_found)?;
                let removed = st.port_addrs.remove(i);
                if let Err(e) = st.publish_net(&self.shared) {
                    st.port_addrs.insert(i, removed);
                    return Err(e);
                }
                removed.1.len
            }
            IpAddr::V6(a) => {
                let a = u128::from(a);
                let i = st
                    .port_addrs6
                    .iter()
                    .position(|(p, c)| *p == port && c.addr == a)
                    .ok_or_else(not_found)?;
                if crate::net::wire::ipv6::is_link_local(a) {
                    return Err(CtlError::invalid(format!(
                        "{addr} is port {port}'s link-local address (derived from its MAC): it stays"
                    )));
                }
                let removed = st.port_addrs6.remove(i);
                if let Err(e) = st.publish_net(&self.shared) {
                    st.port_addrs6.insert(i, removed);
                    return Err(e);
                }
                removed.1.len
            }
        };
        drop(st);
        self.kernel_addr(port, addr, len, false)?;
        Ok(Response::Done)
    }

    /// Keep the port's kernel interface's addresses the port's: dirigo
    /// already has the change; a kernel that refuses it is reported.
    fn kernel_addr(&self, port: u16, addr: IpAddr, len: u8, add: bool) -> Result<(), CtlError> {
        let Some(x) = &self.exception else {
            return Ok(());
        };
        x.set_addr(port, addr, len, add).map_err(|e| {
            CtlError::new(
                ErrCode::Internal,
                format!("dirigo has the change, its kernel interface does not: {e}"),
            )
        })
    }

    pub(super) fn routes(&self) -> Response {
        let net = self.shared.net.load();
        let v4 = net.routes().iter().map(|r| RouteInfo {
            dst: Ipv4Addr::from(r.prefix.addr).into(),
            prefix_len: r.prefix.len,
            gateway: r.gateway.map(|g| Ipv4Addr::from(g).into()),
            port: r.port,
            src: net
                .addrs()
                .primary(r.port)
                .map(|a| Ipv4Addr::from(a).into()),
        });
        let v6 = net.routes6().iter().map(|r| RouteInfo {
            dst: Ipv6Addr::from(r.prefix.addr).into(),
            prefix_len: r.prefix.len,
            gateway: r.gateway.map(|g| Ipv6Addr::from(g).into()),
            port: r.port,
            src: net
                .addrs()
                .source6_for(r.port, r.gateway.unwrap_or(r.prefix.addr))
                .map(|a| Ipv6Addr::from(a).into()),
        });
        Response::Routes(v4.chain(v6).collect())
    }

    pub(super) fn neighbors(&self) -> Response {
        let st = lock(&self.state);
        let now = crate::clock::now_ns();
        let info = |addr: IpAddr, n: crate::net::neigh::NeighInfo| NeighInfo {
            port: n.port,
            addr,
            mac: (n.state != NeighState::Incomplete).then_some(MacAddr(n.mac)),
            state: format!("{:?}", n.state).to_lowercase(),
            age_secs: Some((now.saturating_sub(n.since_ns) / 1_000_000_000) as u32),
        };
        let mut v: Vec<NeighInfo> = st
            .neigh
            .iter()
            .map(|(ip, n)| info(Ipv4Addr::from(ip).into(), n))
            .chain(
                st.net6
                    .neigh
                    .iter()
                    .map(|(ip, n)| info(Ipv6Addr::from(ip).into(), n)),
            )
            .collect();
        // by port, IPv4 before IPv6, then by address
        v.sort_by_key(|n| (n.port, n.addr.is_ipv6(), n.addr));
        Response::Neighbors(v)
    }

    pub(super) fn neigh_add(
        &self,
        port: u16,
        addr: IpAddr,
        mac: MacAddr,
    ) -> Result<Response, CtlError> {
        if port as usize >= self.ports.len() {
            return Err(CtlError::new(ErrCode::NotFound, format!("no port {port}")));
        }
        if crate::net::wire::mac_is_group(mac.0) || mac.0 == [0; 6] {
            return Err(CtlError::invalid(format!("{mac} is not a unicast MAC")));
        }
        let mut st = lock(&self.state);
        match addr {
            IpAddr::V4(a) => st.neigh.add_static(u32::from(a), mac.0, port),
            IpAddr::V6(a) => {
                let a = u128::from(a);
                if crate::net::wire::ipv6::is_multicast(a) || a == 0 || a == 1 {
                    return Err(CtlError::invalid(format!(
                        "{addr} is not a unicast address"
                    )));
                }
                st.net6.neigh.add_static(a, mac.0, port)
            }
        }
        .map_err(|e| CtlError::invalid(e.to_string()))?;
        st.publish_neigh(&self.shared);
        Ok(Response::Done)
    }

    pub(super) fn neigh_flush(&self, port: Option<u16>) -> Result<Response, CtlError> {
        let mut st = lock(&self.state);
        let dynamic = |n: &crate::net::neigh::NeighInfo| {
            port.is_none_or(|p| p == n.port) && n.state != NeighState::Static
        };
        let victims: Vec<u32> = st
            .neigh
            .iter()
            .filter(|(_, n)| dynamic(n))
            .map(|(ip, _)| ip)
            .collect();
        for ip in victims {
            st.neigh.remove(ip);
        }
        let victims6: Vec<u128> = st
            .net6
            .neigh
            .iter()
            .filter(|(_, n)| dynamic(n))
            .map(|(ip, _)| ip)
            .collect();
        for ip in victims6 {
            st.net6.neigh.remove(ip);
        }
        st.publish_neigh(&self.shared);
        Ok(Response::Done)
    }
}
