//! Output format tests against ipvsadm's layouts, save/restore round trip.

use super::{dest, svc, tkey};
use crate::adm::*;
use crate::proto::{BatchCmd, CtlError, ErrCode};
use crate::view::{ConnInfo, DestInfo, Rate, ServiceInfo, ServiceList, Stats};
use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::spec::{DestSpec, Method, Proto, ServiceKey, Timeouts};
use std::net::{Ipv4Addr, SocketAddrV4};

fn sample() -> ServiceList {
    let k1 = tkey([10, 0, 0, 100], 80);
    let mut s1 = svc(k1, SchedKind::Wlc, Some(300));
    s1.netmask = Ipv4Addr::new(255, 255, 255, 0);
    let u = ServiceKey {
        fwmark: 0,
        proto: Proto::Udp,
        vip: std::net::IpAddr::V4(Ipv4Addr::new(10, 0, 0, 53)),
        port: 53,
    };
    let mut s2 = svc(u, SchedKind::Mh, None);
    s2.flags = SchedFlags {
        fallback: true,
        port: true,
    };
    let d = |spec: DestSpec, active, inactive| DestInfo {
        spec,
        active,
        inactive,
        persist: 2,
        stats: Stats {
            conns: 5,
            inpkts: 123_456_789,
            outpkts: 0,
            inbytes: 5_000_000_000,
            outbytes: 7,
        },
        rate: Rate {
            cps: 1,
            inpps: 20,
            outpps: 0,
            inbps: 100_000_000,
            outbps: 0,
        },
    };
    let mut tun = dest([172, 16, 0, 12], 80, Method::Tun, 3);
    tun.upper = 1000;
    ServiceList {
        conn_tab_size: 4096,
        services: vec![
            ServiceInfo {
                spec: s2,
                stats: Stats::default(),
                rate: Rate::default(),
                dests: vec![d(dest([192, 168, 1, 2], 5353, Method::Nat, 1), 0, 17)],
            },
            ServiceInfo {
                spec: s1,
                stats: Stats {
                    conns: 99_999_999,
                    inpkts: 100_000_000,
                    outpkts: 0,
                    inbytes: 123_456_789_012_345,
                    outbytes: 999_999_999_999_999,
                },
                rate: Rate {
                    cps: 10,
                    inpps: 200,
                    outpps: 0,
                    inbps: 12000,
                    outbps: 0,
                },
                dests: vec![
                    d(tun, 1, 2),
                    d(dest([172, 16, 0, 11], 80, Method::Dr, 1), 0, 0),
                ],
            },
        ],
    }
}

#[test]
fn list_format_matches_ipvsadm() {
    let o = ListCmd {
        numeric: true,
        ..Default::default()
    };
    let want = concat!(
        "IP Virtual Server version 1.2.1 (size=4096)\n",
        "Prot LocalAddress:Port Scheduler Flags\n",
        "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n",
        "TCP  10.0.0.100:80 wlc persistent 300 mask 255.255.255.0\n",
        "  -> 172.16.0.11:80               Route   1      0          0         \n",
        "  -> 172.16.0.12:80               Tunnel  3      1          2         \n",
        "UDP  10.0.0.53:53 mh (mh-fallback,mh-port)\n",
        "  -> 192.168.1.2:5353             Masq    1      0          17        \n",
    );
    assert_eq!(format::list(&sample(), &o), want);
    // A single service: no version line.
    let one = ListCmd {
        service: Some(tkey([10, 0, 0, 100], 80)),
        ..o
    };
    let mut l = sample();
    l.services.remove(0);
    let got = format::list(&l, &one);
    assert!(
        got.starts_with("Prot LocalAddress:Port Scheduler Flags\n"),
        "{got}"
    );
}

#[test]
fn stats_and_rate_formats() {
    let o = ListCmd {
        stats: true,
        ..Default::default()
    };
    let want = concat!(
        "IP Virtual Server version 1.2.1 (size=4096)\n",
        "Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes\n",
        "  -> RemoteAddress:Port\n",
        "TCP  10.0.0.100:80                99999999  100000K        0     123T     999T\n",
        "  -> 172.16.0.11:80                      5  123456K        0    5000M        7\n",
        "  -> 172.16.0.12:80                      5  123456K        0    5000M        7\n",
        "UDP  10.0.0.53:53                        0        0        0        0        0\n",
        "  -> 192.168.1.2:5353                    5  123456K        0    5000M        7\n",
    );
    assert_eq!(format::list(&sample(), &o), want);
    let o = ListCmd {
        stats: true,
        exact: true,
        ..Default::default()
    };
    let got = format::list(&sample(), &o);
    assert!(
        got.contains("TCP  10.0.0.100:80                99999999 100000000        0 123456789012345 999999999999999\n"),
        "{got}"
    );
    let o = ListCmd {
        rate: true,
        ..Default::default()
    };
    let want = concat!(
        "IP Virtual Server version 1.2.1 (size=4096)\n",
        "Prot LocalAddress:Port                 CPS    InPPS   OutPPS    InBPS   OutBPS\n",
        "  -> RemoteAddress:Port\n",
        "TCP  10.0.0.100:80                      10      200        0    12000        0\n",
        "  -> 172.16.0.11:80                      1       20        0  100000K        0\n",
        "  -> 172.16.0.12:80                      1       20        0  100000K        0\n",
        "UDP  10.0.0.53:53                        0        0        0        0        0\n",
        "  -> 192.168.1.2:5353                    1       20        0  100000K        0\n",
    );
    assert_eq!(format::list(&sample(), &o), want);
}

#[test]
fn thresholds_and_persistent_conn_formats() {
    let o = ListCmd {
        thresholds: true,
        ..Default::default()
    };
    let got = format::list(&sample(), &o);
    assert!(got.contains("Prot LocalAddress:Port            Uthreshold Lthreshold ActiveConn InActConn \n  -> RemoteAddress:Port\n"), "{got}");
    assert!(
        got.contains(
            "  -> 172.16.0.12:80               1000       0          1          2         \n"
        ),
        "{got}"
    );
    let o = ListCmd {
        persist_conn: true,
        ..Default::default()
    };
    let got = format::list(&sample(), &o);
    assert!(
        got.contains(
            "Prot LocalAddress:Port            Weight    PersistConn ActiveConn InActConn \n"
        ),
        "{got}"
    );
    assert!(
        got.contains(
            "  -> 172.16.0.12:80               3         2           1          2         \n"
        ),
        "{got}"
    );
}

#[test]
fn largenum_boundaries() {
    assert_eq!(format::largenum(0, false), "        0");
    assert_eq!(format::largenum(99_999_999, false), " 99999999");
    assert_eq!(format::largenum(100_000_000, false), "  100000K");
    assert_eq!(format::largenum(999_999_999, false), "  999999K");
    assert_eq!(format::largenum(1_000_000_000, false), "    1000M");
    assert_eq!(format::largenum(99_999_999_999, false), "   99999M");
    assert_eq!(format::largenum(100_000_000_000, false), "     100G");
    assert_eq!(format::largenum(99_999_999_999_999, false), "   99999G");
    assert_eq!(format::largenum(100_000_000_000_000, false), "     100T");
    for n in [0u64, 7, 99_999_999, 1 << 40, u64::MAX] {
        assert_eq!(format::largenum(n, false).len(), 9, "{n}");
    }
    assert_eq!(format::largenum(5, true), "        5");
    assert_eq!(format::largenum(123_456_789, true), " 123456789");
}

#[test]
fn conns_and_timeouts_formats() {
    let c = vec![
        ConnInfo {
            proto: Proto::Tcp,
            client: std::net::SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::new(192, 168, 0, 10),
                51234,
            )),
            vaddr: std::net::SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 100), 80)),
            dest: std::net::SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(172, 16, 0, 11), 80)),
            state: "ESTABLISHED".into(),
            expire_secs: 899,
        },
        ConnInfo {
            proto: Proto::Udp,
            client: std::net::SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(1, 1, 1, 1), 53)),
            vaddr: std::net::SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 53), 53)),
            dest: std::net::SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(192, 168, 1, 2), 5353)),
            state: "UDP".into(),
            expire_secs: 5,
        },
    ];
    let want = concat!(
        "IPVS connection entries\n",
        "pro expire state       source             virtual            destination\n",
        "TCP 14:59  ESTABLISHED 192.168.0.10:51234 10.0.0.100:80      172.16.0.11:80\n",
        "UDP 00:05  UDP         1.1.1.1:53         10.0.0.53:53       192.168.1.2:5353\n",
    );
    assert_eq!(format::conns(&c), want);
    assert_eq!(
        format::timeouts(&Timeouts::default()),
        "Timeout (tcp tcpfin udp): 900 120 300\n"
    );
}

#[test]
fn save_format_and_restore_round_trip() {
    let want = concat!(
        "-A -t 10.0.0.100:80 -s wlc -p 300 -M 255.255.255.0\n",
        "-a -t 10.0.0.100:80 -r 172.16.0.11:80 -g -w 1\n",
        "-a -t 10.0.0.100:80 -r 172.16.0.12:80 -i -w 3 --tun-type ipip -x 1000\n",
        "-A -u 10.0.0.53:53 -s mh -b mh-fallback,mh-port\n",
        "-a -u 10.0.0.53:53 -r 192.168.1.2:5353 -m -w 1\n",
    );
    let list = sample();
    let text = format::save(&list);
    assert_eq!(text, want);
    let cmds = parse_restore(&format!("# saved\n\n{text}")).unwrap();
    assert_eq!(cmds.len(), 5);
    // Rebuild the model from the batch and compare with the source.
    let mut services: Vec<ServiceInfo> = Vec::new();
    for c in cmds {
        match c {
            BatchCmd::AddService { service } => services.push(ServiceInfo {
                spec: service,
                stats: Stats::default(),
                rate: Rate::default(),
                dests: vec![],
            }),
            BatchCmd::AddDest { service, dest } => {
                let s = services.iter_mut().find(|s| s.spec.key == service).unwrap();
                s.dests.push(DestInfo {
                    spec: dest,
                    active: 0,
                    inactive: 0,
                    persist: 0,
                    stats: Stats::default(),
                    rate: Rate::default(),
                });
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    for orig in &list.services {
        let got = services
            .iter()
            .find(|s| s.spec.key == orig.spec.key)
            .unwrap();
        assert_eq!(got.spec, orig.spec);
        let mut a: Vec<_> = got.dests.iter().map(|d| d.spec.clone()).collect();
        let mut b: Vec<_> = orig.dests.iter().map(|d| d.spec.clone()).collect();
        a.sort_by_key(|d| d.key);
        b.sort_by_key(|d| d.key);
        assert_eq!(a, b);
    }
    let e = parse_restore("-A -t 1.2.3.4:80\n-L -n\n").unwrap_err();
    assert_eq!(e.msg, "line 2: not a rule: -L -n");
    let e = parse_restore("-A -t 1.2.3.4:80 -w 1\n").unwrap_err();
    assert!(e.msg.starts_with("line 1: Illegal 'weight'"), "{}", e.msg);
}

#[test]
fn daemon_errors_worded_as_ipvsadm() {
    let k = tkey([1, 2, 3, 4], 80);
    let add_d = Command::Mutate(BatchCmd::AddDest {
        service: k,
        dest: dest([5, 6, 7, 8], 80, Method::Dr, 1),
    });
    assert_eq!(
        error_message(&add_d, &CtlError::no_service()),
        "Service not defined"
    );
    assert_eq!(
        error_message(
            &Command::Mutate(BatchCmd::DelService { key: k }),
            &CtlError::no_service()
        ),
        "No such service"
    );
    assert_eq!(
        error_message(&add_d, &CtlError::dest_exists()),
        "Destination already exists"
    );
    assert_eq!(
        error_message(&add_d, &CtlError::no_dest()),
        "No such destination"
    );
    assert_eq!(
        error_message(
            &Command::Mutate(BatchCmd::Clear),
            &CtlError::new(ErrCode::NoMemory, "x")
        ),
        "Memory allocation problem"
    );
}

#[test]
fn synproxy_listed_and_saved() {
    let mut list = sample();
    for s in &mut list.services {
        s.spec.synproxy = s.spec.key.proto == Proto::Tcp;
    }
    let l = format::list(&list, &ListCmd::default());
    assert!(
        l.contains("TCP  10.0.0.100:80 wlc persistent 300 mask 255.255.255.0 synproxy\n"),
        "{l}"
    );
    let text = format::save(&list);
    assert!(
        text.starts_with("-A -t 10.0.0.100:80 -s wlc -p 300 -M 255.255.255.0 --synproxy\n"),
        "{text}"
    );
    let cmds = parse_restore(&text).unwrap();
    let proxied = cmds
        .iter()
        .filter(|c| matches!(c, BatchCmd::AddService { service } if service.synproxy))
        .count();
    assert_eq!(proxied, 1);
}

#[test]
fn daemon_lines_are_ipvsadms() {
    use crate::view::SyncInfo;
    let mut s = SyncInfo {
        interface: "dg-back".into(),
        source: Ipv4Addr::new(10, 0, 1, 1),
        group: Ipv4Addr::new(224, 0, 0, 81),
        udp_port: 8848,
        ttl: 1,
        syncid: 7,
        peers: vec![],
        send: true,
        receive: true,
        max_message: 1472,
        threshold: 3,
        refresh_ms: 65536,
        counters: vec![],
    };
    assert_eq!(
        format::daemon(Some(&s)),
        "master sync daemon (mcast=dg-back, syncid=7, maxlen=1472, group=224.0.0.81, port=8848, ttl=1)\n\
         backup sync daemon (mcast=dg-back, syncid=7, maxlen=1472, group=224.0.0.81, port=8848, ttl=1)\n"
    );
    s.send = false;
    assert!(format::daemon(Some(&s)).starts_with("backup sync daemon (mcast=dg-back"));
    assert_eq!(format::daemon(None), "");
}

/// ipvsadm's IPv6 layouts: `[addr]:port` in every column, `mask` as a
/// prefix length, and `-S` output that `-R` reads back.
#[test]
fn ipv6_list_save_restore() {
    let v6 = |s: &str| std::net::IpAddr::V6(s.parse().unwrap());
    let k = ServiceKey {
        fwmark: 0,
        proto: Proto::Tcp,
        vip: v6("2001:db8::10"),
        port: 80,
    };
    let mut s = svc(k, SchedKind::Rr, Some(300));
    s.prefix6 = 64;
    let mut nat = dest([0, 0, 0, 0], 8080, Method::Nat, 1);
    nat.key.addr = v6("2001:db8:2::11");
    let mut dr = dest([0, 0, 0, 0], 80, Method::Dr, 2);
    dr.key.addr = v6("2001:db8:2::12");
    let info = |spec: DestSpec| DestInfo {
        spec,
        active: 0,
        inactive: 0,
        persist: 0,
        stats: Stats::default(),
        rate: Rate::default(),
    };
    let list = ServiceList {
        conn_tab_size: 4096,
        services: vec![ServiceInfo {
            spec: s,
            stats: Stats::default(),
            rate: Rate::default(),
            dests: vec![info(nat), info(dr)],
        }],
    };
    let o = ListCmd {
        numeric: true,
        ..Default::default()
    };
    let want = concat!(
        "IP Virtual Server version 1.2.1 (size=4096)\n",
        "Prot LocalAddress:Port Scheduler Flags\n",
        "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n",
        "TCP  [2001:db8::10]:80 rr persistent 300 mask 64\n",
        "  -> [2001:db8:2::11]:8080        Masq    1      0          0         \n",
        "  -> [2001:db8:2::12]:80          Route   2      0          0         \n",
    );
    assert_eq!(format::list(&list, &o), want);
    let saved = format::save(&list);
    assert_eq!(
        saved,
        concat!(
            "-A -t [2001:db8::10]:80 -s rr -p 300 -M 64\n",
            "-a -t [2001:db8::10]:80 -r [2001:db8:2::11]:8080 -m -w 1\n",
            "-a -t [2001:db8::10]:80 -r [2001:db8:2::12]:80 -g -w 2\n",
        )
    );
    let cmds = parse_restore(&saved).unwrap();
    match &cmds[0] {
        BatchCmd::AddService { service } => assert_eq!(service, &list.services[0].spec),
        other => panic!("{other:?}"),
    }
    match &cmds[1] {
        BatchCmd::AddDest { service, dest } => {
            assert_eq!(service, &k);
            assert_eq!(dest, &list.services[0].dests[0].spec);
        }
        other => panic!("{other:?}"),
    }
    // -L -c: IPv6 sockets in brackets
    let c = ConnInfo {
        proto: Proto::Tcp,
        client: "[2001:db8:c::7]:40000".parse().unwrap(),
        vaddr: "[2001:db8::10]:80".parse().unwrap(),
        dest: "[2001:db8:2::11]:8080".parse().unwrap(),
        state: "ESTABLISHED".into(),
        expire_secs: 61,
    };
    let text = format::conns(&[c]);
    assert!(
        text.lines().nth(2).unwrap().starts_with(
            "TCP 01:01  ESTABLISHED [2001:db8:c::7]:40000 [2001:db8::10]:80  [2001:db8:2::11]:8080"
        ),
        "{text}"
    );
}

/// FullNAT: listed as DPVS lists it (`FullNat`), saved with its local
/// addresses before the `-b` servers that need them, restored the same;
/// `--get-laddr` lists the addresses.
#[test]
fn fullnat_listed_saved_and_restored() {
    let mut list = sample();
    let s = &mut list.services[1];
    s.spec.local_addresses = vec!["10.0.0.200".parse().unwrap(), "10.0.0.201".parse().unwrap()];
    for d in &mut s.dests {
        d.spec.method = Method::FullNat;
    }
    let l = format::list(&list, &ListCmd::default());
    assert!(
        l.contains("  -> 172.16.0.11:80               FullNat 1      0          0         \n"),
        "{l}"
    );
    let text = format::save(&list);
    assert!(
        text.starts_with(concat!(
            "-A -t 10.0.0.100:80 -s wlc -p 300 -M 255.255.255.0\n",
            "-P -t 10.0.0.100:80 -z 10.0.0.200\n",
            "-P -t 10.0.0.100:80 -z 10.0.0.201\n",
            "-a -t 10.0.0.100:80 -r 172.16.0.11:80 -b -w 1\n",
            "-a -t 10.0.0.100:80 -r 172.16.0.12:80 -b -w 3 -x 1000\n",
        )),
        "{text}"
    );
    let cmds = parse_restore(&text).unwrap();
    let key = tkey([10, 0, 0, 100], 80);
    assert_eq!(
        cmds[1],
        BatchCmd::AddLaddr {
            service: key,
            addr: "10.0.0.200".parse().unwrap()
        }
    );
    assert!(matches!(
        &cmds[3],
        BatchCmd::AddDest { dest, .. } if dest.method == Method::FullNat && dest.weight == 1
    ));
    let g = format::laddrs(&list);
    assert_eq!(
        g,
        concat!(
            "VIP:VPORT                      TOTAL    SNAT_IP\n",
            "TCP 10.0.0.100:80              2       \n",
            "                                        10.0.0.200\n",
            "                                        10.0.0.201\n",
        )
    );
}

#[test]
fn ops_listed_and_saved() {
    let mut list = sample();
    for s in &mut list.services {
        s.spec.ops = s.spec.key.proto == Proto::Udp;
    }
    let l = format::list(&list, &ListCmd::default());
    assert!(
        l.contains("UDP  10.0.0.53:53 mh (mh-fallback,mh-port) ops\n"),
        "{l}"
    );
    let text = format::save(&list);
    assert!(
        text.contains("-A -u 10.0.0.53:53 -s mh -b mh-fallback,mh-port -o\n"),
        "{text}"
    );
    let cmds = parse_restore(&text).unwrap();
    let ops = cmds
        .iter()
        .filter(|c| matches!(c, BatchCmd::AddService { service } if service.ops))
        .count();
    assert_eq!(ops, 1);
}

#[test]
fn client_address_listed_saved_and_restored() {
    use dirigo_core::lb::spec::ClientAddress;
    let mut list = sample();
    for s in &mut list.services {
        if s.spec.key.proto == Proto::Tcp {
            s.spec.client_address = ClientAddress::ProxyV2;
        }
    }
    let l = format::list(&list, &ListCmd::default());
    assert!(l.contains(" client-address proxy-v2\n"), "{l}");
    let text = format::save(&list);
    assert!(
        text.starts_with(
            "-A -t 10.0.0.100:80 -s wlc -p 300 -M 255.255.255.0 --client-address proxy-v2\n"
        ),
        "{text}"
    );
    let cmds = parse_restore(&text).unwrap();
    let kept = cmds
        .iter()
        .filter(|c| matches!(c, BatchCmd::AddService { service } if service.client_address == ClientAddress::ProxyV2))
        .count();
    assert_eq!(kept, 1);
}
