//! `[announce]`: which port's kernel interface the VIP routes go through,
//! their table and protocol number, and the drain time at SIGTERM.

use super::file::AnnounceConfig;
use super::Port;
use dirigo_core::net::family::{Family, V4, V6};
use std::net::IpAddr;
use std::time::Duration;

/// A validated `[announce]` section that announces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announce {
    /// The port index (into `Config::ports`) the routes go through.
    pub port: usize,
    /// That port's kernel interface.
    pub interface: String,
    /// The routing table.
    pub table: u32,
    /// The protocol number.
    pub protocol: u8,
    /// How long the workers keep forwarding after the withdrawal at
    /// SIGTERM.
    pub drain: Duration,
    /// At most how long a starting director with `[sync]` receiving holds
    /// its VIPs back until the other directors' connections arrived.
    pub sync_wait: Duration,
}

/// The longest start-up hold accepted.
pub const MAX_SYNC_WAIT_MS: u64 = 60_000;

/// The longest drain accepted: well inside the packaged unit's
/// `TimeoutStopSec=30` (after the drain dirigo still has to stop).
pub const MAX_DRAIN_MS: u64 = 20_000;

/// Protocol numbers a routing daemon takes for its own routes (it would
/// remove or ignore ours): zebra (FRR) 11, bird 12, FRR's 186-192.
fn daemons_own(p: u32) -> Option<&'static str> {
    match p {
        11 => Some("zebra's (FRR)"),
        12 => Some("BIRD's own"),
        186..=192 => Some("one FRR uses for its own routes"),
        _ => None,
    }
}

/// Problems found, each as `(key, message)`.
type Errs = Vec<(&'static str, String)>;

/// `[announce]` against the validated ports and the configured services'
/// VIPs: `(key, message)` for each problem. `None` without the section or
/// with `enabled = false`.
pub(super) fn announce(
    a: Option<&AnnounceConfig>,
    ports: &[Port],
    exception: bool,
    vips: &[IpAddr],
) -> Result<Option<Announce>, Vec<(&'static str, String)>> {
    let Some(a) = a.filter(|a| a.enabled) else {
        return Ok(None);
    };
    let mut errs = Vec::new();
    let port = route_port(a, ports, exception, &mut errs);
    if let Some(p) = port {
        check_families(a, &ports[p], vips, &mut errs);
    }
    check_table(a.table, &mut errs);
    let protocol = route_protocol(a.protocol, &mut errs);
    check_times(a, &mut errs);
    match port {
        Some(port) if errs.is_empty() => Ok(Some(Announce {
            port,
            interface: ports[port].kernel_interface.clone().unwrap_or_default(),
            table: a.table,
            protocol,
            drain: Duration::from_millis(a.drain_ms),
            sync_wait: Duration::from_millis(a.sync_wait_ms),
        })),
        _ => Err(errs),
    }
}

/// The port the routes go through: the one named, else the only one with
/// a kernel interface.
fn route_port(
    a: &AnnounceConfig,
    ports: &[Port],
    exception: bool,
    errs: &mut Errs,
) -> Option<usize> {
    let with_kernel: Vec<usize> = (0..ports.len())
        .filter(|&i| ports[i].kernel_interface.is_some())
        .collect();
    match &a.port {
        Some(name) => named_port(name, ports, exception, errs),
        None if with_kernel.len() == 1 && exception => Some(with_kernel[0]),
        None if with_kernel.is_empty() || !exception => {
            errs.push((
                "enabled",
                "[announce] needs the exception path: a port with a kernel_interface and an \
                 [exception] section (the routing daemon runs in its namespace)"
                    .to_string(),
            ));
            None
        }
        None => {
            let names: Vec<&str> = with_kernel.iter().map(|&i| &*ports[i].name).collect();
            errs.push((
                "enabled",
                format!(
                    "[announce] port: several ports have a kernel interface ({}): say which one \
                     the routes go through (the one towards the routers)",
                    names.join(", ")
                ),
            ));
            None
        }
    }
}

/// `port = NAME`: a port with a kernel interface, and the exception path.
fn named_port(name: &str, ports: &[Port], exception: bool, errs: &mut Errs) -> Option<usize> {
    match ports.iter().position(|p| p.name == name) {
        None => {
            errs.push(("port", format!("[announce] port '{name}': no such port")));
            None
        }
        Some(i) if ports[i].kernel_interface.is_none() || !exception => {
            errs.push((
                "port",
                format!(
                    "[announce] port '{name}' has no kernel interface: the routes go through \
                     the exception path (give the port a kernel_interface, with an \
                     [exception] section)"
                ),
            ));
            None
        }
        Some(i) => Some(i),
    }
}

/// Every VIP's family has an address on the port the routes go through:
/// the routing daemon's session of that family runs from it and makes it
/// the routers' next hop (an IPv6 VIP announced from a port with IPv4
/// addresses only would have none). Checked once for both families.
fn check_families(a: &AnnounceConfig, port: &Port, vips: &[IpAddr], errs: &mut Errs) {
    let key = if a.port.is_some() { "port" } else { "enabled" };
    for v6 in [false, true] {
        let (family, has) = match v6 {
            false => (V4::NAME, !port.addresses.is_empty()),
            true => (V6::NAME, !port.addresses6.is_empty()),
        };
        let Some(vip) = vips.iter().find(|v| v.is_ipv6() == v6) else {
            continue;
        };
        if !has {
            errs.push((
                key,
                format!(
                    "[announce] port '{}' has no {family} address, but the {family} VIP {vip} \
                     is announced through it: the routing daemon's {family} session runs from \
                     that address and the routers use it as the next hop (add one to the \
                     port's `addresses`)",
                    port.name
                ),
            ));
        }
    }
}

/// `table`: neither 0 nor the kernel's local table.
fn check_table(table: u32, errs: &mut Errs) {
    match table {
        0 => errs.push((
            "table",
            "[announce] table 0 is no table (1..4294967295; the default is 100)".into(),
        )),
        255 => errs.push((
            "table",
            "[announce] table 255 is the kernel's local table (use a table of its own, e.g. 100)"
                .into(),
        )),
        _ => {}
    }
}

/// `protocol`: 5..255 and no routing daemon's own (0 when wrong).
fn route_protocol(protocol: u32, errs: &mut Errs) -> u8 {
    match protocol {
        p if p <= 4 => {
            errs.push((
                "protocol",
                format!(
                    "[announce] protocol {p} is one the kernel or the administrator uses \
                     (0-4); give a number of dirigo's own, 5..255 (default 201)"
                ),
            ));
            0
        }
        p if p > 255 => {
            errs.push(("protocol", format!("[announce] protocol {p}: at most 255")));
            0
        }
        p => {
            if let Some(whose) = daemons_own(p) {
                errs.push((
                    "protocol",
                    format!(
                        "[announce] protocol {p} is {whose}: a routing daemon does not \
                         redistribute routes it takes for its own (default 201)"
                    ),
                ));
            }
            p as u8
        }
    }
}

/// `drain_ms` and `sync_wait_ms` within their limits.
fn check_times(a: &AnnounceConfig, errs: &mut Errs) {
    if a.drain_ms > MAX_DRAIN_MS {
        errs.push((
            "drain_ms",
            format!(
                "[announce] drain_ms {} is more than {MAX_DRAIN_MS} (the packaged systemd unit \
                 stops dirigo by force after 30 s)",
                a.drain_ms
            ),
        ));
    }
    if a.sync_wait_ms > MAX_SYNC_WAIT_MS {
        errs.push((
            "sync_wait_ms",
            format!(
                "[announce] sync_wait_ms {} is more than {MAX_SYNC_WAIT_MS} (a director that \
                 cannot hear its peers would stay unannounced that long)",
                a.sync_wait_ms
            ),
        ));
    }
}
