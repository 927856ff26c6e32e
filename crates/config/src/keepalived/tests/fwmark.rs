//! `virtual_server fwmark N`: converted to an fwmark service, with a
//! warning and a comment saying that the `[[mark]]` rules keepalived's
//! iptables set are for the operator to add.

use super::*;
use dirigo_core::lb::sched::SchedKind;
use dirigo_core::lb::spec::{Method, ServiceKey};

const FWMARK: &str = r#"
virtual_server fwmark 7 {
    delay_loop 10
    lb_algo rr
    lb_kind DR
    persistence_timeout 600
    protocol TCP

    real_server 172.16.0.21 80 {
        weight 2
        TCP_CHECK {
            connect_port 80
            connect_timeout 2
        }
    }
    real_server 172.16.0.22 443 {
        TCP_CHECK {
            connect_port 80
            connect_timeout 2
        }
    }
}

virtual_server 10.0.0.1 80 {
    lb_kind NAT
    real_server 172.16.0.31 8080
}
"#;

#[test]
fn an_fwmark_virtual_server_becomes_an_fwmark_service() {
    let (toml, w) = convert_text(FWMARK).unwrap();
    assert_eq!(w.len(), 1, "{w:#?}");
    assert!(
        w[0].starts_with("k.conf:2: warning: virtual_server fwmark 7:"),
        "{}",
        w[0]
    );
    assert!(
        w[0].contains("add [[mark]] rules that give mark 7"),
        "{}",
        w[0]
    );
    assert!(toml.contains("[[service]]\nfwmark = 7\n"), "{toml}");
    assert!(
        toml.contains("# [[mark]]\n# protocol = \"tcp\"\n"),
        "{toml}"
    );
    let c = dirigo(&toml);
    assert_eq!(c.services.len(), 2);
    let s = &c.services[0];
    assert_eq!(s.spec.key, ServiceKey::fwmark(7, false));
    assert_eq!(s.spec.sched, SchedKind::Rr);
    assert_eq!(s.spec.persistent, Some(600));
    let d: Vec<_> = s
        .dests
        .iter()
        .map(|d| (d.key.addr.to_string(), d.key.port, d.method))
        .collect();
    // DR keeps the client's port: the real servers have none of their own
    assert_eq!(
        d,
        [
            ("172.16.0.21".to_string(), 0, Method::Dr),
            ("172.16.0.22".to_string(), 0, Method::Dr)
        ]
    );
    assert_eq!(s.dests[0].weight, 2);
    assert!(s.health.check.is_some());
    // the ordinary service beside it is as before
    assert_eq!(c.services[1].spec.key.port, 80);
    // no mark rules: the operator adds them
    assert!(c.marks.is_empty());
}

#[test]
fn bad_fwmarks_are_errors_and_an_undefined_group_is_skipped() {
    let e = convert_err("virtual_server fwmark 0 {\n real_server 172.16.0.1 80\n}\n");
    assert!(e.contains("fwmark '0' is not a mark"), "{e}");
    let e = convert_err("virtual_server fwmark x {\n real_server 172.16.0.1 80\n}\n");
    assert!(e.contains("fwmark 'x' is not a mark"), "{e}");
    let e = convert_err("virtual_server fwmark {\n real_server 172.16.0.1 80\n}\n");
    assert!(e.contains("a mark after fwmark"), "{e}");
    let (_, w) = convert_text("virtual_server group G {\n real_server 172.16.0.1 80\n}\n").unwrap();
    assert!(w[0].contains("no virtual_server_group G"), "{w:?}");
}
