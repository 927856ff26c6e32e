//! dirigoctl's human-readable tables.

use crate::view::{
    AddrInfo, CensusInfo, DropCount, FingerprintInfo, HealthReport, LcoreInfo, NeighInfo, PortInfo,
    RouteInfo, VersionInfo, VipReport,
};
use std::fmt::Write;

/// `dirigoctl ports`.
pub fn ports(ports: &[PortInfo]) -> String {
    let mut out = format!(
        "{:<4} {:<12} {:<17} {:<5} {:>7} {:>5} {:>14} {:>14} {:>16} {:>16} {:>10} {:>10} {:>10} {:>10}\n",
        "PORT", "NAME", "MAC", "LINK", "SPEED", "MTU", "RX-PKTS", "TX-PKTS", "RX-BYTES", "TX-BYTES",
        "RX-MISSED", "RX-ERRS", "TX-ERRS", "RX-NOMBUF"
    );
    for p in ports {
        let c = &p.counters;
        let link = if p.link_up { "up" } else { "down" };
        let speed = if p.speed_mbps >= 1000 {
            format!("{}G", p.speed_mbps / 1000)
        } else {
            format!("{}M", p.speed_mbps)
        };
        let _ = writeln!(
            out,
            "{:<4} {:<12} {:<17} {:<5} {:>7} {:>5} {:>14} {:>14} {:>16} {:>16} {:>10} {:>10} {:>10} {:>10}",
            p.id, p.name, p.mac.to_string(), link, speed, p.mtu, c.ipackets, c.opackets, c.ibytes,
            c.obytes, c.imissed, c.ierrors, c.oerrors, c.rx_nombuf
        );
        if let Some(k) = &p.kernel {
            let ns = k.netns.as_deref().unwrap_or("-");
            let _ = writeln!(
                out,
                "     kernel {} (netns {ns}, {}): to-kernel {} from-kernel {} rate-limited {} ring-full {} write-failed {} inject-full {}",
                k.name, k.backend, k.to_kernel, k.from_kernel, k.rate_limited, k.ring_full,
                k.write_failed, k.inject_full
            );
        }
        for x in &p.xstats {
            let _ = writeln!(out, "     {:<40} {:>20}", x.name, x.value);
        }
    }
    out
}

/// `dirigoctl addr list`.
pub fn addresses(addrs: &[AddrInfo]) -> String {
    let mut out = format!("{:<4} {}\n", "PORT", "ADDRESS");
    for a in addrs {
        let _ = writeln!(out, "{:<4} {}/{}", a.port, a.addr, a.prefix_len);
    }
    out
}

/// `dirigoctl route list` (IPv4 routes, then IPv6 ones; the columns
/// widen for IPv6 addresses).
pub fn routes(routes: &[RouteInfo]) -> String {
    let opt = |a: Option<std::net::IpAddr>| a.map(|g| g.to_string()).unwrap_or_else(|| "-".into());
    let rows: Vec<(String, String, u16, String)> = routes
        .iter()
        .map(|r| {
            (
                format!("{}/{}", r.dst, r.prefix_len),
                opt(r.gateway),
                r.port,
                opt(r.src),
            )
        })
        .collect();
    let dw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(18);
    let gw = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max(15);
    let mut out = format!(
        "{:<dw$} {:<gw$} {:<4} {}\n",
        "DESTINATION", "GATEWAY", "PORT", "SOURCE"
    );
    for (dst, g, port, src) in rows {
        let _ = writeln!(out, "{dst:<dw$} {g:<gw$} {port:<4} {src}");
    }
    out
}

/// `dirigoctl neigh list` (IPv4 and IPv6 neighbours; the address column
/// widens for IPv6 addresses).
pub fn neighbors(n: &[NeighInfo]) -> String {
    let aw = n
        .iter()
        .map(|e| e.addr.to_string().len())
        .max()
        .unwrap_or(0)
        .max(15);
    let mut out = format!(
        "{:<aw$} {:<17} {:<4} {:<10} {}\n",
        "ADDRESS", "MAC", "PORT", "STATE", "AGE"
    );
    for e in n {
        let mac = e.mac.map(|m| m.to_string()).unwrap_or_else(|| "-".into());
        let age = e
            .age_secs
            .map(|a| format!("{a}s"))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{:<aw$} {mac:<17} {:<4} {:<10} {age}",
            e.addr.to_string(),
            e.port,
            e.state
        );
    }
    out
}

/// `dirigoctl lcores`.
pub fn lcores(l: &[LcoreInfo]) -> String {
    let mut out = format!(
        "{:<5} {:<7} {:<16} {:>14} {:>14} {:>12} {:>10} {:>14}\n",
        "LCORE", "ROLE", "QUEUES", "RX-PKTS", "TX-PKTS", "DROPPED", "CONNS", "CONNS-CREATED"
    );
    for c in l {
        let q = if c.queues.is_empty() {
            "-".to_string()
        } else {
            c.queues.join(",")
        };
        let _ = writeln!(
            out,
            "{:<5} {:<7} {:<16} {:>14} {:>14} {:>12} {:>10} {:>14}",
            c.lcore, c.role, q, c.rx_packets, c.tx_packets, c.dropped, c.conns, c.conns_created
        );
        for x in &c.extra {
            let _ = writeln!(out, "      {:<40} {:>20}", x.name, x.value);
        }
    }
    out
}

/// `dirigoctl drops`.
pub fn drops(d: &[DropCount]) -> String {
    let mut out = format!("{:<32} {:>20}\n", "REASON", "COUNT");
    for e in d {
        let _ = writeln!(out, "{:<32} {:>20}", e.reason, e.count);
    }
    out
}

/// `dirigoctl sync`.
pub fn sync(s: Option<&crate::view::SyncInfo>) -> String {
    let Some(s) = s else {
        return "connection sync is off ([sync] enabled = false)\n".into();
    };
    let to = if s.peers.is_empty() {
        format!("group {}:{} ttl {}", s.group, s.udp_port, s.ttl)
    } else {
        let p: Vec<String> = s
            .peers
            .iter()
            .map(|p| format!("{p}:{}", s.udp_port))
            .collect();
        format!("peers {}", p.join(" "))
    };
    let role = match (s.send, s.receive) {
        (true, true) => "send+receive",
        (true, false) => "send",
        _ => "receive",
    };
    let refresh = if s.refresh_ms == 0 {
        "none".to_string()
    } else {
        format!("{} ms", s.refresh_ms)
    };
    let mut out = format!(
        "sync {role} on {} from {}, {to}, syncid {}, maxlen {}, udp threshold {}, refresh {refresh}\n",
        s.interface, s.source, s.syncid, s.max_message, s.threshold
    );
    let _ = writeln!(out, "{:<32} {:>20}", "COUNTER", "VALUE");
    for c in &s.counters {
        let _ = writeln!(out, "{:<32} {:>20}", c.name, c.value);
    }
    out
}

/// `dirigoctl handoff`.
pub fn handoff(h: &crate::view::HandoffInfo) -> String {
    let Some(file) = &h.file else {
        return "connection handoff is off ([control] handoff_file is not set)\n".into();
    };
    let gap = h.gap_ms.map_or("-".to_string(), |g| format!("{g} ms"));
    let mut out = format!("handoff file {file}: {}, gap {gap}\n", h.outcome);
    if let Some(c) = &h.checkpoint {
        let age = c
            .age_s
            .map_or("none yet".to_string(), |a| format!("{a} s ago"));
        let _ = writeln!(
            out,
            "checkpoint every {} s: last {age} ({} entries, {} bytes, {} ms); {} written, {} failed, {} stalls",
            c.period_s, c.last_entries, c.last_bytes, c.last_ms, c.written, c.failed, c.stalls
        );
    }
    let _ = writeln!(out, "{:<32} {:>20}", "COUNTER", "VALUE");
    for c in &h.counters {
        let _ = writeln!(out, "{:<32} {:>20}", c.name, c.value);
    }
    out
}

/// `dirigoctl fingerprint`: one line per service, `-` where its scheduler
/// has no table.
pub fn fingerprints(f: &[FingerprintInfo]) -> String {
    let mut out = format!(
        "{:<26} {:<5} {:>8} {:>7} {}\n",
        "SERVICE", "SCHED", "ENTRIES", "SERVERS", "FINGERPRINT"
    );
    let dash = |v: Option<u32>| v.map_or("-".to_string(), |n| n.to_string());
    for i in f {
        // ipvsadm's `[addr]:port` for an IPv6 VIP
        let svc = format!(
            "{} {}",
            i.service.proto.upper(),
            std::net::SocketAddr::new(i.service.vip, i.service.port)
        );
        let _ = writeln!(
            out,
            "{svc:<26} {:<5} {:>8} {:>7} {}",
            i.sched,
            dash(i.entries),
            dash(i.servers),
            i.fingerprint.as_deref().unwrap_or("-")
        );
    }
    out
}

/// `dirigoctl health`.
pub fn health(h: &HealthReport) -> String {
    let mut out = format!(
        "{:<26} {:<21} {:<12} {:<8} {:>7} {:>6}/{:<6} {:>9} {:>8} {:>7} {}\n",
        "SERVICE",
        "SERVER",
        "CHECK",
        "STATE",
        "SINCE",
        "WEIGHT",
        "EFFECT",
        "CHECKS",
        "FAILED",
        "LATENCY",
        "LAST"
    );
    for s in &h.servers {
        // ipvsadm's `[addr]:port` for IPv6
        let svc = format!(
            "{} {}",
            s.service.proto.upper(),
            std::net::SocketAddr::new(s.service.vip, s.service.port)
        );
        let rs = std::net::SocketAddr::new(s.dest.addr, s.dest.port).to_string();
        let eff = s
            .effective_weight
            .map_or("-".to_string(), |w| w.to_string());
        let lat = s
            .latency_us
            .map_or("-".to_string(), |l| format!("{:.1}ms", l as f64 / 1000.0));
        let _ = writeln!(
            out,
            "{svc:<26} {rs:<21} {:<12} {:<8} {:>6}s {:>6}/{eff:<6} {:>9} {:>8} {lat:>7} {}",
            s.check,
            s.state,
            s.since_secs,
            s.weight,
            s.checks,
            s.failures,
            s.last.as_deref().unwrap_or("-")
        );
    }
    let [down, up, lost, restored] = h.counts;
    let _ = writeln!(
        out,
        "transitions: {down} down, {up} up; quorum lost {lost}, restored {restored}"
    );
    if !h.quorum_lost.is_empty() {
        let _ = writeln!(out, "quorum lost: {}", h.quorum_lost.join(", "));
    }
    if !h.withdrawn.is_empty() {
        let v: Vec<String> = h.withdrawn.iter().map(|a| a.to_string()).collect();
        let _ = writeln!(out, "withdrawn VIPs (no ARP, no ping): {}", v.join(", "));
    }
    for e in &h.events {
        let _ = writeln!(out, "  {:>6}s ago  {}: {}", e.secs_ago, e.what, e.why);
    }
    out
}

/// `dirigoctl census`: a line per worker, `ok` or `MISMATCH` last.
pub fn census(c: &[CensusInfo]) -> String {
    let mut out = format!(
        "{:<5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>13}  {}\n",
        "LCORE", "ENTRIES", "WALKED", "GAUGE", "ACTIVE", "INACTIVE", "WALKED-ACTIVE", "CHECK"
    );
    for w in c {
        let _ = writeln!(
            out,
            "{:<5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>13}  {}",
            w.lcore,
            w.entries,
            w.walked,
            w.gauge,
            w.active,
            w.inactive,
            w.walked_active,
            if w.consistent { "ok" } else { "MISMATCH" }
        );
    }
    out
}

/// `dirigoctl vips`.
pub fn vips(r: &VipReport) -> String {
    let mut out = match (&r.interface, r.table, r.protocol) {
        (Some(i), Some(t), Some(p)) => format!(
            "announce: routes through {i}, table {t}, proto {p}{}; {} failure(s)\n",
            if r.draining { "; draining" } else { "" },
            r.failures
        ),
        _ => "announce: off (no [announce] section)\n".to_string(),
    };
    // an IPv6 VIP widens the column
    let w = r
        .vips
        .iter()
        .map(|v| v.vip.to_string().len())
        .max()
        .unwrap_or(0)
        .max(16);
    let _ = writeln!(out, "{:<w$} {:<10} {:>7}  WHY", "VIP", "STATE", "SINCE");
    for v in &r.vips {
        let since = v.since_secs.map_or("-".to_string(), |s| format!("{s}s"));
        let _ = writeln!(
            out,
            "{:<w$} {:<10} {since:>7}  {}",
            v.vip.to_string(),
            v.state,
            v.why
        );
    }
    out
}

/// `dirigoctl version` (client and daemon).
pub fn version(v: &VersionInfo) -> String {
    format!(
        "dirigoctl {}\ndirigo {} (control protocol v{}{}{})\n",
        crate::version::long(),
        v.version,
        v.proto,
        v.commit
            .as_ref()
            .map(|c| format!(", commit {c}"))
            .unwrap_or_default(),
        v.dpdk
            .as_ref()
            .map(|d| format!(", DPDK {d}"))
            .unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use dirigo_core::lb::spec::{Proto, ServiceKey};

    /// A service as ipvsadm writes it: `[addr]:port` for an IPv6 VIP.
    #[test]
    fn fingerprints_print_ipv6_services_bracketed() {
        let info = |vip: &str, port, fp: Option<&str>| FingerprintInfo {
            service: ServiceKey {
                fwmark: 0,
                proto: Proto::Tcp,
                vip: vip.parse().unwrap(),
                port,
            },
            sched: if fp.is_some() { "mh" } else { "rr" }.into(),
            entries: fp.map(|_| 65537),
            servers: fp.map(|_| 2),
            fingerprint: fp.map(String::from),
        };
        let t = fingerprints(&[
            info("192.0.2.100", 80, Some("0x0123456789abcdef")),
            info("2001:db8::10", 80, Some("0xfedcba9876543210")),
            info("2001:db8::11", 443, None),
        ]);
        let lines: Vec<Vec<&str>> = t.lines().map(|l| l.split_whitespace().collect()).collect();
        assert_eq!(
            lines[1],
            [
                "TCP",
                "192.0.2.100:80",
                "mh",
                "65537",
                "2",
                "0x0123456789abcdef"
            ],
            "{t}"
        );
        assert_eq!(
            lines[2],
            [
                "TCP",
                "[2001:db8::10]:80",
                "mh",
                "65537",
                "2",
                "0xfedcba9876543210"
            ],
            "{t}"
        );
        assert_eq!(
            lines[3],
            ["TCP", "[2001:db8::11]:443", "rr", "-", "-", "-"],
            "{t}"
        );
    }

    #[test]
    fn handoff_says_what_became_of_the_file() {
        use crate::view::{HandoffInfo, NamedCounter};
        let off = HandoffInfo {
            file: None,
            outcome: "none".into(),
            gap_ms: None,
            counters: vec![],
            checkpoint: None,
        };
        assert!(handoff(&off).contains("handoff is off"));
        let on = HandoffInfo {
            file: Some("/var/lib/dirigo/handoff".into()),
            outcome: "installed, 1 refused".into(),
            gap_ms: Some(812),
            counters: vec![NamedCounter {
                name: "handoff_no_dest".into(),
                value: 3,
            }],
            checkpoint: Some(crate::view::CheckpointInfo {
                period_s: 10,
                written: 4,
                last_entries: 1000,
                last_bytes: 98_040,
                last_ms: 12,
                age_s: Some(3),
                ..Default::default()
            }),
        };
        let t = handoff(&on);
        assert!(
            t.contains("checkpoint every 10 s: last 3 s ago (1000 entries, 98040 bytes, 12 ms); 4 written, 0 failed, 0 stalls\n"),
            "{t}"
        );
        assert!(
            t.starts_with(
                "handoff file /var/lib/dirigo/handoff: installed, 1 refused, gap 812 ms\n"
            ),
            "{t}"
        );
        let last: Vec<&str> = t.lines().last().unwrap().split_whitespace().collect();
        assert_eq!(last, ["handoff_no_dest", "3"]);
    }
}
