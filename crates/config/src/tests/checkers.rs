//! The SMTP, DNS and file checks' keys and `retry_delay`: defaults, and
//! every refusal as one line.

use super::err;
use super::health::example;
use crate::check::Probe;
use crate::Config;
use std::time::Duration;

fn check_of(text: &str) -> crate::check::CheckSpec {
    let c = Config::parse(text, "t").unwrap();
    c.services[0].health.check.clone().unwrap()
}

#[test]
fn smtp_dns_and_file_checks_with_their_defaults() {
    let s = check_of(&example("type = \"smtp\"", ""));
    assert_eq!(
        s.probe,
        Probe::Smtp {
            helo: "smtpchecker.keepalived.org".into()
        }
    );
    let s = check_of(&example("type = \"smtp\"\nhelo_name = \"lb1.example\"", ""));
    assert_eq!(
        s.probe,
        Probe::Smtp {
            helo: "lb1.example".into()
        }
    );
    // keepalived's default query: SOA of the root
    let s = check_of(&example("type = \"dns\"", ""));
    assert_eq!(
        s.probe,
        Probe::Dns {
            qtype: 6,
            name: String::new(),
            expect: None
        }
    );
    let s = check_of(&example(
        "type = \"dns\"\nquery_type = \"aaaa\"\nquery_name = \"WWW.Example.org.\"\nexpect = \"2001:db8::1\"",
        "",
    ));
    assert_eq!(
        s.probe,
        Probe::Dns {
            qtype: 28,
            name: "www.example.org".into(),
            expect: Some("2001:db8::1".into())
        }
    );
    // a file: factor 1, acting at once (rise and fall 1)
    let s = check_of(&example("type = \"file\"\nfile = \"/run/w\"", ""));
    assert_eq!(
        s.probe,
        Probe::File {
            path: "/run/w".into(),
            factor: 1,
            reverse: false
        }
    );
    assert_eq!((s.rise, s.fall), (1, 1));
    let s = check_of(&example(
        "type = \"file\"\nfile = \"/run/w\"\nweight_factor = -3\nreverse = true\nfall = 2",
        "",
    ));
    assert_eq!(
        s.probe,
        Probe::File {
            path: "/run/w".into(),
            factor: -3,
            reverse: true
        }
    );
    assert_eq!((s.rise, s.fall), (1, 2));
}

#[test]
fn a_servers_file_check_under_a_services_probe_takes_no_timeout_or_port() {
    let c = Config::parse(
        &example(
            "type = \"tcp\"\ntimeout = 1\nport = 81",
            "check = { type = \"file\", file = \"/run/w\", weight_factor = 2 }",
        ),
        "t",
    )
    .unwrap();
    let own = &c.services[0].health.checks[0].1;
    assert!(matches!(own.probe, Probe::File { factor: 2, .. }));
    assert_eq!((own.port, own.interval), (None, Duration::from_secs(2)));
    // the other server keeps the service's tcp check on port 81
    assert_eq!(c.services[0].health.checks[1].1.port, Some(81));
}

#[test]
fn address_and_source_are_where_the_probe_goes_and_leaves_from() {
    let s = check_of(&example(
        "type = \"smtp\"\naddress = \"172.16.0.50\"\nsource = \"172.16.0.1\"\nport = 2525",
        "",
    ));
    assert_eq!(s.address, Some("172.16.0.50".parse().unwrap()));
    assert_eq!(s.source, Some("172.16.0.1".parse().unwrap()));
    assert_eq!(
        s.target("172.16.0.11:8080".parse().unwrap()),
        "172.16.0.50:2525".parse().unwrap()
    );
    let s = check_of(&example("type = \"tcp\"", ""));
    assert_eq!(
        s.target("172.16.0.11:8080".parse().unwrap()),
        "172.16.0.11:8080".parse().unwrap()
    );
}

#[test]
fn retry_delay_is_kept_and_inherited() {
    let s = check_of(&example("type = \"tcp\"\nfall = 3\nretry_delay = 0.5", ""));
    assert_eq!(s.retry_delay, Some(Duration::from_millis(500)));
    assert_eq!(check_of(&example("type = \"tcp\"", "")).retry_delay, None);
    // a server's own check of the same type keeps the service's
    let c = Config::parse(
        &example(
            "type = \"tcp\"\nretry_delay = 1",
            "check = { type = \"tcp\", fall = 4 }",
        ),
        "t",
    )
    .unwrap();
    let own = &c.services[0].health.checks[0].1;
    assert_eq!(
        (own.fall, own.retry_delay),
        (4, Some(Duration::from_secs(1)))
    );
}

#[test]
fn checker_errors_are_one_readable_line() {
    let udp_service = |check: &str| {
        example(check, "").replace(
            "protocol = \"tcp\"\naddress = \"10.10.10.10",
            "protocol = \"udp\"\naddress = \"10.10.10.10",
        )
    };
    let cases = [
        (
            udp_service("type = \"smtp\""),
            "smtp checks need a TCP service",
        ),
        (
            example("type = \"smtp\"\nhelo_name = \"a b\"", ""),
            "helo_name 'a b' is not a host name",
        ),
        (
            example("type = \"tcp\"\nhelo_name = \"x\"", ""),
            "'helo_name' is for smtp checks",
        ),
        (
            example("type = \"dns\"\nquery_type = \"PTR\"", ""),
            "query_type 'PTR' is not one of A, NS, CNAME, SOA, MX, TXT, AAAA",
        ),
        (
            example("type = \"dns\"\nquery_name = \"a..b\"", ""),
            "'a..b' is not a domain name",
        ),
        (
            example(
                "type = \"dns\"\nquery_type = \"A\"\nquery_name = \"x\"\nexpect = \"::1\"",
                "",
            ),
            "expect '::1' cannot be a A answer (an IPv4 address)",
        ),
        (
            example("type = \"http\"\nquery_name = \"x\"", ""),
            "'query_name' is for dns checks",
        ),
        (
            example("type = \"file\"", ""),
            "a file check needs file = \"/path/to/file\"",
        ),
        (
            example("type = \"file\"\nfile = \"w\"", ""),
            "file check: 'w' must be an absolute path",
        ),
        (
            example(
                "type = \"file\"\nfile = \"/w\"\nweight_factor = 3000000000",
                "",
            ),
            "weight_factor 3000000000 is not in",
        ),
        (
            example("type = \"file\"\nfile = \"/w\"\ntimeout = 1", ""),
            "'timeout' does not apply to file checks",
        ),
        (
            example("type = \"tcp\"\nweight_factor = 2", ""),
            "'weight_factor' is for file checks",
        ),
        (
            example("type = \"tcp\"\nretry_delay = 0", ""),
            "retry_delay 0 is not a number of seconds",
        ),
        (
            example("type = \"tcp\"\naddress = \"here\"", ""),
            "address 'here' is not an IP address",
        ),
        (
            example("type = \"tcp\"\nsource = \"2001:db8::1\"", ""),
            "source 2001:db8::1 cannot reach 172.16.0.11 (another family)",
        ),
        (
            example(
                "type = \"tcp\"\naddress = \"10.0.0.1\"\nsource = \"2001:db8::1\"",
                "",
            ),
            "source 2001:db8::1 and address 10.0.0.1 are of different families",
        ),
        (
            example(
                "type = \"tcp\"\nvia_vip = true\nsource = \"172.16.0.1\"",
                "",
            ),
            "via_vip probes the VIP from dirigo's own address",
        ),
        (
            example(
                "type = \"exec\"\ncommand = [\"/bin/true\"]\naddress = \"10.0.0.1\"",
                "",
            ),
            "'address' and 'source' do not apply to exec checks",
        ),
        (
            example("type = \"file\"\nfile = \"/w\"\nsource = \"10.0.0.1\"", ""),
            "'source' does not apply to file checks",
        ),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.contains(want), "{e:?} should say {want:?}");
        assert!(!e.contains('\n'), "one line: {e:?}");
    }
}
