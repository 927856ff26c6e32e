//! IPv6 network presence in the netns lab (issue 18, first slice): dirigo's
//! wan port has 2001:db8:99::1/64 and its EUI-64 link-local address; the
//! client (2001:db8:99::2/64 on its wan-facing interface) resolves both by
//! Neighbour Discovery and pings them, its neighbour table shows dirigo's
//! wan MAC, a duplicate address detection probe for dirigo's address fails
//! on the client, IPv4 through the VIP still works in the same lab, and
//! `dirigoctl` counts the NAs and echo replies. An IPv6 `[[route]]` via the
//! client's address is resolved by dirigo's own solicitations (the client's
//! NA fills the entry `dirigoctl neigh` shows), and a static IPv6
//! `[[neighbor]]` is listed beside it.
//!
//! Needs root and hugepages (skips outside CI, fails in CI).

mod common;
mod lab_common;

use lab_common::{checks, Lab, LabSpec, SERIAL};
use std::net::Ipv6Addr;

const P: &str = "dg6";
const DIRIGO6: &str = "2001:db8:99::1";
const CLIENT6: &str = "2001:db8:99::2/64";
/// A static IPv6 neighbour (nobody answers for it).
const STATIC6: &str = "2001:db8:99::fe";
const STATIC6_MAC: &str = "02:00:00:99:00:fe";

/// dirigo's wan MAC, from its start-up log.
fn wan_mac(lab: &Lab) -> [u8; 6] {
    let log = lab.daemon_log();
    let line = log
        .lines()
        .find(|l| l.contains("port wan (") && l.contains(" up: mac "))
        .unwrap_or_else(|| panic!("no wan port line in:\n{log}"));
    let mac = line
        .split(" up: mac ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap();
    let b: Vec<u8> = mac
        .split(':')
        .map(|x| u8::from_str_radix(x, 16).unwrap())
        .collect();
    b.try_into().unwrap()
}

/// The EUI-64 link-local address of `mac` (RFC 4291 appendix A), computed
/// here independently of dirigo.
fn link_local(mac: [u8; 6]) -> Ipv6Addr {
    let g = |a: u8, b: u8| u16::from_be_bytes([a, b]);
    Ipv6Addr::new(
        0xfe80,
        0,
        0,
        0,
        g(mac[0] ^ 2, mac[1]),
        g(mac[2], 0xff),
        g(0xfe, mac[3]),
        g(mac[4], mac[5]),
    )
}

fn ping6(lab: &Lab, to: &str) {
    let out = lab.client(&["ping", "-6", "-c", "3", "-i", "0.2", "-W", "2", to]);
    assert!(out.contains("3 received"), "ping -6 {to}: {out}");
}

#[test]
fn lab_ipv6_ndp_and_ping6() {
    if !common::privileged("lab ipv6") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let spec = LabSpec::dr("lab_ipv6", P);
    let lab = Lab::start_with_config(&spec, 65536, |c| {
        c.edit(
            "addresses = [\"10.99.0.1/24\"]",
            &format!("addresses = [\"10.99.0.1/24\", \"{DIRIGO6}/64\"]"),
        )
        .route("2001:db8:77::/48", "2001:db8:99::2")
        .neighbor(STATIC6, STATIC6_MAC, "wan")
    });
    let iface = format!("{P}-wan");
    let mac = wan_mac(&lab);
    let ll = link_local(mac);
    assert!(
        lab.daemon_log()
            .contains(&format!("port wan: IPv6 link-local {ll}")),
        "dirigo logs the link-local address it answers for"
    );

    // the lab turns IPv6 off in its namespaces: on for the client's
    // wan-facing interface only, without DAD for its link-local address
    for k in [
        format!("net.ipv6.conf.{iface}.accept_dad=0"),
        format!("net.ipv6.conf.{iface}.disable_ipv6=0"),
    ] {
        lab.client(&["sysctl", "-qw", &k]);
    }
    lab.client(&["ip", "-6", "addr", "add", CLIENT6, "dev", &iface, "nodad"]);
    lab.wait_for("the client's IPv6 addresses", 10, || {
        let o = lab.client(&["ip", "-6", "addr", "show", "dev", &iface]);
        o.contains("fe80::") && o.contains("2001:db8:99::2") && !o.contains("tentative")
    });

    // the IPv6 route's gateway (the client) is resolved by dirigo's own
    // solicitations, which the control thread repeats each second: the
    // client's NA fills the entry (before the client talks to dirigo, so
    // the entry is not learned from the client's own solicitation)
    let client_mac = {
        let o = lab.client(&["cat", &format!("/sys/class/net/{iface}/address")]);
        o.trim().to_string()
    };
    lab.wait_for("dirigo to resolve its IPv6 gateway", 10, || {
        let n = lab.ctl_json(&["neigh", "list"]);
        n.as_array().is_some_and(|a| {
            a.iter().any(|e| {
                e["addr"] == "2001:db8:99::2"
                    && e["mac"].as_str() == Some(client_mac.as_str())
                    && e["state"] == "reachable"
            })
        })
    });
    let neigh = lab.ctl_json(&["neigh", "list"]);
    assert!(
        neigh
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["addr"] == STATIC6 && e["mac"] == STATIC6_MAC && e["state"] == "static"),
        "the static IPv6 neighbour: {neigh}"
    );
    let routes = lab.ctl_json(&["route", "list"]);
    assert!(
        routes
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["dst"] == "2001:db8:77::"
                && r["prefix_len"] == 48
                && r["gateway"] == "2001:db8:99::2"),
        "the IPv6 route: {routes}"
    );
    assert!(lab.counter("nd_taken") >= 1, "the client's NA was taken");

    // NS -> NA, then echo, for the global and the link-local address
    ping6(&lab, DIRIGO6);
    ping6(&lab, &format!("{ll}%{iface}"));
    let mac_s = mac
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":");
    for a in [DIRIGO6.to_string(), ll.to_string()] {
        let n = lab.client(&["ip", "-6", "neigh", "show", &a, "dev", &iface]);
        assert!(
            n.contains(&format!("lladdr {mac_s}")),
            "neighbour {a}: {n:?}"
        );
    }

    // IPv4 through the VIP is unchanged in the same lab
    checks::ping(&lab);
    checks::transfer(&lab, "ipv4 beside ipv6");

    let na = lab.counter("nd_advertised");
    let echo = lab.counter("echo6_replied");
    eprintln!("nd_advertised {na}, echo6_replied {echo}");
    // the link-local address is solicited; the global one the client may
    // already know from dirigo's own solicitation (RFC 4861 §7.2.3)
    assert!(na >= 1, "an NA for the link-local address: {na}");
    assert!(echo >= 6, "two pings of three: {echo}");
    // the kernel's own chatter (router solicitations, MLD reports) is
    // counted, not answered
    let chatter = lab.counter("nd_router") + lab.counter("icmp6_mld");
    eprintln!("router + MLD messages counted: {chatter}");
    let shown = common::text(
        &std::process::Command::new(crate::common::DIRIGOCTL)
            .args(["--socket", &lab.sock, "lcores"])
            .output()
            .unwrap(),
    );
    assert!(
        shown.contains("nd_advertised") && shown.contains("echo6_replied"),
        "dirigoctl lcores: {shown}"
    );

    // duplicate address detection: the client trying dirigo's address
    // hears it is taken (dirigo's NA to all-nodes)
    lab.client(&[
        "sysctl",
        "-qw",
        &format!("net.ipv6.conf.{iface}.accept_dad=1"),
    ]);
    let before = lab.counter("nd_advertised");
    lab.client(&[
        "ip",
        "-6",
        "addr",
        "add",
        &format!("{DIRIGO6}/64"),
        "dev",
        &iface,
    ]);
    lab.wait_for("DAD of dirigo's address to fail on the client", 10, || {
        lab.client(&["ip", "-6", "addr", "show", "dev", &iface])
            .contains("dadfailed")
    });
    assert!(lab.counter("nd_advertised") > before);
    lab.client(&[
        "ip",
        "-6",
        "addr",
        "del",
        &format!("{DIRIGO6}/64"),
        "dev",
        &iface,
    ]);
    ping6(&lab, DIRIGO6);

    lab.finish();
}
