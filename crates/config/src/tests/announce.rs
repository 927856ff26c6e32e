//! `[announce]`: the port, table, protocol and drain, and every refusal
//! as one located line.

use super::{err, with_exception, ISSUE_EXAMPLE};
use crate::{Announce, Config};
use std::time::Duration;

const EXC: &str = "[exception]\nbackend = \"tap\"\nnetns = \"dirigo\"\n";

/// The documented ports, the wan one with a kernel interface (and the lan
/// one too when `lan`), and `[announce]` with `keys`.
fn with(keys: &str, lan: bool) -> String {
    with_exception(
        &format!("{EXC}[announce]\n{keys}\n"),
        "kernel_interface = \"kwan\"",
        if lan {
            "kernel_interface = \"klan\""
        } else {
            ""
        },
    )
}

#[test]
fn defaults_and_keys() {
    let c = Config::parse(&with("", false), "t").unwrap();
    assert_eq!(
        c.announce,
        Some(Announce {
            port: 0,
            interface: "kwan".into(),
            table: 100,
            protocol: 201,
            drain: Duration::from_millis(2000),
            sync_wait: Duration::from_millis(3000),
        })
    );
    let c = Config::parse(
        &with(
            "port = \"lan\"\ntable = 1000\nprotocol = 99\ndrain_ms = 0\nsync_wait_ms = 0",
            true,
        ),
        "t",
    )
    .unwrap();
    let a = c.announce.unwrap();
    assert_eq!((a.port, a.interface.as_str()), (1, "klan"));
    assert_eq!((a.table, a.protocol, a.drain), (1000, 99, Duration::ZERO));
    assert_eq!(a.sync_wait, Duration::ZERO);
    // off
    let c = Config::parse(&with("enabled = false", true), "t").unwrap();
    assert_eq!(c.announce, None);
    assert_eq!(Config::parse(ISSUE_EXAMPLE, "t").unwrap().announce, None);
}

#[test]
fn refusals_are_located_lines() {
    // no exception path at all
    let e = err(&format!("{ISSUE_EXAMPLE}[announce]\ndrain_ms = 500\n"));
    assert!(
        e.contains("t.toml:") && e.contains("needs the exception path"),
        "{e}"
    );
    // several kernel interfaces, none named
    let e = err(&with("", true));
    assert!(
        e.contains("several ports have a kernel interface (wan, lan)"),
        "{e}"
    );
    // a port without one, and an unknown port
    let t = with("port = \"lan\"", false);
    let e = err(&t);
    let line = t.lines().position(|l| l == "port = \"lan\"").unwrap() + 1;
    assert!(e.contains(&format!("t.toml:{line}:")), "{e}");
    assert!(e.contains("port 'lan' has no kernel interface"), "{e}");
    let e = err(&with("port = \"dmz\"", false));
    assert!(e.contains("[announce] port 'dmz': no such port"), "{e}");
    for (keys, want) in [
        ("table = 0", "table 0 is no table"),
        ("table = 255", "the kernel's local table"),
        ("protocol = 2", "protocol 2 is one the kernel"),
        ("protocol = 12", "BIRD's own"),
        ("protocol = 188", "FRR uses for its own routes"),
        ("protocol = 300", "protocol 300: at most 255"),
        ("drain_ms = 20001", "drain_ms 20001 is more than 20000"),
        (
            "sync_wait_ms = 60001",
            "sync_wait_ms 60001 is more than 60000",
        ),
    ] {
        let t = with(keys, false);
        let e = err(&t);
        let line = t.lines().position(|l| l == keys).unwrap() + 1;
        assert!(e.contains(want), "{keys}: {e}");
        assert!(e.contains(&format!("t.toml:{line}:")), "{keys}: {e}");
        assert_eq!(e.lines().count(), 1, "{keys}: {e}");
    }
    let t = with("protocol = -1", false);
    let line = t.lines().position(|l| l == "protocol = -1").unwrap() + 1;
    let e = err(&t);
    assert!(e.contains(&format!("t.toml:{line}: invalid value")), "{e}");
    let e = err(&with("bgp = true", false));
    assert!(e.contains("unknown field `bgp`"), "{e}");
}

/// An IPv6 VIP is announced like an IPv4 one, from the port's IPv6
/// address: a port without one is refused, naming the VIP (and the same
/// check holds for IPv4).
#[test]
fn an_ipv6_vip_needs_an_ipv6_address_on_the_port() {
    let svc6 = "[[service]]\nprotocol = \"tcp\"\naddress = \"[2001:db8::10]:80\"\n\
                scheduler = \"rr\"\n[[service.real_server]]\naddress = \"2001:db8:2::11\"\n\
                method = \"dr\"\n";
    let t = with("port = \"wan\"", false) + svc6;
    let e = err(&t);
    let line = t.lines().position(|l| l == "port = \"wan\"").unwrap() + 1;
    assert!(e.contains(&format!("t.toml:{line}:")), "{e}");
    assert!(
        e.contains("[announce] port 'wan' has no IPv6 address, but the IPv6 VIP 2001:db8::10"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    let t = t.replace(
        "addresses = [\"10.0.0.1/24\"]",
        "addresses = [\"10.0.0.1/24\", \"2001:db8::1/64\"]",
    );
    let c = Config::parse(&t, "t.toml").unwrap();
    assert_eq!(c.announce.unwrap().interface, "kwan");
}
