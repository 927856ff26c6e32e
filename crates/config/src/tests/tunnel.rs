//! `tun_type`, `tun_port` and `tun_csum` on a real server.

use super::{err, ISSUE_EXAMPLE};
use crate::Config;
use dirigo_core::lb::spec::{TunCsum, TunType};

fn with_servers(servers: &str) -> String {
    format!(
        "{ISSUE_EXAMPLE}\n[[service]]\nprotocol = \"tcp\"\naddress = \"10.0.0.100:80\"\n{servers}"
    )
}

#[test]
fn gue_and_gre_servers_are_read() {
    let t = with_servers(
        r#"
[[service.real_server]]
address = "172.16.0.11"
method = "tun"
tun_type = "gue"
tun_port = 6080
tun_csum = "csum"

[[service.real_server]]
address = "172.16.0.12"
method = "tun"
tun_type = "gre"

[[service.real_server]]
address = "172.16.0.13"
method = "tun"
"#,
    );
    let c = Config::parse(&t, "t").unwrap();
    let d = &c.services[0].dests;
    assert_eq!(
        (d[0].tun.tun_type, d[0].tun.tun_port, d[0].tun.tun_csum),
        (TunType::Gue, 6080, TunCsum::Csum)
    );
    assert_eq!(
        (d[1].tun.tun_type, d[1].tun.tun_csum),
        (TunType::Gre, TunCsum::None)
    );
    assert!(d[2].tun.is_default());
}

#[test]
fn misfits_are_refused_in_one_line() {
    for (server, words) in [
        (
            "method = \"dr\"\ntun_type = \"gre\"",
            "are for a TUN (-i) real server only",
        ),
        (
            "method = \"tun\"\ntun_type = \"gue\"",
            "needs its UDP destination port",
        ),
        (
            "method = \"tun\"\ntun_type = \"gre\"\ntun_port = 1",
            "only with tun_type gue",
        ),
        (
            "method = \"tun\"\ntun_csum = \"csum\"",
            "IPIP has no checksum",
        ),
    ] {
        let t = with_servers(&format!(
            "[[service.real_server]]\naddress = \"172.16.0.11\"\n{server}\n"
        ));
        let e = err(&t);
        assert!(e.contains(words), "{server}: {e}");
        assert!(e.contains("real server 172.16.0.11"), "{e}");
    }
    let t = with_servers(
        "[[service.real_server]]\naddress = \"172.16.0.11\"\nmethod = \"tun\"\ntun_type = \"vxlan\"\n",
    );
    assert!(err(&t).contains("unknown variant `vxlan`"), "{}", err(&t));
}
