//! BENCHMARKS.md's tables of the daemon: testpmd's ceiling, established
//! connections, worker counts and new connections.

use super::common::{f0, f2, v6_sizes, NEWCONN_MANY};
use crate::agg::Agg;
use crate::{mname, v6_label, Plan};
use std::fmt::Write;

/// testpmd on every pcap: the ceiling of this I/O path.
pub(super) fn testpmd_section(s: &mut String, plan: &Plan, a: &Agg) {
    let _ = writeln!(s, "## testpmd (the ceiling of this I/O path)\n");
    let _ = writeln!(
        s,
        "| pcap | mode | Mpps | spread | ns/pkt |\n|---|---|---|---|---|"
    );
    let mut tp: Vec<(String, &str)> = vec![(plan.sizes[0].0.to_string(), "io")];
    for &(l, _) in &plan.sizes {
        tp.push((l.to_string(), "macswap"));
    }
    tp.push(("newconn".into(), "macswap"));
    for l in v6_sizes(plan) {
        tp.push((v6_label(l), "macswap"));
    }
    for (l, mode) in tp {
        let k = format!("testpmd|{mode} {l}|mpps");
        let m = a.med(&k);
        let _ = writeln!(
            s,
            "| {l} | {mode} | {} | {:.1}% | {} |",
            f2(m),
            a.spread_pct(&k),
            f2(1e3 / m)
        );
    }
}

/// dirigo's established connections, a table per method.
pub(super) fn established_section(s: &mut String, plan: &Plan, a: &Agg) {
    let _ = writeln!(s, "\n## dirigo, established connections (one worker)\n");
    for &m in &plan.methods {
        let n = mname(m);
        let _ = writeln!(s, "### {n}\n");
        let _ = writeln!(s, "| flows | Mpps | spread | ns/pkt | x macswap (same run) | flows tracked | core p50 / p99 / p99.9 ns/pkt |\n|---|---|---|---|---|---|---|");
        for &(l, _) in &plan.sizes {
            let k = format!("dirigo|{n} {l}");
            let mk = format!("micro|{n} {l}|burst");
            let mp = a.med(&format!("{k}|mpps"));
            let _ = writeln!(
                s,
                "| {l} | {} | {:.1}% | {} | {} | {} | {} / {} / {} |",
                f2(mp),
                a.spread_pct(&format!("{k}|mpps")),
                f2(1e3 / mp),
                f2(a.med(&format!("{k}|ratio"))),
                f0(a.med(&format!("{k}|tracked"))),
                f0(a.med(&format!("{mk}|p50"))),
                f0(a.med(&format!("{mk}|p99"))),
                f0(a.med(&format!("{mk}|p999")))
            );
        }
        let _ = writeln!(s);
    }
    let fnat = plan.fnat_sizes();
    if fnat.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "### FNAT\n\nFullNAT's requests (client → VIP, sent from the local address to the \
         real server; net_null answers nothing), its connections in the IPv6 table.\n"
    );
    let _ = writeln!(s, "| flows | Mpps | spread | ns/pkt | x macswap (same run) | flows tracked |\n|---|---|---|---|---|---|");
    for l in fnat {
        let k = format!("dirigo|FNAT {l}");
        let mp = a.med(&format!("{k}|mpps"));
        let _ = writeln!(
            s,
            "| {l} | {} | {:.1}% | {} | {} | {} |",
            f2(mp),
            a.spread_pct(&format!("{k}|mpps")),
            f2(1e3 / mp),
            f2(a.med(&format!("{k}|ratio"))),
            f0(a.med(&format!("{k}|tracked")))
        );
    }
    let _ = writeln!(s);
}

/// DR by worker count.
pub(super) fn workers_section(s: &mut String, plan: &Plan, a: &Agg) {
    let _ = writeln!(s, "## dirigo by worker count (DR)\n");
    let _ = writeln!(
        s,
        "Two workers: the wan net_pcap gets two queues (two `rx_pcap` copies of the same pcap, each \
         replayed forever, and two `tx_pcap=/dev/null`), one per worker; a worker hands every flow \
         the other owns (owner = hash of the client address) over the owner's steering ring, so \
         about half of all packets take the software hand-over of issue 8. On this 2-core machine: \
         `--lcores 0@0,1@1,2@0` (worker 1 shares CPU 0 with the control thread, which sleeps 5 ms \
         between rounds). 1M flows are not run with two workers (two preloaded copies of a \
         2M-packet pcap do not fit the hugepages).\n"
    );
    let _ = writeln!(s, "| flows | 1 worker Mpps | 2 workers Mpps | spread | 2 / 1 | 2 workers x macswap | flows tracked (2 workers) |\n|---|---|---|---|---|---|---|");
    for (l, _) in &plan.sizes {
        let k2 = format!("dirigo|DR-2w {l}");
        if a.values(&format!("{k2}|mpps")).is_empty() {
            continue;
        }
        let one = a.med(&format!("dirigo|DR {l}|mpps"));
        let two = a.med(&format!("{k2}|mpps"));
        let _ = writeln!(
            s,
            "| {l} | {} | {} | {:.1}% | {} | {} | {} |",
            f2(one),
            f2(two),
            a.spread_pct(&format!("{k2}|mpps")),
            f2(two / one),
            f2(a.med(&format!("{k2}|ratio"))),
            f0(a.med(&format!("{k2}|tracked")))
        );
    }
    let _ = writeln!(s);
}

/// New connections: the daemon, and the sans-IO core over many servers.
pub(super) fn newconn_section(s: &mut String, plan: &Plan, a: &Agg) {
    let nc = a.med("dirigo|newconn|mconn");
    let _ = writeln!(
        s,
        "## dirigo, new connections (every packet a new SYN, DR, one worker)\n"
    );
    let _ = writeln!(s, "| Mconn/s | spread | Mpps | x macswap (same pcap) | table (steady) | core Mconn/s (sans-IO) |\n|---|---|---|---|---|---|");
    let _ = writeln!(
        s,
        "| {} | {:.1}% | {} | {} | {} of {} | {} |\n",
        f2(nc),
        a.spread_pct("dirigo|newconn|mconn"),
        f2(a.med("dirigo|newconn|mpps")),
        f2(a.med("dirigo|newconn|ratio")),
        f0(a.med("dirigo|newconn|tracked")),
        plan.newconn_capacity,
        f2(a.med("micro|newconn|burst|mconn"))
    );
    let many = format!("micro|{NEWCONN_MANY}|burst|mconn");
    if !a.values(&many).is_empty() {
        let _ = writeln!(
            s,
            "The service has {} real servers (wlc). With {} (sans-IO core, `dirigo-bench micro --newconn --servers {}`), \
            wlc picks from the worker's winner tree instead of walking every server: {} Mconn/s ({:.1}% spread), against {} with {}.\n",
            crate::micro::N_RS,
            crate::micro::MAX_SERVERS,
            crate::micro::MAX_SERVERS,
            f2(a.med(&many)),
            a.spread_pct(&many),
            f2(a.med("micro|newconn|burst|mconn")),
            crate::micro::N_RS
        );
    }
}
