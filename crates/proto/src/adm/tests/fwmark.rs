//! fwmark services (`-f MARK [-6]`): parsing, ipvsadm's `FWM` listing
//! lines, `-S` rules and `-R` reading them back.

use super::{dest, svc};
use crate::adm::args::parse;
use crate::adm::*;
use crate::proto::BatchCmd;
use crate::view::{DestInfo, Rate, ServiceInfo, ServiceList, Stats};
use dirigo_core::lb::sched::SchedKind;
use dirigo_core::lb::spec::{DestSpec, Method, ServiceKey};

fn p(s: &str) -> Result<Command, AdmError> {
    let argv: Vec<String> = std::iter::once("ipvsadm".to_string())
        .chain(s.split_whitespace().map(String::from))
        .collect();
    parse(&argv)
}

fn m(s: &str) -> BatchCmd {
    match p(s) {
        Ok(Command::Mutate(c)) => c,
        other => panic!("{s}: {other:?}"),
    }
}

fn err(s: &str) -> String {
    p(s).unwrap_err().msg
}

#[test]
fn fwmark_commands_parse() {
    let k = ServiceKey::fwmark(1, false);
    match m("-A -f 1 -s rr -p 600") {
        BatchCmd::AddService { service } => {
            assert_eq!(service.key, k);
            assert_eq!(service.persistent, Some(600));
        }
        other => panic!("{other:?}"),
    }
    // no persistence needed: an fwmark service has no port
    assert!(matches!(m("-A -f 7"), BatchCmd::AddService { .. }));
    assert!(
        matches!(m("-E --fwmark-service 1 -s wlc"), BatchCmd::EditService { service } if service.key == k)
    );
    assert_eq!(m("-D -f 1"), BatchCmd::DelService { key: k });
    match m("-a -f 1 -r 10.0.0.2 -g -w 3") {
        BatchCmd::AddDest { service, dest } => {
            assert_eq!(service, k);
            assert_eq!((dest.key.port, dest.weight), (0, 3));
        }
        other => panic!("{other:?}"),
    }
    match m("-e -f 1 -r 10.0.0.2:8080 -m") {
        BatchCmd::EditDest { dest, .. } => assert_eq!(dest.key.port, 8080),
        other => panic!("{other:?}"),
    }
    assert!(matches!(m("-d -f 1 -r 10.0.0.2"), BatchCmd::DelDest { .. }));
    // IPv6: -6 after -f; -M is then a prefix length
    let k6 = ServiceKey::fwmark(4294967295, true);
    match m("-A -f 4294967295 -6 -s rr -p 60 -M 64") {
        BatchCmd::AddService { service } => {
            assert_eq!(service.key, k6);
            assert_eq!(service.prefix6, 64);
        }
        other => panic!("{other:?}"),
    }
    match m("-a -f 4294967295 -6 -r [2001:db8::2] -g") {
        BatchCmd::AddDest { service, .. } => assert_eq!(service, k6),
        other => panic!("{other:?}"),
    }
    assert!(matches!(p("-L -n -f 1"), Ok(Command::List(l)) if l.service == Some(k)));
}

#[test]
fn bad_fwmark_commands_are_refused_in_ipvsadms_words() {
    assert_eq!(err("-A -f 0"), "illegal fwmark specified");
    assert_eq!(err("-A -f x"), "illegal fwmark specified");
    assert_eq!(err("-A -f 4294967296"), "illegal fwmark specified");
    assert_eq!(err("-A -f -1"), "illegal fwmark specified");
    assert_eq!(err("-A -6 -f 1"), "-6 used before -f");
    assert_eq!(err("-A -t 10.0.0.1:80 -6"), "-6 used before -f");
    assert!(err("-A -f 1 -t 10.0.0.1:80").contains("multiple 'service-address'"));
    assert!(err("-A -f").contains("missing argument"));
}

#[test]
fn fwmark_listed_saved_and_restored() {
    let mut s4 = svc(ServiceKey::fwmark(1, false), SchedKind::Rr, Some(300));
    s4.netmask = std::net::Ipv4Addr::new(255, 255, 255, 0);
    let mut s6 = svc(ServiceKey::fwmark(2, true), SchedKind::Wlc, None);
    s6.prefix6 = 128;
    let mut d6 = dest([0, 0, 0, 0], 0, Method::Dr, 1);
    d6.key.addr = "2001:db8::2".parse().unwrap();
    let info = |spec: DestSpec| DestInfo {
        spec,
        active: 0,
        inactive: 0,
        persist: 0,
        stats: Stats::default(),
        rate: Rate::default(),
    };
    let si = |spec, dests| ServiceInfo {
        spec,
        stats: Stats::default(),
        rate: Rate::default(),
        dests,
    };
    let list = ServiceList {
        conn_tab_size: 4096,
        services: vec![
            si(
                s4.clone(),
                vec![
                    info(dest([10, 0, 0, 2], 0, Method::Dr, 1)),
                    info(dest([10, 0, 0, 3], 8080, Method::Nat, 2)),
                ],
            ),
            si(s6.clone(), vec![info(d6)]),
        ],
    };
    let o = ListCmd {
        numeric: true,
        ..Default::default()
    };
    let want = concat!(
        "IP Virtual Server version 1.2.1 (size=4096)\n",
        "Prot LocalAddress:Port Scheduler Flags\n",
        "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n",
        "FWM  1 rr persistent 300 mask 255.255.255.0\n",
        "  -> 10.0.0.2:0                   Route   1      0          0         \n",
        "  -> 10.0.0.3:8080                Masq    2      0          0         \n",
        "FWM  2 IPv6 wlc\n",
        "  -> [2001:db8::2]:0              Route   1      0          0         \n",
    );
    assert_eq!(format::list(&list, &o), want);
    let saved = format::save(&list);
    assert_eq!(
        saved,
        concat!(
            "-A -f 1 -s rr -p 300 -M 255.255.255.0\n",
            "-a -f 1 -r 10.0.0.2:0 -g -w 1\n",
            "-a -f 1 -r 10.0.0.3:8080 -m -w 2\n",
            "-A -f 2 -6 -s wlc\n",
            "-a -f 2 -6 -r [2001:db8::2]:0 -g -w 1\n",
        )
    );
    let cmds = parse_restore(&saved).unwrap();
    let want = [
        BatchCmd::AddService { service: s4 },
        BatchCmd::AddDest {
            service: list.services[0].spec.key,
            dest: list.services[0].dests[0].spec.clone(),
        },
        BatchCmd::AddDest {
            service: list.services[0].spec.key,
            dest: list.services[0].dests[1].spec.clone(),
        },
        BatchCmd::AddService { service: s6 },
        BatchCmd::AddDest {
            service: list.services[1].spec.key,
            dest: list.services[1].dests[0].spec.clone(),
        },
    ];
    assert_eq!(cmds, want);
}
