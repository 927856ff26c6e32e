//! Tests of the config parser: the documented example, every class of error, shipped files.

use super::*;
use dirigo_core::lb::sched::SchedKind;
use dirigo_core::lb::spec::Method;

const ISSUE_EXAMPLE: &str = r#"
[eal]
args = ["-l", "0-1", "--in-memory", "--file-prefix", "dirigo-lab", "--no-pci",
    "--vdev=net_tap0,iface=dg-wan", "--vdev=net_tap1,iface=dg-lan"]

[control]
socket = "/run/dirigo/ctl.sock"

[[port]]
name = "wan"
device = "net_tap0"          # DPDK device name (vdev name or PCI address)
addresses = ["10.0.0.1/24"]

[[port]]
name = "lan"
device = "net_tap1"
addresses = ["172.16.0.1/24"]

[[route]]                    # optional
prefix = "0.0.0.0/0"
via = "10.0.0.254"
"#;

fn err(text: &str) -> String {
    Config::parse(text, "t.toml").unwrap_err().to_string()
}

#[test]
fn accepts_the_documented_example() {
    let c = Config::parse(ISSUE_EXAMPLE, "t.toml").unwrap();
    assert_eq!(c.ports.len(), 2);
    assert_eq!(c.ports[1].addresses[0].to_string(), "172.16.0.1/24");
    assert_eq!(c.routes[0].port, Some(0));
    assert_eq!(c.eal.args[0], "-l");
    assert_eq!(c.timeouts, Timeouts::default());
}

#[test]
fn mbuf_data_room() {
    let c = Config::parse(ISSUE_EXAMPLE, "t.toml").unwrap();
    assert_eq!(c.dataplane.mbuf_data_room, 2176);
    let t = ISSUE_EXAMPLE.to_string() + "[dataplane]\nmbuf_data_room = 256\n";
    assert_eq!(
        Config::parse(&t, "t.toml")
            .unwrap()
            .dataplane
            .mbuf_data_room,
        256
    );
    let t = ISSUE_EXAMPLE.to_string() + "[dataplane]\nmbuf_data_room = 200\n";
    assert!(err(&t).contains("mbuf_data_room must be at least 256"));
}

#[test]
fn unknown_key() {
    let t = ISSUE_EXAMPLE.replace("name = \"wan\"", "name = \"wan\"\nspeed = 10");
    let e = err(&t);
    assert!(e.contains("unknown field `speed`"), "{e}");
}

#[test]
fn missing_port() {
    let e = err("[eal]\nargs = []\n");
    assert!(e.contains("no [[port]]"), "{e}");
    let t = ISSUE_EXAMPLE.to_string()
        + "[[neighbor]]\nip = \"10.0.0.9\"\nmac = \"02:00:00:00:00:01\"\nport = \"dmz\"\n";
    assert!(err(&t).contains("unknown port 'dmz'"));
}

#[test]
fn bad_cidr() {
    let t = ISSUE_EXAMPLE.replace("10.0.0.1/24", "10.0.0.1/33");
    assert!(err(&t).contains("prefix length '33'"), "{}", err(&t));
    let t = ISSUE_EXAMPLE.replace("10.0.0.1/24", "10.0.0.300/24");
    assert!(err(&t).contains("not an IPv4 address"));
    let t = ISSUE_EXAMPLE.replace("10.0.0.1/24", "10.0.0.1");
    assert!(err(&t).contains("ADDRESS/PREFIXLEN"));
}

#[test]
fn duplicate_port_name() {
    let t = ISSUE_EXAMPLE.replace("name = \"lan\"", "name = \"wan\"");
    assert!(err(&t).contains("duplicate port name 'wan'"));
}

#[test]
fn unreadable_file() {
    let e = Config::load("/nonexistent/dirigo.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("cannot read config /nonexistent/dirigo.toml"),
        "{e}"
    );
}

#[test]
fn gateway_off_link() {
    let t = ISSUE_EXAMPLE.replace("via = \"10.0.0.254\"", "via = \"192.0.2.1\"");
    assert!(err(&t).contains("not on any port's network"));
}

#[test]
fn services() {
    let t = ISSUE_EXAMPLE.to_string()
        + r#"
[[service]]
protocol = "tcp"
address = "10.0.0.100:80"
scheduler = "wrr"
persistent = 300

[[service.real_server]]
address = "172.16.0.11"
weight = 2

[[service.real_server]]
address = "172.16.0.12:8080"
method = "nat"
"#;
    let c = Config::parse(&t, "t").unwrap();
    let s = &c.services[0];
    assert_eq!(s.spec.sched, SchedKind::Wrr);
    assert_eq!(s.spec.persistent, Some(300));
    assert_eq!(s.dests[0].key.port, 80);
    assert_eq!(s.dests[0].method, Method::Dr);
    assert_eq!(s.dests[1].key.port, 8080);
    let bad = t.replace("wrr", "nope");
    assert!(err(&bad).contains("unknown scheduler 'nope'"));
    let bad = t.replace("weight = 2", "weight = 70000");
    assert!(err(&bad).contains("weight 70000"));
    let bad = t.replace("method = \"nat\"", "method = \"dr\"");
    assert!(err(&bad).contains("only NAT and FullNAT can change the port"));
}

#[test]
fn fullnat_services() {
    let t = ISSUE_EXAMPLE.to_string()
        + r#"
[[service]]
protocol = "tcp"
address = "10.0.0.100:80"
scheduler = "rr"
local_addresses = ["10.0.0.200", "10.0.0.201"]

[[service.real_server]]
address = "172.16.0.11:8080"
method = "fullnat"
"#;
    let c = Config::parse(&t, "t").unwrap();
    let s = &c.services[0];
    assert_eq!(s.dests[0].method, Method::FullNat);
    assert_eq!(s.dests[0].key.port, 8080, "FullNAT may change the port");
    assert_eq!(
        s.spec.local_addresses,
        [
            "10.0.0.200".parse::<std::net::IpAddr>().unwrap(),
            "10.0.0.201".parse().unwrap()
        ]
    );
    let bad = t.replace(r#"local_addresses = ["10.0.0.200", "10.0.0.201"]"#, "");
    assert!(err(&bad).contains("a fullnat real server needs the service's local_addresses"));
    let bad = t.replace(r#""10.0.0.201""#, r#""2001:db8::1""#);
    assert!(err(&bad).contains("local address 2001:db8::1 is not of the real servers' family"));
    // an IPv6 VIP's IPv4 fullnat servers leave from its IPv4 local
    // addresses (NAT64's translation), and need one
    let v64 = t
        .replace("10.0.0.100:80", "[2001:db8::100]:80")
        .replace(r#""10.0.0.201""#, r#""2001:db8::201""#);
    let c64 = Config::parse(&v64, "t").unwrap();
    assert_eq!(c64.services[0].dests[0].key.addr.to_string(), "172.16.0.11");
    let bad = v64.replace(r#""10.0.0.200", "#, "");
    assert!(
        err(&bad).contains("fullnat real server 172.16.0.11 needs a local address of its family"),
        "{}",
        err(&bad)
    );
    let bad = v64.replace(
        "scheduler = \"rr\"\nlocal",
        "scheduler = \"rr\"\nclient_address = \"toa\"\nlocal",
    );
    assert!(err(&bad).contains("TOA does not carry an IPv6 client's address to IPv4 real servers"));
    let good = v64.replace(
        "scheduler = \"rr\"\nlocal",
        "scheduler = \"rr\"\nclient_address = \"proxy-v2\"\nlocal",
    );
    assert!(
        Config::parse(&good, "t").is_ok(),
        "proxy-v2 to IPv4 servers of an IPv6 VIP"
    );
    // client_address: read, and for TCP FullNAT services only
    use dirigo_core::lb::spec::ClientAddress;
    assert_eq!(s.spec.client_address, ClientAddress::None);
    for how in ClientAddress::ALL {
        let with = t.replace(
            "scheduler = \"rr\"\nlocal",
            &format!(
                "scheduler = \"rr\"\nclient_address = \"{}\"\nlocal",
                how.name()
            ),
        );
        let c = Config::parse(&with, "t").unwrap();
        assert_eq!(c.services[0].spec.client_address, how);
    }
    let bad = t.replace(
        "scheduler = \"rr\"\nlocal",
        "client_address = \"proxy\"\nlocal",
    );
    assert!(
        err(&bad).contains(
            "unknown variant `proxy`, expected one of `none`, `toa`, `proxy-v1`, `proxy-v2`"
        ),
        "{}",
        err(&bad)
    );
    let nat = t
        .replace(
            "scheduler = \"rr\"\nlocal",
            "client_address = \"toa\"\nlocal",
        )
        .replace("method = \"fullnat\"", "method = \"nat\"");
    assert!(
        err(&nat).contains("client_address = \"toa\" is for TCP services"),
        "{}",
        err(&nat)
    );
}

#[test]
fn ipv6_services() {
    let t = ISSUE_EXAMPLE.to_string()
        + r#"
[dataplane]
connections6_per_worker = 4096

[[service]]
protocol = "tcp"
address = "[2001:db8::10]:80"
scheduler = "rr"
persistent = 300
prefix6 = 64

[[service.real_server]]
address = "2001:db8:2::11"

[[service.real_server]]
address = "[2001:db8:2::12]:8080"
method = "nat"
"#;
    let c = Config::parse(&t, "t").unwrap();
    let s = &c.services[0];
    assert!(s.spec.key.vip.is_ipv6());
    assert_eq!(s.spec.prefix6, 64);
    assert_eq!(s.dests[0].key.port, 80);
    assert_eq!(s.dests[1].key.port, 8080);
    assert_eq!(
        s.dests[1].key.addr,
        "2001:db8:2::12".parse::<std::net::IpAddr>().unwrap()
    );
    assert_eq!(c.dataplane.connections6_per_worker, 4096);
    // a real server of the other family
    let bad = t.replace("\"2001:db8:2::11\"", "\"172.16.0.11\"");
    assert!(
        err(&bad).contains("Operation not supported with specified address family"),
        "{}",
        err(&bad)
    );
    // masks of the other family, prefix out of range
    let bad = t.replace("prefix6 = 64", "netmask = \"255.255.255.0\"");
    assert!(err(&bad).contains("prefix6"), "{}", err(&bad));
    let bad = t.replace("prefix6 = 64", "prefix6 = 129");
    assert!(err(&bad).contains("prefix6"), "{}", err(&bad));
    let bad = t.replace(
        "connections6_per_worker = 4096",
        "connections6_per_worker = 10",
    );
    assert!(
        err(&bad).contains("connections6_per_worker"),
        "{}",
        err(&bad)
    );
}

#[test]
fn macs() {
    assert_eq!(parse_mac("02:0a:ff:00:01:10"), Some([2, 10, 255, 0, 1, 16]));
    assert_eq!(parse_mac("02:0a:ff:00:01"), None);
    assert_eq!(parse_mac("02:0a:ff:00:01:10:11"), None);
    assert_eq!(parse_mac("zz:0a:ff:00:01:10"), None);
}

mod example_files {
    use super::Config;

    #[test]
    fn shipped_examples_parse() {
        for f in ["conf/lab.toml", "conf/baremetal.toml"] {
            let p = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(f);
            Config::load(&p).unwrap_or_else(|e| panic!("{f}: {e}"));
        }
    }

    #[test]
    fn config_md_example_parses() {
        let p = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("docs/CONFIG.md");
        let md = std::fs::read_to_string(p).unwrap();
        let ex = md.find("\n## Example").expect("an Example section");
        let start = ex + md[ex..].find("```toml\n").expect("toml block") + 8;
        let end = start + md[start..].find("```").unwrap();
        let c = Config::parse(&md[start..end], "CONFIG.md").unwrap();
        assert_eq!(c.services[0].dests.len(), 2);
        assert_eq!(
            c.metrics.map(|m| m.listen.to_string()),
            Some("127.0.0.1:9642".into())
        );
    }

    #[test]
    fn config_md_health_example_parses() {
        // the health section's service, behind the Example's ports and an
        // exception path
        let p = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("docs/CONFIG.md");
        let md = std::fs::read_to_string(p).unwrap();
        let h = md.find("\n## Health checks").expect("a health section");
        let start = h + md[h..].find("```toml\n").unwrap() + 8;
        let end = start + md[start..].find("```").unwrap();
        let base = super::ISSUE_EXAMPLE.replace(
            "addresses = [\"172.16.0.1/24\"]",
            "addresses = [\"172.16.0.1/24\"]\nkernel_interface = \"lan\"",
        ) + "[exception]\nbackend = \"tap\"\n";
        let c = Config::parse(&(base + &md[start..end]), "CONFIG.md").unwrap();
        let h = &c.services[0].health;
        assert_eq!(h.quorum, Some(1));
        assert!(h.checks[0].1.via_vip);
    }
}

#[test]
fn dataplane_bounds() {
    let with = |kv: &str| ISSUE_EXAMPLE.to_string() + "[dataplane]\n" + kv + "\n";
    assert!(Config::parse(&with("mh_table_size = 65521"), "t").is_ok());
    assert!(err(&with("mh_table_size = 65536")).contains("mh_table_size 65536 is not a prime"));
    assert!(err(&with("mbufs = 1000")).contains("dataplane.mbufs must be at least 1024"));
    let grace = |c: &str| {
        Config::parse(&with(c), "t")
            .ok()
            .map(|c| c.dataplane.embryonic_grace_ms)
    };
    assert_eq!(grace("mbufs = 2048"), Some(2000), "the default");
    assert_eq!(grace("embryonic_grace_ms = 0"), Some(0));
    assert!(err(&with("embryonic_grace_ms = 60001"))
        .contains("dataplane.embryonic_grace_ms 60001 is above 60000"));
    let routes = Config::parse(ISSUE_EXAMPLE, "t").unwrap().routes;
    assert_eq!(routes[0].prefix.to_string(), "0.0.0.0/0");
    assert_eq!(
        routes[0].port,
        Some(0),
        "the port whose network holds the gateway"
    );
}

/// The issue's `[exception]` example on the documented ports.
fn with_exception(section: &str, wan_kernel: &str, lan_kernel: &str) -> String {
    ISSUE_EXAMPLE
        .replace(
            "addresses = [\"10.0.0.1/24\"]",
            &format!("addresses = [\"10.0.0.1/24\"]\n{wan_kernel}"),
        )
        .replace(
            "addresses = [\"172.16.0.1/24\"]",
            &format!("addresses = [\"172.16.0.1/24\"]\n{lan_kernel}"),
        )
        + section
}

#[test]
fn exception_section() {
    let t = with_exception(
        "[exception]\nbackend = \"tap\"          # or virtio-user\nnetns = \"dirigo\"\n",
        "kernel_interface = \"wan\"",
        "kernel_interface = \"lan\"\nkernel_rate_limit_pps = 500",
    );
    let c = Config::parse(&t, "t.toml").unwrap();
    let x = c.exception.as_ref().unwrap();
    assert_eq!(x.backend, ExceptionBackend::Tap);
    assert_eq!(x.netns.as_deref(), Some("dirigo"));
    assert_eq!(c.ports[0].kernel_interface.as_deref(), Some("wan"));
    assert_eq!(c.ports[0].kernel_rate_limit_pps, 20_000, "the section's");
    assert_eq!(c.ports[1].kernel_rate_limit_pps, 500, "the port's own");
    let t = with_exception(
        "[exception]\nbackend = \"virtio-user\"\n",
        "kernel_interface = \"wan\"",
        "",
    );
    let c = Config::parse(&t, "t.toml").unwrap();
    assert_eq!(c.exception.unwrap().backend, ExceptionBackend::VirtioUser);
    assert_eq!(c.ports[1].kernel_interface, None);
    // without the section nothing changes
    let c = Config::parse(ISSUE_EXAMPLE, "t.toml").unwrap();
    assert!(c.exception.is_none());
    assert!(c.ports.iter().all(|p| p.kernel_interface.is_none()));
}

#[test]
fn exception_errors_are_one_readable_line() {
    let cases = [
        (
            with_exception(
                "[exception]\nbackend = \"kni\"\n",
                "kernel_interface = \"wan\"",
                "",
            ),
            "unknown variant `kni`, expected `tap` or `virtio-user`",
        ),
        (
            with_exception(
                "[exception]\nbackend = \"tap\"\n",
                "kernel_interface = \"k0\"",
                "kernel_interface = \"k0\"",
            ),
            "port 'lan': kernel_interface 'k0' is already another port's",
        ),
        (
            with_exception(
                "[exception]\nbackend = \"tap\"\n",
                "kernel_interface = \"a-name-too-long0\"",
                "",
            ),
            "port 'wan': kernel_interface 'a-name-too-long0'",
        ),
        (
            with_exception(
                "[exception]\nbackend = \"tap\"\n",
                "kernel_interface = \"bad/name\"",
                "",
            ),
            "port 'wan': kernel_interface 'bad/name'",
        ),
        (
            with_exception("", "kernel_interface = \"wan\"", ""),
            "kernel_interface 'wan' needs an [exception] section",
        ),
        (
            with_exception(
                "[exception]\nbackend = \"tap\"\nnetns = \"a/b\"\n",
                "kernel_interface = \"wan\"",
                "",
            ),
            "[exception] netns",
        ),
        (
            with_exception(
                "[exception]\nbackend = \"tap\"\nrate_limit_pps = 0\n",
                "kernel_interface = \"wan\"",
                "",
            ),
            "rate_limit_pps must be at least 1",
        ),
        (
            with_exception("[exception]\nnetns = \"x\"\n", "", ""),
            "missing field `backend`",
        ),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.contains(want), "{e:?} should say {want:?}");
        assert!(!e.contains('\n'), "one line: {e:?}");
    }
    // a name of 15 bytes is the longest Linux takes
    let t = with_exception(
        "[exception]\nbackend = \"tap\"\n",
        "kernel_interface = \"fifteen-chars-1\"",
        "",
    );
    assert!(Config::parse(&t, "t.toml").is_ok());
}

mod announce;
mod checkers;
mod groups;
mod health;
mod located;
mod marks;
mod metrics;
mod snat;
mod tunnel;

#[test]
fn capture_needs_hugepage_files() {
    // off by default: --in-memory is fine
    let c = Config::parse(ISSUE_EXAMPLE, "t.toml").unwrap();
    assert!(!c.capture.enabled);
    let on = ISSUE_EXAMPLE.to_string() + "[capture]\nenabled = true\n";
    for arg in ["--in-memory", "--no-shconf", "--no-huge"] {
        let t = on.replace("\"--in-memory\"", &format!("{arg:?}"));
        let e = err(&t);
        assert!(e.contains(&format!("[eal] args has {arg}")), "{e}");
        assert!(e.contains("[capture] enabled"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // without them it is accepted
    let t = on.replace("\"--in-memory\", ", "");
    assert!(Config::parse(&t, "t.toml").unwrap().capture.enabled);
    // explicitly off with --in-memory: accepted
    let off = ISSUE_EXAMPLE.to_string() + "[capture]\nenabled = false\n";
    assert!(!Config::parse(&off, "t.toml").unwrap().capture.enabled);
    assert!(
        err(&(ISSUE_EXAMPLE.to_string() + "[capture]\nenable = true\n"))
            .contains("unknown field `enable`")
    );
}

#[test]
fn state_file_is_a_file_path() {
    let with = |v: &str| {
        ISSUE_EXAMPLE.replace(
            "socket = \"/run/dirigo/ctl.sock\"\n",
            &format!("socket = \"/run/dirigo/ctl.sock\"\nstate_file = {v}\n"),
        )
    };
    let c = Config::parse(&with("\"/var/lib/dirigo/rules\""), "t").unwrap();
    assert_eq!(
        c.control.state_file.as_deref(),
        Some("/var/lib/dirigo/rules")
    );
    assert_eq!(
        Config::parse(ISSUE_EXAMPLE, "t")
            .unwrap()
            .control
            .state_file,
        None
    );
    // the key's line (the example's [control] is on line 7)
    let e = err(&with("\"\""));
    assert!(
        e.contains("t.toml:8: [control] state_file '' is not a file's path"),
        "{e}"
    );
    assert!(err(&with("\"/var/lib/dirigo/\"")).contains("is not a file's path"));
    let dir = tempfile::tempdir().unwrap();
    let e = err(&with(&format!("{:?}", dir.path().display().to_string())));
    assert!(e.contains("is a directory"), "{e}");
    assert!(err(&with("3")).contains("invalid type"));
}

#[test]
fn handoff_file_is_a_file_path() {
    let with = |v: &str| {
        ISSUE_EXAMPLE.replace(
            "socket = \"/run/dirigo/ctl.sock\"\n",
            &format!("socket = \"/run/dirigo/ctl.sock\"\nhandoff_file = {v}\n"),
        )
    };
    let c = Config::parse(&with("\"/var/lib/dirigo/handoff\""), "t").unwrap();
    assert_eq!(
        c.control.handoff_file.as_deref(),
        Some("/var/lib/dirigo/handoff")
    );
    let none = Config::parse(ISSUE_EXAMPLE, "t").unwrap();
    assert_eq!(none.control.handoff_file, None);
    let e = err(&with("\"/var/lib/dirigo/\""));
    assert!(
        e.contains("t.toml:8: [control] handoff_file '/var/lib/dirigo/' is not a file's path (e.g. \"/var/lib/dirigo/handoff\")"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let e = err(&with(&format!("{:?}", dir.path().display().to_string())));
    assert!(
        e.contains("handoff_file") && e.contains("is a directory"),
        "{e}"
    );
}

#[test]
fn connection_checkpoint_needs_a_handoff_file_and_a_sane_period() {
    let with = |v: &str| {
        ISSUE_EXAMPLE.replace(
            "socket = \"/run/dirigo/ctl.sock\"\n",
            &format!("socket = \"/run/dirigo/ctl.sock\"\n{v}\n"),
        )
    };
    let ok = "handoff_file = \"/var/lib/dirigo/handoff\"\nconnection_checkpoint_s = 10";
    let c = Config::parse(&with(ok), "t").unwrap();
    assert_eq!(c.control.connection_checkpoint_s, Some(10));
    let e = err(&with("connection_checkpoint_s = 10"));
    assert!(
        e.contains("[control] connection_checkpoint_s needs [control] handoff_file"),
        "{e}"
    );
    for bad in ["0", "86401"] {
        let e = err(&with(&format!(
            "handoff_file = \"/var/lib/dirigo/handoff\"\nconnection_checkpoint_s = {bad}"
        )));
        assert!(e.contains("is not a period of 1 to 86400 seconds"), "{e}");
    }
    assert!(err(&with("connection_checkpoint_s = -1")).contains("invalid value"));
}
mod sync;
