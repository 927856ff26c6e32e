//! The health checks', the VIP announcement's and the connection
//! handoff's series.

use super::collect::Scrape;
use super::family::{Labels, Out};
use dirigo_proto::view::HealthInfo;

/// Each checked server's state and counters; withdrawn VIPs, lost quorums.
pub(super) fn health(o: &mut Out, s: &Scrape) {
    let Some(h) = &s.health else {
        return;
    };
    let labels = |x: &HealthInfo| -> Labels {
        vec![
            ("local_address", x.service.vip.to_string()),
            ("local_port", x.service.port.to_string()),
            ("remote_address", x.dest.addr.to_string()),
            ("remote_port", x.dest.port.to_string()),
            ("proto", x.service.proto.upper().to_string()),
            ("check", x.check.clone()),
        ]
    };
    let per = |f: &dyn Fn(&HealthInfo) -> u64| -> Vec<(Labels, u64)> {
        h.servers.iter().map(|x| (labels(x), f(x))).collect()
    };
    let gauge = |v: Vec<(Labels, u64)>| -> Vec<(Labels, i64)> {
        v.into_iter().map(|(l, v)| (l, v as i64)).collect()
    };
    o.gauges(
        "dirigo_health_up",
        "Whether the checked real server is up (0: down or disabled)",
        gauge(per(&|x| u64::from(x.state == "up"))),
    );
    o.gauges(
        "dirigo_health_disabled",
        "Whether the checked real server is disabled for maintenance",
        gauge(per(&|x| u64::from(x.state == "disabled"))),
    );
    o.gauges(
        "dirigo_health_check_latency_seconds",
        "How long the last check took",
        h.servers
            .iter()
            .filter_map(|x| Some((labels(x), x.latency_us? as f64 / 1e6)))
            .collect(),
    );
    o.counters("dirigo_health_checks", "Checks run", per(&|x| x.checks));
    o.counters(
        "dirigo_health_check_failures",
        "Checks failed",
        per(&|x| x.failures),
    );
    o.counters(
        "dirigo_health_transitions",
        "Up/down transitions",
        per(&|x| x.transitions),
    );
    o.gauges(
        "dirigo_health_vip_withdrawn",
        "A VIP withdrawn for lost quorum (no ARP, no ping); absent when none",
        h.withdrawn
            .iter()
            .map(|v| (vec![("vip", v.to_string())], 1i64))
            .collect(),
    );
    o.gauges(
        "dirigo_health_quorum_lost",
        "A service whose quorum is lost; absent when none",
        h.quorum_lost
            .iter()
            .map(|v| (vec![("service", v.clone())], 1i64))
            .collect(),
    );
}

/// `[announce]`: each VIP's announce state (1 for its current state) and
/// the failed route changes.
pub(super) fn announce(o: &mut Out, s: &Scrape) {
    let Some(v) = s.vips.as_ref().filter(|v| v.enabled) else {
        return;
    };
    const STATES: [&str; 5] = ["announced", "withdrawn", "draining", "error", "pending"];
    o.gauges(
        "dirigo_announce_state",
        "A VIP's announce state ([announce]): 1 for the state it is in",
        v.vips
            .iter()
            .flat_map(|x| {
                STATES.iter().map(move |st| {
                    (
                        vec![("vip", x.vip.to_string()), ("state", st.to_string())],
                        i64::from(x.state == *st),
                    )
                })
            })
            .collect(),
    );
    o.counter(
        "dirigo_announce_failures",
        "Failed VIP route changes (listing, adding or removing)",
        v.failures,
    );
}

/// The connection handoff at start (`[control] handoff_file`): entries
/// written, installed and refused by reason, and the gap in forwarding.
pub(super) fn handoff(o: &mut Out, s: &Scrape) {
    let Some(h) = s.handoff.as_ref().filter(|h| h.file.is_some()) else {
        return;
    };
    o.counters(
        "dirigo_handoff_entries",
        "Connection handoff at start: entries written by the previous dirigo, installed, refused by reason",
        h.counters
            .iter()
            .map(|c| {
                let what = c.name.strip_prefix("handoff_").unwrap_or(&c.name);
                (vec![("what", what.to_string())], c.value)
            })
            .collect(),
    );
    if let Some(g) = h.gap_ms {
        o.gauges(
            "dirigo_handoff_gap_ms",
            "Milliseconds between the previous dirigo's last forwarded burst and this one's first",
            vec![(vec![], g as i64)],
        );
    }
    let Some(c) = &h.checkpoint else {
        return;
    };
    o.counters(
        "dirigo_checkpoints",
        "Crash checkpoints of the connection table: written, failed",
        vec![
            (vec![("result", "written".to_string())], c.written),
            (vec![("result", "failed".to_string())], c.failed),
        ],
    );
    o.counters(
        "dirigo_checkpoint_stalls",
        "Housekeeping ticks a worker's checkpoint sweep waited for a buffer",
        vec![(vec![], c.stalls)],
    );
    o.gauges(
        "dirigo_checkpoint_entries",
        "Entries in the last crash checkpoint",
        vec![(vec![], c.last_entries as i64)],
    );
    o.gauges(
        "dirigo_checkpoint_duration_ms",
        "The last crash checkpoint's time, from its sweep's start to the file in place",
        vec![(vec![], c.last_ms as i64)],
    );
    if let Some(a) = c.age_s {
        o.gauges(
            "dirigo_checkpoint_age_seconds",
            "Seconds since the last crash checkpoint was written",
            vec![(vec![], a as i64)],
        );
    }
}
