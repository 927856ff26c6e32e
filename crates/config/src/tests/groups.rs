//! Service groups (`members`): parsed and expanded, every refusal at
//! its key.

use super::*;
use dirigo_core::lb::spec::{Proto, ServiceKey};

fn with(extra: &str) -> String {
    format!("{ISSUE_EXAMPLE}\n{extra}")
}

const GROUP: &str = r#"
[[service]]
protocol = "tcp"
address = "10.0.0.100:80"
scheduler = "rr"
members = ["10.0.0.101:80", "10.0.0.110-112:80", "10.0.0.100:8080", "fwmark 3"]
[[service.real_server]]
address = "172.16.0.11:80"
method = "nat"
[[service.real_server]]
address = "172.16.0.12:80"
method = "nat"

[[service]]
protocol = "udp"
address = "[2001:db8::100]:53"
members = ["[2001:db8::101-103]:53"]
"#;

#[test]
fn members_parse_and_ranges_expand() {
    let c = Config::parse(&with(GROUP), "t.toml").unwrap();
    assert_eq!(c.services.len(), 2);
    let m: Vec<String> = c.services[0]
        .spec
        .members
        .iter()
        .map(dirigo_core::lb::group::member_text)
        .collect();
    assert_eq!(
        m,
        [
            "10.0.0.101:80",
            "10.0.0.110:80",
            "10.0.0.111:80",
            "10.0.0.112:80",
            "10.0.0.100:8080",
            "fwmark 3"
        ]
    );
    assert!(c.services[0].spec.members[..5]
        .iter()
        .all(|k| k.proto == Proto::Tcp));
    assert_eq!(c.services[0].spec.members[5], ServiceKey::fwmark(3, false));
    let m6 = &c.services[1].spec.members;
    assert_eq!(m6.len(), 3);
    assert!(m6.iter().all(|k| k.proto == Proto::Udp && k.vip.is_ipv6()));
}

#[test]
fn bad_members_are_refused_at_their_key() {
    let svc = |members: &str| {
        err(&with(&format!(
            "[[service]]\nprotocol = \"tcp\"\naddress = \"10.0.0.100:80\"\nmembers = {members}\n"
        )))
    };
    let e = svc(r#"["10.0.0.101"]"#);
    assert!(e.contains("a member is ADDR:PORT"), "{e}");
    assert!(e.contains("members[0]") || e.contains("t.toml:"), "{e}");
    let e = svc(r#"["[2001:db8::1]:80"]"#);
    assert!(e.contains("of its service's family (IPv4)"), "{e}");
    let e = svc(r#"["10.0.0.9-2:80"]"#);
    assert!(e.contains("below the start"), "{e}");
    let e = svc(r#"["10.0.0.1-255:80", "10.0.1.1-255:80"]"#);
    assert!(e.contains("510 members, a group has at most 256"), "{e}");
    let e = svc(r#"["10.0.0.100:80"]"#);
    assert!(e.contains("member TCP 10.0.0.100:80 twice"), "{e}");
    // a member that is another service's key
    let e = err(&with(
        "[[service]]\nprotocol = \"tcp\"\naddress = \"10.0.0.100:80\"\nmembers = [\"10.0.0.101:80\"]\n\
         [[service]]\nprotocol = \"tcp\"\naddress = \"10.0.0.101:80\"\n",
    ));
    assert!(
        e.contains("member TCP 10.0.0.101:80 is taken by service TCP 10.0.0.101:80"),
        "{e}"
    );
}
