//! The sections' validators: each checks its part of the file against
//! what is valid so far and reports every problem at its key path.

mod marks;
mod refusal;
mod service;
mod snat;

pub(super) use marks::marks;

pub(super) use service::services;
pub(super) use snat::snat;

use super::file::{
    CaptureConfig, DataplaneConfig, EalConfig, ExceptionConfig, NeighborConfig, PortConfig,
    RawConfig, RouteConfig,
};
use super::locate::{At, Issues};
use super::{parse_cidr, parse_cidr6, parse_ip_port, parse_mac, Neighbor, Port, Route, Service};
use dirigo_core::lb::sched::maglev::is_prime;
use refusal::Refusal;
use std::collections::HashSet;

/// Validate each element of the array `section`, keeping the valid ones.
pub(super) fn each<R, T>(
    raw: &[R],
    section: &str,
    iss: &mut Issues,
    f: impl Fn(&R) -> Result<T, Refusal>,
) -> Vec<T> {
    let mut out = Vec::new();
    for (i, r) in raw.iter().enumerate() {
        match f(r) {
            Ok(t) => out.push(t),
            Err((key, msg)) => {
                let at = At::key(section).i(i);
                iss.add(if key.is_empty() { at } else { at.k(key) }, msg);
            }
        }
    }
    out
}

/// Where the checks run: `[health] netns`, else the exception path's
/// namespace. Checks with neither a `[health]` section nor a port with a
/// kernel interface have no way to the real servers: an error, not a
/// silent "all up".
pub(super) fn health_path(
    raw: &RawConfig,
    ports: &[Port],
    services: &[Service],
    iss: &mut Issues,
) -> Option<String> {
    if let Some(h) = &raw.health {
        if let Some(ns) = &h.netns {
            if let Err(e) = crate::names::valid_netns(ns) {
                iss.add(At::key("health").k("netns"), format!("[health] netns: {e}"));
            }
        }
        return h.netns.clone();
    }
    let checked = services
        .iter()
        .find(|s| s.health.check.is_some() || !s.health.checks.is_empty());
    let kernel = ports.iter().any(|p| p.kernel_interface.is_some());
    if let (Some(s), false) = (checked, kernel) {
        let k = s.spec.key;
        let i = raw.service.iter().position(|r| {
            (k.is_fwmark() && r.fwmark == Some(k.fwmark))
                || (r.protocol == Some(k.proto)
                    && parse_ip_port(&r.address) == Some((k.vip, k.port)))
        });
        let at = i.map_or(At::key("service"), |i| {
            let at = At::key("service").i(i);
            if raw.service[i].check.is_some() {
                at.k("check")
            } else {
                at
            }
        });
        iss.add(
            at,
            format!(
                "service {}: health checks need a way to the real servers: an exception path \
                 ([exception] and a port's kernel_interface; they run in its namespace) or \
                 [health] netns = \"...\" (a namespace that reaches them another way)",
                k.vip
            ),
        );
    }
    raw.exception.as_ref().and_then(|x| x.netns.clone())
}

/// Index of the port named `name`.
fn port_index(ports: &[Port], name: &str) -> Option<usize> {
    ports.iter().position(|p| p.name == name)
}

/// `[[port]]`: at least one; unique names and devices. Every port is
/// kept (with its valid addresses), so references to it are checked.
pub(super) fn ports(raw: &[PortConfig], iss: &mut Issues) -> Vec<Port> {
    if raw.is_empty() {
        iss.add(
            At::key("port"),
            "no [[port]] defined: dirigo needs at least one port",
        );
    }
    let mut names = HashSet::new();
    let mut devices = HashSet::new();
    let mut v6 = HashSet::new();
    let mut ports = Vec::new();
    for (i, p) in raw.iter().enumerate() {
        let at = At::key("port").i(i);
        if p.name.is_empty() {
            iss.add(at.k("name"), "a [[port]] has an empty name");
        } else if !names.insert(p.name.clone()) {
            iss.add(at.k("name"), format!("duplicate port name '{}'", p.name));
        }
        if !devices.insert(p.device.clone()) {
            iss.add(
                at.k("device"),
                format!(
                    "port '{}': device '{}' is used by two ports",
                    p.name, p.device
                ),
            );
        }
        let mut addresses = Vec::new();
        let mut addresses6 = Vec::new();
        for (j, a) in p.addresses.iter().enumerate() {
            // an IPv6 address has a colon; anything else is IPv4's to judge
            let r = if a.contains(':') {
                parse_cidr6(a).and_then(|c| {
                    if v6.insert(c.addr) {
                        addresses6.push(c);
                        Ok(())
                    } else {
                        Err(format!("'{a}' is configured twice"))
                    }
                })
            } else {
                parse_cidr(a).map(|c| addresses.push(c))
            };
            if let Err(e) = r {
                iss.add(
                    at.k("addresses").i(j),
                    format!("port '{}': bad address: {e}", p.name),
                );
            }
        }
        if let Some(m) = p.mtu {
            if !(68..=9600).contains(&m) {
                iss.add(
                    at.k("mtu"),
                    format!("port '{}': mtu {m} is not 68..9600", p.name),
                );
            }
        }
        ports.push(Port {
            name: p.name.clone(),
            device: p.device.clone(),
            addresses,
            addresses6,
            mtu: p.mtu,
            rx_desc: p.rx_desc,
            tx_desc: p.tx_desc,
            kernel_interface: p.kernel_interface.clone(),
            kernel_rate_limit_pps: p.kernel_rate_limit_pps.unwrap_or(0),
            role: p.role,
        });
    }
    ports
}

/// `[exception]` and the ports' `kernel_interface`: a port names its
/// kernel interface only with an `[exception]` section; names are valid
/// Linux interface names and unique; the netns name is usable.
pub(super) fn exception(x: Option<&ExceptionConfig>, ports: &mut [Port], iss: &mut Issues) {
    let mut names = HashSet::new();
    for (i, p) in ports.iter_mut().enumerate() {
        let Some(k) = &p.kernel_interface else {
            continue;
        };
        let at = At::key("port").i(i).k("kernel_interface");
        let Some(x) = x else {
            iss.add(
                at,
                format!(
                    "port '{}': kernel_interface '{k}' needs an [exception] section (backend = \"tap\" or \"virtio-user\")",
                    p.name
                ),
            );
            continue;
        };
        if let Err(e) = crate::names::valid_ifname(k) {
            iss.add(
                at.clone(),
                format!("port '{}': kernel_interface '{k}': {e}", p.name),
            );
        }
        if !names.insert(k.clone()) {
            iss.add(
                at,
                format!(
                    "port '{}': kernel_interface '{k}' is already another port's",
                    p.name
                ),
            );
        }
        if p.kernel_rate_limit_pps == 0 {
            p.kernel_rate_limit_pps = x.rate_limit_pps;
        }
    }
    if let Some(x) = x {
        if let Some(ns) = &x.netns {
            if let Err(e) = crate::names::valid_netns(ns) {
                iss.add(
                    At::key("exception").k("netns"),
                    format!("[exception] netns: {e}"),
                );
            }
        }
        if x.rate_limit_pps == 0 {
            iss.add(
                At::key("exception").k("rate_limit_pps"),
                "[exception] rate_limit_pps must be at least 1",
            );
        }
    }
}

/// A validated `[[route]]` of either family.
pub(super) enum AnyRoute {
    /// IPv4.
    V4(Route),
    /// IPv6.
    V6(super::Route6),
}

/// `[[route]]`: the egress port is named or the one whose network holds
/// the gateway; the prefix's family decides which table it goes in, and
/// the gateway must be of the same family.
pub(super) fn route(r: &RouteConfig, ports: &[Port]) -> Result<AnyRoute, Refusal> {
    if r.prefix.contains(':') {
        return route6(r, ports).map(AnyRoute::V6);
    }
    let prefix =
        parse_cidr(&r.prefix).map_err(|e| ("prefix", format!("route: bad prefix: {e}")))?;
    let port = match &r.port {
        Some(n) => Some(
            port_index(ports, n)
                .ok_or_else(|| ("port", format!("route {}: unknown port '{n}'", r.prefix)))?,
        ),
        None => None,
    };
    let std::net::IpAddr::V4(via4) = r.via else {
        return Err((
            "via",
            format!(
                "route {}: gateway {} is not an IPv4 address (the prefix is IPv4)",
                r.prefix, r.via
            ),
        ));
    };
    let via = u32::from(via4);
    let egress = port.or_else(|| {
        ports
            .iter()
            .position(|p| p.addresses.iter().any(|c| c.contains(via)))
    });
    if egress.is_none() {
        return Err((
            "via",
            format!(
                "route {}: gateway {} is not on any port's network",
                r.prefix, r.via
            ),
        ));
    }
    Ok(AnyRoute::V4(Route {
        prefix,
        via: via4,
        port: egress,
    }))
}

/// An IPv6 `[[route]]`: `::/0` and any other prefix; a link-local gateway
/// (`fe80::...`) must name its port.
fn route6(r: &RouteConfig, ports: &[Port]) -> Result<super::Route6, Refusal> {
    let bad = |e: String| ("prefix", format!("route: bad prefix: {e}"));
    let (a, l) = r
        .prefix
        .split_once('/')
        .ok_or_else(|| bad(format!("'{}' is not ADDRESS/PREFIXLEN", r.prefix)))?;
    let addr: std::net::Ipv6Addr = a
        .parse()
        .map_err(|_| bad(format!("'{a}' in '{}' is not an IPv6 address", r.prefix)))?;
    let len: u8 = l.parse().ok().filter(|&l| l <= 128).ok_or_else(|| {
        bad(format!(
            "prefix length '{l}' in '{}' is not 0..128",
            r.prefix
        ))
    })?;
    let mask = dirigo_core::net::addr::Ipv6Cidr::mask_of(len);
    let prefix = dirigo_core::net::addr::Ipv6Cidr {
        addr: u128::from(addr) & mask,
        len,
    };
    let std::net::IpAddr::V6(via) = r.via else {
        return Err((
            "via",
            format!(
                "route {}: gateway {} is not an IPv6 address (the prefix is IPv6)",
                r.prefix, r.via
            ),
        ));
    };
    let v = u128::from(via);
    if dirigo_core::net::wire::ipv6::is_multicast(v) || v == 0 || v == 1 {
        return Err((
            "via",
            format!("route {}: gateway {via} is not a unicast address", r.prefix),
        ));
    }
    let port = match &r.port {
        Some(n) => port_index(ports, n)
            .ok_or_else(|| ("port", format!("route {}: unknown port '{n}'", r.prefix)))?,
        None if dirigo_core::net::route6::is_link_local(v) => {
            return Err((
                "port",
                format!(
                    "route {}: gateway {via} is link-local: name its port (port = \"...\")",
                    r.prefix
                ),
            ))
        }
        None => ports
            .iter()
            .position(|p| p.addresses6.iter().any(|c| c.contains(v)))
            .ok_or_else(|| {
                (
                    "via",
                    format!(
                        "route {}: gateway {via} is not on any port's IPv6 network",
                        r.prefix
                    ),
                )
            })?,
    };
    Ok(super::Route6 { prefix, via, port })
}

/// `[[neighbor]]`: a MAC and a known port.
pub(super) fn neighbor(n: &NeighborConfig, ports: &[Port]) -> Result<Neighbor, Refusal> {
    let mac = parse_mac(&n.mac)
        .ok_or_else(|| ("mac", format!("neighbor {}: bad MAC '{}'", n.ip, n.mac)))?;
    if dirigo_core::net::wire::mac_is_group(mac) || mac == [0; 6] {
        return Err((
            "mac",
            format!("neighbor {}: {} is not a unicast MAC", n.ip, n.mac),
        ));
    }
    let port = port_index(ports, &n.port).ok_or_else(|| {
        (
            "port",
            format!("neighbor {}: unknown port '{}'", n.ip, n.port),
        )
    })?;
    Ok(Neighbor {
        ip: n.ip,
        mac,
        port,
    })
}

/// `[dataplane]`: the lower bounds, and a prime Maglev table.
pub(super) fn dataplane(d: &DataplaneConfig, iss: &mut Issues) {
    let at = At::key("dataplane");
    if d.connections_per_worker < 1024 {
        iss.add(
            at.k("connections_per_worker"),
            "dataplane.connections_per_worker must be at least 1024",
        );
    }
    if d.connections6_per_worker != 0 && d.connections6_per_worker < 1024 {
        iss.add(
            at.k("connections6_per_worker"),
            "dataplane.connections6_per_worker must be 0 (automatic) or at least 1024",
        );
    }
    if d.mbufs < 1024 {
        iss.add(at.k("mbufs"), "dataplane.mbufs must be at least 1024");
    }
    if d.mbuf_data_room < 256 {
        iss.add(
            at.k("mbuf_data_room"),
            "dataplane.mbuf_data_room must be at least 256 (128 headroom + data)",
        );
    }
    if d.embryonic_grace_ms > dirigo_core::lb::conn::MAX_EMBRYONIC_GRACE_MS {
        iss.add(
            at.k("embryonic_grace_ms"),
            format!(
                "dataplane.embryonic_grace_ms {} is above {} (an embryonic connection's own timeout)",
                d.embryonic_grace_ms,
                dirigo_core::lb::conn::MAX_EMBRYONIC_GRACE_MS
            ),
        );
    }
    if !is_prime(d.mh_table_size as usize) {
        iss.add(
            at.k("mh_table_size"),
            format!("dataplane.mh_table_size {} is not a prime", d.mh_table_size),
        );
    }
}

/// EAL arguments that keep the memory out of hugepage files, so no
/// secondary process (dpdk-dumpcap, dpdk-pdump) can attach.
const NO_SECONDARY: [&str; 3] = ["--in-memory", "--no-shconf", "--no-huge"];

/// `[capture] enabled` needs EAL's memory in hugepage files the capture
/// tools can map: refuse the arguments that rule it out.
pub(super) fn capture(c: &CaptureConfig, eal: &EalConfig) -> Result<(), String> {
    if !c.enabled {
        return Ok(());
    }
    match eal.args.iter().find(|a| NO_SECONDARY.contains(&a.as_str())) {
        Some(a) => Err(format!(
            "[capture] enabled needs EAL's memory in hugepage files that dpdk-dumpcap can attach to, \
             and [eal] args has {a}: remove it (keep a --file-prefix; hugetlbfs mounted, see \
             scripts/setup-hugepages.sh)"
        )),
        None => Ok(()),
    }
}

/// `[control] state_file`: a file's path (the directory is created when
/// missing; the file may not exist yet).
pub(super) fn state_file(path: Option<&str>) -> Result<(), String> {
    let Some(p) = path else {
        return Ok(());
    };
    if p.is_empty() || p.ends_with('/') {
        return Err(format!(
            "[control] state_file '{p}' is not a file's path (e.g. \"/var/lib/dirigo/rules\")"
        ));
    }
    if std::path::Path::new(p).is_dir() {
        return Err(format!(
            "[control] state_file '{p}' is a directory (give a file in it, e.g. \"{}/rules\")",
            p.trim_end_matches('/')
        ));
    }
    Ok(())
}
