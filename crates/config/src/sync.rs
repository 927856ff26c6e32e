//! `[sync]`: connection sync with other directors (the IPVS sync protocol,
//! version 1, over the kernel interface of one of dirigo's ports).

use super::file::SyncConfig;
use super::Port;
use dirigo_core::lb::sync::SyncPolicy;
use std::net::Ipv4Addr;

/// A validated `[sync]` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sync {
    /// Index of the port (into `Config::ports`) whose kernel interface
    /// carries the messages.
    pub port: usize,
    /// That kernel interface's name.
    pub interface: String,
    /// The address messages are sent from (the port's first address).
    pub source: Ipv4Addr,
    /// Multicast group (IPVS: 224.0.0.81).
    pub group: Ipv4Addr,
    /// UDP port (IPVS: 8848).
    pub udp_port: u16,
    /// Multicast TTL.
    pub ttl: u32,
    /// IPVS `syncid`: sent in every message; received messages with
    /// another one are ignored unless it is 0.
    pub syncid: u8,
    /// Unicast peers: messages go to each of them instead of the group.
    pub peers: Vec<Ipv4Addr>,
    /// Send this director's connections.
    pub send: bool,
    /// Install the other directors' connections.
    pub receive: bool,
    /// When connections are sent.
    pub policy: SyncPolicy,
    /// Largest message (bytes of UDP payload): the port's MTU less the IP
    /// and UDP headers.
    pub max_message: usize,
}

/// `[sync]`, checked against the ports: `Err((key, message))`.
pub(super) fn sync(
    s: Option<&SyncConfig>,
    ports: &[Port],
) -> Result<Option<Sync>, (&'static str, String)> {
    let Some(s) = s else {
        return Ok(None);
    };
    if !s.enabled {
        return Ok(None);
    }
    let (i, interface, source) = sync_port(s, ports)?;
    let group = group(&s.group)?;
    let peers = peers(&s.peers, source)?;
    let syncid = limits(s)?;
    let mtu = ports[i].mtu.unwrap_or(1500) as usize;
    Ok(Some(Sync {
        port: i,
        interface,
        source,
        group,
        udp_port: s.udp_port,
        ttl: s.ttl,
        syncid,
        peers,
        send: s.send,
        receive: s.receive,
        policy: SyncPolicy::new(s.threshold, s.refresh_period),
        max_message: mtu.saturating_sub(28).clamp(256, 65_507),
    }))
}

/// The port carrying sync: its index, kernel interface and first address.
fn sync_port(
    s: &SyncConfig,
    ports: &[Port],
) -> Result<(usize, String, Ipv4Addr), (&'static str, String)> {
    let Some(name) = &s.port else {
        return Err((
            "port",
            "[sync] needs port = \"NAME\": the port whose kernel interface carries the sync \
             messages (a [[port]] with kernel_interface)"
                .into(),
        ));
    };
    let Some(i) = ports.iter().position(|p| &p.name == name) else {
        return Err(("port", format!("[sync] port '{name}' is not a [[port]]")));
    };
    let p = &ports[i];
    let Some(interface) = p.kernel_interface.clone() else {
        return Err((
            "port",
            format!(
                "[sync] port '{name}' has no kernel_interface: sync messages are kernel UDP \
                 sockets on the exception path"
            ),
        ));
    };
    let Some(source) = p.addresses.first().map(|a| Ipv4Addr::from(a.addr)) else {
        return Err(("port", format!("[sync] port '{name}' has no address")));
    };
    Ok((i, interface, source))
}

/// `group`: an IPv4 multicast address.
fn group(g: &str) -> Result<Ipv4Addr, (&'static str, String)> {
    let group: Ipv4Addr = g.parse().map_err(|_| {
        (
            "group",
            format!("[sync] group '{g}' is not an IPv4 address"),
        )
    })?;
    if !group.is_multicast() {
        return Err((
            "group",
            format!("[sync] group {group} is not a multicast address (IPVS: 224.0.0.81)"),
        ));
    }
    Ok(group)
}

/// `peers`: unicast addresses other than `source`.
fn peers(list: &[String], source: Ipv4Addr) -> Result<Vec<Ipv4Addr>, (&'static str, String)> {
    let mut peers = Vec::new();
    for a in list {
        let ip: Ipv4Addr = a
            .parse()
            .map_err(|_| ("peers", format!("[sync] peer '{a}' is not an IPv4 address")))?;
        if ip.is_multicast() || ip.is_broadcast() || ip.is_unspecified() || ip == source {
            return Err((
                "peers",
                format!("[sync] peer {ip}: give the other directors' unicast addresses"),
            ));
        }
        peers.push(ip);
    }
    Ok(peers)
}

/// The numeric keys and `send`/`receive`: the `syncid` as a byte.
fn limits(s: &SyncConfig) -> Result<u8, (&'static str, String)> {
    let Ok(syncid) = u8::try_from(s.syncid) else {
        return Err((
            "syncid",
            format!(
                "[sync] syncid {} is not 0..255 (0: accept every syncid)",
                s.syncid
            ),
        ));
    };
    if s.udp_port == 0 {
        return Err(("udp_port", "[sync] udp_port 0 (IPVS: 8848)".into()));
    }
    if !(1..=255).contains(&s.ttl) {
        return Err(("ttl", format!("[sync] ttl {} is not 1..255", s.ttl)));
    }
    if !(1..=255).contains(&s.threshold) {
        return Err((
            "threshold",
            format!(
                "[sync] threshold {} is not 1..255 (IPVS sync_threshold: 3)",
                s.threshold
            ),
        ));
    }
    if s.refresh_period > 86_400 {
        return Err((
            "refresh_period",
            format!(
                "[sync] refresh_period {} s: at most 86400 (0 = only on state changes)",
                s.refresh_period
            ),
        ));
    }
    if !s.send && !s.receive {
        return Err((
            "send",
            "[sync] send = false and receive = false: leave enabled = false instead".into(),
        ));
    }
    Ok(syncid)
}
