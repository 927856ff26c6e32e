//! TUN's tunnel options (`lvs_method TUN type gue port N csum`, keepalived
//! 2.0.11+ with Linux 5.3/5.4) and `ops`, carried over and read back by
//! dirigo's own config parser; what dirigo cannot take is a warning, what
//! keepalived refuses is an error.

use super::*;
use dirigo_core::lb::spec::Method;
use dirigo_core::lb::tunnel::{TunCsum, TunType, Tunnel};

/// A virtual server's TUN with GUE handed down to its servers, one server
/// with its own GRE, one back to plain IPIP, one NAT.
const TUNNELS: &str = "\
virtual_server 192.0.2.10 80 {
    lb_algo rr
    lb_kind TUN type gue port 6080 csum
    protocol TCP
    real_server 172.16.0.31 80 {
        weight 2
    }
    real_server 172.16.0.32 80 {
        lvs_method TUN type gre csum
    }
    real_server 172.16.0.33 80 {
        lvs_method TUN
    }
    real_server 172.16.0.34 80 {
        lvs_method TUN type gue port 7000 remcsum
    }
    real_server 172.16.0.35 80 {
        lvs_method TUN type gre nocsum
    }
    real_server 172.16.0.36 80 {
        lvs_method TUN type ipip
    }
}
";

fn tun(kind: TunType, port: u16, csum: TunCsum) -> Tunnel {
    Tunnel {
        tun_type: kind,
        tun_port: port,
        tun_csum: csum,
    }
}

#[test]
fn tunnel_types_carry_over_from_the_virtual_server_and_the_real_server() {
    let (toml, w) = convert_text(TUNNELS).unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert!(
        toml.contains("tun_type = \"gue\"\ntun_port = 6080\ntun_csum = \"csum\"\n"),
        "{toml}"
    );
    let c = dirigo(&toml);
    let d: Vec<(Method, Tunnel, u32)> = c.services[0]
        .dests
        .iter()
        .map(|d| (d.method, d.tun, d.weight))
        .collect();
    assert_eq!(
        d,
        [
            (Method::Tun, tun(TunType::Gue, 6080, TunCsum::Csum), 2),
            (Method::Tun, tun(TunType::Gre, 0, TunCsum::Csum), 1),
            (Method::Tun, Tunnel::IPIP, 1),
            (Method::Tun, tun(TunType::Gue, 7000, TunCsum::Remcsum), 1),
            (Method::Tun, tun(TunType::Gre, 0, TunCsum::None), 1),
            (Method::Tun, Tunnel::IPIP, 1),
        ]
    );
}

#[test]
fn tunnel_options_on_nat_or_dr_are_skipped_with_a_warning() {
    let (toml, w) = convert_text(
        "virtual_server 192.0.2.10 80 {\n lb_kind DR type gre\n real_server 172.16.0.1 80\n real_server 172.16.0.2 80 { lvs_method TUN type gre }\n}\n",
    )
    .unwrap();
    assert_eq!(
        w,
        ["k.conf:2: warning: lb_kind options 'type gre' skipped: tunnel options are for TUN"]
    );
    let c = dirigo(&toml);
    let d: Vec<(Method, TunType)> = c.services[0]
        .dests
        .iter()
        .map(|d| (d.method, d.tun.tun_type))
        .collect();
    assert_eq!(
        d,
        [(Method::Dr, TunType::Ipip), (Method::Tun, TunType::Gre)]
    );
}

#[test]
fn what_keepalived_refuses_in_tunnel_options_is_an_error() {
    let vs = |m: &str| {
        format!("virtual_server 192.0.2.10 80 {{\n lb_kind {m}\n real_server 172.16.0.1 80\n}}\n")
    };
    for (m, want) in [
        ("TUN type", "lb_kind: 'type' needs a value"),
        (
            "TUN type vxlan",
            "lb_kind: tunnel type 'vxlan' is not ipip, gue or gre",
        ),
        (
            "TUN type gue",
            "lb_kind: a gue tunnel needs a port, and only a gue tunnel takes one",
        ),
        (
            "TUN type gre port 6080",
            "lb_kind: a gue tunnel needs a port, and only a gue tunnel takes one",
        ),
        (
            "TUN type gue port 0",
            "lb_kind: gue tunnel port '0' is not 1..=65535",
        ),
        (
            "TUN type gue port 70000",
            "lb_kind: gue tunnel port '70000' is not 1..=65535",
        ),
        (
            "TUN csum",
            "lb_kind: an ipip tunnel takes no checksum option",
        ),
        (
            "TUN type gre remcsum",
            "lb_kind: a gre tunnel takes no remcsum (remote checksum offload is GUE's)",
        ),
        (
            "TUN type gre fast",
            "lb_kind: tunnel option 'fast' is not type, port, nocsum, csum or remcsum",
        ),
    ] {
        assert_eq!(
            convert_err(&vs(m)),
            format!("k.conf:2: error: {want}"),
            "{m}"
        );
    }
}

#[test]
fn ops_carries_over_where_dirigo_takes_it() {
    let (toml, w) = convert_text(
        "virtual_server 192.0.2.53 53 {\n protocol UDP\n lb_kind DR\n ops\n real_server 172.16.0.1 53\n real_server 172.16.0.2 53 { lvs_method TUN type gue port 6080 }\n}\n",
    )
    .unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert!(toml.contains("ops = true\n"), "{toml}");
    let c = dirigo(&toml);
    assert!(c.services[0].spec.ops);
}

#[test]
fn ops_where_dirigo_refuses_it_is_dropped_with_the_reason() {
    for (body, why) in [
        (
            " protocol TCP\n lb_kind DR\n",
            "one-packet scheduling is for UDP services (IPVS ignores it for TCP)",
        ),
        (
            " protocol UDP\n lb_kind DR\n persistence_timeout 60\n",
            "dirigo's one-packet scheduling keeps no state, and persistence is state",
        ),
        (
            " protocol UDP\n lb_kind NAT\n",
            "dirigo's one-packet scheduling needs DR or TUN real servers: a NAT reply needs a connection entry",
        ),
    ] {
        let text = format!(
            "virtual_server 192.0.2.53 53 {{\n{body} ops\n real_server 172.16.0.1 53\n}}\n"
        );
        let (toml, w) = convert_text(&text).unwrap();
        let line = 2 + body.lines().count();
        assert_eq!(w, [format!("k.conf:{line}: warning: ops skipped: {why}")], "{body}");
        assert!(!toml.contains("ops"), "{toml}");
        assert!(!dirigo(&toml).services[0].spec.ops);
    }
}
