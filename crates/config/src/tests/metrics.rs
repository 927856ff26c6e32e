//! `[metrics]`: the endpoint's address and the histogram switch.

use super::{err, ISSUE_EXAMPLE};
use crate::{Config, Metrics};

fn with(section: &str) -> String {
    format!("{ISSUE_EXAMPLE}[metrics]\n{section}\n")
}

#[test]
fn off_unless_listen_is_given() {
    let c = Config::parse(ISSUE_EXAMPLE, "t").unwrap();
    assert_eq!(c.metrics, None);
    let c = Config::parse(&with(""), "t").unwrap();
    assert_eq!(c.metrics, None);
    let c = Config::parse(&with("burst_histogram = false"), "t").unwrap();
    assert_eq!(c.metrics, None);
}

#[test]
fn listen_and_histogram() {
    let c = Config::parse(&with("listen = \"127.0.0.1:9642\""), "t").unwrap();
    assert_eq!(
        c.metrics,
        Some(Metrics {
            listen: "127.0.0.1:9642".parse().unwrap(),
            burst_histogram: true,
        })
    );
    let c = Config::parse(
        &with("listen = \"[::1]:9000\"\nburst_histogram = false"),
        "t",
    )
    .unwrap();
    let m = c.metrics.unwrap();
    assert_eq!(m.listen.to_string(), "[::1]:9000");
    assert!(!m.burst_histogram);
}

#[test]
fn bad_metrics_sections_are_one_line() {
    for (section, want) in [
        ("listen = \"localhost:9642\"", "is not IP:PORT"),
        ("listen = \"127.0.0.1\"", "is not IP:PORT"),
        ("listen = \"127.0.0.1:99999\"", "is not IP:PORT"),
        ("listen = \"\"", "is not IP:PORT"),
        ("listen = \"127.0.0.1:0\"", "port 0"),
        ("burst_histogram = true", "needs listen"),
        ("listen = 9642", "invalid type"),
        ("port = 9642", "unknown field"),
    ] {
        let e = err(&with(section));
        assert!(e.contains(want), "{section}: {e}");
        assert!(!e.contains('\n'), "{section}: not one line: {e}");
    }
}
