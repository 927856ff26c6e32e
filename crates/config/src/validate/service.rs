//! `[[service]]` and its `[[service.real_server]]`s.

use super::refusal::Refusal;
use crate::file::{RealServerConfig, ServiceConfig};
use crate::locate::{At, Issues};
use crate::{health, parse_ip_port, Service};
use dirigo_core::lb::group::parse_member;
use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::snapshot::key_text;
use dirigo_core::lb::spec::MAX_MEMBERS;
use dirigo_core::lb::spec::{
    DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec, TunType, Tunnel,
};
use std::collections::{HashMap, HashSet};
use std::net::Ipv4Addr;

/// `[[service]]`s: unique keys, each validated with its real servers;
/// a service with a problem is left out.
pub(crate) fn services(raw: &[ServiceConfig], nat64: bool, iss: &mut Issues) -> Vec<Service> {
    let mut keys = HashSet::new();
    let mut services = Vec::new();
    for (i, s) in raw.iter().enumerate() {
        let at = At::key("service").i(i);
        let Some(key) = service_key(s, &at, iss) else {
            continue;
        };
        if !keys.insert(key) {
            iss.add(
                at.k(if key.is_fwmark() { "fwmark" } else { "address" }),
                format!("duplicate service {}", name(s)),
            );
            continue;
        }
        if let Some(svc) = service(s, key, nat64, &at, iss) {
            services.push(svc);
        }
    }
    // a group's member key is nobody else's
    let mut owners: HashMap<ServiceKey, ServiceKey> =
        services.iter().map(|s| (s.spec.key, s.spec.key)).collect();
    let mut taken = HashSet::new();
    for svc in &services {
        for m in &svc.spec.members {
            if let Some(o) = owners.insert(*m, svc.spec.key) {
                let i = raw_index(raw, &svc.spec.key);
                iss.add(
                    At::key("service").i(i).k("members"),
                    format!(
                        "service {}: member {} is taken by service {}",
                        key_text(&svc.spec.key),
                        key_text(m),
                        key_text(&o)
                    ),
                );
                taken.insert(svc.spec.key);
            }
        }
    }
    services.retain(|s| !taken.contains(&s.spec.key));
    services
}

/// The index in `raw` of the service with key `k` (0 if none).
fn raw_index(raw: &[ServiceConfig], k: &ServiceKey) -> usize {
    raw.iter()
        .position(|s| {
            let mut iss = Issues::default();
            service_key(s, &At::key("service"), &mut iss).as_ref() == Some(k)
        })
        .unwrap_or(0)
}

/// A service's `members`, each entry expanded (ranges), in order.
fn members(
    s: &ServiceConfig,
    key: ServiceKey,
    at: &At,
    iss: &mut Issues,
) -> Option<Vec<ServiceKey>> {
    let mut out = Vec::new();
    let mut ok = true;
    for (j, m) in s.members.iter().enumerate() {
        match parse_member(m, key.proto, key.vip.is_ipv6()) {
            Ok(keys) => out.extend(keys),
            Err(e) => {
                ok = false;
                iss.add(at.k("members").i(j), format!("service {}: {e}", s.label()));
            }
        }
    }
    if out.len() > MAX_MEMBERS {
        ok = false;
        iss.add(
            at.k("members"),
            format!(
                "service {}: {} members, a group has at most {MAX_MEMBERS}",
                s.label(),
                out.len()
            ),
        );
    }
    let mut seen = HashSet::new();
    for m in &out {
        if *m == key || !seen.insert(*m) {
            ok = false;
            iss.add(
                at.k("members"),
                format!("service {}: member {} twice", s.label(), key_text(m)),
            );
            break;
        }
    }
    ok.then_some(out)
}

/// A service's name in messages: `TCP 192.0.2.1:80`, `fwmark 1`,
/// `fwmark 1 (IPv6)`.
fn name(s: &ServiceConfig) -> String {
    match s.fwmark {
        Some(m) if s.family.as_deref() == Some("ipv6") => format!("fwmark {m} (IPv6)"),
        Some(m) => format!("fwmark {m}"),
        None => format!("{} {}", s.protocol.map_or("?", |p| p.upper()), s.address),
    }
}

/// A service's key: `protocol` and `address`, or `fwmark` (and `family`).
fn service_key(s: &ServiceConfig, at: &At, iss: &mut Issues) -> Option<ServiceKey> {
    let Some(mark) = s.fwmark else {
        let Some(proto) = s.protocol else {
            iss.add(
                at.k("protocol"),
                format!(
                    "service '{}': protocol is required (tcp or udp), or fwmark for an fwmark service",
                    s.address
                ),
            );
            return None;
        };
        if s.family.is_some() {
            iss.add(
                at.k("family"),
                format!(
                    "service '{}': family is for fwmark services (an address has its family)",
                    s.address
                ),
            );
            return None;
        }
        let Some((vip, port)) = parse_ip_port(&s.address) else {
            iss.add(
                at.k("address"),
                format!("service '{}': address must be VIP:PORT", s.address),
            );
            return None;
        };
        return Some(ServiceKey {
            fwmark: 0,
            proto,
            vip,
            port,
        });
    };
    if !s.address.is_empty() || s.protocol.is_some() {
        let k = if s.address.is_empty() {
            "protocol"
        } else {
            "address"
        };
        iss.add(
            at.k(k),
            format!("service fwmark {mark}: an fwmark service has no protocol or address (its [[mark]] rules name them)"),
        );
        return None;
    }
    if mark == 0 {
        iss.add(
            at.k("fwmark"),
            "service fwmark 0: a mark is 1..=4294967295".to_string(),
        );
        return None;
    }
    let v6 = match s.family.as_deref() {
        None | Some("ipv4") => false,
        Some("ipv6") => true,
        Some(f) => {
            iss.add(
                at.k("family"),
                format!("service fwmark {mark}: family {f:?}: \"ipv4\" or \"ipv6\""),
            );
            return None;
        }
    };
    Some(ServiceKey::fwmark(mark, v6))
}

/// One `[[service]]` (its `key` parsed) and its `[[service.real_server]]`s.
fn service(
    s: &ServiceConfig,
    key: ServiceKey,
    nat64: bool,
    at: &At,
    iss: &mut Issues,
) -> Option<Service> {
    let sched: Option<SchedKind> = match s.scheduler.parse() {
        Ok(k) => Some(k),
        Err(e) => {
            iss.add(at.k("scheduler"), format!("service {}: {e}", s.label()));
            None
        }
    };
    let (flags, flags_ok) = sched_flags(s, at, iss);
    let persistence_ok = persistence(s, key, at, iss) && ops(s, key, at, iss);
    let (dests, dests_ok) = real_servers(s, key, nat64, at, iss);
    let laddrs_ok = local_addresses(s, key, &dests, at, iss);
    let members = members(s, key, at, iss);
    let sched = sched?;
    let members = members?;
    if !(flags_ok && persistence_ok && dests_ok && laddrs_ok) {
        return None;
    }
    let health = health::service_health(s, &dests, at)
        .map_err(|(at, msg)| iss.add(at, msg))
        .ok()?;
    Some(Service {
        spec: ServiceSpec {
            key,
            sched,
            flags,
            persistent: s.persistent,
            netmask: s.netmask.unwrap_or(Ipv4Addr::BROADCAST),
            prefix6: s.prefix6.unwrap_or(128),
            synproxy: s.synproxy,
            local_addresses: s.local_addresses.clone(),
            ops: s.ops,
            client_address: s.client_address,
            members,
        },
        dests,
        health,
    })
}

/// The service's scheduler `flags`, and whether all were known.
fn sched_flags(s: &ServiceConfig, at: &At, iss: &mut Issues) -> (SchedFlags, bool) {
    let mut ok = true;
    let mut flags = SchedFlags::default();
    for (j, f) in s.flags.iter().enumerate() {
        match f.as_str() {
            "sh-fallback" | "mh-fallback" => flags.fallback = true,
            "sh-port" | "mh-port" => flags.port = true,
            other => {
                ok = false;
                iss.add(
                    at.k("flags").i(j),
                    format!("service {}: unknown scheduler flag '{other}'", s.label()),
                );
            }
        }
    }
    (flags, ok)
}

/// Whether the FullNAT local addresses fit: there are some when a real
/// server is `fullnat`, each of the real servers' family (the VIP's);
/// and `client_address` is on a TCP FullNAT service only.
fn local_addresses(
    s: &ServiceConfig,
    key: ServiceKey,
    dests: &[DestSpec],
    at: &At,
    iss: &mut Issues,
) -> bool {
    let mut ok = true;
    if s.local_addresses.is_empty() && dests.iter().any(|d| d.method == Method::FullNat) {
        ok = false;
        iss.add(
            at.k("local_addresses"),
            format!(
                "service {}: a fullnat real server needs the service's local_addresses \
                 (the sources the real servers see)",
                s.label()
            ),
        );
    }
    if !s.client_address.is_none()
        && (key.proto != Proto::Tcp || dests.iter().any(|d| d.method != Method::FullNat))
    {
        ok = false;
        iss.add(
            at.k("client_address"),
            format!(
                "service {}: client_address = \"{}\" is for TCP services whose real servers \
                 are all fullnat (other methods keep the client's address as the source)",
                s.address,
                s.client_address.name()
            ),
        );
    }
    for (j, a) in s.local_addresses.iter().enumerate() {
        // an IPv6 service's IPv4 local addresses are for its IPv4 fullnat
        // real servers (IPv6 clients translated to IPv4, as NAT64 does)
        if a.is_ipv4() != key.vip.is_ipv4() && !key.vip.is_ipv6() {
            ok = false;
            iss.add(
                at.k("local_addresses").i(j),
                format!(
                    "service {}: local address {a} is not of the real servers' family",
                    s.label()
                ),
            );
        }
    }
    // each family of fullnat real servers leaves from local addresses of
    // its own
    for d in dests.iter().filter(|d| d.method == Method::FullNat) {
        let v4 = d.key.addr.is_ipv4();
        if !s.local_addresses.is_empty() && !s.local_addresses.iter().any(|a| a.is_ipv4() == v4) {
            ok = false;
            iss.add(
                at.k("local_addresses"),
                format!(
                    "service {}: fullnat real server {} needs a local address of its family \
                     ({}) among local_addresses",
                    s.label(),
                    d.key.addr,
                    if v4 { "IPv4" } else { "IPv6" }
                ),
            );
            break;
        }
    }
    if s.client_address == dirigo_core::lb::spec::ClientAddress::Toa
        && key.vip.is_ipv6()
        && dests
            .iter()
            .any(|d| d.method == Method::FullNat && d.key.addr.is_ipv4())
    {
        ok = false;
        iss.add(
            at.k("client_address"),
            format!(
                "service {}: TOA does not carry an IPv6 client's address to IPv4 real servers \
                 (their toa module reads an IPv4 one): use proxy-v1 or proxy-v2",
                s.label()
            ),
        );
    }
    ok
}

/// Whether `ops = true` fits the service: UDP, not persistent, no NAT
/// real server (the snapshot refuses the same, `BuildError::Ops*`).
fn ops(s: &ServiceConfig, key: ServiceKey, at: &At, iss: &mut Issues) -> bool {
    if !s.ops {
        return true;
    }
    let why = if key.proto != Proto::Udp {
        "is for UDP services: a TCP connection's segments must all reach one server"
    } else if s.persistent.is_some() {
        "keeps no state and persistence is state: use one or the other"
    } else if s
        .real_server
        .iter()
        .any(|r| matches!(r.method, Method::Nat | Method::FullNat))
    {
        "needs DR or TUN real servers: a NAT reply needs a connection entry to be translated back"
    } else {
        return true;
    };
    iss.add(
        at.k("ops"),
        format!("service {}: one-packet scheduling (ops) {why}", s.label()),
    );
    false
}

/// Whether `netmask` and `prefix6` fit the VIP's family.
fn persistence(s: &ServiceConfig, key: ServiceKey, at: &At, iss: &mut Issues) -> bool {
    let mut ok = true;
    if key.vip.is_ipv6() && s.netmask.is_some() {
        ok = false;
        iss.add(
            at.k("netmask"),
            format!(
                "service {}: an IPv6 service's persistence granularity is prefix6 (a prefix length)",
                s.label()
            ),
        );
    }
    if let Some(p) = s.prefix6 {
        if key.vip.is_ipv4() || !(1..=128).contains(&p) {
            ok = false;
            iss.add(
                at.k("prefix6"),
                format!(
                    "service {}: prefix6 is an IPv6 service's persistence prefix length, 1..128",
                    s.label()
                ),
            );
        }
    }
    ok
}

/// The service's valid real servers, and whether all were: unique, of
/// the VIP's family (but for NAT64).
fn real_servers(
    s: &ServiceConfig,
    key: ServiceKey,
    nat64: bool,
    at: &At,
    iss: &mut Issues,
) -> (Vec<DestSpec>, bool) {
    let mut ok = true;
    let mut dests = Vec::new();
    let mut dkeys = HashSet::new();
    for (j, r) in s.real_server.iter().enumerate() {
        let rat = at.k("real_server").i(j);
        match real_server(s, key.port, r) {
            // NAT64, on purpose: an IPv6 VIP, IPv4 NAT real servers, a pool
            Ok(d)
                if d.key.addr.is_ipv4() != key.vip.is_ipv4()
                    && !(key.vip.is_ipv6()
                        && (nat64 && d.method == Method::Nat || d.method == Method::FullNat)) =>
            {
                ok = false;
                iss.add(
                    rat.k("address"),
                    format!(
                        "service {}: real server {}: Operation not supported with specified \
                         address family (IPv4 and IPv6 are not mixed in one service, but for \
                         NAT64: an IPv6 VIP, IPv4 real servers with method = \"nat\" and \
                         [dataplane] nat64_pool, or method = \"fullnat\" and IPv4 \
                         local_addresses)",
                        s.label(),
                        r.address
                    ),
                );
            }
            Ok(d) if !dkeys.insert(d.key) => {
                ok = false;
                iss.add(
                    rat.k("address"),
                    format!("service {}: duplicate real server {}", s.label(), r.address),
                );
            }
            Ok(d) => dests.push(d),
            Err((k, msg)) => {
                ok = false;
                iss.add(rat.k(k), msg);
            }
        }
    }
    (dests, ok)
}

/// One `[[service.real_server]]` of `s`, whose port is `port`.
fn real_server(s: &ServiceConfig, port: u16, r: &RealServerConfig) -> Result<DestSpec, Refusal> {
    let (addr, rport) = match parse_ip_port(&r.address) {
        Some(x) => x,
        None => (
            r.address
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse()
                .map_err(|_| {
                    (
                        "address",
                        format!(
                            "service {}: real server '{}' is not IP or IP:PORT",
                            s.label(),
                            r.address
                        ),
                    )
                })?,
            0,
        ),
    };
    let rport = if rport == 0 { port } else { rport };
    if r.weight > 65535 {
        return Err((
            "weight",
            format!(
                "service {}: real server {}: weight {} is not 0..65535",
                s.label(),
                r.address,
                r.weight
            ),
        ));
    }
    if !matches!(r.method, Method::Nat | Method::FullNat) && rport != port {
        return Err((
            "address",
            format!(
                "service {}: real server {}: only NAT and FullNAT can change the port",
                s.label(),
                r.address
            ),
        ));
    }
    let tun = Tunnel {
        tun_type: r.tun_type,
        tun_port: r.tun_port,
        tun_csum: r.tun_csum,
    };
    if let Err(why) = tun.check(r.method == Method::Tun) {
        let k = if r.method != Method::Tun {
            "method"
        } else if r.tun_type == TunType::Gue || r.tun_port != 0 {
            "tun_port"
        } else {
            "tun_csum"
        };
        return Err((
            k,
            format!("service {}: real server {}: {why}", s.label(), r.address),
        ));
    }
    Ok(DestSpec {
        key: DestKey { addr, port: rport },
        method: r.method,
        weight: r.weight,
        upper: r.upper_threshold,
        lower: r.lower_threshold,
        tun,
    })
}
