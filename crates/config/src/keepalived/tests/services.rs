//! The conversion: what the services become (read back by dirigo's own
//! config parser), keepalived's defaults, the warnings and the errors.

use super::*;
use crate::check::{CheckSpec, OnFailure, Probe};
use dirigo_core::lb::sched::SchedKind;
use dirigo_core::lb::spec::{DestKey, Method, Proto};
use dirigo_core::lb::testutil::V4 as _;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

/// A keepalived.conf as they come: global_defs, a VRRP instance, a DR
/// service with TCP checks and a NAT one with HTTP checks, persistence and
/// a sorry server.
const REALISTIC: &str = r#"! Configuration File for keepalived

global_defs {
   notification_email {
     admin@example.com
   }
   router_id LVS_DEVEL
}

vrrp_instance VI_1 {
    state MASTER
    interface eth0
    virtual_router_id 51
    priority 100
    virtual_ipaddress {
        10.10.10.10
    }
}

virtual_server 10.10.10.10 80 {
    delay_loop 6
    lb_algo wrr
    lb_kind DR
    protocol TCP
    quorum 2

    real_server 172.16.0.11 80 {
        weight 3
        TCP_CHECK {
            connect_timeout 3
            retry 3
            delay_before_retry 2
            connect_port 8081
        }
    }
    real_server 172.16.0.12 80 {
        weight 1
        TCP_CHECK {
            connect_timeout 3
            retry 3
            connect_port 8081
            delay_before_retry 2
        }
    }
}

virtual_server 10.10.10.10 443 {
    delay_loop 10
    lb_algo rr
    lb_kind NAT
    persistence_timeout 300
    protocol TCP
    sorry_server 172.16.0.99 8443

    real_server 172.16.0.21 8443 {
        weight 2
        inhibit_on_failure
        HTTP_GET {
            url {
                path /health
                status_code 200
            }
            connect_timeout 2
            nb_get_retry 2
        }
    }
    real_server 172.16.0.22 8443 {
        weight 2
        HTTP_GET {
            url {
                path /health
                status_code 200
            }
            connect_timeout 2
            nb_get_retry 2
        }
    }
}
"#;

fn spec(c: &Config, i: usize, dest: (&str, u16)) -> CheckSpec {
    let s = &c.services[i];
    let key = DestKey {
        addr: dest.0.parse().unwrap(),
        port: dest.1,
    };
    s.health
        .checks
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, c)| c.clone())
        .unwrap_or_else(|| panic!("no check for {dest:?}"))
}

#[test]
fn a_realistic_config_converts_to_what_dirigo_reads() {
    let (toml, warnings) = convert_text(REALISTIC).unwrap();
    assert_eq!(
        warnings,
        [
            "k.conf:3: warning: global_defs skipped: keepalived's global settings have no dirigo equivalent",
            "k.conf:10: warning: vrrp_instance VI_1 skipped: dirigo does not run VRRP (keepalived can go on doing it: VRRP reaches the kernel through dirigo's exception path)",
        ]
    );
    assert!(toml.starts_with("# dirigo services converted from k.conf"));
    let c = dirigo(&toml);
    assert_eq!(c.services.len(), 2);

    // DR, wrr, one TCP check for both servers: [service.check]
    let dr = &c.services[0];
    assert_eq!(dr.spec.key.proto, Proto::Tcp);
    assert_eq!(dr.spec.key.vip, Ipv4Addr::new(10, 10, 10, 10));
    assert_eq!(dr.spec.key.port, 80);
    assert_eq!(dr.spec.sched, SchedKind::Wrr);
    assert_eq!(dr.spec.persistent, None);
    let dests: Vec<(SocketAddrV4, Method, u32)> = dr
        .dests
        .iter()
        .map(|d| {
            (
                SocketAddrV4::new(d.key.addr.v4(), d.key.port),
                d.method,
                d.weight,
            )
        })
        .collect();
    assert_eq!(
        dests,
        [
            ("172.16.0.11:80".parse().unwrap(), Method::Dr, 3),
            ("172.16.0.12:80".parse().unwrap(), Method::Dr, 1),
        ]
    );
    assert!(toml.contains("[service.check]\ntype = \"tcp\"\n"), "{toml}");
    let tcp = dr.health.check.clone().expect("the service's check");
    assert_eq!(tcp.probe, Probe::Tcp);
    assert_eq!(tcp.interval, Duration::from_secs(6));
    assert_eq!(tcp.timeout, Duration::from_secs(3));
    // keepalived: a failure, then `retry` 3 failed retries, each after
    // delay_before_retry -> down
    assert_eq!((tcp.rise, tcp.fall), (1, 4));
    assert_eq!(tcp.retry_delay, Some(Duration::from_secs(2)));
    assert_eq!(tcp.port, Some(8081));
    assert_eq!(tcp.on_failure, OnFailure::Remove);
    assert_eq!(spec(&c, 0, ("172.16.0.12", 80)), tcp);
    assert_eq!(dr.health.quorum, Some(2));
    assert_eq!(dr.health.sorry, None);

    // NAT, rr, persistent, a sorry server; the servers' checks differ in
    // inhibit_on_failure: each its own
    let nat = &c.services[1];
    assert_eq!(nat.spec.key.port, 443);
    assert_eq!(nat.spec.sched, SchedKind::Rr);
    assert_eq!(nat.spec.persistent, Some(300));
    assert!(nat
        .dests
        .iter()
        .all(|d| d.method == Method::Nat && d.weight == 2));
    assert_eq!(nat.dests[0].key.port, 8443);
    assert_eq!(nat.health.check, None);
    assert_eq!(nat.health.sorry, Some("172.16.0.99:8443".parse().unwrap()));
    // keepalived's quorum is 1: the sorry server takes over when all are down
    assert_eq!(nat.health.quorum, Some(1));
    let first = spec(&c, 1, ("172.16.0.21", 8443));
    let second = spec(&c, 1, ("172.16.0.22", 8443));
    for h in [&first, &second] {
        assert_eq!(
            h.probe,
            Probe::Http {
                path: "/health".into(),
                host: None,
                status: vec![(200, 200)],
                expect: None,
                tls: false
            }
        );
        assert_eq!(h.interval, Duration::from_secs(10));
        assert_eq!(h.timeout, Duration::from_secs(2));
        assert_eq!((h.rise, h.fall), (1, 3));
        // keepalived's delay_before_retry of HTTP_GET
        assert_eq!(h.retry_delay, Some(Duration::from_secs(3)));
        assert_eq!(h.port, None);
    }
    assert_eq!(first.on_failure, OnFailure::Inhibit);
    assert_eq!(second.on_failure, OnFailure::Remove);
    assert!(toml.contains("check = { type = \"http\", interval = 10, timeout = 2, rise = 1, fall = 3, on_failure = \"inhibit\", retry_delay = 3, path = \"/health\", status = [\"200\"] }"), "{toml}");
}

#[test]
fn keepalived_defaults_are_kept() {
    let (toml, w) = convert_text(
        "virtual_server 10.0.0.1 80 {\n\
           lb_kind DR\n\
           real_server 172.16.0.1 80 {\n\
             TCP_CHECK {\n}\n\
           }\n\
           real_server 172.16.0.2 {\n\
             HTTP_GET { url { path / } }\n\
           }\n\
           real_server 172.16.0.3 80 {\n\
             MISC_CHECK {\n misc_path \"/bin/true --flag\"\n misc_timeout 4\n }\n\
           }\n\
         }\n",
    )
    .unwrap();
    assert!(w.is_empty(), "{w:?}");
    let c = dirigo(&toml);
    let s = &c.services[0];
    assert_eq!(s.spec.sched, SchedKind::Wlc);
    assert_eq!(s.spec.persistent, None);
    assert_eq!(s.health.quorum, None);
    // a real server without a port has the service's; weight 1
    assert_eq!(s.dests[1].key.port, 80);
    assert!(s.dests.iter().all(|d| d.weight == 1));
    let tcp = spec(&c, 0, ("172.16.0.1", 80));
    assert_eq!(tcp.interval, Duration::from_secs(60));
    assert_eq!(tcp.timeout, Duration::from_secs(5));
    assert_eq!((tcp.rise, tcp.fall), (1, 2));
    assert_eq!(tcp.retry_delay, Some(Duration::from_secs(1)));
    assert_eq!(tcp.on_failure, OnFailure::Remove);
    let http = spec(&c, 0, ("172.16.0.2", 80));
    match &http.probe {
        Probe::Http { path, status, .. } => {
            assert_eq!(path, "/");
            assert_eq!(status, &vec![(200, 299)]);
        }
        p => panic!("{p:?}"),
    }
    assert!(toml.contains("status = [\"200-299\"]"), "{toml}");
    // MISC_CHECK: retry 0 (down at the first failure), the command split
    let misc = spec(&c, 0, ("172.16.0.3", 80));
    assert_eq!(
        misc.probe,
        Probe::Exec {
            command: vec!["/bin/true".into(), "--flag".into()]
        }
    );
    assert_eq!((misc.fall, misc.timeout), (1, Duration::from_secs(4)));
    assert_eq!(misc.retry_delay, None, "no retries, no delay");
}

#[test]
fn no_lb_kind_is_keepalived_nat_with_a_warning() {
    let (toml, w) = convert_text(
        "virtual_server 10.0.0.1 80 {\n real_server 172.16.0.1 80\n real_server 172.16.0.2 80 { lvs_method TUN }\n real_server 172.16.0.3 8080\n}\n",
    )
    .unwrap();
    assert_eq!(
        w,
        ["k.conf:2: warning: no lb_kind (lvs_method): keepalived's default NAT"]
    );
    let c = dirigo(&toml);
    let m: Vec<(Method, u16)> = c.services[0]
        .dests
        .iter()
        .map(|d| (d.method, d.key.port))
        .collect();
    assert_eq!(
        m,
        [(Method::Nat, 80), (Method::Tun, 80), (Method::Nat, 8080)]
    );
}

#[test]
fn the_virtual_servers_settings_are_its_real_servers_defaults() {
    let (toml, w) = convert_text(
        "virtual_server 10.0.0.1 80 {\n\
           lb_kind DR\n\
           delay_loop 4\n\
           connect_timeout 1.5\n\
           retry 2\n\
           inhibit_on_failure\n\
           virtualhost www.example.com\n\
           weight 5\n\
           real_server 172.16.0.1 80 { HTTP_GET { url { path /a } } }\n\
           real_server 172.16.0.2 80 {\n weight 7\n delay_loop 8\n HTTP_GET { retry 0\n url { path /a } } }\n\
         }\n",
    )
    .unwrap();
    assert!(w.is_empty(), "{w:?}");
    let c = dirigo(&toml);
    let s = &c.services[0];
    assert_eq!(s.dests[0].weight, 5);
    assert_eq!(s.dests[1].weight, 7);
    let a = spec(&c, 0, ("172.16.0.1", 80));
    assert_eq!(a.interval, Duration::from_secs(4));
    assert_eq!(a.timeout, Duration::from_millis(1500));
    assert_eq!(a.fall, 3);
    assert_eq!(a.on_failure, OnFailure::Inhibit);
    assert!(matches!(&a.probe, Probe::Http { host: Some(h), .. } if h == "www.example.com"));
    let b = spec(&c, 0, ("172.16.0.2", 80));
    assert_eq!(b.interval, Duration::from_secs(8));
    assert_eq!(b.fall, 1);
    assert!(toml.contains("timeout = 1.5"), "{toml}");
}

#[test]
fn a_timeout_not_shorter_than_the_interval_is_halved_with_a_warning() {
    let (toml, w) = convert_text(
        "virtual_server 10.0.0.1 80 {\n lb_kind DR\n delay_loop 3\n real_server 172.16.0.1 80 {\n  TCP_CHECK {\n   connect_timeout 5\n  }\n }\n}\n",
    )
    .unwrap();
    assert_eq!(
        w,
        ["k.conf:5: warning: TCP_CHECK: timeout 5 s is not shorter than the interval (delay_loop) 3 s, as dirigo needs: timeout 1.5 s"]
    );
    let c = dirigo(&toml);
    let h = c.services[0].health.check.clone().unwrap();
    assert_eq!(h.timeout, Duration::from_millis(1500));
    assert_eq!(h.interval, Duration::from_secs(3));
}

#[test]
fn a_misc_check_without_misc_timeout_gets_half_the_delay_loop() {
    let (toml, w) = convert_text(
        "virtual_server 10.0.0.1 80 {\n lb_kind DR\n delay_loop 10\n real_server 172.16.0.1 80 {\n  MISC_CHECK {\n   misc_path /bin/true\n   misc_dynamic\n  }\n }\n}\n",
    )
    .unwrap();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("k.conf:7: warning: misc_dynamic skipped"),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("k.conf:5: warning: MISC_CHECK: timeout 10 s"),
        "{w:?}"
    );
    let h = dirigo(&toml).services[0].health.check.clone().unwrap();
    assert_eq!(h.timeout, Duration::from_secs(5));
}

#[test]
fn one_check_per_server_and_one_url_per_check() {
    let (toml, w) = convert_text(
        "virtual_server 10.0.0.1 80 {\n\
           lb_kind DR\n\
           real_server 172.16.0.1 80 {\n\
             SSL_GET {\n\
               url { path /first\n digest 9b3a0c85a887a256d6939da88aabd8cd }\n\
               url { path /second }\n\
             }\n\
             TCP_CHECK { }\n\
           }\n\
         }\n",
    )
    .unwrap();
    assert_eq!(
        w,
        [
            "k.conf:6: warning: digest skipped: dirigo's http check tests the status (not the body's MD5)",
            "k.conf:7: warning: url skipped: dirigo's http check fetches one url (the one at k.conf:5)",
            "k.conf:9: warning: TCP_CHECK skipped: dirigo runs one check per real server (the SSL_GET at k.conf:4 is used)",
        ]
    );
    let h = dirigo(&toml).services[0].health.check.clone().unwrap();
    assert!(matches!(&h.probe, Probe::Http { path, tls: true, .. } if path == "/first"));
}

#[test]
fn dr_keeps_the_service_port_and_the_check_the_servers() {
    let (toml, w) = convert_text(
        "virtual_server 10.0.0.1 80 {\n lb_kind DR\n real_server 172.16.0.1 8080 {\n  TCP_CHECK { }\n }\n}\n",
    )
    .unwrap();
    assert_eq!(
        w,
        ["k.conf:3: warning: DR does not change the port: real server 172.16.0.1 port 8080 becomes 80 (a check still probes 8080)"]
    );
    let c = dirigo(&toml);
    assert_eq!(c.services[0].dests[0].key.port, 80);
    assert_eq!(
        c.services[0].health.check.as_ref().unwrap().port,
        Some(8080)
    );
}

#[test]
fn differing_checks_are_per_server_and_a_server_without_one_stays_unchecked() {
    let (toml, _) = convert_text(
        "virtual_server 10.0.0.1 80 {\n lb_kind DR\n real_server 172.16.0.1 80 { TCP_CHECK { connect_port 81 } }\n real_server 172.16.0.2 80\n}\n",
    )
    .unwrap();
    assert!(!toml.contains("[service.check]"), "{toml}");
    let c = dirigo(&toml);
    assert_eq!(c.services[0].health.check, None);
    assert_eq!(c.services[0].health.checks.len(), 1);
    assert_eq!(spec(&c, 0, ("172.16.0.1", 80)).port, Some(81));
}

#[test]
fn schedulers_flags_persistence_and_notify() {
    let (toml, w) = convert_text(
        "virtual_server 10.0.0.1 53 {\n\
           protocol UDP\n\
           lvs_sched sh\n\
           sh-port\n\
           flag-1\n\
           lvs_method DR\n\
           persistence_granularity 255.255.255.0\n\
           real_server 172.16.0.1 53 {\n\
             uthreshold 100\n\
             lthreshold 10\n\
             notify_up \"/usr/local/bin/up.sh 'a b'\"\n\
             PING_CHECK { }\n\
           }\n\
         }\n\
         virtual_server 10.0.0.1 80 {\n lb_algo lblc\n lb_kind DR\n sh-port\n real_server 172.16.0.1 80\n}\n",
    )
    .unwrap();
    assert_eq!(
        w,
        [
            "k.conf:16: warning: scheduler lblc is not dirigo's: wlc instead",
            "k.conf:18: warning: sh-port skipped: it is for the sh and mh schedulers",
        ]
    );
    let c = dirigo(&toml);
    let s = &c.services[0];
    assert_eq!(s.spec.key.proto, Proto::Udp);
    assert_eq!(s.spec.sched, SchedKind::Sh);
    assert!(s.spec.flags.port && s.spec.flags.fallback);
    // a granularity alone makes the service persistent, as in keepalived
    assert_eq!(s.spec.persistent, Some(360));
    assert_eq!(s.spec.netmask, Ipv4Addr::new(255, 255, 255, 0));
    assert_eq!((s.dests[0].upper, s.dests[0].lower), (100, 10));
    let h = s.health.check.clone().unwrap();
    assert_eq!(h.probe, Probe::Ping);
    assert_eq!(h.notify_up, ["/usr/local/bin/up.sh", "a b"]);
    assert_eq!(c.services[1].spec.sched, SchedKind::Wlc);
}

#[test]
fn what_dirigo_does_not_balance_is_one_warning_each() {
    let (toml, w) = convert_text(
        "virtual_server fwmark 1\n\
         virtual_server 10.0.0.1 80 {\n protocol SCTP\n real_server 172.16.0.1 80\n}\n\
         virtual_server 10.0.0.2 80\n\
         virtual_server 10.0.0.3 80 {\n lb_kind DR\n}\n\
         static_ipaddress {\n 10.0.0.9/24 dev eth0\n}\n\
         vrrp_script chk {\n script \"/bin/true\"\n}\n\
         bogus_keyword 1 { a { b } }\n\
         @node1 virtual_server 10.0.0.4 80 {\n}\n",
    )
    .unwrap();
    let lines: Vec<&str> = w
        .iter()
        .map(|l| l.split(": warning:").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "k.conf:1",
            "k.conf:3",
            "k.conf:6",
            "k.conf:7",
            "k.conf:10",
            "k.conf:13",
            "k.conf:16",
            "k.conf:17"
        ],
        "{w:#?}"
    );
    assert!(w[1].contains("dirigo does not balance SCTP"), "{}", w[1]);
    assert!(w[6].contains("unknown keyword 'bogus_keyword'"), "{}", w[6]);
    assert!(w[7].contains("conditional configuration"), "{}", w[7]);
    assert!(toml.contains("(no virtual_server was converted)"));
    assert!(dirigo(&toml).services.is_empty());
}

#[test]
fn checks_for_the_other_protocol_and_duplicates_are_skipped() {
    let (toml, w) = convert_text(
        "virtual_server 10.0.0.1 53 {\n protocol UDP\n lb_kind DR\n real_server 172.16.0.1 53 { TCP_CHECK { } }\n real_server 172.16.0.1 53\n}\n\
         virtual_server 10.0.0.1 53 {\n protocol UDP\n lb_kind DR\n real_server 172.16.0.2 53 { UDP_CHECK { payload 0a0b } }\n}\n",
    )
    .unwrap();
    assert_eq!(
        w,
        [
            "k.conf:4: warning: TCP_CHECK skipped: dirigo's tcp checks are for TCP services, 10.0.0.1:53 is UDP",
            "k.conf:5: warning: real server 172.16.0.1:53 is already defined at k.conf:4: skipped",
            "k.conf:10: warning: payload skipped: keepalived's hex payloads are not converted",
            "k.conf:7: warning: virtual_server 10.0.0.1 53 (UDP) is already defined at k.conf:1: skipped",
        ]
    );
    let c = dirigo(&toml);
    assert_eq!(c.services.len(), 1);
    assert_eq!(c.services[0].dests.len(), 1);
    assert!(!c.services[0].health.active());
}

#[test]
fn malformed_input_is_an_error_at_its_line() {
    let vs = |body: &str| format!("virtual_server 10.0.0.1 80 {{\n lb_kind DR\n{body}\n}}\n");
    assert_eq!(
        convert_err("virtual_server 10.0.0.300 80 {\n}\n"),
        "k.conf:1: error: virtual_server: '10.0.0.300' is not an IP address"
    );
    assert_eq!(
        convert_err(&vs(
            " real_server 172.16.0.1 80\n real_server 172.16.0.x 80"
        )),
        "k.conf:4: error: real_server: '172.16.0.x' is not an IP address"
    );
    assert_eq!(
        convert_err("# c\nvirtual_server 10.0.0.1 http {\n}\n"),
        "k.conf:2: error: virtual_server: 'http' is not a port (0..65535)"
    );
    assert_eq!(
        convert_err("virtual_server 10.0.0.1\n"),
        "k.conf:1: error: virtual_server needs a port after the address"
    );
    assert_eq!(
        convert_err(&vs(" real_server 172.16.0.1 80 {\n  weight\n }")),
        "k.conf:4: error: weight needs a weight"
    );
    assert_eq!(
        convert_err(&vs(" real_server 172.16.0.1 80 {\n  weight 70000\n }")),
        "k.conf:4: error: weight '70000' is not a weight in 0..=65535"
    );
    assert_eq!(
        convert_err(&vs(" lb_algo fastest")),
        "k.conf:3: error: lb_algo 'fastest' is not an IPVS scheduler (rr wrr lc wlc lblc lblcr dh sh mh fo ovf sed nq twos)"
    );
    assert_eq!(
        convert_err(&vs(" lb_kind FULLNAT")),
        "k.conf:3: error: lb_kind 'FULLNAT' is not NAT, DR or TUN"
    );
    assert_eq!(
        convert_err(&vs(" delay_loop soon")),
        "k.conf:3: error: delay_loop 'soon' is not a number of seconds in (0, 86400]"
    );
    assert_eq!(
        convert_err(&vs(" sorry_server 172.16.0.9 99999")),
        "k.conf:3: error: sorry_server: '99999' is not a port (0..65535)"
    );
    assert_eq!(
        convert_err(&vs(
            " real_server 172.16.0.1 80 {\n  HTTP_GET { url { path /\n status_code 200 700 } }\n }"
        )),
        "k.conf:5: error: status_code '700' is not CODE or FROM-TO in 100..599"
    );
    assert_eq!(
        convert_err(&vs(" weight 1 {\n }")),
        "k.conf:3: error: weight takes no { } block"
    );
    // the tree's errors come through the same way
    assert_eq!(
        convert_err(&vs(" real_server 172.16.0.1 80 {\n  weight 1\n")),
        "k.conf:1: error: this '{' is never closed"
    );
}

#[test]
fn strings_are_escaped_for_toml() {
    let (toml, _) = convert_text(
        r#"virtual_server 10.0.0.1 80 {
            lb_kind DR
            real_server 172.16.0.1 80 {
                HTTP_GET { url { path "/x y\c\#" } }
            }
        }"#,
    )
    .unwrap();
    assert!(toml.contains(r#"path = "/x y\\c\\#""#), "{toml}");
    let h = dirigo(&toml).services[0].health.check.clone().unwrap();
    assert!(
        matches!(&h.probe, Probe::Http { path, .. } if path == r"/x y\c\#"),
        "{h:?}"
    );
}
