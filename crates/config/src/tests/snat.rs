//! `[[snat]]` rules: parsed (a list or a range of pool addresses),
//! validated, every refusal at its line.

use super::*;

fn with(extra: &str) -> String {
    format!("{ISSUE_EXAMPLE}\n{extra}")
}

#[test]
fn snat_rules_parse() {
    let c = Config::parse(
        &with(
            "[[snat]]\nsource = \"172.16.0.0/24\"\npool = [\"203.0.113.10\", \"203.0.113.11\"]\n\
             max_conns = 5000\n\n[[snat]]\nsource = \"172.16.1.0/24\"\npool = \"203.0.113.20-203.0.113.23\"\n\
             ports = \"20000-29999\"\n",
        ),
        "t.toml",
    )
    .unwrap();
    let rules: Vec<String> = c.snat.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        rules,
        [
            "172.16.0.0/24 -> 203.0.113.10,203.0.113.11 max 5000",
            "172.16.1.0/24 -> 203.0.113.20,203.0.113.21,203.0.113.22,203.0.113.23 ports 20000-29999",
        ]
    );
    assert!(Config::parse(ISSUE_EXAMPLE, "t.toml")
        .unwrap()
        .snat
        .is_empty());
}

#[test]
fn bad_snat_rules_are_refused_at_their_line() {
    let rule = |body: &str| err(&with(&format!("[[snat]]\n{body}\n")));
    let e = rule("source = \"172.16.0.1/24\"\npool = [\"203.0.113.10\"]");
    assert!(e.contains("host bits"), "{e}");
    let e = rule("source = \"lan\"\npool = [\"203.0.113.10\"]");
    assert!(e.contains("not an address or prefix"), "{e}");
    let e = rule("source = \"172.16.0.0/24\"\npool = []");
    assert!(e.contains("no address"), "{e}");
    let e = rule("source = \"172.16.0.0/24\"\npool = [\"203.0.113.300\"]");
    assert!(e.contains("is not an address"), "{e}");
    let e = rule("source = \"172.16.0.0/24\"\npool = \"203.0.113.20-203.0.113.10\"");
    assert!(e.contains("backwards"), "{e}");
    let e = rule("source = \"172.16.0.0/24\"\npool = \"203.0.112.0-203.0.113.255\"");
    assert!(e.contains("more than 256"), "{e}");
    let e = rule("source = \"172.16.0.0/24\"\npool = [\"2001:db8::1\"]");
    assert!(e.contains("different families"), "{e}");
    let e = rule("source = \"2001:db8::/64\"\npool = [\"2001:db8:1::1\"]");
    assert!(e.contains("IPv6 SNAT is not supported"), "{e}");
    let e = rule("source = \"172.16.0.0/24\"\npool = [\"203.0.113.10\"]\nport = 5");
    assert!(e.contains("port"), "{e}");
    let e = rule("source = \"172.16.0.0/24\"\npool = [\"203.0.113.10\"]\nports = \"9-1\"");
    assert!(e.contains("not a range"), "{e}");
    let e = rule("source = \"172.16.0.0/24\"\npool = [\"203.0.113.10\"]\nports = \"x\"");
    assert!(e.contains("a range \"LO-HI\""), "{e}");
    // a pool address of dirigo's own port
    let text = with("[[snat]]\nsource = \"172.16.0.0/24\"\npool = [\"10.0.0.1\"]\n");
    let e = err(&text);
    assert!(e.contains("one of dirigo's own addresses"), "{e}");
    let line = text.lines().position(|l| l.starts_with("pool")).unwrap() + 1;
    assert!(e.contains(&format!("t.toml:{line}:")), "{e}");
    // overlapping rules: the second refused at its source line
    let text = with(
        "[[snat]]\nsource = \"172.16.0.0/16\"\npool = [\"203.0.113.10\"]\n\n\
         [[snat]]\nsource = \"172.16.5.0/24\"\npool = [\"203.0.113.11\"]\n",
    );
    let e = err(&text);
    assert!(e.contains("overlaps 172.16.0.0/16"), "{e}");
    let line = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("source"))
        .nth(1)
        .unwrap()
        .0
        + 1;
    assert!(e.contains(&format!("t.toml:{line}:")), "{e}");
}
