//! `--tun-type`, `--tun-port`, `--tun-*csum` and `-L --tun-info`, with
//! ipvsadm 1.31's words and layouts.

use super::{dest, svc, tkey};
use crate::adm::args::parse;
use crate::adm::*;
use crate::proto::BatchCmd;
use crate::view::{DestInfo, Rate, ServiceInfo, ServiceList, Stats};
use dirigo_core::lb::sched::SchedKind;
use dirigo_core::lb::spec::{DestSpec, Method, TunCsum, TunType, Tunnel};

fn p(s: &str) -> Result<Command, AdmError> {
    let v: Vec<String> = std::iter::once("ipvsadm".to_string())
        .chain(s.split_whitespace().map(String::from))
        .collect();
    parse(&v)
}

fn tunnel_of(s: &str) -> Tunnel {
    match p(s) {
        Ok(Command::Mutate(BatchCmd::AddDest { dest, .. })) => dest.tun,
        other => panic!("{s}: {other:?}"),
    }
}

fn err(s: &str) -> String {
    p(s).unwrap_err().msg
}

const A: &str = "-a -t 10.0.0.100:80 -r 172.16.0.11";

#[test]
fn options_give_the_tunnel() {
    assert_eq!(tunnel_of(&format!("{A} -i")), Tunnel::IPIP);
    assert_eq!(tunnel_of(&format!("{A} -i --tun-type ipip")), Tunnel::IPIP);
    assert_eq!(
        tunnel_of(&format!("{A} -i --tun-type gue --tun-port 6080 --tun-csum")),
        Tunnel {
            tun_type: TunType::Gue,
            tun_port: 6080,
            tun_csum: TunCsum::Csum,
        }
    );
    assert_eq!(
        tunnel_of(&format!("{A} -i --tun-type=gre --tun-remcsum")),
        Tunnel {
            tun_type: TunType::Gre,
            tun_port: 0,
            tun_csum: TunCsum::Remcsum,
        }
    );
}

#[test]
fn refusals_use_ipvsadm_words() {
    assert_eq!(
        err(&format!("{A} -g --tun-type gre")),
        "Tunnel options conflict with forward method"
    );
    assert_eq!(
        err(&format!("{A} -i --tun-type gue")),
        "You need to supply the 'tun-port' option for the 'gue' tunnel type"
    );
    assert_eq!(
        err(&format!("{A} -i --tun-type gre --tun-port 1")),
        "Illegal 'tun-port' option with the 'gre' tunnel type"
    );
    assert_eq!(
        err(&format!("{A} -i --tun-csum")),
        "Illegal 'tun-csum' option with the 'ipip' tunnel type"
    );
    assert_eq!(
        err(&format!(
            "{A} -i --tun-type gue --tun-port 1 --tun-csum --tun-nocsum"
        )),
        "The option 'tun-nocsum' conflicts with the 'tun-csum' option"
    );
    assert_eq!(
        err(&format!("{A} -i --tun-type vxlan")),
        "illegal tunnel type specified"
    );
    assert_eq!(
        err(&format!("{A} -i --tun-type gue --tun-port 0")),
        "illegal tunnel port specified"
    );
    assert!(err("-L --tun-type gue").contains("Illegal 'tun-type' option"));
}

fn list() -> ServiceList {
    let k = tkey([10, 0, 0, 100], 80);
    let d = |spec: DestSpec| DestInfo {
        spec,
        active: 1,
        inactive: 2,
        persist: 0,
        stats: Stats::default(),
        rate: Rate::default(),
    };
    let mut gue = dest([172, 16, 0, 11], 80, Method::Tun, 1);
    gue.tun = Tunnel {
        tun_type: TunType::Gue,
        tun_port: 6080,
        tun_csum: TunCsum::Csum,
    };
    let mut gre = dest([172, 16, 0, 12], 80, Method::Tun, 2);
    gre.tun.tun_type = TunType::Gre;
    ServiceList {
        conn_tab_size: 4096,
        services: vec![ServiceInfo {
            spec: svc(k, SchedKind::Rr, None),
            stats: Stats::default(),
            rate: Rate::default(),
            dests: vec![
                d(gue),
                d(gre),
                d(dest([172, 16, 0, 13], 80, Method::Tun, 3)),
                d(dest([172, 16, 0, 14], 80, Method::Dr, 4)),
            ],
        }],
    }
}

#[test]
fn list_tun_info_matches_ipvsadm() {
    let o = ListCmd {
        numeric: true,
        tun_info: true,
        ..Default::default()
    };
    let want = concat!(
        "IP Virtual Server version 1.2.1 (size=4096)\n",
        "Prot LocalAddress:Port Scheduler Flags\n",
        "  -> RemoteAddress:Port           Forward TunnelInfo    Weight ActiveConn InActConn\n",
        "TCP  10.0.0.100:80 rr\n",
        "  -> 172.16.0.11:80               Tunnel  gue:6080:+c   1      1          2         \n",
        "  -> 172.16.0.12:80               Tunnel  gre:-c        2      1          2         \n",
        "  -> 172.16.0.13:80               Tunnel  ipip          3      1          2         \n",
        "  -> 172.16.0.14:80               Route   n/a           4      1          2         \n",
    );
    assert_eq!(format::list(&list(), &o), want);
    assert!(matches!(
        p("-L -n --tun-info"),
        Ok(Command::List(ListCmd { tun_info: true, .. }))
    ));
}

#[test]
fn save_and_restore_keep_the_tunnel() {
    let l = list();
    let text = format::save(&l);
    let want = concat!(
        "-A -t 10.0.0.100:80 -s rr\n",
        "-a -t 10.0.0.100:80 -r 172.16.0.11:80 -i -w 1 --tun-type gue --tun-port 6080 --tun-csum\n",
        "-a -t 10.0.0.100:80 -r 172.16.0.12:80 -i -w 2 --tun-type gre --tun-nocsum\n",
        "-a -t 10.0.0.100:80 -r 172.16.0.13:80 -i -w 3 --tun-type ipip\n",
        "-a -t 10.0.0.100:80 -r 172.16.0.14:80 -g -w 4\n",
    );
    assert_eq!(text, want);
    let cmds = parse_restore(&text).unwrap();
    let dests: Vec<DestSpec> = cmds
        .into_iter()
        .filter_map(|c| match c {
            BatchCmd::AddDest { dest, .. } => Some(dest),
            _ => None,
        })
        .collect();
    let orig: Vec<DestSpec> = l.services[0].dests.iter().map(|d| d.spec.clone()).collect();
    assert_eq!(dests, orig);
}
