//! fwmark services (`fwmark`, `family`) and `[[mark]]` rules: parsed,
//! validated, every refusal at its line.

use super::*;
use dirigo_core::lb::spec::ServiceKey;

fn with(extra: &str) -> String {
    format!("{ISSUE_EXAMPLE}\n{extra}")
}

const GOOD: &str = r#"
[[service]]
fwmark = 1
scheduler = "rr"
persistent = 600
[[service.real_server]]
address = "172.16.0.11"
method = "dr"

[[service]]
fwmark = 1
family = "ipv6"
scheduler = "rr"

[[mark]]
protocol = "tcp"
destination = "10.0.0.100"
port = 80
mark = 1

[[mark]]
protocol = "tcp"
destination = "10.0.0.100/32"
port = "443-444"
source = "198.51.100.0/24"
mark = 1

[[mark]]
protocol = "udp"
destination = "2001:db8::/64"
port = 53
mark = 9
"#;

#[test]
fn fwmark_services_and_mark_rules_parse() {
    let c = Config::parse(&with(GOOD), "t.toml").unwrap();
    assert_eq!(c.services.len(), 2);
    assert_eq!(c.services[0].spec.key, ServiceKey::fwmark(1, false));
    assert_eq!(c.services[0].spec.persistent, Some(600));
    assert_eq!(c.services[0].dests[0].key.port, 0);
    assert_eq!(c.services[1].spec.key, ServiceKey::fwmark(1, true));
    let rules: Vec<String> = c.marks.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        rules,
        [
            "tcp 10.0.0.100/32 80 mark 1",
            "tcp 10.0.0.100/32 443-444 from 198.51.100.0/24 mark 1",
            "udp 2001:db8::/64 53 mark 9",
        ]
    );
}

#[test]
fn bad_fwmark_services_are_refused_at_their_key() {
    let svc = |body: &str| err(&with(&format!("[[service]]\n{body}\n")));
    let e = svc("fwmark = 0");
    assert!(e.contains("a mark is 1..=4294967295"), "{e}");
    let e = svc("fwmark = 1\nprotocol = \"tcp\"");
    assert!(
        e.contains("an fwmark service has no protocol or address"),
        "{e}"
    );
    let e = svc("fwmark = 1\naddress = \"10.0.0.1:80\"");
    assert!(e.contains("no protocol or address"), "{e}");
    let e = svc("fwmark = 1\nfamily = \"inet6\"");
    assert!(e.contains("\"ipv4\" or \"ipv6\""), "{e}");
    let e = svc("protocol = \"tcp\"\naddress = \"10.0.0.1:80\"\nfamily = \"ipv6\"");
    assert!(e.contains("family is for fwmark services"), "{e}");
    let e = svc("address = \"10.0.0.1:80\"");
    assert!(e.contains("protocol is required"), "{e}");
    let e = svc("fwmark = -1");
    assert!(e.contains("expected u32"), "{e}");
    let e = err(&with("[[service]]\nfwmark = 3\n[[service]]\nfwmark = 3\n"));
    assert!(e.contains("duplicate service fwmark 3"), "{e}");
}

#[test]
fn bad_mark_rules_are_refused_at_their_line() {
    let rule = |body: &str| err(&with(&format!("[[mark]]\n{body}\n")));
    let base = "protocol = \"tcp\"\ndestination = \"10.0.0.100\"";
    let e = rule(&format!("{base}\nport = 80\nmark = 0"));
    assert!(e.contains("mark 0 is not a mark"), "{e}");
    let e = rule(&format!("{base}\nport = 0\nmark = 1"));
    assert!(e.contains("port 0"), "{e}");
    let e = rule(&format!("{base}\nport = 70000\nmark = 1"));
    assert!(e.contains("a port 1..=65535 or a range"), "{e}");
    let e = rule(&format!("{base}\nport = \"90-80\"\nmark = 1"));
    assert!(e.contains("backwards"), "{e}");
    let e = rule(&format!("{base}\nport = \"http\"\nmark = 1"));
    assert!(e.contains("a port 1..=65535 or a range"), "{e}");
    let e = rule(&format!("{base}\nport = [80]\nmark = 1"));
    assert!(e.contains("a port 1..=65535 or a range"), "{e}");
    let e = rule("protocol = \"tcp\"\ndestination = \"10.0.0.1/24\"\nport = 80\nmark = 1");
    assert!(e.contains("host bits"), "{e}");
    let e = rule("protocol = \"tcp\"\ndestination = \"nowhere\"\nport = 80\nmark = 1");
    assert!(e.contains("not an address or prefix"), "{e}");
    let e = rule(&format!(
        "{base}\nport = 80\nsource = \"2001:db8::/32\"\nmark = 1"
    ));
    assert!(e.contains("different families"), "{e}");
    let e = rule(&format!("{base}\nport = 80\nmark = 1\ncolour = 1"));
    assert!(e.contains("colour"), "{e}");
    // overlapping and duplicate rules: the second is refused, at its line
    let two = format!(
        "[[mark]]\n{base}\nport = \"80-90\"\nmark = 1\n\n[[mark]]\n{base}\nport = 85\nmark = 2\n"
    );
    let text = with(&two);
    let e = err(&text);
    assert!(e.contains("overlaps tcp 10.0.0.100/32 80-90 mark 1"), "{e}");
    // the second [[mark]]'s destination line
    let second = text
        .lines()
        .enumerate()
        .filter(|(_, l)| *l == "[[mark]]")
        .nth(1)
        .unwrap()
        .0;
    let line = second + 1 + 2;
    assert!(e.contains(&format!("t.toml:{line}:")), "{e}");
    let dup =
        format!("[[mark]]\n{base}\nport = 80\nmark = 1\n[[mark]]\n{base}\nport = 80\nmark = 1\n");
    assert!(err(&with(&dup)).contains("given twice"));
}

#[test]
fn a_mark_without_its_service_is_allowed() {
    let c = Config::parse(
        &with("[[mark]]\nprotocol = \"udp\"\ndestination = \"10.0.0.0/8\"\nport = 53\nmark = 77\n"),
        "t.toml",
    )
    .unwrap();
    assert_eq!(c.marks.len(), 1);
    assert!(c.services.is_empty());
}

#[test]
fn an_fwmark_services_problems_name_its_mark() {
    let e = err(&with(
        "[[service]]\nfwmark = 4\nscheduler = \"nope\"\n\
         [[service.real_server]]\naddress = \"172.16.0.11\"\nweight = 70000\n",
    ));
    assert!(e.contains("service fwmark 4: "), "{e}");
}
