//! Problems are located (file:line) and collected, not only the first.

use super::super::{Config, ConfigError};

/// Each problem of `text` as `line: message`.
fn problems(text: &str) -> Vec<String> {
    match Config::parse(text, "t.toml") {
        Ok(_) => vec![],
        Err(ConfigError::Invalid { problems, .. }) => problems
            .iter()
            .map(|p| {
                format!(
                    "{}: {}",
                    p.line.map_or("-".into(), |l| l.to_string()),
                    p.msg
                )
            })
            .collect(),
        Err(e) => panic!("{e}"),
    }
}

/// `problems(text)` is exactly `want`: (line, a part of the message).
fn expect(text: &str, want: &[(usize, &str)]) {
    let got = problems(text);
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (g, (line, says)) in got.iter().zip(want) {
        assert!(
            g.starts_with(&format!("{line}: ")) && g.contains(says),
            "{g:?} should be line {line} saying {says:?}; all: {got:#?}"
        );
    }
}

const PORTS: &str = r#"[eal]
args = ["-l", "0-1", "--in-memory"]

[[port]]
name = "wan"
device = "net_null0"
addresses = ["10.0.0.1/24"]

[[port]]
name = "lan"
device = "net_null1"
addresses = ["172.16.0.1/24"]
"#;

#[test]
fn schema_problems_of_several_sections() {
    let text = PORTS.replace("name = \"lan\"", "name = \"lan\"\ncolour = \"red\"")
        + "[dataplane]\nmbufs = \"many\"\n\n[exception]\nnetns = \"x\"\n";
    expect(
        &text,
        &[
            (11, "unknown field `colour`"),
            (15, "invalid type: string \"many\""),
            (17, "missing field `backend`"),
        ],
    );
}

#[test]
fn syntax_error_has_its_line() {
    expect(
        &PORTS.replace("device = \"net_null1\"", "device = \"net_null1"),
        &[(11, "")],
    );
}

#[test]
fn a_missing_required_key_of_a_required_section() {
    expect(
        "# only a comment\n[eal]\nlcores = 2\n",
        &[(3, "unknown field `lcores`")],
    );
    let p = problems("# an empty file\n");
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("no [eal] section"), "{p:?}");
}

#[test]
fn semantic_problems_in_file_order() {
    let text = PORTS.replace(
        "\"172.16.0.1/24\"]",
        "\"172.16.0.1/24\",\n             \"172.16.1.1/40\"]",
    ) + r#"
[[route]]
prefix = "0.0.0.0/0"
via = "10.0.0.254"
port = "dmz"

[[neighbor]]
ip = "10.0.0.9"
mac = "02:00:00:00:00:01"
port = "lan"

[[neighbor]]
ip = "10.0.0.10"
mac = "nope"
port = "lan"

[[service]]
protocol = "tcp"
address = "10.0.0.100:80"
scheduler = "wrr"
flags = ["sh-port", "fast"]

[[service.real_server]]
address = "172.16.0.11"

[[service.real_server]]
address = "172.16.0.11"
"#;
    expect(
        &text,
        &[
            (13, "prefix length '40'"),
            (18, "unknown port 'dmz'"),
            (27, "bad MAC 'nope'"),
            (34, "unknown scheduler flag 'fast'"),
            (40, "duplicate real server 172.16.0.11"),
        ],
    );
}

#[test]
fn eal_problems_point_at_their_argument() {
    let text = PORTS.replace(
        "args = [\"-l\", \"0-1\", \"--in-memory\"]",
        "args = [\"-l\", \"0\",\n        \"--in-memory\",\n        \"--no-huge\"]",
    );
    expect(
        &text,
        &[
            (2, "gives 1 lcore(s)"),
            (4, "--in-memory and --no-huge cannot go together"),
        ],
    );
}

#[test]
fn health_problems_name_the_check() {
    let text = PORTS.to_string()
        + r#"
[[service]]
protocol = "tcp"
address = "10.0.0.100:80"
quorum = 0

[[service]]
protocol = "tcp"
address = "10.0.0.101:80"

[[service.real_server]]
address = "172.16.0.11"
check = { type = "tcp", interval = 1.0, timeout = 2.0 }
"#;
    expect(
        &text,
        &[
            (17, "quorum must be at least 1"),
            (25, "timeout (2 s) must be shorter than interval (1 s)"),
        ],
    );
}

/// The daemon's form: one `invalid config FILE:LINE: ...` line per problem.
#[test]
fn display_is_one_line_per_problem() {
    let text = PORTS
        .replace("10.0.0.1/24", "10.0.0.1/33")
        .replace("172.16.0.1/24", "x");
    let e = Config::parse(&text, "t.toml").unwrap_err();
    let s = e.to_string();
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 2, "{s}");
    assert!(lines[0].starts_with("invalid config t.toml:7: "), "{s}");
    assert!(lines[1].starts_with("invalid config t.toml:12: "), "{s}");
    assert_eq!(e.lines()[0], lines[0].trim_start_matches("invalid config "));
}

/// Found by the `config` fuzz target: a control character in a comment
/// (or an unterminated string) is a syntax error whose message says what
/// is wrong, never an empty one.
#[test]
fn syntax_errors_say_what_is_wrong() {
    for text in [
        "# a comment with a \0 in it\n[eal]\nargs = []\n",
        "[eal]\nargs = [\"-l]\n",
    ] {
        let p = problems(text);
        assert_eq!(p.len(), 1, "{p:?}");
        let msg = p[0].split_once(": ").map_or("", |(_, m)| m);
        assert!(
            !msg.trim().is_empty(),
            "an empty message for {text:?}: {p:?}"
        );
    }
    assert_eq!(
        problems("# a \0 in a comment\n"),
        ["1: invalid TOML: unexpected character '\\0'"]
    );
}

#[test]
fn idle_mode_is_poll_or_sleep() {
    use super::super::IdleMode;
    let parse = |kv: &str| Config::parse(&(PORTS.to_string() + "[dataplane]\n" + kv + "\n"), "t");
    assert_eq!(parse("").unwrap().dataplane.idle, IdleMode::Poll);
    assert_eq!(
        parse("idle = \"poll\"").unwrap().dataplane.idle,
        IdleMode::Poll
    );
    assert_eq!(
        parse("idle = \"sleep\"").unwrap().dataplane.idle,
        IdleMode::Sleep
    );
    assert_eq!(IdleMode::Sleep.name(), "sleep");
    // a bad value is an error at its line (PORTS is 12 lines, then the section)
    let text = PORTS.to_string() + "[dataplane]\nmbufs = 4096\nidle = \"spin\"\n";
    expect(
        &text,
        &[(15, "unknown variant `spin`, expected `poll` or `sleep`")],
    );
    let text = PORTS.to_string() + "[dataplane]\nidle = true\n";
    expect(&text, &[(14, "wanted string or table")]);
}

#[test]
fn port_role_is_client_server_or_both() {
    use crate::PortRole;
    let with = |role: &str| {
        PORTS.replacen(
            "device = \"net_null0\"\n",
            &format!("device = \"net_null0\"\n{role}\n"),
            1,
        )
    };
    let parse = |t: &str| Config::parse(t, "t").map(|c| c.ports[0].role);
    assert_eq!(parse(PORTS).unwrap(), PortRole::Both, "the default");
    assert_eq!(parse(&with("role = \"client\"")).unwrap(), PortRole::Client);
    assert_eq!(parse(&with("role = \"server\"")).unwrap(), PortRole::Server);
    assert_eq!(parse(&with("role = \"both\"")).unwrap(), PortRole::Both);
    assert_eq!(PortRole::Server.name(), "server");
    // a bad value is an error at its line (the role follows line 6's device)
    expect(
        &with("role = \"wan\""),
        &[(
            7,
            "unknown variant `wan`, expected one of `client`, `server`, `both`",
        )],
    );
}

#[test]
fn ipv6_port_addresses() {
    let text = PORTS.replace(
        "addresses = [\"10.0.0.1/24\"]",
        "addresses = [\"10.0.0.1/24\", \"2001:db8:1::1/64\", \"fd00::7/48\"]",
    );
    let c = Config::parse(&text, "t.toml").unwrap();
    let wan = &c.ports[0];
    // the IPv4 list is what it was: IPv4 users (a sync source, the
    // primary address) see only IPv4
    assert_eq!(wan.addresses.len(), 1);
    assert_eq!(wan.addresses[0].to_string(), "10.0.0.1/24");
    let v6: Vec<_> = wan.addresses6.iter().map(|c| c.to_string()).collect();
    assert_eq!(v6, ["2001:db8:1::1/64", "fd00::7/48"]);
    assert!(c.ports[1].addresses6.is_empty());

    // every kind of bad IPv6 address, located, all reported
    let text = r#"[eal]
args = ["-l", "0-1", "--in-memory"]

[[port]]
name = "wan"
device = "net_null0"
addresses = ["10.0.0.1/24", "2001:db8:1::1/64", "2001:db8::1/129",
  "fe80::1/64", "ff02::1/128", "::/0", "::1/128",
  "2001:db8::g/64", "2001:db8::9"]

[[port]]
name = "lan"
device = "net_null1"
addresses = ["172.16.0.1/24",
  "2001:db8:1::1/64", "2001:db8:1::1/48"]
"#;
    expect(
        text,
        &[
            (7, "prefix length '129' in '2001:db8::1/129' is not 0..128"),
            (8, "'fe80::1' is link-local"),
            (8, "'ff02::1' is a multicast address"),
            (8, "'::' is the unspecified address"),
            (8, "'::1' is the loopback address"),
            (
                9,
                "'2001:db8::g' in '2001:db8::g/64' is not an IPv6 address",
            ),
            (9, "'2001:db8::9' is not ADDRESS/PREFIXLEN"),
            (15, "'2001:db8:1::1/64' is configured twice"),
            (15, "'2001:db8:1::1/48' is configured twice"),
        ],
    );
}

#[test]
fn ops_is_for_udp_without_persistence_or_nat() {
    let text = PORTS.to_string()
        + r#"
[[service]]
protocol = "tcp"
address = "10.0.0.100:80"
ops = true

[[service]]
protocol = "udp"
address = "10.0.0.100:53"
persistent = 60
ops = true

[[service]]
protocol = "udp"
address = "10.0.0.100:514"
ops = true

[[service.real_server]]
address = "172.16.0.11"
method = "nat"

[[service]]
protocol = "udp"
address = "10.0.0.101:53"
scheduler = "rr"
ops = true

[[service.real_server]]
address = "172.16.0.11"
"#;
    expect(
        &text,
        &[
            (17, "ops) is for UDP services"),
            (23, "persistence is state"),
            (28, "needs DR or TUN real servers"),
        ],
    );
}
