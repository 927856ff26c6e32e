use super::*;

fn rule(s: &str) -> MarkRule {
    // "tcp 192.0.2.0/24 80-443 [from P] mark N"
    let w: Vec<&str> = s.split_whitespace().collect();
    let proto = if w[0] == "tcp" {
        Proto::Tcp
    } else {
        Proto::Udp
    };
    let (lo, hi) = match w[2].split_once('-') {
        Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
        None => (w[2].parse().unwrap(), w[2].parse().unwrap()),
    };
    let src = (w[3] == "from").then(|| w[4].parse().unwrap());
    MarkRule {
        proto,
        dst: w[1].parse().unwrap(),
        port_lo: lo,
        port_hi: hi,
        src,
        mark: w[w.len() - 1].parse().unwrap(),
    }
}

fn ip4(s: &str) -> u32 {
    u32::from(s.parse::<std::net::Ipv4Addr>().unwrap())
}

#[test]
fn display_reads_back() {
    for s in [
        "tcp 192.0.2.10/32 80 mark 1",
        "udp 192.0.2.0/24 1000-2000 from 198.51.100.0/24 mark 7",
        "tcp 2001:db8::/64 443 mark 4294967295",
    ] {
        assert_eq!(rule(s).to_string(), s);
    }
}

#[test]
fn prefix_parse_and_refusals() {
    let p: Prefix = "192.0.2.10".parse().unwrap();
    assert_eq!(p.len, 32);
    let p: Prefix = "2001:db8::1".parse().unwrap();
    assert_eq!(p.len, 128);
    assert!("192.0.2.0/33".parse::<Prefix>().is_err());
    assert!("2001:db8::/129".parse::<Prefix>().is_err());
    assert!("not-an-address".parse::<Prefix>().is_err());
    assert!("192.0.2.0/x".parse::<Prefix>().is_err());
}

#[test]
fn one_rule_checks() {
    assert!(rule("tcp 192.0.2.0/24 80 mark 1").check().is_ok());
    let e = rule("tcp 192.0.2.0/24 80 mark 0").check().unwrap_err();
    assert!(e.contains("mark 0"), "{e}");
    let mut r = rule("tcp 192.0.2.0/24 80 mark 1");
    r.port_lo = 90;
    assert!(r.check().unwrap_err().contains("backwards"));
    r.port_lo = 0;
    assert!(r.check().unwrap_err().contains("port 0"));
    let e = rule("tcp 192.0.2.1/24 80 mark 1").check().unwrap_err();
    assert!(e.contains("host bits"), "{e}");
    let e = rule("tcp 192.0.2.0/24 80 from 2001:db8::/32 mark 1")
        .check()
        .unwrap_err();
    assert!(e.contains("different families"), "{e}");
}

#[test]
fn overlaps_and_duplicates_are_refused() {
    let a = rule("tcp 192.0.2.0/24 80-443 mark 1");
    // disjoint: other protocol, other ports, other network, other sources
    for s in [
        "udp 192.0.2.0/24 80-443 mark 2",
        "tcp 192.0.2.0/24 444-500 mark 2",
        "tcp 192.0.3.0/24 80 mark 2",
        "tcp 2001:db8::/32 80 mark 2",
    ] {
        assert!(check_rules(&[a, rule(s)]).is_ok(), "{s}");
    }
    let src1 = rule("tcp 192.0.2.0/24 80 from 10.0.0.0/8 mark 1");
    let src2 = rule("tcp 192.0.2.0/24 80 from 11.0.0.0/8 mark 2");
    assert!(check_rules(&[src1, src2]).is_ok());
    // overlapping: a host inside the network, a port inside the range,
    // a source rule inside an any-source one
    for s in [
        "tcp 192.0.2.7/32 443 mark 2",
        "tcp 192.0.0.0/16 100 mark 2",
        "tcp 192.0.2.0/24 443-1000 from 10.0.0.0/8 mark 2",
    ] {
        let e = check_rules(&[a, rule(s)]).unwrap_err();
        assert!(e.contains("overlaps"), "{s}: {e}");
    }
    let e = check_rules(&[a, a]).unwrap_err();
    assert!(e.contains("given twice"), "{e}");
    let many: Vec<MarkRule> = (0..=MAX_MARK_RULES as u16)
        .map(|i| rule(&format!("tcp 192.0.2.0/24 {} mark 1", i + 1)))
        .collect();
    assert!(check_rules(&many).unwrap_err().contains("at most"));
}

#[test]
fn compiled_rules_match_exactly_their_packets() {
    let rules = [
        rule("tcp 192.0.2.0/24 80-443 mark 1"),
        rule("udp 192.0.2.10/32 53 from 198.51.100.0/24 mark 2"),
        rule("tcp 2001:db8::/64 443 mark 3"),
    ];
    let c = compile(&rules, false, bits4, |m| (m == 1).then_some(5));
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].svc, c[1].svc), (5, u32::MAX));
    let any = ip4("203.0.113.9");
    assert!(c[0].matches(6, any, ip4("192.0.2.200"), 80));
    assert!(c[0].matches(6, any, ip4("192.0.2.200"), 443));
    assert!(c[0].matches(6, any, ip4("192.0.2.200"), 300));
    assert!(!c[0].matches(6, any, ip4("192.0.2.200"), 79));
    assert!(!c[0].matches(6, any, ip4("192.0.2.200"), 444));
    assert!(!c[0].matches(17, any, ip4("192.0.2.200"), 80));
    assert!(!c[0].matches(6, any, ip4("192.0.3.1"), 80));
    let from = ip4("198.51.100.77");
    assert!(c[1].matches(17, from, ip4("192.0.2.10"), 53));
    assert!(!c[1].matches(17, any, ip4("192.0.2.10"), 53));
    assert!(!c[1].matches(17, from, ip4("192.0.2.11"), 53));
    let c6 = compile(&rules, true, bits6, |_| None);
    assert_eq!(c6.len(), 1);
    let a6 = |s: &str| u128::from(s.parse::<std::net::Ipv6Addr>().unwrap());
    assert!(c6[0].matches(6, 1, a6("2001:db8::abcd"), 443));
    assert!(!c6[0].matches(6, 1, a6("2001:db8:0:1::abcd"), 443));
    // a /0 matches every address
    let all = compile(&[rule("tcp 0.0.0.0/0 22 mark 9")], false, bits4, |_| None);
    assert!(all[0].matches(6, any, ip4("1.2.3.4"), 22));
}

#[test]
fn rules_read_from_words_and_garbage_is_refused() {
    let r: MarkRule = "tcp 192.0.2.10 80-443 from 198.51.100.0/24 mark 1"
        .parse()
        .unwrap();
    assert_eq!(
        r.to_string(),
        "tcp 192.0.2.10/32 80-443 from 198.51.100.0/24 mark 1"
    );
    assert_eq!(r.to_string().parse::<MarkRule>().unwrap(), r);
    for (bad, why) in [
        ("", "PROTO DST PORTS"),
        ("tcp", "PROTO DST PORTS"),
        ("icmp 192.0.2.1 80 mark 1", "tcp or udp"),
        ("tcp 192.0.2.1 http mark 1", "port \"http\""),
        ("tcp 192.0.2.1 80-x mark 1", "port \"x\""),
        ("tcp 192.0.2.1 70000 mark 1", "port"),
        ("tcp 192.0.2.1 80 mark", "PROTO DST PORTS"),
        ("tcp 192.0.2.1 80 mark one", "mark \"one\""),
        ("tcp 192.0.2.1 80 mark 0", "mark 0"),
        ("tcp 192.0.2.1 80 mark 1 extra", "PROTO DST PORTS"),
        ("tcp 192.0.2.1/40 80 mark 1", "prefix length"),
        ("tcp 192.0.2.1 443-80 mark 1", "backwards"),
        ("tcp nowhere 80 mark 1", "not an address"),
        ("tcp 192.0.2.1 80 from x mark 1", "not an address"),
    ] {
        let e = bad.parse::<MarkRule>().unwrap_err();
        assert!(e.contains(why), "{bad:?}: {e}");
    }
}
