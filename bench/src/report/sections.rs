//! The sections of BENCHMARKS.md beyond the main tables: IPv6, metrics,
//! the exception path, the SYN proxy, connection sync and what the table
//! costs at the largest size.

use super::*;
use dirigo_core::lb::spec::Method;

/// The IPv6 section of BENCHMARKS.md: each IPv6 scenario beside testpmd
/// macswap on its own pcap, and beside the IPv4 scenario of the same
/// method and size.
pub(super) fn ipv6_section(s: &mut String, plan: &Plan, a: &Agg) {
    let sc = plan.v6_scenarios();
    if sc.is_empty() {
        return;
    }
    let _ = writeln!(s, "## dirigo, IPv6 established connections (one worker)\n");
    let _ = writeln!(
        s,
        "The established traffic of the tables above in IPv6 (`gen::write_pcap6`: one SYN, then one \
         ACK per flow, from 2001:db8:a::/64 to the IPv6 VIP [2001:db8:64::100]:80; 74-byte frames, 78 \
         on the wire), to an IPv6 service of the same four real servers (2001:db8:10::11-14 on the lan, \
         static neighbours), the IPv6 connection table at the established scenarios' capacity. \
         testpmd macswap runs on the IPv6 pcap itself: its frames are longer, so its ceiling is not the \
         IPv4 one.\n"
    );
    let _ = writeln!(
        s,
        "| scenario | Mpps | spread | ns/pkt | x macswap (IPv6 pcap, same run) | testpmd macswap IPv6 Mpps | x IPv4 of the same method and size | flows tracked |\n|---|---|---|---|---|---|---|---|"
    );
    for (name, size, _, m) in sc {
        let k = format!("dirigo|{name}");
        let mp = a.med(&format!("{k}|mpps"));
        let v4 = a.med(&format!("dirigo|{} {size}|mpps", mname(m)));
        let _ = writeln!(
            s,
            "| {name} | {} | {:.1}% | {} | {} | {} | {} | {} |",
            f2(mp),
            a.spread_pct(&format!("{k}|mpps")),
            f2(1e3 / mp),
            f2(a.med(&format!("{k}|ratio"))),
            f2(a.med(&format!("testpmd|macswap {}|mpps", v6_label(size)))),
            f2(mp / v4),
            f0(a.med(&format!("{k}|tracked")))
        );
    }
    let _ = writeln!(s);
}

/// The "Metrics" section: DR on the largest pcap with and without the
/// Prometheus endpoint scraped every second and the burst histogram.
pub(super) fn metrics_section(s: &mut String, plan: &Plan, a: &Agg) {
    let label = plan.sizes.last().map_or("", |s| s.0);
    let k = format!("dirigo|{}", metrics_scenario(label));
    let plain = format!("dirigo|DR {label}");
    let _ = writeln!(s, "## Metrics\n");
    let _ = writeln!(
        s,
        "DR at {label} flows, one worker, twice in a row: as configured for the table above (no `[metrics]`: \
         the burst histogram off), and with `[metrics] listen = \"{}\"`, `burst_histogram = true` and a \
         `GET /metrics` every second during the run (each renders every family, the workers' histograms \
         included). Target: the ratio within the run-to-run spread.\n",
        crate::dut::METRICS_ADDR
    );
    let _ = writeln!(
        s,
        "| scenario | Mpps | spread | ratio to the plain run | x macswap | scrapes |\n|---|---|---|---|---|---|"
    );
    let _ = writeln!(
        s,
        "| DR {label}, plain | {} | {:.1}% | 1.00 | {} | 0 |",
        f2(a.med(&format!("{plain}|mpps"))),
        a.spread_pct(&format!("{plain}|mpps")),
        f2(a.med(&format!("{plain}|ratio")))
    );
    let _ = writeln!(
        s,
        "| DR {label}, metrics scraped every 1 s | {} | {:.1}% | {} | {} | {} |\n",
        f2(a.med(&format!("{k}|mpps"))),
        a.spread_pct(&format!("{k}|mpps")),
        f2(a.med(&format!("{k}|plain"))),
        f2(a.med(&format!("{k}|ratio"))),
        f0(a.med(&format!("{k}|scrapes")))
    );
}

/// The "Crash checkpoint" section: DR at the largest size with the
/// checkpoint every second (issue 53).
pub(super) fn checkpoint_section(s: &mut String, plan: &Plan, a: &Agg) {
    let label = plan.sizes.last().map_or("", |s| s.0);
    let k = format!("dirigo|{}", crate::checkpoint_scenario(label));
    if a.values(&format!("{k}|mpps")).is_empty() {
        return;
    }
    let plain = format!("dirigo|DR {label}");
    let _ = writeln!(s, "## Crash checkpoint\n");
    let _ = writeln!(
        s,
        "DR at {label} flows, one worker, twice in a row: as configured for the table above, and with \
         `[control] connection_checkpoint_s = 1` (the table full, so every second the worker sweeps all of \
         it, 4096 slots per 1 ms housekeeping tick, into the checkpoint thread's buffers, and the thread \
         writes the file): the worst case, a sweep that never stops; a period of P seconds costs about \
         the last checkpoint's time over P of it. Target: within 10% of the plain run's rate at 1 s.\n"
    );
    let _ = writeln!(
        s,
        "| scenario | Mpps | spread | ratio to the plain run | x macswap | checkpoints | last: entries | last: ms |\n|---|---|---|---|---|---|---|---|"
    );
    let _ = writeln!(
        s,
        "| DR {label}, plain | {} | {:.1}% | 1.00 | {} | - | - | - |",
        f2(a.med(&format!("{plain}|mpps"))),
        a.spread_pct(&format!("{plain}|mpps")),
        f2(a.med(&format!("{plain}|ratio")))
    );
    let _ = writeln!(
        s,
        "| DR {label}, checkpoint every 1 s | {} | {:.1}% | {} | {} | {} | {} | {} |\n",
        f2(a.med(&format!("{k}|mpps"))),
        a.spread_pct(&format!("{k}|mpps")),
        f2(a.med(&format!("{k}|plain"))),
        f2(a.med(&format!("{k}|ratio"))),
        f0(a.med(&format!("{k}|written"))),
        f0(a.med(&format!("{k}|entries"))),
        f0(a.med(&format!("{k}|ms")))
    );
}

/// The "Restart gap" section: DR at the largest size restarted with
/// SIGTERM, the connection handoff's gap and its parts (issue 53).
pub(super) fn handoff_section(s: &mut String, plan: &Plan, a: &Agg) {
    let label = plan.sizes.last().map_or("", |s| s.0);
    let k = format!("handoff {label}");
    if a.values(&format!("{k}|gap_ms")).is_empty() {
        return;
    }
    let _ = writeln!(s, "## Restart gap\n");
    let _ = writeln!(
        s,
        "DR at {label} flows, one worker, `[control] handoff_file` set: the table filled by the traffic, \
         dirigo stopped with SIGTERM (it writes every connection) and started again on the same \
         configuration (it installs them before its ports forward). The gap is the time no packet is \
         forwarded, from the old process's last burst to the new one's first (`dirigoctl handoff`): \
         the write, the new process's start (EAL, pools, ports) and the install. Goal: under 2 s at 1M.\n"
    );
    let _ = writeln!(
        s,
        "| connections | installed | old: export + write (ms) | new: install (ms) | gap (ms) |\n|---|---|---|---|---|"
    );
    let _ = writeln!(
        s,
        "| {} | {} | {} | {} | {} |\n",
        f0(a.med(&format!("{k}|tracked"))),
        f0(a.med(&format!("{k}|installed"))),
        f0(a.med(&format!("{k}|write_ms"))),
        f0(a.med(&format!("{k}|install_ms"))),
        f0(a.med(&format!("{k}|gap_ms")))
    );
}

/// The "Exception traffic" section: DR with and without 10% of the input
/// for dirigo's own address.
pub(super) fn exception_section(s: &mut String, plan: &Plan, a: &Agg) {
    let label = plan.exception_size.0;
    let sc = exc_scenario(label);
    let k = format!("dirigo|{sc}");
    let plain = format!("dirigo|DR {label}");
    let _ = writeln!(s, "## Exception traffic\n");
    let _ = writeln!(
        s,
        "DR at {label} flows, one worker, twice: on the plain pcap, and on the same pcap with every 10th packet \
         (of both passes) replaced by a TCP SYN from that flow's client to dirigo's own wan address, {}:{} \
         (not a service), with the exception path configured: the wan port's `kernel_interface = \"{}\"`, \
         `[exception] backend = \"tap\"`, `netns = \"{}\"`, the default `rate_limit_pps` (20000/s). \
         Mpps VIP forwarded = the lan port's TX rate; x macswap = against testpmd macswap on the plain \
         pcap; own-address packets/s in = handed to the kernel + rate-limited + lost (exception ring full \
         or not written), from the port's `kernel` counters (`dirigoctl --json ports`).\n",
        std::net::Ipv4Addr::from(crate::gen::OWN_ADDR),
        crate::gen::OWN_PORT,
        crate::dut::KERNEL_IF,
        crate::dut::NETNS
    );
    let _ = writeln!(s, "| scenario | Mpps VIP forwarded | spread | ratio to the plain run | x macswap | own-address packets/s in | to kernel/s | rate-limited/s |\n|---|---|---|---|---|---|---|---|");
    let _ = writeln!(
        s,
        "| DR {label}, plain | {} | {:.1}% | 1.00 | {} | 0 | 0 | 0 |",
        f2(a.med(&format!("{plain}|mpps"))),
        a.spread_pct(&format!("{plain}|mpps")),
        f2(a.med(&format!("{plain}|ratio")))
    );
    let _ = writeln!(
        s,
        "| DR {label}, 10% to {}:{} | {} | {:.1}% | {} | {} | {} | {} | {} |\n",
        std::net::Ipv4Addr::from(crate::gen::OWN_ADDR),
        crate::gen::OWN_PORT,
        f2(a.med(&format!("{k}|mpps"))),
        a.spread_pct(&format!("{k}|mpps")),
        f2(a.med(&format!("{k}|plain"))),
        f2(a.med(&format!("{k}|ratio"))),
        f0(a.med(&format!("{k}|own_in"))),
        f0(a.med(&format!("{k}|to_kernel"))),
        f0(a.med(&format!("{k}|limited")))
    );
    let lost = a.med(&format!("{k}|lost"));
    let _ = writeln!(
        s,
        "Only 90% of the input is VIP traffic, so if an own-address packet costs dirigo as much as a forwarded one \
         the ratio to the plain run is about 0.90: above it an own-address packet is cheaper (all but the rate \
         limit's 20000/s are freed by the worker at the token bucket), below it the exception path costs more (the hand-over to the \
         `dirigo-exc` thread, which shares this 2-core machine with the worker and the control thread); \
         either way the kernel never receives more than the rate limit.{}\n",
        if lost > 0.0 {
            format!(" {} own-address packets/s were lost to a full exception ring or a full tap queue.", f0(lost))
        } else {
            String::new()
        }
    );
}

/// The SYN proxy: the new-connection pcap's SYNs answered with cookies by
/// the daemon (beside testpmd on the same pcap), and the sans-IO figures
/// (connections opened through the proxy, proxied established NAT beside
/// plain NAT on the same frames).
pub(super) fn synproxy_section(s: &mut String, a: &Agg) {
    if a.values("dirigo|synproxy syn|mpps").is_empty() && a.values("micro|synproxy|est").is_empty()
    {
        return;
    }
    let _ = writeln!(s, "## SYN proxy (NAT, `--synproxy`, one worker)\n");
    let _ = writeln!(
        s,
        "Daemon: the new-connection pcap's SYNs sent to a `--synproxy` NAT service; every SYN is answered on the wan port \
         with a SYN/ACK cookie and nothing is stored (what a SYN flood costs). Sans-IO core (`dirigo-bench micro`, burst API, \
         frames with the timestamps option as a Linux peer sends them): connections opened through the proxy (the client's \
         SYN, then its ACK: cookie check, scheduling, insert, the SYN to the server), and established packets of proxied \
         connections (sequence and timestamp translation) beside plain NAT on the same frames in the same run.\n"
    );
    let _ = writeln!(s, "| what | value | spread |\n|---|---|---|");
    let _ = writeln!(
        s,
        "| SYNs answered (daemon), M/s | {} ({} x macswap on the same pcap) | {:.1}% |",
        f2(a.med("dirigo|synproxy syn|mpps")),
        f2(a.med("dirigo|synproxy syn|ratio")),
        a.spread_pct("dirigo|synproxy syn|mpps"),
    );
    let _ = writeln!(
        s,
        "| SYNs answered (sans-IO core), M/s | {} | {:.1}% |",
        f2(a.med("micro|synproxy|syn")),
        a.spread_pct("micro|synproxy|syn"),
    );
    let _ = writeln!(
        s,
        "| SYNs answered per packet (sans-IO core, `process`/`process6`), M/s | IPv4 {}, IPv6 {} | {:.1}% / {:.1}% |",
        f2(a.med("micro|synproxy|synpkt")),
        f2(a.med("micro|synproxy|syn6")),
        a.spread_pct("micro|synproxy|synpkt"),
        a.spread_pct("micro|synproxy|syn6"),
    );
    let _ = writeln!(
        s,
        "| connections opened through the proxy (sans-IO core), M/s | {} | {:.1}% |",
        f2(a.med("micro|synproxy|open")),
        a.spread_pct("micro|synproxy|open"),
    );
    let _ = writeln!(
        s,
        "| established, proxied (sans-IO core), Mpps | {} ({:.2} x plain NAT {}) | {:.1}% |\n",
        f2(a.med("micro|synproxy|est")),
        a.med("micro|synproxy|est") / a.med("micro|synproxy|nat"),
        f2(a.med("micro|synproxy|nat")),
        a.spread_pct("micro|synproxy|est"),
    );
}

/// Connection sync's cost on the established path: DR at the largest flow
/// count through the sans-IO core with `[sync]` on (every packet checked,
/// what is due queued; the queue emptied between timed bursts, as the sync
/// thread would) beside off, in the same run.
pub(super) fn sync_section(s: &mut String, plan: &Plan, a: &Agg) {
    let Some(&(label, _)) = plan.sizes.last() else {
        return;
    };
    let (on, off) = (
        format!("micro|sync {label}|on"),
        format!("micro|sync {label}|off"),
    );
    if a.values(&format!("{on}|mpps")).is_empty() {
        return;
    }
    let _ = writeln!(s, "## Connection sync (`[sync]`, one worker)\n");
    let _ = writeln!(
        s,
        "Sans-IO core (`dirigo-bench micro`, burst API), DR with {label} established flows: with `[sync]` the balancer \
         checks every forwarded packet for a state change or a refresh due and queues what is (the sync thread's side, \
         batching and the socket, is off the worker); without, the same frames in the same run. The daemon's worker \
         path with sync off is what the tables above measure.\n"
    );
    let _ = writeln!(s, "| what | Mpps | ns/pkt | spread |\n|---|---|---|---|");
    for (name, k) in [("without `[sync]`", &off), ("with `[sync]`", &on)] {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {:.1}% |",
            f2(a.med(&format!("{k}|mpps"))),
            f0(a.med(&format!("{k}|ns"))),
            a.spread_pct(&format!("{k}|mpps")),
        );
    }
    let _ = writeln!(
        s,
        "\nRatio with/without: {:.2}.\n",
        a.med(&format!("{on}|mpps")) / a.med(&format!("{off}|mpps"))
    );
}

/// What the connection table costs at the largest size: each method there
/// beside the same method with the smallest size's flows on a pcap as
/// large (the table in cache, net_pcap's copy missing as much), each beside
/// testpmd macswap on its own pcap in the same run.
pub(super) fn table_share_section(s: &mut String, plan: &Plan, a: &Agg) {
    let Some((label, flows, packets)) = plan.spread_wanted() else {
        return;
    };
    let Some(&(large, _)) = plan.sizes.last() else {
        return;
    };
    let ran: Vec<(String, Method)> = plan
        .spread_scenarios()
        .into_iter()
        .filter(|(name, _)| !a.values(&format!("dirigo|{name}|mpps")).is_empty())
        .collect();
    if ran.is_empty() {
        return;
    }
    let _ = writeln!(s, "## What the table costs at {large} flows\n");
    let _ = writeln!(
        s,
        "`{label}`: {flows} flows on a pcap of {packets} packets, as large as the {large} one (one SYN per flow, then ACKs \
         cycling over the flows): net_pcap's copy misses as it does on the {large} pcap, while the connection table stays in \
         cache. A method's time there less its time at {large} flows is what the table's misses cost it; its ratio there is \
         the most it could reach at {large} flows on this harness with a table that cost nothing.\n"
    );
    let _ = writeln!(
        s,
        "| method | {label} Mpps | spread | ns/pkt | x macswap | {large} Mpps | ns/pkt | x macswap | the table's misses, ns/pkt |\n|---|---|---|---|---|---|---|---|---|"
    );
    for (name, m) in ran {
        let k = format!("dirigo|{name}");
        let kl = format!("dirigo|{} {large}", mname(m));
        let (cached, full) = (a.med(&format!("{k}|mpps")), a.med(&format!("{kl}|mpps")));
        let _ = writeln!(
            s,
            "| {} | {} | {:.1}% | {} | {} | {} | {} | {} | {} |",
            mname(m),
            f2(cached),
            a.spread_pct(&format!("{k}|mpps")),
            f2(1e3 / cached),
            f2(a.med(&format!("{k}|ratio"))),
            f2(full),
            f2(1e3 / full),
            f2(a.med(&format!("{kl}|ratio"))),
            f2(1e3 / full - 1e3 / cached)
        );
    }
    let _ = writeln!(s);
}
