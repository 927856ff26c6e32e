use super::*;

fn rule(src: &str, pool: &[&str]) -> SnatRule {
    SnatRule {
        source: src.parse().unwrap(),
        pool: pool.iter().map(|a| a.parse().unwrap()).collect(),
        max_conns: 0,
        port_lo: 1024,
        port_hi: 65535,
    }
}

#[test]
fn rules_match_and_overlap() {
    let a = rule("10.1.0.0/24", &["203.0.113.10"]);
    assert!(a.matches("10.1.0.77".parse().unwrap()));
    assert!(!a.matches("10.1.1.1".parse().unwrap()));
    assert!(a.overlaps(&rule("10.0.0.0/8", &["203.0.113.11"])));
    assert!(!a.overlaps(&rule("10.1.1.0/24", &["203.0.113.11"])));
    assert!(check_rules(&[a.clone(), rule("10.1.1.0/24", &["203.0.113.10"])]).is_ok());
    let c = compile4(std::slice::from_ref(&a));
    assert!(c[0].matches(u32::from(std::net::Ipv4Addr::new(10, 1, 0, 200))));
    assert!(!c[0].matches(u32::from(std::net::Ipv4Addr::new(10, 1, 2, 200))));
    assert_eq!(a.to_string(), "10.1.0.0/24 -> 203.0.113.10");
}

#[test]
fn bad_rules_say_why() {
    let e = rule("10.1.0.1/24", &["203.0.113.10"]).check().unwrap_err();
    assert!(e.contains("host bits"), "{e}");
    let e = rule("10.1.0.0/24", &["203.0.113.10", "203.0.113.10"])
        .check()
        .unwrap_err();
    assert!(e.contains("twice"), "{e}");
    let e = rule("10.1.0.0/24", &["0.0.0.0"]).check().unwrap_err();
    assert!(e.contains("unicast"), "{e}");
    let many: Vec<SnatRule> = (0..=MAX_SNAT_RULES)
        .map(|i| rule(&format!("10.{i}.0.0/16"), &["203.0.113.10"]))
        .collect();
    assert!(check_rules(&many).unwrap_err().contains("at most"));
}

#[test]
fn rule_of_names_snat_records_only() {
    assert_eq!(rule_of(SNAT_SVC, SNAT_DEST_BASE + 3), Some(3));
    assert_eq!(rule_of(SNAT_SVC, 3), None);
    assert_eq!(rule_of(0, SNAT_DEST_BASE), None);
    assert_eq!(
        rule_of(SNAT_SVC, SNAT_DEST_BASE + MAX_SNAT_RULES as u32),
        None
    );
}
