//! The health-check keys: the issue's example, defaults, overrides, and
//! every class of error as one line.

use super::{err, ISSUE_EXAMPLE};
use crate::check::{OnFailure, Probe};
use crate::Config;
use std::time::Duration;

/// The issue's service with its check, on the documented ports, with an
/// exception path (the checks' way to the real servers).
pub(super) fn example(check: &str, rs_extra: &str) -> String {
    ISSUE_EXAMPLE.replace(
        "addresses = [\"172.16.0.1/24\"]",
        "addresses = [\"172.16.0.1/24\"]\nkernel_interface = \"lan\"",
    ) + &format!(
        r#"
[exception]
backend = "tap"

[[service]]
protocol = "tcp"
address = "10.10.10.10:8080"
scheduler = "rr"
quorum = 1
sorry_server = "172.16.0.99:8080"

[service.check]
{check}

[[service.real_server]]
address = "172.16.0.11:8080"
method = "dr"
weight = 1
{rs_extra}

[[service.real_server]]
address = "172.16.0.12:8080"
method = "dr"
weight = 1
"#
    )
}

const ISSUE_CHECK: &str = r#"type = "tcp"
interval = 2
timeout = 1
rise = 2
fall = 2
on_failure = "inhibit""#;

#[test]
fn the_issue_example() {
    let c = Config::parse(&example(ISSUE_CHECK, ""), "t").unwrap();
    let h = &c.services[0].health;
    assert_eq!(h.quorum, Some(1));
    assert_eq!(h.sorry.unwrap().to_string(), "172.16.0.99:8080");
    let s = h.check.as_ref().unwrap();
    assert_eq!(s.probe, Probe::Tcp);
    assert_eq!(
        (s.interval, s.timeout),
        (Duration::from_secs(2), Duration::from_secs(1))
    );
    assert_eq!((s.rise, s.fall, s.on_failure), (2, 2, OnFailure::Inhibit));
    assert_eq!(
        h.checks.len(),
        2,
        "every real server gets the service's check"
    );
    assert_eq!(
        c.health_netns, None,
        "the exception path's namespace: dirigo's own"
    );
}

#[test]
fn a_real_server_overrides_the_service_check() {
    let t = example(
        ISSUE_CHECK,
        "check = { type = \"http\", path = \"/ready\", status = [\"200\", \"301-302\"], expect = \"ok\" }",
    );
    let c = Config::parse(&t, "t").unwrap();
    let h = &c.services[0].health;
    let (k, own) = &h.checks[0];
    assert_eq!(k.addr.to_string(), "172.16.0.11");
    assert_eq!(
        own.probe,
        Probe::Http {
            path: "/ready".into(),
            host: None,
            status: vec![(200, 200), (301, 302)],
            expect: Some("ok".into()),
            tls: false
        }
    );
    assert_eq!(
        own.interval,
        Duration::from_secs(2),
        "timing from the service"
    );
    assert_eq!(h.checks[1].1.probe, Probe::Tcp);
    // remove, defaults, https, exec, via_vip
    let t = example(
        "type = \"https\"\non_failure = \"remove\"\nvia_vip = true",
        "check = { type = \"exec\", command = [\"/bin/true\", \"{rip}\"] }",
    );
    let c = Config::parse(&t, "t").unwrap();
    let h = &c.services[0].health;
    let s = h.check.as_ref().unwrap();
    assert_eq!(s.on_failure, OnFailure::Remove);
    assert!(s.via_vip);
    assert!(
        matches!(s.probe, Probe::Http { tls: true, ref status, .. } if status == &vec![(200, 299)])
    );
    assert!(matches!(h.checks[0].1.probe, Probe::Exec { ref command } if command[1] == "{rip}"));
}

#[test]
fn health_errors_are_one_readable_line() {
    let udp_service = |check: &str| {
        example(check, "").replace(
            "protocol = \"tcp\"\naddress = \"10.10.10.10",
            "protocol = \"udp\"\naddress = \"10.10.10.10",
        )
    };
    let cases = [
        (example("type = \"bfd\"", ""), "unknown check type 'bfd'"),
        (
            example("type = \"tcp\"\ninterval = 1\ntimeout = 1", ""),
            "timeout (1 s) must be shorter than interval (1 s)",
        ),
        (
            udp_service("type = \"http\""),
            "http checks need a TCP service",
        ),
        (
            example("type = \"udp\"", ""),
            "udp checks need a UDP service",
        ),
        (
            example("type = \"exec\"", ""),
            "an exec check needs command",
        ),
        (
            example("type = \"exec\"\ncommand = [\"/nonexistent/check\"]", ""),
            "'/nonexistent/check' does not exist",
        ),
        (
            example("type = \"tcp\"\npath = \"/\"", ""),
            "'path' is for http/https checks",
        ),
        (
            example("type = \"http\"\nstatus = [\"2xx\"]", ""),
            "status '2xx' is not CODE or FROM-TO",
        ),
        (example("interval = 2", ""), "a check needs a type"),
        (
            example("type = \"tcp\"\ninterval = -1", ""),
            "interval -1 is not a number of seconds",
        ),
        (
            example(ISSUE_CHECK, "").replace("quorum = 1", "quorum = 0"),
            "quorum must be at least 1",
        ),
        (
            example(ISSUE_CHECK, "").replace("172.16.0.99:8080", "nowhere"),
            "sorry_server 'nowhere' is not IP:PORT",
        ),
        (
            example("type = \"tcp\"\nvia_vip = true", "")
                .replace("method = \"dr\"", "method = \"nat\""),
            "via_vip is for DR and TUN",
        ),
        (
            example("type = \"tcp\"\ncolour = 1", ""),
            "unknown field `colour`",
        ),
        (
            example(ISSUE_CHECK, "")
                .replace("kernel_interface = \"lan\"", "")
                .replace("[exception]\nbackend = \"tap\"\n", ""),
            "health checks need a way to the real servers",
        ),
        (
            example(ISSUE_CHECK, "") + "[health]\nnetns = \"a/b\"\n",
            "[health] netns",
        ),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.contains(want), "{e:?} should say {want:?}");
        assert!(!e.contains('\n'), "one line: {e:?}");
    }
    // [health] alone is a way to the servers (a management network)
    let t = example(ISSUE_CHECK, "")
        .replace("kernel_interface = \"lan\"", "")
        .replace("[exception]\nbackend = \"tap\"\n", "")
        + "[health]\nnetns = \"mgmt\"\n";
    assert_eq!(
        Config::parse(&t, "t").unwrap().health_netns.as_deref(),
        Some("mgmt")
    );
}
