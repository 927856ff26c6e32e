//! SMTP_CHECK, DNS_CHECK, FILE_CHECK (with its top-level track_file),
//! `retry` and `delay_before_retry`: converted and read back by dirigo's
//! own parser.

use super::*;
use crate::check::{CheckSpec, OnFailure, Probe};
use dirigo_core::lb::spec::DestKey;
use std::time::Duration;

/// A mail service, a DNS service and a weighted web service, as a site
/// that drains servers by writing a file would have them.
const CHECKERS: &str = r#"
track_file drain_a {
    file /run/lb/drain-a
    weight 0
}
track_file boost {
    file "/run/lb/boost"
    weight 5 reverse
    init_file 0
}

virtual_server 192.0.2.10 25 {
    delay_loop 4
    lb_kind DR
    protocol TCP
    retry 2
    delay_before_retry 0.5
    real_server 10.1.0.1 25 {
        SMTP_CHECK {
            helo_name lb.example.net
            connect_timeout 2
        }
    }
    real_server 10.1.0.2 25 {
        SMTP_CHECK {
            connect_ip 10.1.0.20
            connect_port 2525
            bindto 10.1.0.254
            bind_port 2000
            connect_timeout 2
        }
    }
}

virtual_server 192.0.2.10 53 {
    delay_loop 3
    lb_kind DR
    protocol UDP
    real_server 10.1.0.3 53 {
        DNS_CHECK {
            type MX
            name example.net.
            connect_timeout 1
        }
    }
    real_server 10.1.0.4 53 {
        SMTP_CHECK {
        }
        DNS_CHECK {
            connect_timeout 1
            retry 1
            delay_before_retry 1.5
        }
    }
}

virtual_server 192.0.2.10 80 {
    delay_loop 5
    lb_kind NAT
    protocol TCP
    real_server 10.1.0.5 80 {
        weight 10
        inhibit_on_failure
        FILE_CHECK {
            track_file drain_a
        }
    }
    real_server 10.1.0.6 80 {
        weight 10
        FILE_CHECK {
            track_file boost
            dynamic
        }
    }
    real_server 10.1.0.7 80 {
        FILE_CHECK {
            track_file boost
            weight 2
        }
    }
    real_server 10.1.0.8 80 {
        FILE_CHECK {
            track_file nowhere
        }
        TCP_CHECK {
            connect_timeout 1
        }
    }
}
"#;

fn check(c: &Config, i: usize, addr: &str, port: u16) -> CheckSpec {
    let key = DestKey {
        addr: addr.parse().unwrap(),
        port,
    };
    c.services[i]
        .health
        .checks
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, s)| s.clone())
        .unwrap_or_else(|| panic!("no check for {addr}"))
}

#[test]
fn smtp_dns_and_file_checks_convert() {
    let (toml, w) = convert_text(CHECKERS).unwrap();
    let c = dirigo(&toml);
    assert_eq!(c.services.len(), 3, "{toml}");

    // SMTP: helo_name, the default HELO, connect_port; the virtual
    // server's retry and delay_before_retry handed down
    let a = check(&c, 0, "10.1.0.1", 25);
    assert_eq!(
        a.probe,
        Probe::Smtp {
            helo: "lb.example.net".into()
        }
    );
    assert_eq!((a.rise, a.fall), (1, 3));
    assert_eq!(a.retry_delay, Some(Duration::from_millis(500)));
    assert_eq!(
        (a.interval, a.timeout),
        (Duration::from_secs(4), Duration::from_secs(2))
    );
    let b = check(&c, 0, "10.1.0.2", 25);
    assert_eq!(
        b.probe,
        Probe::Smtp {
            helo: "smtpchecker.keepalived.org".into()
        }
    );
    assert_eq!(b.port, Some(2525));
    assert_eq!(b.address, Some("10.1.0.20".parse().unwrap()));
    assert_eq!(b.source, Some("10.1.0.254".parse().unwrap()));

    // DNS: type and name; keepalived's retry 3 and a delay_loop's retry
    // delay without them; its own retry and delay when given
    let d = check(&c, 1, "10.1.0.3", 53);
    assert_eq!(
        d.probe,
        Probe::Dns {
            qtype: 15,
            name: "example.net".into(),
            expect: None
        }
    );
    assert_eq!(d.fall, 4);
    assert_eq!(d.retry_delay, Some(Duration::from_secs(3)));
    let d = check(&c, 1, "10.1.0.4", 53);
    assert_eq!(
        d.probe,
        Probe::Dns {
            qtype: 6,
            name: String::new(),
            expect: None
        }
    );
    assert_eq!(
        (d.fall, d.retry_delay),
        (2, Some(Duration::from_millis(1500)))
    );

    // FILE: the track_file's file and weight, FILE_CHECK's weight first;
    // read every second, acting at once
    let f = check(&c, 2, "10.1.0.5", 80);
    assert_eq!(
        f.probe,
        Probe::File {
            path: "/run/lb/drain-a".into(),
            factor: 0,
            reverse: false
        }
    );
    assert_eq!(
        (f.interval, f.rise, f.fall, f.on_failure),
        (Duration::from_secs(1), 1, 1, OnFailure::Inhibit)
    );
    assert_eq!(
        check(&c, 2, "10.1.0.6", 80).probe,
        Probe::File {
            path: "/run/lb/boost".into(),
            factor: 5,
            reverse: true
        }
    );
    assert_eq!(
        check(&c, 2, "10.1.0.7", 80).probe,
        Probe::File {
            path: "/run/lb/boost".into(),
            factor: 2,
            reverse: false
        }
    );
    // an unknown track_file: skipped, the next checker used
    assert_eq!(check(&c, 2, "10.1.0.8", 80).probe, Probe::Tcp);
    assert!(toml.contains("type = \"file\", interval = 1, rise = 1, fall = 1, on_failure = \"remove\", file = \"/run/lb/boost\", weight_factor = 5, reverse = true"), "{toml}");

    let w = w.join("\n");
    for want in [
        "k.conf:9: warning: init_file skipped: dirigo does not write the file",
        "k.conf:29: warning: bind_port skipped: dirigo's probes take an address to leave from (bindto)",
        "k.conf:47: warning: SMTP_CHECK skipped: dirigo's smtp checks are for TCP services, 192.0.2.10:53 is UDP",
        "k.conf:72: warning: dynamic skipped:",
        "k.conf:83: warning: FILE_CHECK skipped: no track_file nowhere is defined",
    ] {
        assert!(w.contains(want), "{want:?} in\n{w}");
    }
    assert_eq!(w.lines().count(), 5, "{w}");
}

#[test]
fn smtp_host_blocks_the_first_is_the_check() {
    let (toml, w) = convert_text(
        "virtual_server 192.0.2.1 25 {\n lb_kind NAT\n\
           real_server 10.0.0.1 25 {\n SMTP_CHECK {\n helo_name a.example\n\
             host {\n connect_ip 10.0.0.11\n connect_port 587\n bindto 10.0.0.254\n }\n\
             host {\n connect_ip 10.0.0.12\n }\n }\n }\n\
           real_server 10.0.0.2 25 {\n SMTP_CHECK {\n connect_port 2525\n\
             host {\n connect_ip 10.0.0.21\n }\n }\n }\n}\n",
    )
    .unwrap();
    let c = dirigo(&toml);
    let first = check(&c, 0, "10.0.0.1", 25);
    assert_eq!(first.address, Some("10.0.0.11".parse().unwrap()));
    assert_eq!(first.port, Some(587));
    assert_eq!(first.source, Some("10.0.0.254".parse().unwrap()));
    // connection options of its own: the host block is not used
    let second = check(&c, 0, "10.0.0.2", 25);
    assert_eq!((second.address, second.port), (None, Some(2525)));
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("k.conf:11: warning: host skipped: dirigo runs one check"),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("k.conf:19: warning: host skipped"),
        "{w:?}"
    );
}

#[test]
fn bad_weights_are_errors_at_their_line() {
    let e = convert_err("track_file t {\n file /x\n weight 1 sideways\n}\n");
    assert!(
        e.contains("k.conf:3: error: weight option 'sideways'"),
        "{e}"
    );
    let e = convert_err(
        "virtual_server 192.0.2.1 80 {\n real_server 10.0.0.1 80 {\n FILE_CHECK {\n track_file t\n weight 3000000000\n }\n }\n}\n",
    );
    assert!(
        e.contains("k.conf:5: error: weight '3000000000' is not in"),
        "{e}"
    );
}
