//! `[sync]`: connection sync's section, checked against the ports.

use super::*;

fn with_sync(section: &str) -> String {
    with_exception(
        &format!("[exception]\nbackend = \"tap\"\nnetns = \"dirigo\"\n[sync]\n{section}"),
        "kernel_interface = \"wan\"",
        "kernel_interface = \"lan\"",
    )
}

#[test]
fn sync_section_with_defaults_and_peers() {
    let c = Config::parse(&with_sync("enabled = true\nport = \"lan\"\n"), "t.toml").unwrap();
    let s = c.sync.unwrap();
    assert_eq!((s.port, s.interface.as_str()), (1, "lan"));
    assert_eq!(s.source, Ipv4Addr::new(172, 16, 0, 1));
    assert_eq!(
        (s.group, s.udp_port, s.ttl, s.syncid),
        (Ipv4Addr::new(224, 0, 0, 81), 8848, 1, 0)
    );
    assert!(s.send && s.receive && s.peers.is_empty());
    assert_eq!((s.policy.udp_threshold, s.policy.refresh_ms()), (3, 65_536));
    assert_eq!(s.max_message, 1472);
    let c = Config::parse(
        &with_sync(
            "enabled = true\nport = \"lan\"\nsyncid = 7\npeers = [\"172.16.0.2\"]\n\
             refresh_period = 0\nthreshold = 1\nreceive = false\n",
        ),
        "t.toml",
    )
    .unwrap();
    let s = c.sync.unwrap();
    assert_eq!(
        (s.syncid, s.peers.clone()),
        (7, vec![Ipv4Addr::new(172, 16, 0, 2)])
    );
    assert_eq!(
        (s.policy.refresh_ms(), s.policy.udp_threshold, s.receive),
        (0, 1, false)
    );
    // off: no sync, whatever else the section says
    assert!(Config::parse(&with_sync("port = \"nope\"\n"), "t.toml")
        .unwrap()
        .sync
        .is_none());
}

#[test]
fn bad_sync_sections_are_one_located_line() {
    for (section, want) in [
        ("enabled = true\n", "needs port"),
        ("enabled = true\nport = \"dmz\"\n", "is not a [[port]]"),
        (
            "enabled = true\nport = \"lan\"\ngroup = \"10.0.0.1\"\n",
            "not a multicast",
        ),
        (
            "enabled = true\nport = \"lan\"\ngroup = \"x\"\n",
            "not an IPv4 address",
        ),
        (
            "enabled = true\nport = \"lan\"\npeers = [\"224.0.0.81\"]\n",
            "unicast",
        ),
        (
            "enabled = true\nport = \"lan\"\npeers = [\"172.16.0.1\"]\n",
            "unicast",
        ),
        ("enabled = true\nport = \"lan\"\nttl = 0\n", "ttl 0"),
        (
            "enabled = true\nport = \"lan\"\nthreshold = 256\n",
            "1..255",
        ),
        (
            "enabled = true\nport = \"lan\"\nrefresh_period = 100000\n",
            "at most 86400",
        ),
        (
            "enabled = true\nport = \"lan\"\nudp_port = 0\n",
            "udp_port 0",
        ),
        (
            "enabled = true\nport = \"lan\"\nsend = false\nreceive = false\n",
            "enabled = false",
        ),
        ("enabled = true\nport = \"lan\"\nsyncid = 300\n", "syncid"),
        (
            "enabled = true\nport = \"lan\"\nmcast = \"x\"\n",
            "unknown field",
        ),
    ] {
        let e = err(&with_sync(section));
        assert!(e.contains(want), "{section}: {e}");
        assert!(e.contains("t.toml:"), "{section}: located: {e}");
    }
    // a port without a kernel interface
    let t = with_exception(
        "[exception]\nbackend = \"tap\"\n[sync]\nenabled = true\nport = \"lan\"\n",
        "kernel_interface = \"wan\"",
        "",
    );
    assert!(err(&t).contains("has no kernel_interface"), "{}", err(&t));
}
