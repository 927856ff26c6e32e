//! `virtual_server_group` and `virtual_server group NAME`: every entry
//! shape keepalived takes (VIP PORT, a last-octet or last-group range,
//! fwmark N), IPv4 and IPv6, through dirigo's own config parser.

use super::*;
use dirigo_core::lb::group::member_text;
use dirigo_core::lb::spec::{Proto, ServiceKey};

fn members(c: &Config, i: usize) -> Vec<String> {
    c.services[i].spec.members.iter().map(member_text).collect()
}

#[test]
fn a_group_of_addresses_ranges_and_marks_is_one_service() {
    let (toml, w) = convert_text(
        "virtual_server_group WEB {\n\
         \x20 192.0.2.10 80\n\
         \x20 192.0.2.20-22 80\n\
         \x20 192.0.2.10 8080\n\
         \x20 fwmark 7\n\
         }\n\
         virtual_server group WEB {\n\
         \x20 lb_algo rr\n\
         \x20 lb_kind NAT\n\
         \x20 protocol TCP\n\
         \x20 real_server 172.16.0.11 80 {\n    TCP_CHECK {\n      connect_timeout 2\n    }\n  }\n\
         \x20 real_server 172.16.0.12 80 {\n    TCP_CHECK {\n      connect_timeout 2\n    }\n  }\n\
         }\n",
    )
    .unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert!(
        toml.contains("# virtual_server group WEB (k.conf:7)"),
        "{toml}"
    );
    assert!(
        toml.contains(
            "address = \"192.0.2.10:80\"\n\
             members = [\"192.0.2.20-22:80\", \"192.0.2.10:8080\", \"fwmark 7\"]\n"
        ),
        "{toml}"
    );
    let c = dirigo(&toml);
    assert_eq!(c.services.len(), 1);
    assert_eq!(
        members(&c, 0),
        [
            "192.0.2.20:80",
            "192.0.2.21:80",
            "192.0.2.22:80",
            "192.0.2.10:8080",
            "fwmark 7"
        ]
    );
    // one set of checks for every member
    assert!(c.services[0].health.active());
    assert_eq!(c.services[0].dests.len(), 2);
}

#[test]
fn an_ipv6_group_with_a_range_converts() {
    let (toml, w) = convert_text(
        "virtual_server_group V6 {\n\
         \x20 2001:db8::10 443\n\
         \x20 2001:db8::20-2f 443\n\
         }\n\
         virtual_server group V6 {\n\
         \x20 lb_kind DR\n\
         \x20 real_server 2001:db8:1::11 443\n\
         \x20 real_server 2001:db8:1::12 443\n\
         }\n",
    )
    .unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert!(
        toml.contains("address = \"[2001:db8::10]:443\"\nmembers = [\"[2001:db8::20-2f]:443\"]"),
        "{toml}"
    );
    let c = dirigo(&toml);
    let s = &c.services[0].spec;
    assert!(s.key.vip.is_ipv6());
    assert_eq!(s.members.len(), 16);
    assert!(s
        .members
        .iter()
        .all(|k| k.proto == Proto::Tcp && k.vip.is_ipv6()));
    assert_eq!(
        c.services[0].dests[1].key.addr.to_string(),
        "2001:db8:1::12"
    );
}

#[test]
fn a_range_first_a_mark_first_and_a_udp_group() {
    // the range's first address is the service's, the rest a member
    let (toml, _) = convert_text(
        "virtual_server_group DNS {\n 10.1.0.1-4 53\n}\n\
         virtual_server group DNS {\n protocol UDP\n lb_kind DR\n real_server 172.16.0.1 53\n}\n\
         virtual_server_group M {\n fwmark 9\n 10.1.0.9 25\n}\n\
         virtual_server group M {\n lb_kind DR\n persistence_timeout 60\n real_server 172.16.0.2 25\n}\n",
    )
    .unwrap();
    let c = dirigo(&toml);
    assert_eq!(c.services[0].spec.key.proto, Proto::Udp);
    assert_eq!(
        members(&c, 0),
        ["10.1.0.2:53", "10.1.0.3:53", "10.1.0.4:53"]
    );
    assert_eq!(c.services[1].spec.key, ServiceKey::fwmark(9, false));
    assert_eq!(members(&c, 1), ["10.1.0.9:25"]);
}

#[test]
fn bad_groups_are_errors_or_warnings() {
    let e = convert_err("virtual_server_group G {\n 10.0.0.9-3 80\n}\n");
    assert!(e.contains("below the start"), "{e}");
    let e = convert_err("virtual_server_group G {\n 10.0.0.1 eighty\n}\n");
    assert!(e.contains("not a port"), "{e}");
    let e = convert_err("virtual_server_group G {\n fwmark 0\n}\n");
    assert!(e.contains("not a mark"), "{e}");
    let e = convert_err("virtual_server_group G {\n 2001:db8::1-20000 80\n}\n");
    assert!(e.contains("a number"), "{e}");
    // a family the group's first entry is not: skipped, with a warning
    let (toml, w) = convert_text(
        "virtual_server_group G {\n 10.0.0.1 80\n 2001:db8::1 80\n}\n\
         virtual_server group G {\n lb_kind DR\n real_server 172.16.0.1 80\n}\n\
         virtual_server_group E {\n}\n\
         virtual_server group E {\n lb_kind DR\n real_server 172.16.0.1 80\n}\n",
    )
    .unwrap();
    assert!(
        w[0].contains("[2001:db8::1]:80 skipped: a dirigo service group is of one family"),
        "{w:?}"
    );
    assert!(w[1].contains("the group has no entries"), "{w:?}");
    let c = dirigo(&toml);
    assert_eq!(c.services.len(), 1);
    assert!(c.services[0].spec.members.is_empty());
}
